package expr

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// floatFn is the kernel builder of a DOUBLE function of one DOUBLE.
func floatFn(f func(float64) float64) func(*Expr, []types.DataType) (kernel, error) {
	return func(*Expr, []types.DataType) (kernel, error) {
		return func(ec *evalCtx, args []*vec) (*vec, error) { return floatMap(ec, args[0], f), nil }, nil
	}
}

// floatFn2 is the kernel builder of a DOUBLE function of two DOUBLEs.
func floatFn2(f func(a, b float64) float64) func(*Expr, []types.DataType) (kernel, error) {
	return func(*Expr, []types.DataType) (kernel, error) {
		return func(ec *evalCtx, args []*vec) (*vec, error) {
			out := &vec{n: ec.n, valid: andValid(ec.n, args...), f64: make([]float64, ec.n)}
			for i := range out.f64 {
				out.f64[i] = f(args[0].f64[i], args[1].f64[i])
			}
			return out, nil
		}, nil
	}
}

// constFn is the kernel builder of a niladic DOUBLE constant (PI, E).
func constFn(x float64) func(*Expr, []types.DataType) (kernel, error) {
	return func(*Expr, []types.DataType) (kernel, error) {
		return func(ec *evalCtx, _ []*vec) (*vec, error) {
			return &vec{n: ec.n, f64: fill(make([]float64, ec.n), x)}, nil
		}, nil
	}
}

// logKernel is LOG(x), the natural logarithm, and LOG(b, x) = ln x / ln b
// (SqlFunctionUtils#log).
func logKernel(e *Expr, at []types.DataType) (kernel, error) {
	if len(at) == 1 {
		return floatFn(math.Log)(e, at)
	}
	return floatFn2(func(b, x float64) float64 { return math.Log(x) / math.Log(b) })(e, at)
}

func cot(x float64) float64 { return 1 / math.Tan(x) }

// degrees and radians multiply by one constant, as Java's Math.toDegrees
// and Math.toRadians do.
func degrees(x float64) float64 { return x * (180 / math.Pi) }

func radians(x float64) float64 { return x * (math.Pi / 180) }

// resolveSign types SIGN(x): the type of x.
func resolveSign(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	a := fillNull(args[0], types.Int)
	if !a.Type.IsNumeric() {
		return nil, userErrorf("cannot apply '%s' to arguments of type %v", name, a.Type)
	}
	return call(name, a.Type, a), nil
}

// signKernel is SIGN(x): -1, 0 or 1 in x's type (a DECIMAL keeps its
// scale, DecimalDataUtils.sign; a DOUBLE NaN stays NaN, Math.signum).
func signKernel(_ *Expr, at []types.DataType) (kernel, error) {
	t := at[0]
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		switch classOf(t) {
		case clsInt:
			out := &vec{n: ec.n, valid: a.valid, i64: make([]int64, ec.n)}
			for i, x := range a.i64[:ec.n] {
				out.i64[i] = int64(cmp.Compare(x, 0))
			}
			return out, nil
		case clsFloat:
			return floatMap(ec, a, func(x float64) float64 {
				if x > 0 {
					return 1
				} else if x < 0 {
					return -1
				}
				return x
			}), nil
		}
		one := decimal128.FromBigInt(pow10(int32(t.Scale)))
		out := &vec{n: ec.n, valid: a.valid, dec: make([]decimal128.Num, ec.n)}
		for i, x := range a.dec[:ec.n] {
			switch x.Sign() {
			case 1:
				out.dec[i] = one
			case -1:
				out.dec[i] = one.Negate()
			}
		}
		return out, nil
	}, nil
}

// javaRandom is java.util.Random's generator, so that RAND(seed) and
// RAND_INTEGER(seed, n) give the numbers Flink gives for one seed.
type javaRandom struct{ seed int64 }

const javaRandomMask = 1<<48 - 1

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ 0x5DEECE66D) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*0x5DEECE66D + 0xB) & javaRandomMask
	return int32(uint64(r.seed) >> (48 - bits))
}

func (r *javaRandom) float64() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) / (1 << 53)
}

// intN is Random.nextInt(bound) for bound > 0.
func (r *javaRandom) intN(bound int32) int32 {
	if bound&-bound == bound {
		return int32((int64(bound) * int64(r.next(31))) >> 31)
	}
	for {
		bits := r.next(31)
		v := bits % bound
		if bits-v+(bound-1) >= 0 {
			return v
		}
	}
}

// source is where RAND draws: a java.util.Random for a seed, the process's
// generator otherwise.
type source struct{ java *javaRandom }

func (s source) float64() float64 {
	if s.java != nil {
		return s.java.float64()
	}
	return rand.Float64()
}

func (s source) intN(n int32) int32 {
	if s.java != nil {
		return s.java.intN(n)
	}
	return rand.Int32N(n)
}

// resolveRand types RAND([seed]) and RAND_INTEGER([seed,] bound). The seed
// must be a literal: Flink seeds one generator per subtask when it starts.
func resolveRand(name string, args []*Expr) (*Expr, error) {
	isInt := name == "RAND_INTEGER"
	lo := 0
	if isInt {
		lo = 1
	}
	if err := argCount(name, args, lo, lo+1); err != nil {
		return nil, err
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		x, err := integerArg(name, a)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	if len(args) == lo+1 && (args[0].Op != OpLiteral || args[0].Value == nil) {
		return nil, userErrorf("function %s expects an integer literal as its seed", name)
	}
	if isInt {
		return call(name, types.Int.WithNullable(out[len(out)-1].Type.Nullable()), out...), nil
	}
	return call(name, types.Double.WithNullable(false), out...), nil
}

func randKernel(e *Expr, at []types.DataType) (kernel, error) {
	isInt := e.Func == "RAND_INTEGER"
	seeded := len(at) == 2 || (!isInt && len(at) == 1)
	var src source
	if seeded {
		src.java = newJavaRandom(e.Args[0].Value.(int64))
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		if !isInt {
			out := &vec{n: ec.n, f64: make([]float64, ec.n)}
			for i := range out.f64 {
				out.f64[i] = src.float64()
			}
			return out, nil
		}
		bound := args[len(args)-1]
		return strictRows(ec, clsInt, []*vec{bound}, func(i int, out *vec) (bool, error) {
			n := bound.i64[i]
			if n <= 0 || n > math.MaxInt32 {
				return false, fmt.Errorf("expr: RAND_INTEGER: bound must be positive, got %d", n)
			}
			out.i64[i] = int64(src.intN(int32(n)))
			return true, nil
		})
	}, nil
}
