package types

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Physical layout of each SQL type in Arrow. Every operator and codec relies
// on this one mapping:
//
//	BOOLEAN             Boolean
//	TINYINT..BIGINT     Int8, Int16, Int32, Int64
//	FLOAT, DOUBLE       Float32, Float64
//	DECIMAL(p,s)        Decimal128(p,s), the unscaled value
//	CHAR, VARCHAR       String (no padding is stored)
//	BINARY, VARBINARY   Binary
//	DATE                Date32, days since 1970-01-01
//	TIME(p)             Time32(ms), milliseconds of the day
//	TIMESTAMP(p)        Timestamp(ns) without zone: the wall-clock reading
//	TIMESTAMP_LTZ(p)    Timestamp(ns, "UTC"): the instant
//	INTERVAL DAY..SEC   Duration(ms)
//	INTERVAL YEAR..MON  Int32, months
//	NULL                Null
//	ARRAY, MAP,         Binary, one encoded value per cell (value.go)
//	MULTISET, ROW
func (t DataType) ArrowType() arrow.DataType {
	switch t.Kind {
	case KindNull:
		return arrow.Null
	case KindBoolean:
		return arrow.FixedWidthTypes.Boolean
	case KindTinyInt:
		return arrow.PrimitiveTypes.Int8
	case KindSmallInt:
		return arrow.PrimitiveTypes.Int16
	case KindInt:
		return arrow.PrimitiveTypes.Int32
	case KindBigInt:
		return arrow.PrimitiveTypes.Int64
	case KindFloat:
		return arrow.PrimitiveTypes.Float32
	case KindDouble:
		return arrow.PrimitiveTypes.Float64
	case KindDecimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case KindChar, KindVarChar:
		return arrow.BinaryTypes.String
	case KindBinary, KindVarBinary:
		return arrow.BinaryTypes.Binary
	case KindDate:
		return arrow.FixedWidthTypes.Date32
	case KindTime:
		return arrow.FixedWidthTypes.Time32ms
	case KindTimestamp:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}
	case KindTimestampLTZ:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case KindIntervalDayTime:
		return arrow.FixedWidthTypes.Duration_ms
	case KindIntervalYearMonth:
		return arrow.PrimitiveTypes.Int32
	case KindArray, KindMap, KindMultiset, KindRow:
		return arrow.BinaryTypes.Binary
	}
	panic(fmt.Sprintf("types: no Arrow type for %v", t))
}

// OpColumn is the name of the trailing changelog column of every batch.
const OpColumn = "$op"

// Field is a named column of a schema.
type Field struct {
	Name string
	Type DataType
}

// Schema is the ordered columns of a relation.
type Schema []Field

// Names returns the column names.
func (s Schema) Names() []string {
	out := make([]string, len(s))
	for i, f := range s {
		out[i] = f.Name
	}
	return out
}

// ArrowSchema returns the Arrow schema of a batch of s: the data columns and
// the trailing int8 changelog column. The SQL type of each column is kept in
// the field metadata under "braid.type", so a batch decoded from IPC can be
// formatted without other context.
func (s Schema) ArrowSchema() *arrow.Schema {
	fields := make([]arrow.Field, 0, len(s)+1)
	for _, f := range s {
		md := arrow.NewMetadata([]string{"braid.type"}, []string{f.Type.String()})
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type.ArrowType(), Nullable: true, Metadata: md})
	}
	fields = append(fields, arrow.Field{Name: OpColumn, Type: arrow.PrimitiveTypes.Int8})
	return arrow.NewSchema(fields, nil)
}

// SchemaFromArrow recovers a Schema from an Arrow schema made by ArrowSchema.
func SchemaFromArrow(as *arrow.Schema) (Schema, error) {
	fields := as.Fields()
	if len(fields) == 0 || fields[len(fields)-1].Name != OpColumn {
		return nil, fmt.Errorf("types: arrow schema has no trailing %s column", OpColumn)
	}
	out := make(Schema, 0, len(fields)-1)
	for _, f := range fields[:len(fields)-1] {
		ts, ok := f.Metadata.GetValue("braid.type")
		if !ok {
			return nil, fmt.Errorf("types: column %q has no braid.type metadata", f.Name)
		}
		t, err := ParseType(ts)
		if err != nil {
			return nil, err
		}
		out = append(out, Field{Name: f.Name, Type: t})
	}
	return out, nil
}
