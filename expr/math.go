package expr

import (
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

func floatMap(ec *evalCtx, a *vec, f func(float64) float64) *vec {
	out := &vec{n: ec.n, valid: a.valid, f64: make([]float64, ec.n)}
	for i, x := range a.f64[:ec.n] {
		out.f64[i] = f(x)
	}
	return out
}

func sqrtKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return floatMap(ec, args[0], math.Sqrt), nil }, nil
}

func expKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return floatMap(ec, args[0], math.Exp), nil }, nil
}

func lnKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return floatMap(ec, args[0], math.Log), nil }, nil
}

func log10Kernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return floatMap(ec, args[0], math.Log10), nil }, nil
}

func log2Kernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return floatMap(ec, args[0], math.Log2), nil }, nil
}

func powerKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), f64: make([]float64, ec.n)}
		for i := range out.f64 {
			out.f64[i] = math.Pow(args[0].f64[i], args[1].f64[i])
		}
		return out, nil
	}, nil
}

func floorCeilNumKernel(e *Expr, at []types.DataType) (kernel, error) {
	ceil := e.Func == "CEIL"
	t := at[0]
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		switch classOf(t) {
		case clsInt:
			return a, nil
		case clsFloat:
			if ceil {
				return floatMap(ec, a, math.Ceil), nil
			}
			return floatMap(ec, a, math.Floor), nil
		}
		out := &vec{n: ec.n, valid: a.valid, dec: make([]decimal128.Num, ec.n)}
		div := pow10(int32(t.Scale))
		for i, x := range a.dec[:ec.n] {
			q, m := new(big.Int).DivMod(x.BigInt(), div, new(big.Int)) // Euclidean: floor for div > 0
			if ceil && m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			out.dec[i] = decimal128.FromBigInt(q)
		}
		return out, nil
	}, nil
}

func roundKernel(e *Expr, at []types.DataType) (kernel, error) {
	rt := e.Type
	trunc := e.Func == "TRUNCATE"
	t := at[0]
	d := int32(0)
	if v, ok := e.Args[1].Value.(int64); ok {
		d = int32(v)
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		switch classOf(t) {
		case clsInt:
			out := &vec{n: ec.n, valid: a.valid, i64: make([]int64, ec.n)}
			for i, x := range a.i64[:ec.n] {
				out.i64[i] = x
				if d < 0 {
					u := new(big.Int).Exp(bigTen, big.NewInt(int64(-d)), nil)
					var z *big.Int
					if trunc {
						z = new(big.Int).Quo(big.NewInt(x), u)
					} else {
						z = divRoundHalfUp(big.NewInt(x), u)
					}
					out.i64[i] = wrapOne(z.Mul(z, u).Int64(), t.Kind)
				}
			}
			return out, nil
		case clsFloat:
			out := &vec{n: ec.n, valid: a.valid, f64: make([]float64, ec.n)}
			for i, x := range a.f64[:ec.n] {
				out.f64[i] = roundFloat(roundDouble(x, d, trunc), t.Kind)
			}
			return out, nil
		}
		out := &vec{n: ec.n, valid: a.valid, dec: make([]decimal128.Num, ec.n)}
		s := int32(t.Scale)
		for i, x := range a.dec[:ec.n] {
			var z *big.Int
			if d >= s {
				z = x.BigInt()
			} else if trunc {
				u := pow10(s - d)
				z = new(big.Int).Quo(x.BigInt(), u)
				z.Mul(z, pow10(max(0, int32(rt.Scale)-d)))
			} else {
				z = divRoundHalfUp(x.BigInt(), pow10(s-d))
				if d < 0 {
					z.Mul(z, pow10(-d))
				}
			}
			z = rescaleBig(z, max(d, 0), int32(rt.Scale))
			if d >= s {
				z = rescaleBig(x.BigInt(), s, int32(rt.Scale))
			}
			out.dec[i] = decimal128.FromBigInt(z)
		}
		return out, nil
	}, nil
}

// roundDouble rounds half away from zero at d decimal places (through the
// decimal representation, as Flink rounds a DOUBLE via BigDecimal).
func roundDouble(x float64, d int32, trunc bool) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, ok := new(big.Rat).SetString(formatExact(x))
	if !ok {
		return x
	}
	scale := new(big.Rat).SetInt(pow10(abs32(d)))
	if d >= 0 {
		r.Mul(r, scale)
	} else {
		r.Quo(r, scale)
	}
	var z *big.Int
	if trunc {
		z = new(big.Int).Quo(r.Num(), r.Denom())
	} else {
		z = divRoundHalfUp(r.Num(), r.Denom())
	}
	out := new(big.Rat).SetInt(z)
	if d >= 0 {
		out.Quo(out, scale)
	} else {
		out.Mul(out, scale)
	}
	f, _ := out.Float64()
	return f
}

func formatExact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}
