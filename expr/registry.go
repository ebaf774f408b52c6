package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/braidflow/braid/types"
)

// funcDef declares one function or operator, once: the names a call may
// use, how a call is typed, and how the typed call is evaluated. ResolveCall
// reads resolve; Compile reads kernel (or form) of the entry that holds the
// typed call's Func.
//
// NB: resolve may rename a call (MOD to %, CEILING to CEIL, YEAR to
// EXTRACT), but only to a name of the same entry, so that the typed call
// finds its kernel again.
type funcDef struct {
	names []string
	// resolve checks a call's arguments and returns the typed call, with
	// its result type and implicit casts. It receives the name in upper
	// case. nil for nodes only built inside the package (CAST: Cast, TryCast).
	resolve resolver
	// kernel builds the vectorized evaluation of a typed call e whose
	// argument types are at. It runs once per Compile.
	kernel func(e *Expr, at []types.DataType) (kernel, error)
	// form builds, instead of a kernel, a node that evaluates its
	// arguments itself, lazily (CASE, AND, OR, COALESCE).
	form func(e *Expr, args []node) node
	// volatile calls are never folded at compile time (the clock, random
	// numbers).
	volatile bool
}

type resolver func(name string, args []*Expr) (*Expr, error)

// functions is the library: every operator and function Braid evaluates.
var functions = []funcDef{
	// Arithmetic and comparison (arith.go).
	{names: []string{"+", "-", "*", "/", "%", "MOD"}, resolve: resolveArith, kernel: func(e *Expr, at []types.DataType) (kernel, error) {
		return arithKernel(e.Func, at[0], at[1], e.Type)
	}},
	{names: []string{"NEG"}, resolve: resolveNeg, kernel: func(e *Expr, _ []types.DataType) (kernel, error) { return negKernel(e.Type), nil }},
	{names: []string{"ABS"}, resolve: resolveNeg, kernel: func(e *Expr, _ []types.DataType) (kernel, error) { return absKernel(e.Type), nil }},
	{names: []string{"=", "<>", "<", "<=", ">", ">="}, resolve: resolveCompare, kernel: func(e *Expr, at []types.DataType) (kernel, error) {
		return compareKernel(e.Func, at[0], at[1])
	}},
	{names: []string{"BETWEEN", "NOT BETWEEN"}, resolve: resolveBetween, kernel: func(e *Expr, at []types.DataType) (kernel, error) {
		return betweenKernel(e.Func == "NOT BETWEEN", at[0], at[1], at[2])
	}},
	{names: []string{"IN", "NOT IN"}, resolve: resolveIn, kernel: func(e *Expr, at []types.DataType) (kernel, error) {
		return inKernel(e.Func == "NOT IN", at)
	}},

	// Logic and conditionals (logic.go).
	{names: []string{"AND", "OR"}, resolve: resolveLogic, form: func(e *Expr, args []node) node {
		return &logicNode{and: e.Func == "AND", args: args}
	}},
	{names: []string{"NOT"}, resolve: resolveLogic, kernel: fixedKernel(notKernel)},
	{names: []string{"IS NULL", "IS NOT NULL"}, resolve: resolveIsNull, kernel: func(e *Expr, _ []types.DataType) (kernel, error) {
		return isNullKernel(e.Func == "IS NOT NULL"), nil
	}},
	{names: []string{"IS TRUE", "IS FALSE", "IS NOT TRUE", "IS NOT FALSE"}, resolve: resolveIsBool, kernel: func(e *Expr, _ []types.DataType) (kernel, error) {
		return isBoolKernel(e.Func), nil
	}},
	{names: []string{"CASE"}, resolve: resolveCase, form: caseForm},
	{names: []string{"IF"}, resolve: resolveIf, form: caseForm},
	{names: []string{"COALESCE"}, resolve: resolveCoalesce, form: func(e *Expr, args []node) node {
		return &coalesceNode{args: args, cls: classOf(e.Type)}
	}},
	{names: []string{"NULLIF"}, resolve: resolveNullIf, kernel: fixedKernel(nullIfKernel)},
	{names: []string{"CAST", "TRY_CAST"}, kernel: func(e *Expr, at []types.DataType) (kernel, error) {
		return castKernel(at[0], e.Type, e.Func == "TRY_CAST")
	}},

	// Composite values (composite.go). The constructors, field access and
	// the subscript are built by RowCtor, ArrayCtor, MapCtor, FieldAccess
	// and Item, from the syntax that writes them.
	{names: []string{"ROW", "ARRAY", "MAP"}, kernel: ctorKernel},
	{names: []string{"FIELD"}, kernel: fieldKernel},
	{names: []string{"ITEM"}, kernel: itemKernel},
	{names: []string{"CARDINALITY"}, resolve: resolveCardinality, kernel: cardinalityKernel},
	{names: []string{"ELEMENT"}, resolve: resolveElement, kernel: elementKernel},

	// Strings (strings.go).
	{names: []string{"LIKE", "NOT LIKE"}, resolve: resolveLike, kernel: likeFnKernel},
	{names: []string{"||"}, resolve: resolveConcatOp, kernel: concatOpKernel},
	{names: []string{"CONCAT"}, resolve: resolveConcat, kernel: concatFnKernel},
	{names: []string{"CONCAT_WS"}, resolve: resolveConcat, kernel: concatWSKernel},
	{names: []string{"UPPER"}, resolve: resolveStrUnary, kernel: upperKernel},
	{names: []string{"LOWER"}, resolve: resolveStrUnary, kernel: lowerKernel},
	{names: []string{"INITCAP"}, resolve: resolveStrUnary, kernel: initCapKernel},
	{names: []string{"CHAR_LENGTH", "CHARACTER_LENGTH"}, resolve: resolveCharLength, kernel: charLengthKernel},
	{names: []string{"SUBSTRING", "SUBSTR"}, resolve: resolveSubstring, kernel: substringFnKernel},
	{names: []string{"TRIM", "LTRIM", "RTRIM"}, resolve: resolveTrim, kernel: trimKernel},
	{names: []string{"REPLACE"}, resolve: resolveStrFn, kernel: replaceKernel},
	{names: []string{"SPLIT_INDEX"}, resolve: resolveStrFn, kernel: splitIndexKernel},
	{names: []string{"REGEXP_EXTRACT"}, resolve: resolveStrFn, kernel: regexpExtractKernel},
	{names: []string{"POSITION"}, resolve: resolveStrFn, kernel: positionKernel},
	{names: []string{"LPAD"}, resolve: sig(types.String, argStr, argInt, argStr).nullable().resolve, kernel: strKernel("LPAD", padKernel(true))},
	{names: []string{"RPAD"}, resolve: sig(types.String, argStr, argInt, argStr).nullable().resolve, kernel: strKernel("RPAD", padKernel(false))},
	{names: []string{"REPEAT"}, resolve: sig(types.String, argStr, argInt).resolve, kernel: strKernel("REPEAT", repeatKernel)},
	{names: []string{"REVERSE"}, resolve: sig(types.String, argStr).resultOf(sameStringType).resolve, kernel: strKernel("REVERSE", reverseKernel)},
	{names: []string{"LEFT"}, resolve: sig(types.String, argStr, argInt).resultOf(sameStringType).resolve, kernel: strKernel("LEFT", sideKernel(true))},
	{names: []string{"RIGHT"}, resolve: sig(types.String, argStr, argInt).resultOf(sameStringType).resolve, kernel: strKernel("RIGHT", sideKernel(false))},
	{names: []string{"LOCATE"}, resolve: sig(types.Int, argStr, argStr, argInt).optional(1).resolve, kernel: locateKernel},
	{names: []string{"INSTR"}, resolve: sig(types.Int, argStr, argStr).resolve, kernel: locateKernel},
	{names: []string{"ASCII"}, resolve: sig(types.Int, argStr).resolve, kernel: asciiKernel},
	{names: []string{"CHR"}, resolve: sig(types.VarChar(1), argInt).resolve, kernel: strKernel("CHR", chrKernel)},
	{names: []string{"REGEXP_REPLACE"}, resolve: sig(types.String, argStr, argStr, argStr).nullable().resolve, kernel: regexpReplaceKernel},
	{names: []string{"REGEXP"}, resolve: sig(types.Boolean, argStr, argStr).resolve, kernel: regexpKernel},
	{names: []string{"OVERLAY"}, resolve: sig(types.String, argStr, argStr, argInt, argInt).optional(1).resolve, kernel: strKernel("OVERLAY", overlayKernel)},
	{names: []string{"TRANSLATE"}, resolve: sig(types.String, argStr, argStr, argStr).resolve, kernel: strKernel("TRANSLATE", translateKernel)},
	{names: []string{"TO_BASE64"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("TO_BASE64", toBase64Kernel)},
	{names: []string{"FROM_BASE64"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("FROM_BASE64", fromBase64Kernel)},
	{names: []string{"HEX"}, resolve: resolveHex, kernel: hexKernel},
	{names: []string{"BIN"}, resolve: sig(types.String, argInt).resolve, kernel: strKernel("BIN", binKernel)},
	{names: []string{"UUID"}, resolve: sig(types.String).resolve, kernel: uuidKernel, volatile: true},
	{names: []string{"SPLIT"}, resolve: sig(types.Array(types.String), argStr, argStr).resolve, kernel: splitKernel},
	{names: []string{"STR_TO_MAP"}, resolve: sig(types.Map(types.String, types.String), argStr, argStr, argStr).optional(2).resolve, kernel: strToMapKernel},

	// Digests (hash.go).
	{names: []string{"MD5"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("MD5", digestKernel(md5.New))},
	{names: []string{"SHA1"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("SHA1", digestKernel(sha1.New))},
	{names: []string{"SHA224"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("SHA224", digestKernel(sha256.New224))},
	{names: []string{"SHA256"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("SHA256", digestKernel(sha256.New))},
	{names: []string{"SHA384"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("SHA384", digestKernel(sha512.New384))},
	{names: []string{"SHA512"}, resolve: sig(types.String, argStr).resolve, kernel: strKernel("SHA512", digestKernel(sha512.New))},
	{names: []string{"SHA2"}, resolve: sig(types.String, argStr, argInt).nullable().resolve, kernel: strKernel("SHA2", sha2Kernel)},

	// JSON (jsonfuncs.go).
	{names: []string{"JSON_EXISTS"}, resolve: resolveJSONExists, kernel: jsonExistsKernel},
	{names: []string{"JSON_VALUE"}, resolve: resolveJSONValue, kernel: jsonValueKernel},
	{names: []string{"JSON_QUERY"}, resolve: resolveJSONQuery, kernel: jsonQueryKernel},
	{names: []string{"JSON_STRING"}, resolve: resolveJSONString, kernel: jsonStringKernel},
	{names: []string{"JSON_ARRAY"}, resolve: resolveJSONArray, kernel: jsonBuildKernel},
	{names: []string{"JSON_OBJECT"}, resolve: resolveJSONObject, kernel: jsonBuildKernel},
	{names: []string{"IS JSON", "IS JSON VALUE", "IS JSON SCALAR", "IS JSON ARRAY", "IS JSON OBJECT",
		"IS NOT JSON", "IS NOT JSON VALUE", "IS NOT JSON SCALAR", "IS NOT JSON ARRAY", "IS NOT JSON OBJECT"},
		resolve: resolveIsJSON, kernel: isJSONKernel},

	// Conditionals beyond CASE (conditional.go).
	{names: []string{"GREATEST", "LEAST"}, resolve: resolveGreatest, kernel: greatestKernel},
	{names: []string{"IFNULL"}, resolve: resolveIfNull, form: func(e *Expr, args []node) node {
		return &coalesceNode{args: args, cls: classOf(e.Type)}
	}},
	{names: []string{"IS DISTINCT FROM", "IS NOT DISTINCT FROM"}, resolve: resolveDistinct, kernel: distinctKernel},

	// Date and time (temporal.go).
	{names: []string{"FROM_UNIXTIME"}, resolve: resolveFromUnixtime, kernel: fromUnixtimeKernel},
	{names: []string{"TO_TIMESTAMP", "TO_DATE"}, resolve: resolveToTimestamp, kernel: parseTemporalKernel},
	{names: []string{"UNIX_TIMESTAMP"}, resolve: resolveUnixTimestamp, kernel: parseTemporalKernel, volatile: true},
	{names: []string{"TIMESTAMPDIFF"}, resolve: resolveTimestampDiff, kernel: timestampDiffKernel},
	{names: []string{"TIMESTAMPADD"}, resolve: resolveTimestampAdd, kernel: timestampAddKernel},
	{names: []string{"CURRENT_TIMESTAMP", "NOW", "PROCTIME", "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME"},
		resolve: resolveNiladic, kernel: nowKernel, volatile: true},
	{names: []string{"CURRENT_WATERMARK"}, resolve: resolveCurrentWatermark, kernel: currentWatermarkKernel, volatile: true},
	{names: []string{"DATE_FORMAT"}, resolve: resolveDateFormat, kernel: dateFormatKernel},
	{names: []string{"EXTRACT", "YEAR", "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK",
		"HOUR", "MINUTE", "SECOND"}, resolve: resolveExtract, kernel: extractFnKernel},
	{names: []string{"FLOOR", "CEIL", "CEILING"}, resolve: resolveFloorCeil, kernel: floorCeilKernel},
	{names: []string{"TO_TIMESTAMP_LTZ"}, resolve: resolveToTimestampLTZ, kernel: toTimestampLTZKernel},
	{names: []string{"CONVERT_TZ"}, resolve: sig(types.String, argStr, argStr, argStr).nullable().resolve, kernel: convertTzKernel},

	// Numbers (math.go).
	{names: []string{"ROUND", "TRUNCATE"}, resolve: resolveRound, kernel: roundKernel},
	{names: []string{"POWER"}, resolve: resolveDoubleFn, kernel: powerKernel},
	{names: []string{"SQRT"}, resolve: resolveDoubleFn, kernel: sqrtKernel},
	{names: []string{"EXP"}, resolve: resolveDoubleFn, kernel: expKernel},
	{names: []string{"LN"}, resolve: resolveDoubleFn, kernel: lnKernel},
	{names: []string{"LOG10"}, resolve: resolveDoubleFn, kernel: log10Kernel},
	{names: []string{"LOG2"}, resolve: resolveDoubleFn, kernel: log2Kernel},
	{names: []string{"LOG"}, resolve: sig(types.Double, argDouble, argDouble).optional(1).resolve, kernel: logKernel},
	{names: []string{"SIGN"}, resolve: resolveSign, kernel: signKernel},
	{names: []string{"PI"}, resolve: sig(types.Double).resolve, kernel: constFn(math.Pi)},
	{names: []string{"E"}, resolve: sig(types.Double).resolve, kernel: constFn(math.E)},
	{names: []string{"SIN"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Sin)},
	{names: []string{"COS"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Cos)},
	{names: []string{"TAN"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Tan)},
	{names: []string{"COT"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(cot)},
	{names: []string{"ASIN"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Asin)},
	{names: []string{"ACOS"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Acos)},
	{names: []string{"ATAN"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Atan)},
	{names: []string{"ATAN2"}, resolve: sig(types.Double, argDouble, argDouble).resolve, kernel: floatFn2(math.Atan2)},
	{names: []string{"SINH"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Sinh)},
	{names: []string{"COSH"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Cosh)},
	{names: []string{"TANH"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(math.Tanh)},
	{names: []string{"DEGREES"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(degrees)},
	{names: []string{"RADIANS"}, resolve: sig(types.Double, argDouble).resolve, kernel: floatFn(radians)},
	{names: []string{"RAND", "RAND_INTEGER"}, resolve: resolveRand, kernel: randKernel, volatile: true},
}

// registry indexes functions by every name.
var registry = map[string]*funcDef{}

func init() {
	for i := range functions {
		d := &functions[i]
		if d.kernel == nil && d.form == nil {
			panic(fmt.Sprintf("expr: function %s has no evaluation", d.names[0]))
		}
		for _, n := range d.names {
			if registry[n] != nil {
				panic(fmt.Sprintf("expr: function %s declared twice", n))
			}
			registry[n] = d
		}
	}
}

// fixedKernel is the kernel builder of a function whose kernel does not
// depend on the call's types.
func fixedKernel(k kernel) func(*Expr, []types.DataType) (kernel, error) {
	return func(*Expr, []types.DataType) (kernel, error) { return k, nil }
}

func caseForm(_ *Expr, args []node) node { return &caseNode{args: args} }

// Functions lists every name ResolveCall accepts, sorted.
func Functions() []string {
	var out []string
	for n, d := range registry {
		if d.resolve != nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ResolveCall type-checks a call of the operator or function name (any
// case) on args and returns the typed call node, with implicit casts
// inserted on the arguments where Flink inserts them. Result types and
// nullability follow Flink (see FLINK-SEMANTICS.md section 1). Errors are
// *UserError values without position. args are not modified, but the
// returned node shares them.
//
// Conventions for the planner: CASE takes the searched form's arguments
// when1, then1, ..., [else]; TIMESTAMPDIFF, TIMESTAMPADD, EXTRACT and the
// unit forms of FLOOR/CEIL take the unit as a leading string literal
// ('HOUR'); TRIM takes (s) or (mode, chars, s) with mode 'BOTH', 'LEADING'
// or 'TRAILING'. CAST is built with Cast, not here.
func ResolveCall(name string, args []*Expr) (*Expr, error) {
	name = strings.ToUpper(name)
	d := registry[name]
	if d == nil || d.resolve == nil {
		return nil, userErrorf("unknown function '%s'", name)
	}
	for _, a := range args {
		if a == nil {
			return nil, userErrorf("function %s: nil argument", name)
		}
	}
	return d.resolve(name, args)
}

// buildCall picks the evaluation of a typed call by its name and argument
// types.
func buildCall(e *Expr, args []node) (node, error) {
	d := registry[e.Func]
	if d == nil {
		return nil, fmt.Errorf("expr: no implementation of %s for %s", e.Func, typeNames(e.Args))
	}
	if d.form != nil {
		return d.form(e, args), nil
	}
	at := make([]types.DataType, len(e.Args))
	for i, a := range e.Args {
		at[i] = a.Type
	}
	k, err := d.kernel(e, at)
	if err != nil {
		return nil, err
	}
	return &callNode{args: args, fn: k}, nil
}

// isVolatile reports whether a call must be evaluated at run time even
// when its arguments are constant.
func isVolatile(name string) bool {
	d := registry[name]
	return d != nil && d.volatile
}
