package operators

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindBatchSort, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.BatchSortSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewBatchSort(*s)
	})
}

// BatchSort ends a batch-mode query: it applies its input changelog to the
// result it holds (+I and +U add a row, -U and -D remove one equal row; a
// retraction of a row it does not hold is ignored) and emits nothing until
// its input ends. Then it emits the final rows as +I, in batches of up to
// 4096 rows: sorted by the spec's OrderBy (Flink's default NULL ordering
// unless NULLS FIRST/LAST; rows with equal sort keys in the order of their
// encoding, so the output is deterministic), without the first Offset rows
// and at most Limit of them. Without OrderBy, Offset and Limit the rows
// come in the order of its state.
//
// State: a MultisetState whose key is the encoded row, in the key group of
// the hash of every column (so a HASH edge on every column may spread the
// operator over several subtasks), holding one entry, the row's sort key,
// with the number of times the row occurs. The rows live in the
// runtime-owned backend, so they spill to Pebble and are in every
// checkpoint; nothing is kept outside it. At the end of input the ordered
// form reads the rows into memory to sort them: all of them without a
// limit, at most about 2*(Offset+Limit)+4096 with one.
type BatchSort struct {
	spec   jobgraph.BatchSortSpec
	rows   *state.MultisetState
	maxPar int

	rowEnc  *types.RowEncoder
	sortEnc *sortKeyEncoder
	hashes  []uint64
	rowBuf  []byte
	sortBuf []byte
	ended   bool

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var _ StatefulOperator = (*BatchSort)(nil)

// NewBatchSort checks spec and returns an unopened operator.
func NewBatchSort(spec jobgraph.BatchSortSpec) (*BatchSort, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: batch sort: %w", err)
	}
	for _, k := range spec.OrderBy {
		if err := checkSortable(spec.InputSchema[k.Col].Type.ArrowType()); err != nil {
			return nil, err
		}
	}
	return &BatchSort{spec: spec}, nil
}

// Open reaches the operator's rows in the subtask's keyed state.
func (s *BatchSort) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	s.maxPar = maxPar
	s.rows = be.Multiset("rows")
	s.rowEnc = types.NewRowEncoder(s.spec.InputSchema)
	s.sortEnc = newSortKeyEncoder(s.spec.OrderBy)
	s.schema = s.spec.InputSchema.ArrowSchema()
	s.rb = types.NewRowBuilder(nil, s.spec.InputSchema)
	return nil
}

// Process applies the changes of b to the result. It borrows b and emits
// nothing.
func (s *BatchSort) Process(_ int, b types.Batch, _ Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	if s.ended {
		return fmt.Errorf("operators: batch sort got rows after the end of its input")
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	if cap(s.hashes) < n {
		s.hashes = make([]uint64, n)
	}
	s.hashes = s.hashes[:n]
	types.HashColumns(cols, s.hashes)
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		s.rowBuf = s.rowEnc.AppendRow(s.rowBuf[:0], cols, i)
		s.sortBuf = s.sortEnc.append(s.sortBuf[:0], cols, i)
		delta := int64(1)
		if types.RowKind(kinds[i]).IsRetract() {
			delta = -1
		}
		kg := types.KeyGroupForHash(s.hashes[i], s.maxPar)
		if err := s.rows.Add(kg, s.rowBuf, s.sortBuf, delta); err != nil {
			return err
		}
	}
	return nil
}

// sortedRow is one distinct row of the result read back for sorting.
type sortedRow struct {
	sort, row []byte
	count     int64
}

func (a sortedRow) less(b sortedRow) bool {
	if c := bytes.Compare(a.sort, b.sort); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.row, b.row) < 0
}

// EndInput emits the final result.
func (s *BatchSort) EndInput(_ int, out Collector) error {
	if s.ended {
		return nil
	}
	s.ended = true
	if !s.spec.Global() {
		return s.emitUnordered(out)
	}
	var rows []sortedRow
	// keep is how many rows the cut needs; 0: all of them.
	var keep int64
	if s.spec.Limit > 0 {
		keep = s.spec.Offset + s.spec.Limit
	}
	err := s.rows.Scan(func(_ int, key []byte, entries []state.MultisetRow) error {
		for _, e := range entries {
			rows = append(rows, sortedRow{sort: e.Row, row: append([]byte(nil), key...), count: e.Count})
		}
		if keep > 0 && int64(len(rows)) > 2*keep+joinBatchRows {
			rows = topRows(rows, keep)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a].less(rows[b]) })
	skip, left := s.spec.Offset, s.spec.Limit
	for _, r := range rows {
		for c := int64(0); c < r.count; c++ {
			if skip > 0 {
				skip--
				continue
			}
			if s.spec.Limit > 0 {
				if left == 0 {
					return s.flush(out)
				}
				left--
			}
			if err := s.emit(r.row, out); err != nil {
				return err
			}
		}
	}
	return s.flush(out)
}

// topRows sorts rows and keeps the fewest first rows that hold keep
// occurrences.
func topRows(rows []sortedRow, keep int64) []sortedRow {
	sort.Slice(rows, func(a, b int) bool { return rows[a].less(rows[b]) })
	var n int64
	for i, r := range rows {
		if n += r.count; n >= keep {
			return rows[:i+1]
		}
	}
	return rows
}

// emitUnordered emits every row in the order of the state.
//
// NB: it emits from inside the scan, whose callback must not call into the
// backend. That holds because what follows a BatchSort never keeps keyed
// state: the planner puts it last, with only a calc and the sink after it.
func (s *BatchSort) emitUnordered(out Collector) error {
	err := s.rows.Scan(func(_ int, key []byte, entries []state.MultisetRow) error {
		for _, e := range entries {
			for c := int64(0); c < e.Count; c++ {
				if err := s.emit(key, out); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.flush(out)
}

// emit appends an encoded row to the output as +I, flushing a full batch.
func (s *BatchSort) emit(row []byte, out Collector) error {
	if err := s.rb.Decoder(0, len(s.spec.InputSchema)).Append(row); err != nil {
		return fmt.Errorf("operators: batch sort state holds a bad row: %w", err)
	}
	s.rb.EndRow()
	s.kinds = append(s.kinds, int8(types.Insert))
	if s.rb.Len() >= joinBatchRows {
		return s.flush(out)
	}
	return nil
}

func (s *BatchSort) flush(out Collector) error {
	return emitBuilt(out, s.schema, s.rb, &s.kinds)
}

// Close releases the row builder. It is safe after a failed Open.
func (s *BatchSort) Close() error {
	if s.rb != nil {
		s.rb.Release()
		s.rb = nil
	}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*BatchSort) UsesKeyedState() bool { return true }
