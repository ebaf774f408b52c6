package types

import "fmt"

// RowKind is the changelog kind of a row, with Flink's byte values.
type RowKind int8

const (
	Insert       RowKind = 0 // +I
	UpdateBefore RowKind = 1 // -U
	UpdateAfter  RowKind = 2 // +U
	Delete       RowKind = 3 // -D
)

// IsAccumulate reports whether the row adds to a result (+I, +U).
func (k RowKind) IsAccumulate() bool { return k == Insert || k == UpdateAfter }

// IsRetract reports whether the row takes from a result (-U, -D).
func (k RowKind) IsRetract() bool { return k == UpdateBefore || k == Delete }

// String returns the short form Flink prints: +I, -U, +U, -D.
func (k RowKind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("RowKind(%d)", int8(k))
}
