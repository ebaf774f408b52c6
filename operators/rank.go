package operators

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindRank, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.RankSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewRank(*s)
	})
}

// Rank is Flink's streaming Top-N (Rank with rankType=[ROW_NUMBER] and
// rankStart=1): per partition key it keeps the rows ordered by the sort
// key, ties in arrival order, and emits the change of the partition's first
// Limit rows. Without the row number in its output
// (Flink's AppendOnlyTopNFunction and RetractableTopNFunction "without row
// number"):
//
//   - a new row that enters the top evicts the Limit-th row, if there was
//     one: -D evicted, then +I new; a row that does not enter emits nothing;
//   - a retraction (-U/-D) of a row in the top emits -D of it, then +I of
//     the row that moves up into the top, if any.
//
// With the row number (OutputRankNumber), every row whose rank changes is
// updated, in rank order, as Flink's "with row number" algorithms do:
//
//   - a new row entering at rank r emits, for each rank R from r to the
//     last rank held (at most Limit), -U of the row that was at R and +U of
//     the row now at R (the newcomer at r, then each row pushed down one);
//     when the top was not full, the row pushed to the new last rank gets
//     +I. A row pushed out of the top leaves by its -U, with no -D.
//   - a retraction of the row at rank r emits, for each rank R from r
//     while a row moves up into R (and R <= Limit), -U of the row that was
//     at R and +U of the one now there; when no row is left to fill the
//     last rank, -D of the row that held it.
//
// Either way a retraction of a row below the top, or of one the partition
// does not hold, emits nothing.
//
// With EmitAtEnd (batch mode; the only mode for RANK and DENSE_RANK) it
// keeps every row, emits nothing while rows arrive, and at the end of input
// emits +I of each partition's rows of rank <= Limit, in rank order. The output rows are the input rows, then
// the row number when it is output. Changes are emitted in batches of up
// to 4096 rows before Process returns.
//
// With a TTL (TTLMs) a stored row expires that long after it was written
// and leaves the partition silently, as in Flink: no retraction is emitted,
// and a later row may take its rank.
//
// State: a MultisetState per partition key whose entries are the encoded
// sort key, an arrival sequence number and the encoded row (each entry once,
// so equal rows are separate entries). For insert-only input only the top
// Limit rows are kept; with retractions every row of the partition is kept,
// since retracting a top row brings the next one back. Each Process call
// loads the partitions it touches into sorted slices: a row costs
// O(m) for a partition of m stored rows (a binary search and a slice
// insert), plus O(m log m) the first time a batch touches the partition.
// Top-N partitions are small in typical use (the top few rows per key, or
// the groups of an aggregate); a very large retracting partition is slow.
type Rank struct {
	spec   jobgraph.RankSpec
	be     state.Namespace
	rows   *state.MultisetState
	maxPar int

	keyEnc  *types.RowEncoder
	rowEnc  *types.RowEncoder
	sortEnc *sortKeyEncoder
	keyCols []arrow.Array
	hashes  []uint64
	keyBuf  []byte
	rowBuf  []byte
	sortBuf []byte
	// parts are the partitions the current Process call has loaded, by
	// partition key; they are dropped when it returns.
	parts map[string]*rankPartition

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
	// ranks are the row numbers of the rows in rb, when they are output.
	ranks []int64
	// out is the collector of the current Process call, which emitRank
	// flushes to when rb holds a full batch.
	out Collector
}

var _ StatefulOperator = (*Rank)(nil)

// rankEntry is one stored row: its state entry (sort key, sequence number,
// row) and the parts of it.
type rankEntry struct {
	raw  []byte
	sort []byte
	seq  uint64
	row  []byte
}

// rankPartition is a partition's rows sorted by (sort key, seq).
type rankPartition struct {
	kg      int
	key     []byte
	entries []rankEntry
	nextSeq uint64
}

var errBadRankState = errors.New("operators: corrupt rank state entry")

// NewRank checks spec and returns an unopened operator.
func NewRank(spec jobgraph.RankSpec) (*Rank, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: rank: %w", err)
	}
	if spec.Limit < 1 {
		return nil, fmt.Errorf("operators: rank limit %d is not positive", spec.Limit)
	}
	if len(spec.OrderBy) == 0 {
		return nil, fmt.Errorf("operators: rank has no ORDER BY key")
	}
	for _, c := range spec.Partition {
		if c < 0 || c >= len(spec.InputSchema) {
			return nil, fmt.Errorf("operators: rank partition column %d is out of range", c)
		}
	}
	for _, k := range spec.OrderBy {
		if k.Col < 0 || k.Col >= len(spec.InputSchema) {
			return nil, fmt.Errorf("operators: rank sort column %d is out of range", k.Col)
		}
		if err := checkSortable(spec.InputSchema[k.Col].Type.ArrowType()); err != nil {
			return nil, err
		}
	}
	return &Rank{spec: spec}, nil
}

// Open opens the operator's state at ctx.StateDir.
func (r *Rank) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	r.maxPar = maxPar
	r.be = be
	r.rows = be.Multiset("rows")
	if r.spec.TTLMs > 0 {
		r.rows.SetTTL(time.Duration(r.spec.TTLMs)*time.Millisecond, ctx.Now)
	}
	ks := make(types.Schema, len(r.spec.Partition))
	for i, c := range r.spec.Partition {
		ks[i] = r.spec.InputSchema[c]
	}
	r.keyEnc = types.NewRowEncoder(ks)
	r.keyCols = make([]arrow.Array, len(ks))
	r.rowEnc = types.NewRowEncoder(r.spec.InputSchema)
	r.sortEnc = newSortKeyEncoder(r.spec.OrderBy)
	r.schema = r.spec.OutputSchema().ArrowSchema()
	r.rb = types.NewRowBuilder(nil, r.spec.InputSchema)
	return nil
}

// Process applies the rows of b to their partitions and emits the changes
// of each partition's top. It borrows b.
func (r *Rank) Process(_ int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, c := range r.spec.Partition {
		r.keyCols[i] = cols[c]
	}
	if cap(r.hashes) < n {
		r.hashes = make([]uint64, n)
	}
	r.hashes = r.hashes[:n]
	types.HashColumns(r.keyCols, r.hashes)
	r.parts = map[string]*rankPartition{}
	r.out = out
	defer func() { r.parts, r.out = nil, nil }()
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		p, err := r.partition(i)
		if err != nil {
			return err
		}
		r.rowBuf = r.rowEnc.AppendRow(r.rowBuf[:0], cols, i)
		r.sortBuf = r.sortEnc.append(r.sortBuf[:0], cols, i)
		if types.RowKind(kinds[i]).IsRetract() {
			err = r.retract(p)
		} else {
			err = r.insert(p)
		}
		if err != nil {
			return err
		}
	}
	return r.flush(out)
}

// partition returns the partition of input row i, loading it from state the
// first time the batch touches it.
func (r *Rank) partition(i int) (*rankPartition, error) {
	r.keyBuf = r.keyEnc.EncodeKey(r.keyBuf[:0], r.keyCols, i)
	if p, ok := r.parts[string(r.keyBuf)]; ok {
		return p, nil
	}
	p := &rankPartition{kg: types.KeyGroupForHash(r.hashes[i], r.maxPar), key: append([]byte(nil), r.keyBuf...)}
	stored, err := r.rows.Get(p.kg, p.key)
	if err != nil {
		return nil, err
	}
	// NB: one copy of every stored row, since the state's bytes are valid
	// only until its next call.
	size := 0
	for _, s := range stored {
		size += len(s.Row)
	}
	arena := make([]byte, 0, size)
	p.entries = make([]rankEntry, 0, len(stored)+1)
	for _, s := range stored {
		start := len(arena)
		arena = append(arena, s.Row...)
		e, err := decodeRankEntry(arena[start:len(arena):len(arena)])
		if err != nil {
			return nil, err
		}
		// NB: every entry is added once; a count above 1 cannot happen
		// since sequence numbers are unique, but honour it anyway.
		for c := int64(0); c < s.Count; c++ {
			p.entries = append(p.entries, e)
		}
		if e.seq >= p.nextSeq {
			p.nextSeq = e.seq + 1
		}
	}
	sortRankEntries(p.entries)
	r.parts[string(p.key)] = p
	return p, nil
}

// compareRankEntries orders entries by sort key, then arrival.
func compareRankEntries(a, b rankEntry) int {
	if c := bytes.Compare(a.sort, b.sort); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// sortRankEntries sorts entries by (sort key, seq); entries that come
// sorted (as state often returns them) cost one pass.
func sortRankEntries(entries []rankEntry) {
	if !slices.IsSortedFunc(entries, compareRankEntries) {
		slices.SortFunc(entries, compareRankEntries)
	}
}

func (e rankEntry) less(sortKey []byte, seq uint64) bool {
	if c := bytes.Compare(e.sort, sortKey); c != 0 {
		return c < 0
	}
	return e.seq < seq
}

func decodeRankEntry(raw []byte) (rankEntry, error) {
	l, w := binary.Uvarint(raw)
	if w <= 0 || uint64(len(raw)-w) < l+8 {
		return rankEntry{}, errBadRankState
	}
	s := raw[w : w+int(l)]
	rest := raw[w+int(l):]
	return rankEntry{raw: raw, sort: s, seq: binary.BigEndian.Uint64(rest), row: rest[8:]}, nil
}

// insert adds the current row (r.rowBuf, r.sortBuf) to p.
func (r *Rank) insert(p *rankPartition) error {
	limit := r.spec.Limit
	seq := p.nextSeq
	pos := sort.Search(len(p.entries), func(j int) bool { return !p.entries[j].less(r.sortBuf, seq) })
	if int64(pos) >= limit && !r.spec.InputRetracts && !r.spec.EmitAtEnd {
		// NB: on insert-only input a row below the top can never enter it.
		return nil
	}
	p.nextSeq++
	raw := binary.AppendUvarint(nil, uint64(len(r.sortBuf)))
	raw = append(raw, r.sortBuf...)
	raw = binary.BigEndian.AppendUint64(raw, seq)
	raw = append(raw, r.rowBuf...)
	e, err := decodeRankEntry(raw)
	if err != nil {
		return err
	}
	if err := r.rows.Add(p.kg, p.key, raw, 1); err != nil {
		return err
	}
	p.entries = append(p.entries, rankEntry{})
	copy(p.entries[pos+1:], p.entries[pos:])
	p.entries[pos] = e
	if int64(pos) >= limit || r.spec.EmitAtEnd {
		return nil
	}
	if r.spec.OutputRankNumber {
		return r.insertWithRowNumber(p, pos)
	}
	if int64(len(p.entries)) > limit {
		evicted := p.entries[limit]
		if err := r.emit(evicted.row, types.Delete); err != nil {
			return err
		}
		if !r.spec.InputRetracts {
			if err := r.rows.Add(p.kg, p.key, evicted.raw, -1); err != nil {
				return err
			}
			p.entries = p.entries[:limit]
		}
	}
	return r.emit(e.row, types.Insert)
}

// retract removes the earliest stored row equal to the current row from p.
func (r *Rank) retract(p *rankPartition) error {
	limit := r.spec.Limit
	pos := sort.Search(len(p.entries), func(j int) bool { return bytes.Compare(p.entries[j].sort, r.sortBuf) >= 0 })
	for ; pos < len(p.entries) && bytes.Equal(p.entries[pos].sort, r.sortBuf); pos++ {
		if bytes.Equal(p.entries[pos].row, r.rowBuf) {
			break
		}
	}
	if pos == len(p.entries) || !bytes.Equal(p.entries[pos].sort, r.sortBuf) {
		// A retraction of a row the partition does not hold.
		return nil
	}
	e := p.entries[pos]
	if err := r.rows.Add(p.kg, p.key, e.raw, -1); err != nil {
		return err
	}
	p.entries = append(p.entries[:pos], p.entries[pos+1:]...)
	if int64(pos) >= limit || r.spec.EmitAtEnd {
		return nil
	}
	if r.spec.OutputRankNumber {
		return r.retractWithRowNumber(p, pos, e.row)
	}
	if err := r.emit(e.row, types.Delete); err != nil {
		return err
	}
	if int64(len(p.entries)) >= limit {
		return r.emit(p.entries[limit-1].row, types.Insert)
	}
	return nil
}

// insertWithRowNumber emits the changes of the new row at index pos (in the
// top) with row numbers: -U/+U for every rank from its own to the last one
// held, +I for a new last rank; on insert-only input it then drops the row
// pushed out of the top from state.
func (r *Rank) insertWithRowNumber(p *rankPartition, pos int) error {
	limit := r.spec.Limit
	n := int64(len(p.entries))
	for rank := int64(pos) + 1; rank <= min(n-1, limit); rank++ {
		if err := r.emitRank(p.entries[rank].row, types.UpdateBefore, rank); err != nil {
			return err
		}
		if err := r.emitRank(p.entries[rank-1].row, types.UpdateAfter, rank); err != nil {
			return err
		}
	}
	if n <= limit {
		return r.emitRank(p.entries[n-1].row, types.Insert, n)
	}
	if !r.spec.InputRetracts {
		if err := r.rows.Add(p.kg, p.key, p.entries[limit].raw, -1); err != nil {
			return err
		}
		p.entries = p.entries[:limit]
	}
	return nil
}

// retractWithRowNumber emits the changes of removing row (which was at
// index pos, in the top) with row numbers: -U/+U for every rank a row moves
// up into, -D of the last rank when no row is left to fill it.
func (r *Rank) retractWithRowNumber(p *rankPartition, pos int, row []byte) error {
	prev := row
	rank := int64(pos) + 1
	for ; rank <= r.spec.Limit && rank-1 < int64(len(p.entries)); rank++ {
		if err := r.emitRank(prev, types.UpdateBefore, rank); err != nil {
			return err
		}
		prev = p.entries[rank-1].row
		if err := r.emitRank(prev, types.UpdateAfter, rank); err != nil {
			return err
		}
	}
	if rank <= r.spec.Limit {
		return r.emitRank(prev, types.Delete, rank)
	}
	return nil
}

// emit appends an encoded input row to the output (without a row number).
func (r *Rank) emit(row []byte, kind types.RowKind) error {
	return r.emitRank(row, kind, 0)
}

// emitRank appends an encoded input row to the output, with its row number
// when the operator outputs it.
func (r *Rank) emitRank(row []byte, kind types.RowKind, rank int64) error {
	if r.rb.Len() >= joinBatchRows {
		if err := r.flush(r.out); err != nil {
			return err
		}
	}
	if err := r.rb.Decoder(0, len(r.spec.InputSchema)).Append(row); err != nil {
		return fmt.Errorf("operators: rank state holds a bad row: %w", err)
	}
	r.rb.EndRow()
	r.kinds = append(r.kinds, int8(kind))
	if r.spec.OutputRankNumber {
		r.ranks = append(r.ranks, rank)
	}
	return nil
}

func (r *Rank) flush(out Collector) error {
	if !r.spec.OutputRankNumber {
		return emitBuilt(out, r.schema, r.rb, &r.kinds)
	}
	if r.rb.Len() == 0 {
		return nil
	}
	arrs := r.rb.NewArrays()
	rb := array.NewInt64Builder(memory.DefaultAllocator)
	rb.AppendValues(r.ranks, nil)
	arrs = append(arrs, rb.NewArray())
	rb.Release()
	b := types.NewBatch(r.schema, arrs, r.kinds)
	for _, a := range arrs {
		a.Release()
	}
	r.kinds, r.ranks = r.kinds[:0], r.ranks[:0]
	err := out.Emit(b)
	b.Release()
	return err
}

// EndInput emits the final ranks of every partition when the rank emits
// at the end (batch mode); otherwise changes were emitted as rows arrived
// and it has nothing to do.
func (r *Rank) EndInput(_ int, out Collector) error {
	if !r.spec.EmitAtEnd {
		return nil
	}
	r.out = out
	defer func() { r.out = nil }()
	// NB: rows are emitted after the scan: a scan's callback must not call
	// into the backend, which an operator chained after this one shares.
	var entries []rankEntry
	var final []rankedRow
	err := r.rows.Scan(func(_ int, _ []byte, rows []state.MultisetRow) error {
		entries = entries[:0]
		for _, s := range rows {
			e, err := decodeRankEntry(s.Row)
			if err != nil {
				return err
			}
			for c := int64(0); c < s.Count; c++ {
				entries = append(entries, e)
			}
		}
		sortRankEntries(entries)
		final = r.finalRows(final, entries)
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range final {
		if err := r.emitRank(f.row, types.Insert, f.rank); err != nil {
			return err
		}
	}
	return r.flush(out)
}

// rankedRow is an encoded row with its rank.
type rankedRow struct {
	row  []byte
	rank int64
}

// finalRows appends to dst the sorted rows of one partition whose rank is
// at most Limit: ROW_NUMBER numbers the rows, RANK gives tied rows the
// position of the first of them, DENSE_RANK the count of distinct sort
// keys up to them.
func (r *Rank) finalRows(dst []rankedRow, entries []rankEntry) []rankedRow {
	var rank int64
	for i, e := range entries {
		tie := i > 0 && bytes.Equal(entries[i-1].sort, e.sort)
		switch {
		case r.spec.RankType == jobgraph.RankTypeRank && tie:
		case r.spec.RankType == jobgraph.RankTypeRank:
			rank = int64(i) + 1
		case r.spec.RankType == jobgraph.RankTypeDenseRank && tie:
		default:
			rank++
		}
		if rank > r.spec.Limit {
			break
		}
		dst = append(dst, rankedRow{row: e.row, rank: rank})
	}
	return dst
}

// Close flushes the state to Pebble and closes it. It is safe after a failed
// Open.
func (r *Rank) Close() error {
	if r.rb != nil {
		r.rb.Release()
		r.rb = nil
	}
	r.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*Rank) UsesKeyedState() bool { return true }
