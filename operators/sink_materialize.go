package operators

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindSinkMaterialize, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.SinkMaterializeSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewSinkMaterialize(*s)
	})
}

// SinkMaterialize is Flink's SinkUpsertMaterializer (see
// jobgraph.SinkMaterializeSpec). Per sink key it keeps a list of the rows
// added and not yet retracted, each with its match key (its upsert key
// columns, or the whole row), in a ValueState:
//
//   - +I/+U r: r replaces the stored row with its match key (with an upsert
//     key) or is appended, and is emitted: +I when the list was empty, +U
//     otherwise.
//   - -U/-D r: the first stored row with r's match key is removed; when
//     the list is then empty, -D r; when the removed row was the last, +U
//     of the new last; otherwise nothing. A retraction of a row that is
//     not there (its state expired) emits nothing.
//
// A row whose sink key holds a NULL passes through as it is, so the sink's
// NOT NULL check fails the job as it would without the materializer.
type SinkMaterialize struct {
	spec   jobgraph.SinkMaterializeSpec
	side   *joinSide // the sink key and row encodings
	match  *types.RowEncoder
	mcols  []arrow.Array
	rows   *state.ValueState
	be     state.Namespace
	maxPar int
	now    func() time.Time
	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
	list   []storedRow
	buf    []byte
}

// storedRow is one row of a key's list: its match key and encoded row.
type storedRow struct{ match, row []byte }

var _ StatefulOperator = (*SinkMaterialize)(nil)

var errBadMaterializeState = errors.New("operators: sink materializer state is corrupt")

// NewSinkMaterialize checks spec and returns an unopened operator.
func NewSinkMaterialize(spec jobgraph.SinkMaterializeSpec) (*SinkMaterialize, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: sink materializer: %w", err)
	}
	return &SinkMaterialize{spec: spec}, nil
}

// Open opens the operator's keyed state.
func (m *SinkMaterialize) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	m.be, m.maxPar = be, maxPar
	m.rows = be.Value("rows")
	m.now = ctx.Now
	if m.now == nil {
		m.now = time.Now
	}
	m.side = newJoinSide(m.spec.Schema, m.spec.Keys, nil)
	if len(m.spec.UpsertKey) > 0 {
		ks := make(types.Schema, len(m.spec.UpsertKey))
		for i, k := range m.spec.UpsertKey {
			ks[i] = m.spec.Schema[k]
		}
		m.match = types.NewRowEncoder(ks)
		m.mcols = make([]arrow.Array, len(m.spec.UpsertKey))
	}
	m.schema = m.spec.Schema.ArrowSchema()
	m.rb = types.NewRowBuilder(nil, m.spec.Schema)
	return nil
}

// Process applies b's rows to their keys' lists and emits the sink's rows.
func (m *SinkMaterialize) Process(_ int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	m.side.bind(cols, n)
	for i, k := range m.spec.UpsertKey {
		m.mcols[i] = cols[k]
	}
	var nowMs int64
	if m.spec.TTLMs > 0 {
		nowMs = m.now().UnixMilli()
	}
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		kind := types.RowKind(kinds[i])
		kg, key, ok := m.side.keyAt(i, m.maxPar)
		if !ok {
			m.emitRow(cols, i, kind)
			continue
		}
		if err := m.load(kg, key, nowMs); err != nil {
			return err
		}
		row := m.side.rowAt(cols, i)
		match := row
		if m.match != nil {
			match = m.match.EncodeKey(nil, m.mcols, i)
		}
		var err error
		if kind == types.Insert || kind == types.UpdateAfter {
			err = m.add(kg, key, match, row, cols, i, nowMs)
		} else {
			err = m.retract(kg, key, match, cols, i, nowMs)
		}
		if err != nil {
			return err
		}
		if m.rb.Len() >= joinBatchRows {
			if err := m.flush(out); err != nil {
				return err
			}
		}
	}
	return m.flush(out)
}

func (m *SinkMaterialize) add(kg int, key, match, row []byte, cols []arrow.Array, i int, nowMs int64) error {
	kind := types.UpdateAfter
	if len(m.list) == 0 {
		kind = types.Insert
	}
	r := storedRow{match: bytes.Clone(match), row: bytes.Clone(row)}
	if j := m.find(match); m.match != nil && j >= 0 {
		m.list[j] = r
	} else {
		m.list = append(m.list, r)
	}
	m.emitRow(cols, i, kind)
	return m.store(kg, key, nowMs)
}

func (m *SinkMaterialize) retract(kg int, key, match []byte, cols []arrow.Array, i int, nowMs int64) error {
	j := m.find(match)
	if j < 0 {
		return nil
	}
	last := len(m.list) - 1
	m.list = append(m.list[:j], m.list[j+1:]...)
	switch {
	case len(m.list) == 0:
		m.emitRow(cols, i, types.Delete)
		return m.rows.Delete(kg, key)
	case j == last:
		if err := m.emitStored(m.list[len(m.list)-1].row, types.UpdateAfter); err != nil {
			return err
		}
	}
	return m.store(kg, key, nowMs)
}

// find returns the index of the first stored row with match key match, or
// -1.
func (m *SinkMaterialize) find(match []byte) int {
	for j, r := range m.list {
		if bytes.Equal(r.match, match) {
			return j
		}
	}
	return -1
}

// load reads a key's list into m.list: empty when there is none or its
// time to live has passed.
func (m *SinkMaterialize) load(kg int, key []byte, nowMs int64) error {
	m.list = m.list[:0]
	v, found, err := m.rows.Get(kg, key)
	if err != nil || !found {
		return err
	}
	if m.spec.TTLMs > 0 {
		written, w := binary.Uvarint(v)
		if w <= 0 {
			return errBadMaterializeState
		}
		if nowMs-int64(written) >= m.spec.TTLMs {
			return nil
		}
		v = v[w:]
	}
	for len(v) > 0 {
		var r storedRow
		for _, dst := range []*[]byte{&r.match, &r.row} {
			n, w := binary.Uvarint(v)
			if w <= 0 || uint64(len(v)-w) < n {
				return errBadMaterializeState
			}
			*dst = bytes.Clone(v[w : w+int(n)])
			v = v[w+int(n):]
		}
		m.list = append(m.list, r)
	}
	return nil
}

// store writes m.list as the key's list: the write time (with a TTL), then
// each row's match key and row, length-prefixed.
func (m *SinkMaterialize) store(kg int, key []byte, nowMs int64) error {
	m.buf = m.buf[:0]
	if m.spec.TTLMs > 0 {
		m.buf = binary.AppendUvarint(m.buf, uint64(nowMs))
	}
	for _, r := range m.list {
		m.buf = binary.AppendUvarint(m.buf, uint64(len(r.match)))
		m.buf = append(m.buf, r.match...)
		m.buf = binary.AppendUvarint(m.buf, uint64(len(r.row)))
		m.buf = append(m.buf, r.row...)
	}
	return m.rows.Put(kg, key, m.buf)
}

func (m *SinkMaterialize) emitStored(row []byte, kind types.RowKind) error {
	if err := m.rb.Decoder(0, len(m.spec.Schema)).Append(row); err != nil {
		return fmt.Errorf("operators: sink materializer state holds a bad row: %w", err)
	}
	m.rb.EndRow()
	m.kinds = append(m.kinds, int8(kind))
	return nil
}

func (m *SinkMaterialize) emitRow(cols []arrow.Array, i int, kind types.RowKind) {
	m.rb.AppendColumns(0, cols, i)
	m.rb.EndRow()
	m.kinds = append(m.kinds, int8(kind))
}

func (m *SinkMaterialize) flush(out Collector) error {
	return emitBuilt(out, m.schema, m.rb, &m.kinds)
}

// EndInput has nothing to flush: rows are emitted as they arrive.
func (m *SinkMaterialize) EndInput(int, Collector) error { return nil }

// Close releases the row builder.
func (m *SinkMaterialize) Close() error {
	if m.rb != nil {
		m.rb.Release()
		m.rb = nil
	}
	m.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*SinkMaterialize) UsesKeyedState() bool { return true }
