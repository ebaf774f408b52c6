package jobgraph

import (
	"fmt"

	"github.com/braidflow/braid/types"
)

// KindFaker is the faker source (FakerSpec): rows of fake data made from
// flink-faker expressions.
const KindFaker = "faker"

func init() {
	RegisterSpec(KindFaker, func() Spec { return &FakerSpec{} })
}

// FakerField configures one column of a faker source.
type FakerField struct {
	// Expressions are the column's expressions as written: one, or a MAP's
	// key and value, or one per field of a ROW.
	Expressions []string `json:"expressions"`
	// NullRate is the fraction of NULLs, 0 by default.
	NullRate float64 `json:"null_rate,omitempty"`
	// Length is the number of elements of an ARRAY, MAP or MULTISET; 1 for
	// other columns.
	Length int `json:"length"`
}

// FakerSpec generates rows of fake data.
type FakerSpec struct {
	Schema types.Schema `json:"schema"`
	Fields []FakerField `json:"fields"`
	// RowsPerSecond limits the rate over all subtasks.
	RowsPerSecond float64 `json:"rows_per_second"`
	// NumberOfRows bounds the source over all subtasks; 0 is unbounded and
	// -1 is no rows at all.
	NumberOfRows int64 `json:"number_of_rows"`
	Seed         int64 `json:"seed,omitempty"`
	// Table names the table in errors ("db.name").
	Table string `json:"table,omitempty"`
}

var _ Spec = (*FakerSpec)(nil)

func (*FakerSpec) Kind() string { return KindFaker }
func (*FakerSpec) Inputs() int  { return 0 }

func (s *FakerSpec) Validate() error {
	if len(s.Fields) != len(s.Schema) {
		return fmt.Errorf("%d field configs for %d columns", len(s.Fields), len(s.Schema))
	}
	for i, f := range s.Fields {
		if len(f.Expressions) == 0 {
			return fmt.Errorf("column %s: no expression", s.Schema[i].Name)
		}
		if !(f.NullRate >= 0 && f.NullRate <= 1) {
			return fmt.Errorf("column %s: null rate %v is outside [0, 1]", s.Schema[i].Name, f.NullRate)
		}
		if f.Length < 1 {
			return fmt.Errorf("column %s: length %d is below 1", s.Schema[i].Name, f.Length)
		}
	}
	if !(s.RowsPerSecond >= 0) || s.NumberOfRows < -1 {
		return fmt.Errorf("rows per second %v and number of rows %d must not be negative", s.RowsPerSecond, s.NumberOfRows)
	}
	return nil
}
