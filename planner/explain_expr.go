package planner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// infixOps are the operators EXPLAIN writes between their operands, in
// parentheses, as Flink's execution plans do: (a > 1), ((a > 1) AND b).
var infixOps = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true, "||": true,
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true,
	"AND": true, "OR": true,
}

// postfixOps are written after their operand: (a IS NULL).
var postfixOps = map[string]bool{
	"IS NULL": true, "IS NOT NULL": true, "IS TRUE": true, "IS NOT TRUE": true,
	"IS FALSE": true, "IS NOT FALSE": true,
}

// explainExpr renders e as SQL-ish text for EXPLAIN, a column by its name
// in names: (b * 2), CAST(a AS BIGINT), UPPER(s), 'x'. It takes time
// linear in the size of e.
func explainExpr(e *expr.Expr, names []string) string {
	var sb strings.Builder
	writeExplainExpr(&sb, e, names)
	return sb.String()
}

func writeExplainExpr(sb *strings.Builder, e *expr.Expr, names []string) {
	if e == nil {
		sb.WriteString("true")
		return
	}
	switch e.Op {
	case expr.OpColumn:
		if e.Col >= 0 && e.Col < len(names) {
			sb.WriteString(names[e.Col])
		} else {
			fmt.Fprintf(sb, "$%d", e.Col)
		}
		return
	case expr.OpLiteral:
		sb.WriteString(explainLiteral(e))
		return
	}
	switch {
	case infixOps[e.Func] && len(e.Args) >= 2:
		sb.WriteByte('(')
		for i, a := range flattenOp(e) {
			if i > 0 {
				sb.WriteString(" " + e.Func + " ")
			}
			writeExplainExpr(sb, a, names)
		}
		sb.WriteByte(')')
		return
	case postfixOps[e.Func] && len(e.Args) == 1:
		sb.WriteByte('(')
		writeExplainExpr(sb, e.Args[0], names)
		sb.WriteString(" " + e.Func + ")")
		return
	case e.Func == "NEG" && len(e.Args) == 1:
		sb.WriteString("-(")
		writeExplainExpr(sb, e.Args[0], names)
		sb.WriteByte(')')
		return
	}
	sb.WriteString(e.Func)
	sb.WriteByte('(')
	for i, a := range e.Args {
		if i > 0 {
			sb.WriteString(", ")
		}
		writeExplainExpr(sb, a, names)
	}
	if e.Func == "CAST" || e.Func == "TRY_CAST" {
		fmt.Fprintf(sb, " AS %v", e.Type.WithNullable(true))
	}
	sb.WriteByte(')')
}

// flattenOp returns the operands of an AND or OR, with nested calls of the
// same operator spliced in (the planner nests AND pairwise), or e's
// arguments for any other operator.
func flattenOp(e *expr.Expr) []*expr.Expr {
	if e.Func != "AND" && e.Func != "OR" {
		return e.Args
	}
	var out []*expr.Expr
	stack := []*expr.Expr{e}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.Op != expr.OpCall || c.Func != e.Func {
			out = append(out, c)
			continue
		}
		for i := len(c.Args) - 1; i >= 0; i-- {
			stack = append(stack, c.Args[i])
		}
	}
	return out
}

// explainLiteral renders a constant as Flink's plans do: 'x', 42, true,
// NULL:INT, 5000:INTERVAL SECOND (milliseconds), 2024-01-01 00:00:00.
func explainLiteral(e *expr.Expr) string {
	t := e.Type
	switch v := e.Value.(type) {
	case nil:
		return "null:" + t.WithNullable(true).String()
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case bool:
		return strconv.FormatBool(v)
	case decimal128.Num:
		return v.ToString(int32(t.Scale))
	case []byte:
		return types.FormatBytes(v)
	case float64:
		return strconv.FormatFloat(v, 'G', -1, 64)
	case int64:
		switch t.Kind {
		case types.KindTimestamp:
			return types.FormatTimestamp(v, t.Precision)
		case types.KindTimestampLTZ:
			return types.FormatTimestampLTZ(v, t.Precision, time.UTC)
		case types.KindIntervalDayTime:
			unit := "SECOND"
			switch {
			case v != 0 && v%86400000 == 0:
				unit = "DAY"
			case v != 0 && v%3600000 == 0:
				unit = "HOUR"
			case v != 0 && v%60000 == 0:
				unit = "MINUTE"
			}
			return strconv.FormatInt(v, 10) + ":INTERVAL " + unit
		}
		return strconv.FormatInt(v, 10)
	case int32:
		switch t.Kind {
		case types.KindDate:
			return types.FormatDate(v)
		case types.KindTime:
			return types.FormatTime(v, t.Precision)
		case types.KindIntervalYearMonth:
			if v != 0 && v%12 == 0 {
				return strconv.FormatInt(int64(v), 10) + ":INTERVAL YEAR"
			}
			return strconv.FormatInt(int64(v), 10) + ":INTERVAL MONTH"
		}
		return strconv.FormatInt(int64(v), 10)
	}
	return fmt.Sprint(e.Value)
}
