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
	case "ARRAY", "MULTISET", "MAP", "ROW":
		var err error
		if dt, err = bindCompositeType(t); err != nil {
			return dt, err
		}
	case "INTERVAL", "RAW":
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

// bindCompositeType maps ARRAY<t> / t ARRAY, MULTISET<t>, MAP<k, v> and
// ROW<name t, ...> / ROW(name t, ...).
func bindCompositeType(t *ast.Type) (types.DataType, error) {
	var dt types.DataType
	var err error
	switch t.Name {
	case "ARRAY", "MULTISET":
		if t.Elem == nil {
			return dt, errorf(t.Pos, "%s needs an element type", t.Name)
		}
		e, err := bindType(t.Elem)
		if err != nil {
			return dt, err
		}
		if t.Name == "ARRAY" {
			dt, err = types.NewArray(e)
		} else {
			dt, err = types.NewMultiset(e)
		}
		if err != nil {
			return dt, errorf(t.Pos, "%v", err)
		}
		return dt, nil
	case "MAP":
		if t.Key == nil || t.Value == nil {
			return dt, errorf(t.Pos, "MAP needs a key and a value type")
		}
		k, err := bindType(t.Key)
		if err != nil {
			return dt, err
		}
		v, err := bindType(t.Value)
		if err != nil {
			return dt, err
		}
		if dt, err = types.NewMap(k, v); err != nil {
			return dt, errorf(t.Pos, "%v", err)
		}
		return dt, nil
	}
	fields := make([]types.Field, 0, len(t.Fields))
	seen := map[string]bool{}
	for _, f := range t.Fields {
		ft, err := bindType(f.Type)
		if err != nil {
			return dt, err
		}
		if seen[f.Name.Name] {
			return dt, errorf(f.Pos, "field name %q appears twice in ROW", f.Name.Name)
		}
		seen[f.Name.Name] = true
		fields = append(fields, types.Field{Name: f.Name.Name, Type: ft})
	}
	if dt, err = types.NewRow(fields); err != nil {
		return dt, errorf(t.Pos, "%v", err)
	}
	return dt, nil
}
