package expr

import (
	"errors"
	"fmt"
	"math"

	"github.com/braidflow/braid/types"
)

// DefaultMaxStringBytes is the limit on the length in bytes of one string
// or binary value a function produces when Env.MaxStringBytes is 0.
//
// NB: 16 MiB is sixteen times Kafka's default largest message, so values
// read from sources and the strings a query builds from them fit with room
// to spare, while nested REPLACE calls that multiply 150 bytes of SQL into
// gigabytes stop at 16 MiB per value; 128 such values still fit the 2 GiB
// of one Arrow column (maxColumnBytes).
const DefaultMaxStringBytes = 16 << 20

// MaxStringBytesOption is the name errors and docs give the setting of
// Env.MaxStringBytes. It is Braid's own (Flink has no such limit).
const MaxStringBytesOption = "braid.exec.max-string-bytes"

// maxColumnBytes is the most bytes the values of one string or binary
// column can hold: Arrow's String and Binary arrays have int32 offsets. A
// variable for tests.
var maxColumnBytes int64 = math.MaxInt32

// errStringLimit marks the errors of a value or column over a limit, so
// that TRY_CAST does not turn them into NULL.
var errStringLimit = errors.New("string limit")

// maxStringBytes returns the limit on one value, DefaultMaxStringBytes
// unless e sets one.
func (e *Env) maxStringBytes() int64 {
	if e == nil || e.MaxStringBytes <= 0 {
		return DefaultMaxStringBytes
	}
	return int64(e.MaxStringBytes)
}

// strLimit admits the string or binary values that one call of a kernel
// produces: each within Env.MaxStringBytes, and together within what an
// Arrow column holds.
type strLimit struct {
	ec     *evalCtx
	fn     string
	binary bool
	total  int64
}

func newStrLimit(ec *evalCtx, fn string, binary bool) *strLimit {
	return &strLimit{ec: ec, fn: fn, binary: binary}
}

// admit reports whether row i may hold a value of n bytes. Kernels call it
// before they build the value, so that an oversized one is never
// allocated. Over a limit, an active row fails the evaluation, and an
// inactive one, whose value is discarded (CASE WHEN short THEN REPLACE(...)
// END), gets false without an error: the kernel leaves it empty.
func (l *strLimit) admit(i int, n int64) (bool, error) {
	err := l.ec.checkLength(l.fn, l.binary, n)
	if err == nil && l.total+n > maxColumnBytes {
		err = limitError("expr: %s results of one batch exceed %d bytes, the most an Arrow column holds (%d bytes at row %d)",
			l.fn, maxColumnBytes, l.total+n, i)
	}
	if err != nil {
		if !l.ec.isActive(i) {
			return false, nil
		}
		return false, err
	}
	l.total += n
	return true, nil
}

// checkLength fails a value of n bytes that the function fn would build
// over Env.MaxStringBytes: "expr: REPLACE result of 20971520 bytes exceeds
// the 16 MiB limit on string values (braid.exec.max-string-bytes)".
func (ec *evalCtx) checkLength(fn string, binary bool, n int64) error {
	max := ec.env.maxStringBytes()
	if n <= max {
		return nil
	}
	what := "string"
	if binary {
		what = "binary"
	}
	return limitError("expr: %s result of %d bytes exceeds the %s limit on %s values (%s)",
		fn, n, formatBytes(max), what, MaxStringBytesOption)
}

// limitError is a user error marked with errStringLimit.
func limitError(format string, args ...any) error {
	return types.WithClass(&limitErr{msg: fmt.Sprintf(format, args...)}, types.ClassUser)
}

type limitErr struct{ msg string }

func (e *limitErr) Error() string { return e.msg }
func (e *limitErr) Is(target error) bool {
	return target == errStringLimit
}

// formatBytes writes n in the largest binary unit that divides it, for
// "the 16 MiB limit" or "the 1000-byte limit".
func formatBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d-byte", n)
}

// checkColumnBytes fails an export of a string or binary column whose
// values total more than an Arrow column holds, before it is allocated.
func checkColumnBytes(total int64) error {
	if total > maxColumnBytes {
		return limitError("expr: a result column of %d bytes exceeds %d bytes, the most an Arrow column holds", total, maxColumnBytes)
	}
	return nil
}
