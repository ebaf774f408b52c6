package render

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// rowOrder orders materialized rows by a result's ORDER BY, comparing the
// typed values of the sort key columns (not their printed text, which would
// put "10" before "9").
type rowOrder []client.SortKey

// keyValues returns the sort key values of row i of b, nil for NULL.
func (o rowOrder) keyValues(b types.Batch, i int) []any {
	if len(o) == 0 {
		return nil
	}
	vals := make([]any, len(o))
	for k, key := range o {
		vals[k] = sortValue(b.Column(key.Column), i)
	}
	return vals
}

// sort orders idx (indexes into keys) stably, so that rows with equal keys
// keep arrival order.
func (o rowOrder) sort(idx []int, keys [][]any) {
	if len(o) == 0 {
		return
	}
	slices.SortStableFunc(idx, func(a, b int) int { return o.compare(keys[a], keys[b]) })
}

func (o rowOrder) compare(a, b []any) int {
	for k, key := range o {
		x, y := a[k], b[k]
		switch {
		case x == nil && y == nil:
			continue
		case x == nil || y == nil:
			// NB: NULL placement does not flip with DESC.
			if (x == nil) == key.NullsFirst {
				return -1
			}
			return 1
		}
		c := compareValues(x, y)
		if key.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortValue returns row i of col as a comparable Go value: int64 for the
// integer layouts (integers, dates, times, timestamps, intervals), float64,
// decimal128.Num, string, []byte or bool; nil for NULL.
func sortValue(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return bytes.Clone(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Time32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Duration:
		return int64(a.Value(i))
	}
	// A layout without an order compares equal: the rows keep arrival order.
	return false
}

// compareValues compares two non-NULL values of one column.
func compareValues(x, y any) int {
	switch x := x.(type) {
	case int64:
		return cmp.Compare(x, y.(int64))
	case float64:
		// cmp.Compare puts NaN first; Java's Double.compare, which Flink
		// sorts by, puts it last.
		y := y.(float64)
		switch xn, yn := x != x, y != y; {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		}
		return cmp.Compare(x, y)
	case decimal128.Num:
		return x.Cmp(y.(decimal128.Num))
	case string:
		return cmp.Compare(x, y.(string))
	case []byte:
		return bytes.Compare(x, y.([]byte))
	case bool:
		switch yb := y.(bool); {
		case x == yb:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return 0
}
