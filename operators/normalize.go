package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindNormalize, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.NormalizeSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewNormalize(*s)
	})
}

// Normalize keeps the last row of every key of an upsert stream and emits
// the changelog Flink's ChangelogNormalize emits: +I for a new key, -U old
// and +U new for a changed row, -D old for a deleted key. Like Flink with
// state TTL off, a row equal to the stored one emits nothing; -U input rows
// carry no information in an upsert stream and are dropped, as are rows
// with a NULL key column.
//
// With a TTL (TTLMs) a key's row expires that long after its last write
// (processing time; the key is then new again, and a delete of it emits
// nothing), and, as in Flink's DeduplicateFunctionHelper, a row equal to
// the stored one is emitted again as -U/+U so downstream state with the
// same TTL is refreshed. The stored value is then the write time (8 bytes,
// big-endian ms) followed by the row.
type Normalize struct {
	spec   jobgraph.NormalizeSpec
	side   *joinSide // the key and row encodings of the input
	last   *state.ValueState
	be     state.Namespace
	maxPar int
	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
	now    func() time.Time
	valBuf []byte
}

var _ StatefulOperator = (*Normalize)(nil)

// NewNormalize checks spec and returns an unopened operator.
func NewNormalize(spec jobgraph.NormalizeSpec) (*Normalize, error) {
	if len(spec.Keys) == 0 {
		return nil, fmt.Errorf("operators: normalize needs key columns")
	}
	for _, k := range spec.Keys {
		if k < 0 || k >= len(spec.Schema) {
			return nil, fmt.Errorf("operators: normalize key column %d is out of range", k)
		}
	}
	return &Normalize{spec: spec}, nil
}

// Open opens the operator's state at ctx.StateDir.
func (n *Normalize) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	n.maxPar = maxPar
	n.be = be
	n.last = be.Value("last")
	n.now = ctx.Now
	if n.now == nil {
		n.now = time.Now
	}
	n.side = newJoinSide(n.spec.Schema, n.spec.Keys, nil)
	n.schema = n.spec.Schema.ArrowSchema()
	n.rb = types.NewRowBuilder(nil, n.spec.Schema)
	return nil
}

// Process applies the rows of b to the stored rows and emits the changes.
func (n *Normalize) Process(_ int, b types.Batch, out Collector) error {
	rows := b.NumRows()
	if rows == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	n.side.bind(cols, rows)
	kinds := b.Kinds()
	ttl := n.spec.TTLMs > 0
	var nowMs int64
	if ttl {
		nowMs = n.now().UnixMilli()
	}
	for i := 0; i < rows; i++ {
		kind := types.RowKind(kinds[i])
		if kind == types.UpdateBefore {
			continue
		}
		kg, key, ok := n.side.keyAt(i, n.maxPar)
		if !ok {
			continue
		}
		old, found, err := n.last.Get(kg, key)
		if err != nil {
			return err
		}
		stored := found
		if found && ttl {
			if len(old) < 8 {
				return fmt.Errorf("operators: normalize state holds a value of %d bytes, too short for its write time", len(old))
			}
			found = nowMs-int64(binary.BigEndian.Uint64(old)) < n.spec.TTLMs
			old = old[8:]
		}
		if kind == types.Delete {
			if found {
				if err := n.emitStored(old, types.Delete); err != nil {
					return err
				}
			}
			if stored {
				if err := n.last.Delete(kg, key); err != nil {
					return err
				}
			}
			continue
		}
		row := n.side.rowAt(cols, i)
		switch {
		case found && !ttl && bytes.Equal(old, row):
			continue
		case found:
			if err := n.emitStored(old, types.UpdateBefore); err != nil {
				return err
			}
			n.emitRow(cols, i, types.UpdateAfter)
		default:
			n.emitRow(cols, i, types.Insert)
		}
		if ttl {
			n.valBuf = binary.BigEndian.AppendUint64(n.valBuf[:0], uint64(nowMs))
			row = append(n.valBuf, row...)
			n.valBuf = row
		}
		if err := n.last.Put(kg, key, row); err != nil {
			return err
		}
		if n.rb.Len() >= joinBatchRows {
			if err := n.flush(out); err != nil {
				return err
			}
		}
	}
	return n.flush(out)
}

// emitStored appends a stored row; the caller is done with old before the
// next state call.
func (n *Normalize) emitStored(old []byte, kind types.RowKind) error {
	if err := n.rb.Decoder(0, len(n.spec.Schema)).Append(old); err != nil {
		return fmt.Errorf("operators: normalize state holds a bad row: %w", err)
	}
	n.rb.EndRow()
	n.kinds = append(n.kinds, int8(kind))
	return nil
}

func (n *Normalize) emitRow(cols []arrow.Array, i int, kind types.RowKind) {
	n.rb.AppendColumns(0, cols, i)
	n.rb.EndRow()
	n.kinds = append(n.kinds, int8(kind))
}

func (n *Normalize) flush(out Collector) error {
	return emitBuilt(out, n.schema, n.rb, &n.kinds)
}

// EndInput has nothing to flush: changes are emitted as rows arrive.
func (n *Normalize) EndInput(int, Collector) error { return nil }

// Close closes the state.
func (n *Normalize) Close() error {
	if n.rb != nil {
		n.rb.Release()
		n.rb = nil
	}
	n.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*Normalize) UsesKeyedState() bool { return true }
