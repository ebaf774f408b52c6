package planner

import (
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// bindType maps a written SQL type to a DataType, with Flink DDL's defaults:
// VARCHAR without a length is STRING, CHAR is CHAR(1), DECIMAL is
// DECIMAL(10, 0), TIME is TIME(0), TIMESTAMP is TIMESTAMP(6).
func bindType(t *ast.Type) (types.DataType, error) {
	n, hasN := t.Length()
	s, _ := t.Scale()
	arg := func(def int) int {
		if hasN {
			return n
		}
		return def
	}
	var dt types.DataType
	switch t.Name {
	case "BOOLEAN":
		dt = types.Boolean
	case "TINYINT":
		dt = types.TinyInt
	case "SMALLINT":
		dt = types.SmallInt
	case "INT", "INTEGER":
		dt = types.Int
	case "BIGINT":
		dt = types.BigInt
	case "FLOAT", "REAL":
		dt = types.Float
	case "DOUBLE", "DOUBLE PRECISION":
		dt = types.Double
	case "DECIMAL", "DEC", "NUMERIC":
		p := arg(10)
		if p < 1 || p > 38 {
			return dt, errorf(t.Pos, "DECIMAL precision must be between 1 and 38, got %d", p)
		}
		if s < 0 || s > p {
			return dt, errorf(t.Pos, "DECIMAL scale must be between 0 and the precision %d, got %d", p, s)
		}
		dt = types.Decimal(p, s)
	case "CHAR", "CHARACTER":
		dt = types.Char(arg(1))
	case "VARCHAR", "CHARACTER VARYING":
		dt = types.VarChar(arg(types.MaxLength))
	case "STRING":
		dt = types.String
	case "BINARY":
		dt = types.DataType{Kind: types.KindBinary, Length: arg(1)}
	case "VARBINARY":
		dt = types.DataType{Kind: types.KindVarBinary, Length: arg(types.MaxLength)}
	case "BYTES":
		dt = types.Bytes
	case "DATE":
		dt = types.Date
	case "TIME":
		dt = types.Time(arg(0))
	case "TIMESTAMP":
		if t.TimeZone == "WITH LOCAL TIME ZONE" {
			dt = types.TimestampLTZ(arg(6))
		} else {
			dt = types.Timestamp(arg(6))
		}
	case "TIMESTAMP_LTZ":
		dt = types.TimestampLTZ(arg(6))
	case "ARRAY", "MAP", "MULTISET", "ROW", "INTERVAL", "RAW":
		return dt, unsupported(t.Pos, "type "+t.Name)
	default:
		return dt, errorf(t.Pos, "unknown type %s", t.Name)
	}
	if dt.Kind == types.KindTime || dt.IsTimestamp() {
		if dt.Precision < 0 || dt.Precision > 9 {
			return dt, errorf(t.Pos, "%s precision must be between 0 and 9, got %d", t.Name, dt.Precision)
		}
	}
	if (dt.Kind == types.KindChar || dt.Kind == types.KindVarChar || dt.IsBinary()) && dt.Length < 1 {
		return dt, errorf(t.Pos, "%s length must be at least 1", t.Name)
	}
	if t.Null == ast.NotNull {
		dt.NotNull = true
	}
	return dt, nil
}
