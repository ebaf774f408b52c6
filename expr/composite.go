package expr

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// Composite values: the constructors ROW(...), ARRAY[...], MAP[...], field
// access, the subscript x[i] (ITEM), CARDINALITY and ELEMENT. A composite
// value is a clsBin vec cell holding its encoding (types/value.go).

// RowCtor returns ROW(args...): a ROW NOT NULL whose fields are named
// EXPR$0, EXPR$1, ... and typed as the arguments, as Flink types it.
func RowCtor(args []*Expr) (*Expr, error) {
	fields := make([]types.Field, len(args))
	for i, a := range args {
		t := a.Type
		if t.Kind == types.KindNull {
			return nil, userErrorf("cannot apply 'ROW' to an untyped NULL; CAST it to a type")
		}
		fields[i] = types.Field{Name: "EXPR$" + strconv.Itoa(i), Type: t}
	}
	t, err := types.NewRow(fields)
	if err != nil {
		return nil, userErrorf("%v", err)
	}
	return call("ROW", t.WithNullable(false), args...), nil
}

// ArrayCtor returns ARRAY[args...]: an ARRAY NOT NULL of the arguments'
// common type, nullable when any argument is.
func ArrayCtor(args []*Expr) (*Expr, error) {
	if len(args) == 0 {
		return nil, userErrorf("ARRAY[] needs at least one element")
	}
	e, out, err := commonOf("ARRAY", args)
	if err != nil {
		return nil, err
	}
	t, err := types.NewArray(e)
	if err != nil {
		return nil, userErrorf("%v", err)
	}
	return call("ARRAY", t.WithNullable(false), out...), nil
}

// MapCtor returns MAP[k1, v1, ...]: a MAP NOT NULL of the keys' and the
// values' common types. A key given twice keeps its first place and its
// last value.
func MapCtor(args []*Expr) (*Expr, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, userErrorf("MAP[] needs an even number of arguments, one or more key and value pairs")
	}
	var ks, vs []*Expr
	for i := 0; i < len(args); i += 2 {
		ks = append(ks, args[i])
		vs = append(vs, args[i+1])
	}
	kt, ko, err := commonOf("MAP", ks)
	if err != nil {
		return nil, err
	}
	vt, vo, err := commonOf("MAP", vs)
	if err != nil {
		return nil, err
	}
	t, err := types.NewMap(kt, vt)
	if err != nil {
		return nil, userErrorf("%v", err)
	}
	out := make([]*Expr, 0, len(args))
	for i := range ko {
		out = append(out, ko[i], vo[i])
	}
	return call("MAP", t.WithNullable(false), out...), nil
}

// commonOf casts args to their common type.
func commonOf(name string, args []*Expr) (types.DataType, []*Expr, error) {
	ts := make([]types.DataType, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	t, ok := CommonType(ts...)
	if !ok || t.Kind == types.KindNull {
		return t, nil, userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args))
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		out[i] = implicit(a, t)
	}
	return t, out, nil
}

// FieldAccess returns x.field for x a ROW: the field's type, nullable
// when x is. ok is false when x is not a ROW or has no such field.
func FieldAccess(x *Expr, field string) (*Expr, bool) {
	if !x.Type.IsRow() {
		return nil, false
	}
	i := x.Type.FieldIndex(field)
	if i < 0 {
		return nil, false
	}
	t := x.Type.FieldAt(i).Type
	if x.Type.Nullable() {
		t = t.WithNullable(true)
	}
	return call("FIELD", t, x, Literal(int64(i), types.Int.WithNullable(false))), true
}

// Item returns x[i]: the element at 1-based position i of an ARRAY (NULL
// outside 1..CARDINALITY(x); a constant index below 1 is refused, as in
// Flink), or the value of key i of a MAP (NULL when absent). The result is
// nullable.
func Item(x, i *Expr) (*Expr, error) {
	switch {
	case x.Type.IsArray():
		if !i.Type.IsInteger() && i.Type.Kind != types.KindNull {
			return nil, userErrorf("array index must be an integer, got %v", i.Type)
		}
		if i.Op == OpLiteral {
			if v, ok := i.Value.(int64); ok && v < 1 {
				return nil, userErrorf("Array element access needs an index starting at 1 but was %d.", v)
			}
		}
		return call("ITEM", x.Type.Elem().WithNullable(true), x, implicit(fillNull(i, types.Int), types.BigInt)), nil
	case x.Type.IsMap():
		kt := x.Type.MapKey()
		if _, ok := comparable2(i.Type, kt); !ok && i.Type.Kind != types.KindNull {
			return nil, userErrorf("cannot look up a key of type %v in %v", i.Type, x.Type)
		}
		return call("ITEM", x.Type.MapValue().WithNullable(true), x, implicit(fillNull(i, kt), kt)), nil
	}
	return nil, userErrorf("cannot apply '[]' to a value of type %v (an ARRAY or a MAP is needed)", x.Type)
}

func resolveCardinality(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	t := args[0].Type
	if !t.IsArray() && !t.IsMap() && !t.IsMultiset() {
		return nil, cannotApply(name, args)
	}
	return call(name, types.Int.WithNullable(t.Nullable()), args...), nil
}

func resolveElement(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	if !args[0].Type.IsArray() {
		return nil, cannotApply(name, args)
	}
	return call(name, args[0].Type.Elem().WithNullable(true), args...), nil
}

// elemAt returns row i of v in the Go form of types/value.go.
func elemAt(v *vec, i int) any {
	if v.isNull(i) {
		return nil
	}
	switch {
	case v.b != nil:
		return v.b[i]
	case v.i64 != nil:
		return v.i64[i]
	case v.f64 != nil:
		return v.f64[i]
	case v.dec != nil:
		return v.dec[i]
	case v.str != nil:
		return v.str[i]
	case v.bin != nil:
		return v.bin[i]
	}
	return nil
}

// setElem stores x, in the Go form of out's class, as row i of out (whose
// valid slice is set).
func setElem(out *vec, i int, x any) {
	if x == nil {
		return
	}
	out.valid[i] = true
	switch y := x.(type) {
	case bool:
		out.b[i] = y
	case int64:
		out.i64[i] = y
	case float64:
		out.f64[i] = y
	case decimal128.Num:
		out.dec[i] = y
	case string:
		out.str[i] = y
	case []byte:
		out.bin[i] = y
	}
}

// ctorKernel builds ROW, ARRAY and MAP values row by row.
func ctorKernel(e *Expr, _ []types.DataType) (kernel, error) {
	t := e.Type
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := newVec(clsBin, ec.n)
		lim := newStrLimit(ec, e.Func, true)
		vals := make([]any, len(args))
		var keys []any
		for i := 0; i < ec.n; i++ {
			for j, a := range args {
				vals[j] = elemAt(a, i)
			}
			var enc []byte
			if t.Kind == types.KindMap {
				ks, vs := dedupEntries(t.MapKey(), vals)
				keys = ks
				enc = types.AppendComposite(nil, t, keys, vs)
			} else {
				enc = types.AppendComposite(nil, t, nil, vals)
			}
			ok, err := lim.admit(i, int64(len(enc)))
			if err != nil {
				return nil, err
			}
			if !ok {
				if out.valid == nil {
					out.valid = make([]bool, ec.n)
					for j := 0; j < i; j++ {
						out.valid[j] = true
					}
				}
				continue
			}
			if out.valid != nil {
				out.valid[i] = true
			}
			out.bin[i] = enc
		}
		return out, nil
	}, nil
}

// dedupEntries splits alternating keys and values, keeping each key once:
// in its first place, with its last value.
func dedupEntries(kt types.DataType, kv []any) (keys, vals []any) {
	for j := 0; j < len(kv); j += 2 {
		k, v := kv[j], kv[j+1]
		if at := slices.IndexFunc(keys, func(x any) bool { return elemEqual(kt, x, k) }); at >= 0 {
			vals[at] = v
			continue
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals
}

// elemEqual compares two elements in Go form; NULL equals NULL (a map key).
func elemEqual(t types.DataType, a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	}
	return a == b
}

// decodeRows decodes row i of a composite vec, failing on a malformed value.
func decodeAt(t types.DataType, v *vec, i int) (keys, vals []any, err error) {
	keys, vals, err = types.DecodeComposite(t, v.bin[i])
	if err != nil {
		return nil, nil, fmt.Errorf("expr: %v value of row %d: %w", t, i, err)
	}
	return keys, vals, nil
}

func fieldKernel(e *Expr, at []types.DataType) (kernel, error) {
	rt := at[0]
	cls := classOf(e.Type)
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		x := args[0]
		out := newVec(cls, ec.n)
		out.valid = make([]bool, ec.n)
		for i := 0; i < ec.n; i++ {
			if x.isNull(i) {
				continue
			}
			v, _, err := types.CompositeElem(rt, x.bin[i], int(args[1].i64[i]))
			if err != nil {
				return nil, fmt.Errorf("expr: %v value of row %d: %w", rt, i, err)
			}
			setElem(out, i, v)
		}
		return out, nil
	}, nil
}

func itemKernel(e *Expr, at []types.DataType) (kernel, error) {
	xt := at[0]
	cls := classOf(e.Type)
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		x, idx := args[0], args[1]
		out := newVec(cls, ec.n)
		out.valid = make([]bool, ec.n)
		for i := 0; i < ec.n; i++ {
			if x.isNull(i) || idx.isNull(i) {
				continue
			}
			if xt.IsArray() {
				p := idx.i64[i]
				if p < 1 || p > math.MaxInt32 {
					continue
				}
				v, _, err := types.CompositeElem(xt, x.bin[i], int(p-1))
				if err != nil {
					return nil, fmt.Errorf("expr: %v value of row %d: %w", xt, i, err)
				}
				setElem(out, i, v)
				continue
			}
			keys, vals, err := decodeAt(xt, x, i)
			if err != nil {
				return nil, err
			}
			k := elemAt(idx, i)
			for j, kk := range keys {
				if elemEqual(xt.MapKey(), kk, k) {
					setElem(out, i, vals[j])
					break
				}
			}
		}
		return out, nil
	}, nil
}

func cardinalityKernel(_ *Expr, at []types.DataType) (kernel, error) {
	t := at[0]
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		x := args[0]
		out := newVec(clsInt, ec.n)
		out.valid = validCopy(x, ec.n)
		for i := 0; i < ec.n; i++ {
			if x.isNull(i) {
				continue
			}
			n, err := types.CompositeLen(t, x.bin[i])
			if err != nil {
				return nil, fmt.Errorf("expr: %v value of row %d: %w", t, i, err)
			}
			out.i64[i] = int64(n)
		}
		return out, nil
	}, nil
}

func elementKernel(e *Expr, at []types.DataType) (kernel, error) {
	t := at[0]
	cls := classOf(e.Type)
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		x := args[0]
		out := newVec(cls, ec.n)
		out.valid = make([]bool, ec.n)
		for i := 0; i < ec.n; i++ {
			if x.isNull(i) {
				continue
			}
			_, vals, err := decodeAt(t, x, i)
			if err != nil {
				return nil, err
			}
			switch len(vals) {
			case 0:
			case 1:
				setElem(out, i, vals[0])
			default:
				if ec.isActive(i) {
					//lint:ignore ST1005 Flink's message, verbatim
					return nil, types.WithClass(fmt.Errorf("expr: ELEMENT: Array has more than one element."), types.ClassUser)
				}
			}
		}
		return out, nil
	}, nil
}

// validCopy returns a copy of v's validity of n rows, nil when v has no
// NULLs.
func validCopy(v *vec, n int) []bool {
	if v.valid == nil {
		return nil
	}
	return append([]bool(nil), v.valid[:n]...)
}

// compositeEqualKernel is = and <> on composite values: equal encodings,
// except that a MAP or MULTISET equals another with the same entries in
// any order.
func compositeEqualKernel(op string, t types.DataType) kernel {
	unordered := t.IsMap() || t.IsMultiset()
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0], args[1]
		out := &vec{n: ec.n, b: make([]bool, ec.n), valid: andValid(ec.n, a, b)}
		for i := 0; i < ec.n; i++ {
			if a.isNull(i) || b.isNull(i) {
				continue
			}
			eq := bytes.Equal(a.bin[i], b.bin[i])
			if !eq && unordered {
				var err error
				if eq, err = sameEntries(t, a.bin[i], b.bin[i]); err != nil {
					return nil, err
				}
			}
			out.b[i] = eq == (op == "=")
		}
		return out, nil
	}
}

// sameEntries reports whether two encoded maps hold the same entries.
func sameEntries(t types.DataType, x, y []byte) (bool, error) {
	kx, vx, err := types.DecodeComposite(t, x)
	if err != nil {
		return false, err
	}
	ky, vy, err := types.DecodeComposite(t, y)
	if err != nil {
		return false, err
	}
	if len(kx) != len(ky) {
		return false, nil
	}
	kt, vt := t.MapEntryTypes()
	for i, k := range kx {
		j := slices.IndexFunc(ky, func(o any) bool { return elemEqual(kt, o, k) })
		if j < 0 || !elemEqual(vt, vx[i], vy[j]) {
			return false, nil
		}
	}
	return true, nil
}

func compareCompositeKernel(op string, ta, tb types.DataType) (kernel, error) {
	if _, ok := commonComposite(ta, tb); !ok {
		return nil, fmt.Errorf("expr: cannot compare %v with %v", ta, tb)
	}
	return compositeEqualKernel(op, ta), nil
}

// commonComposite is the common type of two composite types of one kind
// (and, for ROWs, one arity), as Calcite's leastRestrictive finds it: the
// common type of each element, key, value or field (ROW field names are
// the first type's). Nullability is the union.
func commonComposite(a, b types.DataType) (types.DataType, bool) {
	if a.Kind != b.Kind || !a.IsComposite() || !b.IsComposite() {
		return types.DataType{}, false
	}
	var t types.DataType
	var err error
	switch a.Kind {
	case types.KindArray, types.KindMultiset:
		e, ok := CommonType(a.Elem(), b.Elem())
		if !ok {
			return t, false
		}
		if a.Kind == types.KindArray {
			t, err = types.NewArray(e)
		} else {
			t, err = types.NewMultiset(e)
		}
	case types.KindMap:
		k, ok1 := CommonType(a.MapKey(), b.MapKey())
		v, ok2 := CommonType(a.MapValue(), b.MapValue())
		if !ok1 || !ok2 {
			return t, false
		}
		t, err = types.NewMap(k, v)
	case types.KindRow:
		if a.NumFields() != b.NumFields() {
			return t, false
		}
		fs := make([]types.Field, a.NumFields())
		for i := range fs {
			ft, ok := CommonType(a.FieldAt(i).Type, b.FieldAt(i).Type)
			if !ok {
				return t, false
			}
			fs[i] = types.Field{Name: a.FieldAt(i).Name, Type: ft}
		}
		t, err = types.NewRow(fs)
	}
	if err != nil {
		return t, false
	}
	return t.WithNullable(a.Nullable() || b.Nullable()), true
}

// canCastComposite reports whether CAST from one composite type to
// another is legal: the same kind (and ROW arity, names aside) with each
// element, key, value or field castable, as Flink's ArrayToArray,
// MapToMap and RowToRow cast rules allow.
func canCastComposite(f, t types.DataType) bool {
	if f.Kind != t.Kind || !f.IsComposite() || !t.IsComposite() {
		return false
	}
	switch f.Kind {
	case types.KindArray, types.KindMultiset:
		return CanCast(f.Elem(), t.Elem())
	case types.KindMap:
		return CanCast(f.MapKey(), t.MapKey()) && CanCast(f.MapValue(), t.MapValue())
	}
	if f.NumFields() != t.NumFields() {
		return false
	}
	for i := 0; i < f.NumFields(); i++ {
		if !CanCast(f.FieldAt(i).Type, t.FieldAt(i).Type) {
			return false
		}
	}
	return true
}

// compositeCastKernel casts composite values element-wise, a column at a
// time: the elements of one slot (a ROW field, an ARRAY's elements, a
// MAP's keys or values) of every row go into one vec, the element cast
// runs over it, and the rows are encoded again.
func compositeCastKernel(from, to types.DataType, try bool) (kernel, error) {
	slotsFrom, slotsTo := castSlots(from), castSlots(to)
	casts := make([]kernel, len(slotsFrom))
	for j := range slotsFrom {
		if slotsFrom[j] == slotsTo[j] {
			continue
		}
		k, err := castKernel(slotsFrom[j], slotsTo[j], try)
		if err != nil {
			return nil, err
		}
		casts[j] = k
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		counts := make([]int, ec.n)
		slots := make([][]any, len(slotsFrom))
		for i := 0; i < ec.n; i++ {
			if a.isNull(i) {
				continue
			}
			keys, vals, err := decodeAt(from, a, i)
			if err != nil {
				return nil, err
			}
			switch from.Kind {
			case types.KindRow:
				for j, v := range vals {
					slots[j] = append(slots[j], v)
				}
			case types.KindArray:
				slots[0] = append(slots[0], vals...)
			default:
				slots[0] = append(slots[0], keys...)
				slots[1] = append(slots[1], vals...)
			}
			counts[i] = len(vals)
		}
		cast := make([]*vec, len(slots))
		for j, s := range slots {
			v := newVec(classOf(slotsFrom[j]), len(s))
			v.valid = make([]bool, len(s))
			for k, x := range s {
				setElem(v, k, x)
			}
			if casts[j] != nil {
				sub := &evalCtx{n: len(s), loc: ec.loc, env: ec.env, now: ec.now}
				var err error
				if v, err = casts[j](sub, []*vec{v}); err != nil {
					return nil, err
				}
			}
			cast[j] = v
		}
		out := newVec(clsBin, ec.n)
		out.valid = validCopy(a, ec.n)
		pos := 0
		for i := 0; i < ec.n; i++ {
			if a.isNull(i) {
				continue
			}
			var keys, vals []any
			switch from.Kind {
			case types.KindRow:
				vals = make([]any, len(cast))
				for j, v := range cast {
					vals[j] = elemAt(v, pos)
				}
				pos++
			case types.KindArray:
				vals = make([]any, counts[i])
				for k := range vals {
					vals[k] = elemAt(cast[0], pos+k)
				}
				pos += counts[i]
			default:
				keys, vals = make([]any, counts[i]), make([]any, counts[i])
				for k := range vals {
					keys[k], vals[k] = elemAt(cast[0], pos+k), elemAt(cast[1], pos+k)
				}
				pos += counts[i]
			}
			out.bin[i] = types.AppendComposite(nil, to, keys, vals)
		}
		return out, nil
	}, nil
}

// castSlots lists the element types a composite cast converts.
func castSlots(t types.DataType) []types.DataType {
	switch t.Kind {
	case types.KindRow:
		out := make([]types.DataType, t.NumFields())
		for i := range out {
			out[i] = t.FieldAt(i).Type
		}
		return out
	case types.KindArray:
		return []types.DataType{t.Elem()}
	}
	k, v := t.MapEntryTypes()
	return []types.DataType{k, v}
}

// splitKernel is SPLIT(s, delim): the pieces of s between occurrences of
// delim, empty pieces kept (at either end and between adjacent
// delimiters); s itself when delim does not occur; every character when
// delim is empty, as Flink's SPLIT.
func splitKernel(e *Expr, _ []types.DataType) (kernel, error) {
	t := e.Type
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		lim := newStrLimit(ec, "SPLIT", true)
		return strictRows(ec, clsBin, args, func(i int, out *vec) (bool, error) {
			s, d := args[0].str[i], args[1].str[i]
			var parts []string
			if d == "" {
				for _, r := range s {
					parts = append(parts, string(r))
				}
			} else {
				parts = strings.Split(s, d)
			}
			vals := make([]any, len(parts))
			for j, p := range parts {
				vals[j] = p
			}
			enc := types.AppendComposite(nil, t, nil, vals)
			ok, err := lim.admit(i, int64(len(enc)))
			out.bin[i] = enc
			return ok, err
		})
	}, nil
}

// strToMapKernel is STR_TO_MAP(s [, sep, kv]) as SqlFunctionUtils#strToMap
// computes it: s split around the regular expression sep (',' by default)
// as Java's String.split does (trailing empty pieces dropped), then each
// piece at the first match of kv ('=' by default) into key and value; a
// piece without kv is a key with a NULL value, a repeated key keeps its
// first place and its last value, and an empty s is an empty map. The
// delimiters are RE2 patterns; one that does not compile fails the query,
// as Java's PatternSyntaxException does.
func strToMapKernel(e *Expr, _ []types.DataType) (kernel, error) {
	t := e.Type
	var cache regexCache
	pattern := func(p string) (*regexp.Regexp, error) {
		re := cache.get(p)
		if re == nil {
			return nil, userErrorf("STR_TO_MAP: the delimiter %q is not a valid regular expression (Braid's patterns are Go RE2 syntax)", p)
		}
		return re, nil
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		lim := newStrLimit(ec, "STR_TO_MAP", true)
		return strictRows(ec, clsBin, args, func(i int, out *vec) (bool, error) {
			s, sep, kv := args[0].str[i], ",", "="
			if len(args) == 3 {
				sep, kv = args[1].str[i], args[2].str[i]
			}
			var keys, vals []any
			if s != "" {
				sepRE, err := pattern(sep)
				if err != nil {
					return false, err
				}
				kvRE, err := pattern(kv)
				if err != nil {
					return false, err
				}
				at := map[string]int{}
				for _, pair := range javaSplit(sepRE, s) {
					var v any
					k := pair
					if parts := kvRE.Split(pair, 2); len(parts) == 2 {
						k, v = parts[0], parts[1]
					}
					if j, ok := at[k]; ok {
						vals[j] = v
						continue
					}
					at[k] = len(keys)
					keys, vals = append(keys, k), append(vals, v)
				}
			}
			enc := types.AppendComposite(nil, t, keys, vals)
			ok, err := lim.admit(i, int64(len(enc)))
			out.bin[i] = enc
			return ok, err
		})
	}, nil
}

// javaSplit splits s around the matches of re as Java's String.split(re)
// does: trailing empty pieces are dropped, so a string of separators
// splits into nothing.
func javaSplit(re *regexp.Regexp, s string) []string {
	parts := re.Split(s, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// UnnestFields returns the columns UNNEST makes of each element of a
// collection of type t, named as Calcite names them: an ARRAY's element
// EXPR$0 (a ROW element's fields, under their names), a MAP's KEY and
// VALUE, a MULTISET's element EXPR$0, then ORDINALITY (INT NOT NULL) when
// ordinality is set. outer makes every column nullable (LEFT JOIN). ok is
// false when t is not a collection.
func UnnestFields(t types.DataType, ordinality, outer bool) (fields []types.Field, ok bool) {
	switch {
	case t.IsArray() && t.Elem().IsRow():
		e := t.Elem()
		for i := 0; i < e.NumFields(); i++ {
			f := e.FieldAt(i)
			if e.Nullable() {
				f.Type = f.Type.WithNullable(true)
			}
			fields = append(fields, f)
		}
	case t.IsArray(), t.IsMultiset():
		fields = []types.Field{{Name: "EXPR$0", Type: t.Elem()}}
	case t.IsMap():
		fields = []types.Field{{Name: "KEY", Type: t.MapKey()}, {Name: "VALUE", Type: t.MapValue()}}
	default:
		return nil, false
	}
	if ordinality {
		fields = append(fields, types.Field{Name: "ORDINALITY", Type: types.Int.WithNullable(false)})
	}
	if outer {
		for i := range fields {
			fields[i].Type = fields[i].Type.WithNullable(true)
		}
	}
	return fields, true
}
