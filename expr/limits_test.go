package expr

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/types"
)

// evalRows evaluates e over one column of type t holding vals (Literal's Go
// forms, nil for NULL) and returns the error, releasing any result.
func evalRows(t *testing.T, e *Expr, env *Env, ct types.DataType, vals ...any) error {
	t.Helper()
	b := batchOf(types.Schema{{Name: "c", Type: ct}}, column(ct, vals))
	defer b.Release()
	ev, err := Compile(e, env)
	if err != nil {
		t.Fatalf("Compile(%v): %v", e, err)
	}
	out, err := ev.Eval(b)
	if err == nil {
		out.Release()
	}
	return err
}

// nestedReplace is REPLACE(REPLACE(...('aaaaaaaaaa', 'a', 'aaaaaaaaaa')...))
// n deep: 10^(n+1) bytes from about 30n bytes of SQL.
func nestedReplace(t testing.TB, n int) *Expr {
	e := str(strings.Repeat("a", 10))
	for range n {
		e = mustResolve(t, "REPLACE", e, str("a"), str(strings.Repeat("a", 10)))
	}
	return e
}

// TestNestedReplaceStopsAtTheLimit checks the finding: seven nested
// REPLACEs would build 100 MB. The evaluation fails at the 16 MiB default,
// naming the function, the size and the limit, without allocating the 100
// MB, and constant folding in Compile (which ignores the failure) does not
// allocate it either.
func TestNestedReplaceStopsAtTheLimit(t *testing.T) {
	e := nestedReplace(t, 7)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := evalRows(t, e, utcEnv, types.Int, int64(1))
	runtime.ReadMemStats(&after)
	const want = "REPLACE result of 100000000 bytes exceeds the 16 MiB limit on string values (braid.exec.max-string-bytes)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want it to contain %q", err, want)
	}
	if types.ClassOf(err) != types.ClassUser {
		t.Errorf("class %v, want user", types.ClassOf(err))
	}
	// The 10 MB of the sixth level are built (at compile time, and maybe
	// once more at run time); the 100 MB of the seventh are not.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 60<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
	// Six levels, 10 MB, are within the limit.
	if err := evalRows(t, nestedReplace(t, 6), utcEnv, types.Int, int64(1)); err != nil {
		t.Errorf("six levels: %v", err)
	}
}

// TestStringLimitPerFunction checks every function that builds a string
// or binary longer than its input against a 64-byte limit: 64 bytes pass,
// 65 fail naming the function.
func TestStringLimitPerFunction(t *testing.T) {
	env := &Env{Location: time.UTC, MaxStringBytes: 64}
	c := Column(0, types.String)
	bin := Column(0, types.Bytes)
	s32 := strings.Repeat("x", 32)
	b32 := []byte(s32)
	for _, tc := range []struct {
		fn        string
		e         *Expr
		ct        types.DataType
		ok, over  any // column values giving 64 and 65 bytes
		wantBytes string
	}{
		{"REPLACE", mustResolve(t, "REPLACE", c, str("a"), str("aaaaaaaa")), types.String, strings.Repeat("a", 8), strings.Repeat("a", 8) + "b", "65"},
		{"CONCAT", mustResolve(t, "CONCAT", c, c), types.String, s32, s32 + "x", "66"},
		{"||", mustResolve(t, "||", c, c), types.String, s32, s32 + "x", "66"},
		{"CONCAT_WS", mustResolve(t, "CONCAT_WS", str("--"), c, NullLiteral(types.String), c), types.String, strings.Repeat("x", 31), s32, "66"},
		{"||", mustResolve(t, "||", bin, bin), types.Bytes, b32, append([]byte("x"), b32...), "66"},
		{"UPPER", mustResolve(t, "UPPER", c), types.String, strings.Repeat("ɐ", 21) + "x", strings.Repeat("ɐ", 22), "66"},
		{"LOWER", mustResolve(t, "LOWER", c), types.String, strings.Repeat("Ⱥ", 21) + "x", strings.Repeat("Ⱥ", 22), "66"},
		{"INITCAP", mustResolve(t, "INITCAP", c), types.String, strings.Repeat("ɐ ", 16), strings.Repeat("ɐ ", 16) + "x", "65"},
		{"SUBSTRING", mustResolve(t, "SUBSTRING", c, i32(1)), types.String, strings.Repeat("\xff", 21) + "x", strings.Repeat("\xff", 22), "66"},
		{"CAST", Cast(c, types.Char(64)), types.String, "a", nil, ""},
		{"CAST", Cast(c, types.Char(65)), types.String, nil, "a", "65"},
		{"CAST", Cast(bin, types.String), types.Bytes, []byte(strings.Repeat("x", 64)), []byte(strings.Repeat("x", 65)), "65"},
		{"CAST", Cast(c, types.Bytes), types.String, strings.Repeat("x", 64), strings.Repeat("x", 65), "65"},
		{"DATE_FORMAT", mustResolve(t, "DATE_FORMAT", Column(0, types.Timestamp(3)), str(strings.Repeat("X'-'", 9)+"M")), types.Timestamp(3), int64(0), nil, ""},
		{"DATE_FORMAT", mustResolve(t, "DATE_FORMAT", Column(0, types.Timestamp(3)), str(strings.Repeat("X'-'", 20)+"MM")), types.Timestamp(3), nil, int64(0), "142"},
		{"FROM_UNIXTIME", mustResolve(t, "FROM_UNIXTIME", Column(0, types.BigInt), str(strings.Repeat("Z'-'", 11))), types.BigInt, nil, int64(0), "66"},
	} {
		if tc.ok != nil {
			if err := evalRows(t, tc.e, env, tc.ct, tc.ok, nil); err != nil {
				t.Errorf("%v on %q: %v", tc.e, tc.ok, err)
			}
		}
		if tc.over == nil {
			continue
		}
		err := evalRows(t, tc.e, env, tc.ct, tc.over, nil)
		what := "string"
		if tc.e.Type.IsBinary() {
			what = "binary"
		}
		want := tc.fn + " result of " + tc.wantBytes + " bytes exceeds the 64-byte limit on " + what + " values"
		if tc.wantBytes == "" {
			want = tc.fn + " result of "
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v on %q: error %v, want it to contain %q", tc.e, tc.over, err, want)
		}
	}
}

// TestStringLimitSkipsInactiveRows checks that a value over the limit in a
// row whose result is discarded (a CASE branch not taken) is not an error,
// and that TRY_CAST does not turn a value over the limit into NULL.
func TestStringLimitSkipsInactiveRows(t *testing.T) {
	env := &Env{Location: time.UTC, MaxStringBytes: 64}
	c := Column(0, types.String)
	long := mustResolve(t, "CONCAT", c, c, c)
	guarded := mustResolve(t, "CASE", mustResolve(t, "<", mustResolve(t, "CHAR_LENGTH", c), i32(20)), long, str("long"))
	if err := evalRows(t, guarded, env, types.String, "short", strings.Repeat("x", 30), nil); err != nil {
		t.Errorf("guarded CONCAT: %v", err)
	}
	if err := evalRows(t, long, env, types.String, "short", strings.Repeat("x", 30)); err == nil {
		t.Error("unguarded CONCAT of 90 bytes passed")
	}
	err := evalRows(t, TryCast(c, types.Char(1000)), env, types.String, "a")
	if err == nil || !errors.Is(err, errStringLimit) {
		t.Errorf("TRY_CAST to CHAR(1000): %v, want the limit error", err)
	}
}

// TestCastToHugeChar checks that CAST to CHAR(2147483646), a valid type,
// fails instead of padding 2 GB per row.
func TestCastToHugeChar(t *testing.T) {
	err := evalRows(t, Cast(Column(0, types.String), types.Char(types.MaxLength-1)), nil, types.String, "a")
	if err == nil || !strings.Contains(err.Error(), "CAST result of 2147483646 bytes exceeds the 16 MiB limit") {
		t.Errorf("error = %v", err)
	}
}

// TestStringLimitDefault checks that an Env without a limit, and a nil
// Env, use DefaultMaxStringBytes.
func TestStringLimitDefault(t *testing.T) {
	for _, env := range []*Env{nil, {}, {MaxStringBytes: -1}} {
		if got := env.maxStringBytes(); got != DefaultMaxStringBytes {
			t.Errorf("%+v: limit %d", env, got)
		}
	}
	if got := (&Env{MaxStringBytes: 5}).maxStringBytes(); got != 5 {
		t.Errorf("limit %d, want 5", got)
	}
}

// TestColumnLimit checks that a result column whose values total more
// than an Arrow column holds fails before it is allocated: in a kernel
// that builds its rows, and in the export of a vec that shares one value
// across its rows (a folded constant).
func TestColumnLimit(t *testing.T) {
	defer func(old int64) { maxColumnBytes = old }(maxColumnBytes)
	maxColumnBytes = 1000
	c := Column(0, types.String)
	vals := make([]any, 20)
	for i := range vals {
		vals[i] = strings.Repeat("x", 30)
	}
	err := evalRows(t, mustResolve(t, "CONCAT", c, c), nil, types.String, vals...)
	if err == nil || !strings.Contains(err.Error(), "CONCAT results of one batch exceed 1000 bytes, the most an Arrow column holds (1020 bytes at row 16)") {
		t.Errorf("CONCAT error = %v", err)
	}
	v := broadcast(literalVec(strings.Repeat("x", 100), types.String), 11)
	if _, err := v.toArrow(types.String); err == nil || !strings.Contains(err.Error(), "a result column of 1100 bytes exceeds 1000 bytes") {
		t.Errorf("export error = %v", err)
	}
}
