package expr

import (
	"strings"

	"github.com/braidflow/braid/types"
)

func argCount(name string, args []*Expr, lo, hi int) error {
	if len(args) < lo || (hi >= 0 && len(args) > hi) {
		return userErrorf("invalid number of arguments to function '%s': %d", name, len(args))
	}
	return nil
}

// unitArg reads the literal unit name of TIMESTAMPDIFF and friends.
func unitArg(name string, e *Expr) (string, error) {
	if e.Op == OpLiteral {
		if s, ok := e.Value.(string); ok {
			u := strings.ToUpper(strings.TrimSpace(s))
			if u == "SQL_TSI_"+strings.TrimPrefix(u, "SQL_TSI_") {
				u = strings.TrimPrefix(u, "SQL_TSI_")
			}
			switch u {
			case "NANOSECOND", "MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY",
				"WEEK", "MONTH", "QUARTER", "YEAR", "DOW", "DOY", "EPOCH", "DECADE", "CENTURY", "MILLENNIUM":
				return u, nil
			}
			return "", userErrorf("function %s: unknown time unit '%s'", name, s)
		}
	}
	return "", userErrorf("function %s expects a time unit as its first argument", name)
}

// fillNull gives NULL-typed arguments the type t.
func fillNull(e *Expr, t types.DataType) *Expr {
	if e.Type.Kind == types.KindNull {
		return implicit(e, t.WithNullable(true))
	}
	return e
}

func resolveArith(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if a.Type.Kind == types.KindNull && b.Type.Kind == types.KindNull {
		a, b = implicit(a, types.Int.WithNullable(true)), implicit(b, types.Int.WithNullable(true))
	}
	a, b = fillNull(a, b.Type), fillNull(b, a.Type)
	ta, tb := a.Type, b.Type
	nullable := anyNullable(ta, tb)
	if name == "MOD" {
		name = "%"
	}
	out := func(t types.DataType, x, y *Expr) (*Expr, error) {
		return call(name, t.WithNullable(nullable), x, y), nil
	}
	switch {
	case ta.IsNumeric() && tb.IsNumeric():
		if ta.Kind == types.KindDouble || tb.Kind == types.KindDouble || ta.Kind == types.KindFloat || tb.Kind == types.KindFloat {
			r, _ := common2(ta, tb)
			return out(r, implicit(a, r), implicit(b, r))
		}
		if ta.Kind == types.KindDecimal || tb.Kind == types.KindDecimal {
			da, db := asDecimal(ta), asDecimal(tb)
			p1, s1, p2, s2 := da.Precision, da.Scale, db.Precision, db.Scale
			var r types.DataType
			switch name {
			case "+", "-":
				s := max(s1, s2)
				r = adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
			case "*":
				r = adjustDecimal(p1+p2+1, s1+s2)
			case "/":
				s := max(6, s1+p2+1)
				r = adjustDecimal(p1-s1+s2+s, s)
			case "%":
				if s1 == 0 && s2 == 0 {
					r = db
				} else {
					s := max(s1, s2)
					r = adjustDecimal(min(p1-s1, p2-s2)+s, s)
				}
			}
			return out(r, implicit(a, da), implicit(b, db))
		}
		// Integers are computed in 64 bits and wrapped to the result type.
		r := ta
		if name == "%" || intRank(tb.Kind) > intRank(ta.Kind) {
			r = tb
		}
		return out(r, a, b)
	case ta.IsInterval() && tb.IsInterval() && ta.Kind == tb.Kind && (name == "+" || name == "-"):
		return out(ta, a, b)
	case (ta.IsTemporal()) && tb.IsInterval() && (name == "+" || name == "-"):
		return out(ta, a, b)
	case ta.IsInterval() && tb.IsTemporal() && name == "+":
		// Normalise to temporal + interval.
		return out(tb, b, a)
	case ta.IsInterval() && tb.IsNumeric() && (name == "*" || name == "/"):
		return out(ta, a, implicit(b, types.Double))
	case ta.IsNumeric() && tb.IsInterval() && name == "*":
		return out(tb, b, implicit(a, types.Double))
	}
	return nil, cannotApply(name, args)
}

// comparable returns the operand type two compared values are cast to.
func comparable2(a, b types.DataType) (types.DataType, bool) {
	switch {
	case a.IsNumeric() && b.IsNumeric():
		r, _ := common2(a, b)
		if r.Kind == types.KindDecimal {
			// Both sides are rescaled to one DECIMAL; integers keep their own.
			return r, true
		}
		return r, true
	case a.IsString() && b.IsString():
		return types.String, true
	case a.IsBinary() && b.IsBinary():
		return types.Bytes, true
	case a.Kind == b.Kind && a.Kind != types.KindNull:
		return common2(a, b)
	case a.Kind == types.KindDate && b.IsTimestamp(), b.Kind == types.KindDate && a.IsTimestamp(),
		a.IsTimestamp() && b.IsTimestamp():
		return common2(a, b)
	}
	return types.DataType{}, false
}

// castOperand casts a compared operand to t unless the kernels can read it
// as it is (integers are 64-bit inside, strings and binaries are compared
// as bytes).
func castOperand(e *Expr, t types.DataType) *Expr {
	if t.IsComposite() {
		return implicit(e, t)
	}
	if (e.Type.IsInteger() && t.IsInteger()) || (e.Type.IsString() && t.IsString()) ||
		(e.Type.IsBinary() && t.IsBinary()) {
		return e
	}
	if e.Type.Kind == t.Kind && e.Type.Kind != types.KindDecimal {
		return e
	}
	return implicit(e, t)
}

func resolveCompare(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if a.Type.Kind == types.KindNull && b.Type.Kind == types.KindNull {
		return call(name, types.Boolean, a, b), nil
	}
	a, b = fillNull(a, b.Type), fillNull(b, a.Type)
	t, ok := comparable2(a.Type, b.Type)
	if !ok || (t.IsComposite() && name != "=" && name != "<>") {
		return nil, cannotApply(name, args)
	}
	return call(name, types.Boolean.WithNullable(anyNullable(a.Type, b.Type)), castOperand(a, t), castOperand(b, t)), nil
}

func isBoolish(t types.DataType) bool { return t.Kind == types.KindBoolean || t.Kind == types.KindNull }

func resolveLogic(name string, args []*Expr) (*Expr, error) {
	lo, hi := 2, -1
	if name == "NOT" {
		lo, hi = 1, 1
	}
	if err := argCount(name, args, lo, hi); err != nil {
		return nil, err
	}
	var ts []types.DataType
	out := make([]*Expr, len(args))
	for i, a := range args {
		if !isBoolish(a.Type) {
			if len(args) == 1 {
				return nil, userErrorf("cannot apply '%s' to arguments of type %v", name, a.Type)
			}
			return nil, cannotApply(name, args)
		}
		out[i] = fillNull(a, types.Boolean)
		ts = append(ts, a.Type)
	}
	return call(name, types.Boolean.WithNullable(anyNullable(ts...)), out...), nil
}

func resolveIsNull(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	return call(name, types.Boolean.WithNullable(false), args...), nil
}

func resolveIsBool(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	if !isBoolish(args[0].Type) {
		return nil, userErrorf("cannot apply '%s' to arguments of type %v", name, args[0].Type)
	}
	return call(name, types.Boolean.WithNullable(false), fillNull(args[0], types.Boolean)), nil
}

func resolveBetween(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 3, 3); err != nil {
		return nil, err
	}
	var t types.DataType
	ok := true
	ct, cok := CommonType(args[0].Type, args[1].Type, args[2].Type)
	if cok && ct.Kind != types.KindNull {
		t, ok = comparable2(ct, ct)
	} else {
		ok = false
	}
	if !ok {
		return nil, userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args))
	}
	out := make([]*Expr, 3)
	for i, a := range args {
		out[i] = castOperand(fillNull(a, t), t)
	}
	return call(name, types.Boolean.WithNullable(ct.Nullable()), out...), nil
}

func resolveIn(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, -1); err != nil {
		return nil, err
	}
	ts := make([]types.DataType, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	ct, ok := CommonType(ts...)
	var t types.DataType
	if ok && ct.Kind != types.KindNull {
		t, ok = comparable2(ct, ct)
	}
	if !ok || ct.Kind == types.KindNull {
		return nil, userErrorf("values passed to %s operator must have compatible types, got %s", name, typeNames(args))
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		out[i] = castOperand(fillNull(a, t), t)
	}
	return call(name, types.Boolean.WithNullable(ct.Nullable()), out...), nil
}

func resolveCase(name string, args []*Expr) (*Expr, error) {
	if len(args) < 2 {
		return nil, argCount(name, args, 2, -1)
	}
	var results []types.DataType
	for i := 0; i+1 < len(args); i += 2 {
		if !isBoolish(args[i].Type) {
			return nil, userErrorf("CASE condition must be BOOLEAN, got %v", args[i].Type)
		}
		results = append(results, args[i+1].Type)
	}
	hasElse := len(args)%2 == 1
	if hasElse {
		results = append(results, args[len(args)-1].Type)
	}
	t, ok := CommonType(results...)
	if !ok {
		return nil, userErrorf("CASE branches have incompatible types %s", typeNames(exprsOfTypes(results)))
	}
	if !hasElse {
		t = t.WithNullable(true)
	}
	if t.Kind == types.KindNull {
		return nil, userErrorf("CASE needs at least one branch with a type other than NULL")
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		if i%2 == 0 && i+1 < len(args) {
			out[i] = fillNull(a, types.Boolean)
		} else {
			out[i] = implicit(a, t)
		}
	}
	return call(name, t, out...), nil
}

func exprsOfTypes(ts []types.DataType) []*Expr {
	out := make([]*Expr, len(ts))
	for i, t := range ts {
		out[i] = &Expr{Type: t}
	}
	return out
}

func resolveCoalesce(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, -1); err != nil {
		return nil, err
	}
	ts := make([]types.DataType, len(args))
	notNull := false
	for i, a := range args {
		ts[i] = a.Type
		notNull = notNull || !a.Type.Nullable()
	}
	t, ok := CommonType(ts...)
	if !ok || t.Kind == types.KindNull {
		return nil, userErrorf("cannot apply 'COALESCE' to arguments of type %s", typeNames(args))
	}
	t = t.WithNullable(!notNull)
	out := make([]*Expr, len(args))
	for i, a := range args {
		out[i] = implicit(a, t)
	}
	return call(name, t, out...), nil
}

func resolveIf(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 3, 3); err != nil {
		return nil, err
	}
	// IF(c, a, b) is CASE WHEN c THEN a ELSE b END.
	e, err := resolveCase("CASE", args)
	if err != nil {
		return nil, err
	}
	e.Func = "IF"
	return e, nil
}

func resolveNullIf(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	cmp, err := resolveCompare("=", args)
	if err != nil {
		return nil, cannotApply(name, args)
	}
	return call(name, args[0].Type.WithNullable(true), args[0], cmp), nil
}

func resolveNeg(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	t := args[0].Type
	if !t.IsNumeric() && !t.IsInterval() {
		label := name
		if name == "NEG" {
			label = "-"
		}
		return nil, userErrorf("cannot apply '%s' to arguments of type %v", label, t)
	}
	return call(name, t, args...), nil
}

func stringish(t types.DataType) bool { return t.IsString() || t.Kind == types.KindNull }

func resolveLike(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 3); err != nil {
		return nil, err
	}
	for _, a := range args {
		if !stringish(a.Type) {
			return nil, cannotApply(name, args)
		}
	}
	return call(name, types.Boolean.WithNullable(anyNullable(args[0].Type, args[1].Type)), fillStrings(args)...), nil
}

func fillStrings(args []*Expr) []*Expr {
	out := make([]*Expr, len(args))
	for i, a := range args {
		out[i] = fillNull(a, types.String)
	}
	return out
}

func resolveConcatOp(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	a, b := args[0].Type, args[1].Type
	if stringish(a) && stringish(b) {
		args = fillStrings(args)
		a, b = args[0].Type, args[1].Type
		n := int64(a.Length) + int64(b.Length)
		if n > types.MaxLength {
			n = types.MaxLength
		}
		return call(name, types.VarChar(int(n)).WithNullable(anyNullable(a, b)), args...), nil
	}
	if a.IsBinary() && b.IsBinary() {
		return call(name, types.Bytes.WithNullable(anyNullable(a, b)), args...), nil
	}
	return nil, cannotApply(name, args)
}

func resolveConcat(name string, args []*Expr) (*Expr, error) {
	lo := 1
	if name == "CONCAT_WS" {
		lo = 2
	}
	if err := argCount(name, args, lo, -1); err != nil {
		return nil, err
	}
	for _, a := range args {
		if !stringish(a.Type) {
			return nil, userErrorf("function %s expects string arguments, got %s", name, typeNames(args))
		}
	}
	nullable := false
	for i, a := range args {
		if name == "CONCAT" || i == 0 {
			nullable = nullable || a.Type.Nullable()
		}
	}
	return call(name, types.String.WithNullable(nullable), fillStrings(args)...), nil
}

func resolveStrUnary(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	if !stringish(args[0].Type) {
		return nil, userErrorf("function %s expects a string argument, got %v", name, args[0].Type)
	}
	args = fillStrings(args)
	return call(name, args[0].Type, args...), nil
}

func resolveCharLength(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	if !stringish(args[0].Type) {
		return nil, userErrorf("function %s expects a string argument, got %v", name, args[0].Type)
	}
	return call("CHAR_LENGTH", types.Int.WithNullable(args[0].Type.Nullable()), fillStrings(args)...), nil
}

func integerArg(name string, e *Expr) (*Expr, error) {
	if e.Type.Kind == types.KindNull {
		return implicit(e, types.Int.WithNullable(true)), nil
	}
	if !e.Type.IsInteger() {
		return nil, userErrorf("function %s expects an integer argument, got %v", name, e.Type)
	}
	return e, nil
}

func resolveSubstring(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 3); err != nil {
		return nil, err
	}
	if !stringish(args[0].Type) {
		return nil, userErrorf("function %s expects a string argument, got %v", name, args[0].Type)
	}
	out := []*Expr{fillNull(args[0], types.String)}
	var ts []types.DataType
	for _, a := range args {
		ts = append(ts, a.Type)
	}
	for _, a := range args[1:] {
		x, err := integerArg(name, a)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return call("SUBSTRING", types.VarChar(out[0].Type.Length).WithNullable(anyNullable(ts...)), out...), nil
}

func resolveTrim(name string, args []*Expr) (*Expr, error) {
	switch {
	case len(args) == 1:
		mode := "BOTH"
		switch name {
		case "LTRIM":
			mode = "LEADING"
		case "RTRIM":
			mode = "TRAILING"
		}
		args = []*Expr{StringLiteral(mode), StringLiteral(" "), args[0]}
	case len(args) == 3 && name == "TRIM":
	default:
		return nil, argCount(name, args, 1, 1)
	}
	if m, ok := args[0].Value.(string); !ok || (m != "BOTH" && m != "LEADING" && m != "TRAILING") {
		return nil, userErrorf("function TRIM expects BOTH, LEADING or TRAILING")
	}
	for _, a := range args[1:] {
		if !stringish(a.Type) {
			return nil, userErrorf("function %s expects string arguments, got %s", name, typeNames(args[1:]))
		}
	}
	args = fillStrings(args)
	return call("TRIM", types.VarChar(args[2].Type.Length).WithNullable(anyNullable(args[1].Type, args[2].Type)), args...), nil
}

func resolveStrFn(name string, args []*Expr) (*Expr, error) {
	var err error
	switch name {
	case "REPLACE":
		err = argCount(name, args, 3, 3)
	case "SPLIT_INDEX":
		err = argCount(name, args, 3, 3)
	case "REGEXP_EXTRACT":
		err = argCount(name, args, 2, 3)
	case "POSITION":
		err = argCount(name, args, 2, 2)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*Expr, len(args))
	var ts []types.DataType
	for i, a := range args {
		ts = append(ts, a.Type)
		wantInt := (name == "SPLIT_INDEX" && i == 2) || (name == "REGEXP_EXTRACT" && i == 2)
		if wantInt {
			if out[i], err = integerArg(name, a); err != nil {
				return nil, err
			}
			continue
		}
		if !stringish(a.Type) {
			return nil, userErrorf("function %s expects string arguments, got %s", name, typeNames(args))
		}
		out[i] = fillNull(a, types.String)
	}
	t := types.String.WithNullable(anyNullable(ts...))
	switch name {
	case "SPLIT_INDEX", "REGEXP_EXTRACT":
		t = types.String
	case "POSITION":
		t = types.Int.WithNullable(anyNullable(ts...))
	}
	return call(name, t, out...), nil
}

func resolveFromUnixtime(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 2); err != nil {
		return nil, err
	}
	a, err := integerArg(name, args[0])
	if err != nil {
		return nil, err
	}
	out := []*Expr{a}
	if len(args) == 2 {
		if !stringish(args[1].Type) {
			return nil, userErrorf("function %s expects a string format, got %v", name, args[1].Type)
		}
		out = append(out, fillNull(args[1], types.String))
	}
	return call(name, types.String.WithNullable(anyNullable(typesOf(out)...)), out...), nil
}

func typesOf(es []*Expr) []types.DataType {
	out := make([]types.DataType, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

func resolveToTimestamp(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 2); err != nil {
		return nil, err
	}
	for _, a := range args {
		if !stringish(a.Type) {
			return nil, userErrorf("function %s expects string arguments, got %s", name, typeNames(args))
		}
	}
	t := types.Timestamp(3)
	if name == "TO_DATE" {
		t = types.Date
	}
	return call(name, t, fillStrings(args)...), nil
}

func resolveTimestampDiff(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 3, 3); err != nil {
		return nil, err
	}
	u, err := unitArg(name, args[0])
	if err != nil {
		return nil, err
	}
	a, b := args[1], args[2]
	a, b = fillNull(a, b.Type), fillNull(b, a.Type)
	if !a.Type.IsTemporal() || !b.Type.IsTemporal() {
		return nil, userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args[1:]))
	}
	if (a.Type.Kind == types.KindTimestampLTZ) != (b.Type.Kind == types.KindTimestampLTZ) {
		return nil, userErrorf("TIMESTAMP_LTZ only supports diff between the same type.")
	}
	return call(name, types.Int.WithNullable(anyNullable(a.Type, b.Type)), StringLiteral(u), a, b), nil
}

func resolveTimestampAdd(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 3, 3); err != nil {
		return nil, err
	}
	u, err := unitArg(name, args[0])
	if err != nil {
		return nil, err
	}
	n, err := integerArg(name, args[1])
	if err != nil {
		return nil, err
	}
	ts := args[2]
	if !ts.Type.IsTemporal() {
		return nil, userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args[1:]))
	}
	return call(name, ts.Type.WithNullable(anyNullable(n.Type, ts.Type)), StringLiteral(u), n, ts), nil
}

func resolveUnixTimestamp(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 0, 2); err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return call(name, types.BigInt.WithNullable(false)), nil
	}
	for _, a := range args {
		if !stringish(a.Type) {
			return nil, userErrorf("function %s expects string arguments, got %s", name, typeNames(args))
		}
	}
	return call(name, types.BigInt.WithNullable(anyNullable(typesOf(args)...)), fillStrings(args)...), nil
}

func resolveNiladic(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 0, 0); err != nil {
		return nil, err
	}
	var t types.DataType
	switch name {
	case "CURRENT_TIMESTAMP", "NOW", "PROCTIME":
		t = types.TimestampLTZ(3)
	case "LOCALTIMESTAMP":
		t = types.Timestamp(3)
	case "CURRENT_DATE":
		t = types.Date
	default:
		t = types.Time(0)
	}
	return call(name, t.WithNullable(false)), nil
}

func resolveDateFormat(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	a := args[0]
	if !a.Type.IsTimestamp() && !stringish(a.Type) && a.Type.Kind != types.KindDate {
		return nil, userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args))
	}
	if !stringish(args[1].Type) {
		return nil, userErrorf("function %s expects a string format, got %v", name, args[1].Type)
	}
	if a.Type.Kind == types.KindDate {
		a = implicit(a, types.Timestamp(0))
	}
	t := types.String.WithNullable(anyNullable(typesOf(args)...))
	if a.Type.IsString() || a.Type.Kind == types.KindNull {
		t = types.String
		a = fillNull(a, types.String)
	}
	return call(name, t, a, fillNull(args[1], types.String)), nil
}

func resolveExtract(name string, args []*Expr) (*Expr, error) {
	if name != "EXTRACT" {
		return resolveExtractFn(name, args)
	}
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	u, err := unitArg(name, args[0])
	if err != nil {
		return nil, err
	}
	a := args[1]
	if !a.Type.IsTemporal() && !a.Type.IsInterval() {
		return nil, userErrorf("cannot apply 'EXTRACT' to arguments of type %v", a.Type)
	}
	return call("EXTRACT", types.BigInt.WithNullable(a.Type.Nullable()), StringLiteral(u), a), nil
}

func resolveExtractFn(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	unit := map[string]string{"DAYOFMONTH": "DAY", "DAYOFWEEK": "DOW", "DAYOFYEAR": "DOY"}[name]
	if unit == "" {
		unit = name
	}
	return resolveExtract("EXTRACT", []*Expr{StringLiteral(unit), args[0]})
}

func resolveFloorCeil(name string, args []*Expr) (*Expr, error) {
	if name == "CEILING" {
		name = "CEIL"
	}
	if err := argCount(name, args, 1, 2); err != nil {
		return nil, err
	}
	if len(args) == 2 {
		u, err := unitArg(name, args[0])
		if err != nil {
			return nil, err
		}
		switch u {
		case "WEEK", "DECADE", "CENTURY", "MILLENNIUM", "DOW", "DOY", "EPOCH", "MICROSECOND", "NANOSECOND":
			return nil, userErrorf("%s to %s is not supported yet", name, u)
		}
		a := args[1]
		if !a.Type.IsTemporal() {
			return nil, userErrorf("cannot apply '%s' to arguments of type %v", name, a.Type)
		}
		return call(name, a.Type, StringLiteral(u), a), nil
	}
	t := args[0].Type
	switch {
	case t.Kind == types.KindDecimal:
		return call(name, types.Decimal(max(1, t.Precision-t.Scale+min(t.Scale, 1)), 0).WithNullable(t.Nullable()), args...), nil
	case t.IsNumeric():
		return call(name, t, args...), nil
	}
	return nil, userErrorf("cannot apply '%s' to arguments of type %v", name, t)
}

func resolveRound(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 2); err != nil {
		return nil, err
	}
	t := args[0].Type
	if !t.IsNumeric() {
		return nil, userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args))
	}
	r := 0
	out := []*Expr{args[0]}
	if len(args) == 2 {
		d := args[1]
		if d.Op != OpLiteral || !d.Type.IsInteger() || d.Value == nil {
			return nil, userErrorf("function %s expects an integer literal as its second argument", name)
		}
		r = int(d.Value.(int64))
		out = append(out, d)
	} else {
		out = append(out, Literal(int64(0), types.Int.WithNullable(false)))
	}
	rt := t
	if t.Kind == types.KindDecimal {
		p, s := t.Precision, t.Scale
		switch {
		case r >= s:
			rt = t
		case r < 0:
			rt = types.Decimal(min(38, 1+p-s), 0)
		default:
			rt = types.Decimal(min(38, 1+p-s+r), r)
		}
		rt = rt.WithNullable(t.Nullable())
	}
	return call(name, rt, out...), nil
}

func resolveDoubleFn(name string, args []*Expr) (*Expr, error) {
	n := 1
	if name == "POWER" {
		n = 2
	}
	if err := argCount(name, args, n, n); err != nil {
		return nil, err
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		if !a.Type.IsNumeric() && a.Type.Kind != types.KindNull {
			return nil, userErrorf("function %s expects numeric arguments, got %s", name, typeNames(args))
		}
		out[i] = implicit(a, types.Double)
	}
	return call(name, types.Double.WithNullable(anyNullable(typesOf(args)...)), out...), nil
}
