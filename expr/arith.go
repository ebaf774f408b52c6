package expr

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// wrapInts narrows 64-bit results to the width of kind, wrapping on
// overflow as Java arithmetic does.
func wrapInts(v []int64, k types.Kind) {
	switch k {
	case types.KindTinyInt:
		for i, x := range v {
			v[i] = int64(int8(x))
		}
	case types.KindSmallInt:
		for i, x := range v {
			v[i] = int64(int16(x))
		}
	case types.KindInt:
		for i, x := range v {
			v[i] = int64(int32(x))
		}
	}
}

func roundFloats(v []float64, k types.Kind) {
	if k == types.KindFloat {
		for i, x := range v {
			v[i] = float64(float32(x))
		}
	}
}

func arithKernel(op string, ta, tb, rt types.DataType) (kernel, error) {
	switch {
	case rt.IsInteger() && ta.IsInteger() && tb.IsInteger():
		return intArith(op, rt.Kind), nil
	case rt.Kind == types.KindFloat || rt.Kind == types.KindDouble:
		return floatArith(op, rt.Kind), nil
	case rt.Kind == types.KindDecimal:
		return decArith(op, int32(ta.Scale), int32(tb.Scale), rt), nil
	case ta.IsTemporal() && tb.IsInterval():
		return temporalPlusInterval(op, ta, tb), nil
	case ta.IsInterval() && tb.IsInterval():
		return intArith(op, types.KindBigInt), nil
	case ta.IsInterval() && tb.Kind == types.KindDouble:
		return intervalScale(op), nil
	}
	return nil, fmt.Errorf("expr: no arithmetic %s for %v and %v", op, ta, tb)
}

func intArith(op string, k types.Kind) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0].i64[:ec.n], args[1].i64[:ec.n]
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), i64: make([]int64, ec.n)}
		r := out.i64
		switch op {
		case "+":
			for i := range r {
				r[i] = a[i] + b[i]
			}
		case "-":
			for i := range r {
				r[i] = a[i] - b[i]
			}
		case "*":
			for i := range r {
				r[i] = a[i] * b[i]
			}
		case "/", "%":
			for i := range r {
				if b[i] == 0 {
					if out.isNull(i) || !ec.isActive(i) {
						continue
					}
					return nil, types.WithClass(fmt.Errorf("expr: division by zero in '%s' (%d %s 0)", op, a[i], op), types.ClassUser)
				}
				if op == "/" {
					r[i] = a[i] / b[i]
				} else {
					r[i] = a[i] % b[i]
				}
			}
		}
		wrapInts(r, k)
		return out, nil
	}
}

func floatArith(op string, k types.Kind) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0].f64[:ec.n], args[1].f64[:ec.n]
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), f64: make([]float64, ec.n)}
		r := out.f64
		switch op {
		case "+":
			for i := range r {
				r[i] = a[i] + b[i]
			}
		case "-":
			for i := range r {
				r[i] = a[i] - b[i]
			}
		case "*":
			for i := range r {
				r[i] = a[i] * b[i]
			}
		case "/":
			for i := range r {
				r[i] = a[i] / b[i]
			}
		case "%":
			for i := range r {
				r[i] = math.Mod(a[i], b[i])
			}
		}
		roundFloats(r, k)
		return out, nil
	}
}

var bigTen = big.NewInt(10)

func pow10(n int32) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// divRoundHalfUp divides with rounding half away from zero, as Java's
// RoundingMode.HALF_UP does.
func divRoundHalfUp(x, y *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(x, y, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(new(big.Int).Abs(y)) >= 0 {
		if (x.Sign() < 0) != (y.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// rescaleBig changes the scale of an unscaled value, rounding half up.
func rescaleBig(x *big.Int, from, to int32) *big.Int {
	switch {
	case to > from:
		return new(big.Int).Mul(x, pow10(to-from))
	case to < from:
		return divRoundHalfUp(x, pow10(from-to))
	}
	return x
}

var maxDec [39]*big.Int

func init() {
	for p := 1; p <= 38; p++ {
		maxDec[p] = new(big.Int).Sub(pow10(int32(p)), big.NewInt(1))
	}
}

// fitsDecimal reports whether x has at most p digits.
func fitsDecimal(x *big.Int, p int) bool {
	if p <= 0 || p > 38 {
		return false
	}
	return new(big.Int).Abs(x).Cmp(maxDec[p]) <= 0
}

func decArith(op string, sa, sb int32, rt types.DataType) kernel {
	rs, rp := int32(rt.Scale), rt.Precision
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0].dec[:ec.n], args[1].dec[:ec.n]
		valid := andValid(ec.n, args...)
		if valid == nil {
			valid = fill(make([]bool, ec.n), true)
		}
		out := &vec{n: ec.n, valid: valid, dec: make([]decimal128.Num, ec.n)}
		fast := (op == "+" || op == "-") && rp < 38
		for i := range out.dec {
			if !valid[i] {
				continue
			}
			if fast {
				x, y := a[i].IncreaseScaleBy(rs-sa), b[i].IncreaseScaleBy(rs-sb)
				var z decimal128.Num
				if op == "+" {
					z = x.Add(y)
				} else {
					z = x.Sub(y)
				}
				if z.FitsInPrecision(int32(rp)) {
					out.dec[i] = z
				} else {
					valid[i] = false
				}
				continue
			}
			x, y := a[i].BigInt(), b[i].BigInt()
			var z *big.Int
			switch op {
			case "+", "-":
				x, y = rescaleBig(x, sa, rs), rescaleBig(y, sb, rs)
				if op == "+" {
					z = x.Add(x, y)
				} else {
					z = x.Sub(x, y)
				}
			case "*":
				z = rescaleBig(new(big.Int).Mul(x, y), sa+sb, rs)
			case "/", "%":
				if y.Sign() == 0 {
					if !ec.isActive(i) {
						valid[i] = false
						continue
					}
					return nil, types.WithClass(fmt.Errorf("expr: division by zero in '%s' (%s %s 0)", op, a[i].ToString(sa), op), types.ClassUser)
				}
				if op == "/" {
					// a/10^sa / (b/10^sb) at scale rs = a*10^(rs-sa+sb) / b.
					e := rs - sa + sb
					if e >= 0 {
						z = divRoundHalfUp(new(big.Int).Mul(x, pow10(e)), y)
					} else {
						z = divRoundHalfUp(x, new(big.Int).Mul(y, pow10(-e)))
					}
				} else {
					s := max(sa, sb)
					z = new(big.Int).Rem(rescaleBig(x, sa, s), rescaleBig(y, sb, s))
					z = rescaleBig(z, s, rs)
				}
			}
			if !fitsDecimal(z, rp) {
				// NB: Flink yields NULL when a DECIMAL result overflows.
				valid[i] = false
				continue
			}
			out.dec[i] = decimal128.FromBigInt(z)
		}
		return out, nil
	}
}

func negKernel(rt types.DataType) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := &vec{n: ec.n, valid: a.valid}
		switch classOf(rt) {
		case clsInt:
			out.i64 = make([]int64, ec.n)
			for i, x := range a.i64[:ec.n] {
				out.i64[i] = -x
			}
			wrapInts(out.i64, rt.Kind)
		case clsFloat:
			out.f64 = make([]float64, ec.n)
			for i, x := range a.f64[:ec.n] {
				out.f64[i] = -x
			}
		case clsDec:
			out.dec = make([]decimal128.Num, ec.n)
			for i, x := range a.dec[:ec.n] {
				out.dec[i] = x.Negate()
			}
		}
		return out, nil
	}
}

func absKernel(rt types.DataType) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := &vec{n: ec.n, valid: a.valid}
		switch classOf(rt) {
		case clsInt:
			out.i64 = make([]int64, ec.n)
			for i, x := range a.i64[:ec.n] {
				if x < 0 {
					x = -x
				}
				out.i64[i] = x
			}
			wrapInts(out.i64, rt.Kind)
		case clsFloat:
			out.f64 = make([]float64, ec.n)
			for i, x := range a.f64[:ec.n] {
				out.f64[i] = math.Abs(x)
			}
		case clsDec:
			out.dec = make([]decimal128.Num, ec.n)
			for i, x := range a.dec[:ec.n] {
				out.dec[i] = x.Abs()
			}
		}
		return out, nil
	}
}

type cmpOp uint8

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

func parseCmp(op string) cmpOp {
	return map[string]cmpOp{"=": cmpEq, "<>": cmpNe, "<": cmpLt, "<=": cmpLe, ">": cmpGt, ">=": cmpGe}[op]
}

func cmpOrdered[T cmp.Ordered](op cmpOp, a, b []T, out []bool) {
	b = b[:len(a)]
	out = out[:len(a)]
	switch op {
	case cmpEq:
		for i := range a {
			out[i] = a[i] == b[i]
		}
	case cmpNe:
		for i := range a {
			out[i] = a[i] != b[i]
		}
	case cmpLt:
		for i := range a {
			out[i] = a[i] < b[i]
		}
	case cmpLe:
		for i := range a {
			out[i] = a[i] <= b[i]
		}
	case cmpGt:
		for i := range a {
			out[i] = a[i] > b[i]
		}
	case cmpGe:
		for i := range a {
			out[i] = a[i] >= b[i]
		}
	}
}

func cmpBy(op cmpOp, n int, c func(i int) int, out []bool) {
	for i := 0; i < n; i++ {
		r := c(i)
		switch op {
		case cmpEq:
			out[i] = r == 0
		case cmpNe:
			out[i] = r != 0
		case cmpLt:
			out[i] = r < 0
		case cmpLe:
			out[i] = r <= 0
		case cmpGt:
			out[i] = r > 0
		case cmpGe:
			out[i] = r >= 0
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareVecs compares two vecs of one class row by row.
func compareVecs(op cmpOp, n int, a, b *vec) *vec {
	out := &vec{n: n, valid: andValid(n, a, b), b: make([]bool, n)}
	switch {
	case a.i64 != nil:
		cmpOrdered(op, a.i64[:n], b.i64, out.b)
	case a.f64 != nil:
		cmpOrdered(op, a.f64[:n], b.f64, out.b)
	case a.str != nil:
		cmpOrdered(op, a.str[:n], b.str, out.b)
	case a.dec != nil:
		cmpBy(op, n, func(i int) int { return a.dec[i].Cmp(b.dec[i]) }, out.b)
	case a.bin != nil:
		cmpBy(op, n, func(i int) int { return bytes.Compare(a.bin[i], b.bin[i]) }, out.b)
	case a.b != nil:
		cmpBy(op, n, func(i int) int { return b2i(a.b[i]) - b2i(b.b[i]) }, out.b)
	default:
		out.valid = make([]bool, n)
	}
	return out
}

func compareKernel(op string, ta, tb types.DataType) (kernel, error) {
	if ta.IsComposite() && (op == "=" || op == "<>") {
		return compareCompositeKernel(op, ta, tb)
	}
	if classOf(ta) != classOf(tb) && ta.Kind != types.KindNull && tb.Kind != types.KindNull {
		return nil, fmt.Errorf("expr: cannot compare %v with %v", ta, tb)
	}
	if ta.Kind == types.KindDecimal && ta.Scale != tb.Scale {
		return nil, fmt.Errorf("expr: DECIMAL comparison needs one scale, got %v and %v", ta, tb)
	}
	c := parseCmp(op)
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		if classOfVec(args[0]) != classOfVec(args[1]) {
			return &vec{n: ec.n, valid: make([]bool, ec.n), b: make([]bool, ec.n)}, nil
		}
		return compareVecs(c, ec.n, args[0], args[1]), nil
	}, nil
}

func betweenKernel(not bool, ta, tb, tc types.DataType) (kernel, error) {
	if _, err := compareKernel(">=", ta, tb); err != nil {
		return nil, err
	}
	if _, err := compareKernel("<=", ta, tc); err != nil {
		return nil, err
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		r := and3(ec.n, compareVecs(cmpGe, ec.n, args[0], args[1]), compareVecs(cmpLe, ec.n, args[0], args[2]))
		if not {
			r = not3(r)
		}
		return r, nil
	}, nil
}

func inKernel(not bool, at []types.DataType) (kernel, error) {
	for _, t := range at[1:] {
		if _, err := compareKernel("=", at[0], t); err != nil {
			return nil, err
		}
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		var r *vec
		for _, x := range args[1:] {
			eq := compareVecs(cmpEq, ec.n, args[0], x)
			if r == nil {
				r = eq
			} else {
				r = or3(ec.n, r, eq)
			}
		}
		if not {
			r = not3(r)
		}
		return r, nil
	}, nil
}

// and3 is SQL's three-valued AND.
func and3(n int, x, y *vec) *vec {
	out := &vec{n: n, b: make([]bool, n)}
	if x.valid == nil && y.valid == nil {
		for i := range out.b {
			out.b[i] = x.b[i] && y.b[i]
		}
		return out
	}
	out.valid = make([]bool, n)
	for i := range out.b {
		xv, yv := !x.isNull(i), !y.isNull(i)
		switch {
		case (xv && !x.b[i]) || (yv && !y.b[i]):
			out.valid[i] = true
		case xv && yv:
			out.valid[i], out.b[i] = true, true
		}
	}
	return out
}

// or3 is SQL's three-valued OR.
func or3(n int, x, y *vec) *vec {
	out := &vec{n: n, b: make([]bool, n)}
	if x.valid == nil && y.valid == nil {
		for i := range out.b {
			out.b[i] = x.b[i] || y.b[i]
		}
		return out
	}
	out.valid = make([]bool, n)
	for i := range out.b {
		xv, yv := !x.isNull(i), !y.isNull(i)
		switch {
		case (xv && x.b[i]) || (yv && y.b[i]):
			out.valid[i], out.b[i] = true, true
		case xv && yv:
			out.valid[i] = true
		}
	}
	return out
}

func not3(x *vec) *vec {
	out := &vec{n: x.n, valid: x.valid, b: make([]bool, x.n)}
	for i, v := range x.b[:x.n] {
		out.b[i] = !v
	}
	return out
}
