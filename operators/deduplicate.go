package operators

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindDeduplicate, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.DeduplicateSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewDeduplicate(*s)
	})
}

// Deduplicate is Flink's streaming Deduplicate (without mini-batch): per key
// it keeps one row of an insert-only input and emits its changes, as
// Flink's functions do with INSERT generated and UPDATE_BEFORE needed:
//
//   - processing time, keep first (ProcTimeDeduplicateKeepFirstRowFunction):
//     the key's first row emits +I; later rows emit nothing. Insert-only.
//   - processing time, keep last (ProcTimeDeduplicateKeepLastRowFunction):
//     the first row emits +I; each later row emits -U kept, +U new, except
//     that a row equal to the kept one emits nothing when there is no state
//     TTL.
//   - event time (RowTimeDeduplicateFunction): a row replaces the kept one
//     when its rowtime is >= the kept one's (keep last) or < it (keep first),
//     emitting +I for the key's first row and -U kept, +U new after that; a
//     row that does not replace it emits nothing. No row is late: the
//     watermark plays no part.
//
// A row with a NULL rowtime counts as the smallest time. Output rows are
// the input rows, built into batches of up to 4096 rows emitted before
// Process returns.
//
// State, per key, in one ValueState entry: the write time when there is a
// TTL (an entry written a TTL ago or more is gone, as Flink's
// OnCreateAndWrite and NeverReturnExpired TTL have it), then, except for
// processing-time keep-first (a marker only), the rowtime (event time) and
// the encoded kept row.
type Deduplicate struct {
	spec   jobgraph.DeduplicateSpec
	be     state.Namespace
	kept   *state.ValueState
	maxPar int
	now    func() time.Time

	keyEnc  *types.RowEncoder
	rowEnc  *types.RowEncoder
	keyCols []arrow.Array
	hashes  []uint64
	keyBuf  []byte
	valBuf  []byte
	entBuf  []byte // the state entry being written (Put copies it)
	// unit is how many rowtime units make a millisecond.
	unit int64

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var _ StatefulOperator = (*Deduplicate)(nil)

var errBadDedupState = errors.New("operators: corrupt deduplicate state entry")

// NewDeduplicate checks spec and returns an unopened operator.
func NewDeduplicate(spec jobgraph.DeduplicateSpec) (*Deduplicate, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: deduplicate: %w", err)
	}
	d := &Deduplicate{spec: spec, unit: 1}
	if spec.RowtimeCol >= 0 {
		ts, ok := spec.InputSchema[spec.RowtimeCol].Type.ArrowType().(*arrow.TimestampType)
		if !ok {
			return nil, fmt.Errorf("operators: deduplicate rowtime column %d is not a timestamp", spec.RowtimeCol)
		}
		d.unit = map[arrow.TimeUnit]int64{arrow.Second: 1, arrow.Millisecond: 1, arrow.Microsecond: 1000, arrow.Nanosecond: 1_000_000}[ts.Unit]
		if ts.Unit == arrow.Second {
			// NB: seconds are scaled up, not down (see rowtimeMs).
			d.unit = -1000
		}
	}
	return d, nil
}

// Open opens the operator's state.
func (d *Deduplicate) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	d.be, d.maxPar = be, maxPar
	d.kept = be.Value("kept")
	d.now = ctx.Now
	if d.now == nil {
		d.now = time.Now
	}
	ks := make(types.Schema, len(d.spec.Keys))
	for i, c := range d.spec.Keys {
		ks[i] = d.spec.InputSchema[c]
	}
	d.keyEnc = types.NewRowEncoder(ks)
	d.keyCols = make([]arrow.Array, len(ks))
	d.rowEnc = types.NewRowEncoder(d.spec.InputSchema)
	d.schema = d.spec.InputSchema.ArrowSchema()
	d.rb = types.NewRowBuilder(nil, d.spec.InputSchema)
	return nil
}

// rowtimeMs is the rowtime of row i in milliseconds (floored); NULL is the
// smallest time.
func (d *Deduplicate) rowtimeMs(col *array.Timestamp, i int) int64 {
	if col.IsNull(i) {
		return -1 << 63
	}
	v := int64(col.Value(i))
	if d.unit < 0 {
		return v * -d.unit
	}
	q := v / d.unit
	if v%d.unit < 0 {
		q--
	}
	return q
}

// Process applies the rows of b to their keys and emits the changes. It
// borrows b. Retractions in the input are an error: the planner admits
// only insert-only input.
func (d *Deduplicate) Process(_ int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, c := range d.spec.Keys {
		d.keyCols[i] = cols[c]
	}
	if cap(d.hashes) < n {
		d.hashes = make([]uint64, n)
	}
	d.hashes = d.hashes[:n]
	types.HashColumns(d.keyCols, d.hashes)
	var rowtimes *array.Timestamp
	if d.spec.RowtimeCol >= 0 {
		rowtimes = cols[d.spec.RowtimeCol].(*array.Timestamp)
	}
	var nowMs int64
	if d.spec.TTLMs > 0 {
		nowMs = d.now().UnixMilli()
	}
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		if k := types.RowKind(kinds[i]); k != types.Insert {
			return fmt.Errorf("operators: deduplicate got a %s row; its input must be insert-only", k)
		}
		if err := d.processRow(cols, rowtimes, i, nowMs); err != nil {
			return err
		}
		if d.rb.Len() >= joinBatchRows-1 {
			if err := d.flush(out); err != nil {
				return err
			}
		}
	}
	return d.flush(out)
}

// processRow applies row i to its key; it appends at most two rows.
func (d *Deduplicate) processRow(cols []arrow.Array, rowtimes *array.Timestamp, i int, nowMs int64) error {
	kg := types.KeyGroupForHash(d.hashes[i], d.maxPar)
	d.keyBuf = d.keyEnc.EncodeKey(d.keyBuf[:0], d.keyCols, i)
	stored, found, err := d.kept.Get(kg, d.keyBuf)
	if err != nil {
		return err
	}
	if found {
		if stored, found, err = d.live(stored, nowMs); err != nil {
			return err
		}
	}
	if rowtimes == nil && !d.spec.KeepLastRow {
		// Processing time, keep first: a marker is all the state.
		if found {
			return nil
		}
		d.emitInput(cols, i, types.Insert)
		return d.store(kg, nowMs, nil)
	}
	d.valBuf = d.valBuf[:0]
	if rowtimes != nil {
		rowtime := d.rowtimeMs(rowtimes, i)
		d.valBuf = binary.BigEndian.AppendUint64(d.valBuf, uint64(rowtime))
		if found {
			if len(stored) < 8 {
				return errBadDedupState
			}
			keptTime := int64(binary.BigEndian.Uint64(stored))
			if d.spec.KeepLastRow && rowtime < keptTime || !d.spec.KeepLastRow && rowtime >= keptTime {
				return nil
			}
			stored = stored[8:]
		}
	}
	d.valBuf = d.rowEnc.AppendRow(d.valBuf, cols, i)
	if rowtimes == nil && found && d.spec.TTLMs == 0 && string(stored) == string(d.valBuf) {
		// NB: as Flink's, only without a TTL: with one, the update keeps
		// downstream state alive.
		return nil
	}
	kind := types.Insert
	if found {
		// NB: the stored row is decoded into the output before the state
		// is written again.
		if err := d.emitStored(stored); err != nil {
			return err
		}
		kind = types.UpdateAfter
	}
	d.emitInput(cols, i, kind)
	return d.store(kg, nowMs, d.valBuf)
}

// live strips the write time from a stored entry and reports whether it
// has not expired.
func (d *Deduplicate) live(stored []byte, nowMs int64) ([]byte, bool, error) {
	if d.spec.TTLMs <= 0 {
		return stored, true, nil
	}
	if len(stored) < 8 {
		return nil, false, errBadDedupState
	}
	written := int64(binary.BigEndian.Uint64(stored))
	return stored[8:], nowMs-written < d.spec.TTLMs, nil
}

// store writes the current key's entry: the write time when there is a
// TTL, then v (on event time the rowtime, then the encoded row), or a
// marker when v is nil.
func (d *Deduplicate) store(kg int, nowMs int64, v []byte) error {
	val := d.entBuf[:0]
	if d.spec.TTLMs > 0 {
		val = binary.BigEndian.AppendUint64(val, uint64(nowMs))
	}
	if v == nil {
		val = append(val, 1)
	} else {
		val = append(val, v...)
	}
	d.entBuf = val
	return d.kept.Put(kg, d.keyBuf, val)
}

// emitStored appends -U of a stored row.
func (d *Deduplicate) emitStored(row []byte) error {
	if err := d.rb.Decoder(0, len(d.spec.InputSchema)).Append(row); err != nil {
		return fmt.Errorf("operators: deduplicate state holds a bad row: %w", err)
	}
	d.rb.EndRow()
	d.kinds = append(d.kinds, int8(types.UpdateBefore))
	return nil
}

func (d *Deduplicate) emitInput(cols []arrow.Array, i int, kind types.RowKind) {
	d.rb.AppendColumns(0, cols, i)
	d.rb.EndRow()
	d.kinds = append(d.kinds, int8(kind))
}

func (d *Deduplicate) flush(out Collector) error {
	return emitBuilt(out, d.schema, d.rb, &d.kinds)
}

// EndInput has nothing to flush: changes are emitted as rows arrive.
func (d *Deduplicate) EndInput(int, Collector) error { return nil }

// Close releases the builder. It is safe after a failed Open.
func (d *Deduplicate) Close() error {
	if d.rb != nil {
		d.rb.Release()
		d.rb = nil
	}
	d.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*Deduplicate) UsesKeyedState() bool { return true }
