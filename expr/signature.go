package expr

import "github.com/braidflow/braid/types"

// argKind is what one argument of a plain function accepts.
type argKind uint8

const (
	argStr    argKind = iota // CHAR/VARCHAR, as it is
	argInt                   // an integer type, as it is
	argDouble                // any numeric, cast to DOUBLE
)

// signature types the plain functions: a fixed list of arguments, the
// last opt of them optional, and a result that is NULL when any argument
// is (nullable if any argument is), or may be NULL on any input when
// mayBeNull is set (LPAD with a negative length, a bad regex).
type signature struct {
	args      []argKind
	opt       int
	result    func(args []*Expr) types.DataType
	mayBeNull bool
}

func sig(result types.DataType, args ...argKind) signature {
	return signature{args: args, result: func([]*Expr) types.DataType { return result }}
}

// optional makes the last n arguments optional.
func (s signature) optional(n int) signature { s.opt = n; return s }

// nullable marks a result that may be NULL on non-NULL arguments.
func (s signature) nullable() signature { s.mayBeNull = true; return s }

// resultOf derives the result type from the typed arguments.
func (s signature) resultOf(f func(args []*Expr) types.DataType) signature { s.result = f; return s }

func (s signature) resolve(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, len(s.args)-s.opt, len(s.args)); err != nil {
		return nil, err
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		switch s.args[i] {
		case argStr:
			if !stringish(a.Type) {
				return nil, userErrorf("function %s expects a string as argument %d, got %v", name, i+1, a.Type)
			}
			out[i] = fillNull(a, types.String)
		case argInt:
			x, err := integerArg(name, a)
			if err != nil {
				return nil, err
			}
			out[i] = x
		case argDouble:
			if !a.Type.IsNumeric() && a.Type.Kind != types.KindNull {
				return nil, userErrorf("function %s expects a number as argument %d, got %v", name, i+1, a.Type)
			}
			out[i] = implicit(a, types.Double)
		}
	}
	t := s.result(out)
	return call(name, t.WithNullable(s.mayBeNull || anyNullable(typesOf(out)...)), out...), nil
}

// strictRows evaluates a row-wise function that is NULL where any argument
// is: it calls f for every other row, which sets out's value at i, or
// returns false for NULL. An error on a row whose value is discarded
// (ec.active) makes it NULL instead of failing.
func strictRows(ec *evalCtx, c class, args []*vec, f func(i int, out *vec) (bool, error)) (*vec, error) {
	out := newVec(c, ec.n)
	out.valid = make([]bool, ec.n)
rows:
	for i := 0; i < ec.n; i++ {
		for _, a := range args {
			if a.isNull(i) {
				continue rows
			}
		}
		ok, err := f(i, out)
		if err != nil {
			if ec.isActive(i) {
				return nil, err
			}
			ok = false
		}
		out.valid[i] = ok
	}
	return out, nil
}
