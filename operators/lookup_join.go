package operators

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// LookupTable reads the rows of an external table by key, for a lookup
// join. The join calls it from its one goroutine.
type LookupTable interface {
	// Open connects; ctx is the join's. A table that fails to open is
	// still closed.
	Open(ctx *Context) error
	// Lookup reads the rows of every key of keys: each key holds one
	// value per lookup key column (Go values as database/sql takes them:
	// int64, float64, bool, string, []byte, time.Time, a DECIMAL as its
	// string), none NULL. It returns the rows as columns of the lookup
	// schema, and for each row the index of the key it matched; the
	// caller releases the columns. An error is the external system's:
	// the join retries the call.
	Lookup(ctx context.Context, keys [][]any) (cols []arrow.Array, match []int, err error)
	Close() error
}

// LookupJoin is Flink's processing-time lookup join (LookupJoinRunner):
// each input row queries the lookup table for the rows whose key columns
// equal its key and is joined with those that satisfy the residual; LEFT
// pads a row without one. Output rows keep their input row's kind. The keys
// of one input batch that the cache does not hold are read in one Lookup
// call.
//
// It keeps no keyed state: the lookup table is the truth and the cache
// (jobgraph.LookupCache) is only a copy, so there is nothing to snapshot
// and a restored join starts with an empty cache.
type LookupJoin struct {
	spec  jobgraph.LookupJoinSpec
	table LookupTable
	cache *lookupCache
	now   func() time.Time
	done  <-chan struct{}

	keyEnc    *types.RowEncoder // the input's key columns
	lookupEnc *types.RowEncoder // rows of the lookup schema
	residual  *expr.Filter
	out       *joinOutput
	schema    *arrow.Schema
	keyCols   []arrow.Array
	keyBuf    []byte
	sel       []int32

	// Per batch: each row's key (nil for a NULL key), the rows found for
	// each distinct key, and the keys to read.
	rowKey  []int
	found   [][][]byte
	pending map[string]int
	toRead  [][]any
	readIdx []int
	candRow []int

	// lookups counts Lookup calls, keysRead the keys they read.
	lookups, keysRead int64
}

var _ Operator = (*LookupJoin)(nil)

// lookupBackoff is the first wait before a retry; it doubles up to a second.
const lookupBackoff = 100 * time.Millisecond

// NewLookupJoin checks spec and returns an unopened join over table. The
// join owns table and closes it.
func NewLookupJoin(spec jobgraph.LookupJoinSpec, table LookupTable) (*LookupJoin, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: lookup join: %w", err)
	}
	for i, k := range spec.InputKeys {
		a, b := spec.InputSchema[k].Type, spec.LookupSchema[spec.LookupKeys[i]].Type
		if physOfArrow(a) != physOfArrow(b) {
			return nil, fmt.Errorf("operators: lookup join key %d has types %s and %s", i, a, b)
		}
	}
	return &LookupJoin{spec: spec, table: table}, nil
}

func physOfArrow(t types.DataType) string { return t.ArrowType().String() }

// Open opens the lookup table and compiles the residual.
func (j *LookupJoin) Open(ctx *Context) error {
	j.now, j.done = ctx.Now, ctx.Done
	if j.now == nil {
		j.now = time.Now
	}
	if j.spec.Cache.Enabled {
		j.cache = newLookupCache(j.spec.Cache)
	}
	var ks types.Schema
	for _, k := range j.spec.InputKeys {
		ks = append(ks, j.spec.InputSchema[k])
	}
	j.keyEnc = types.NewRowEncoder(ks)
	j.lookupEnc = types.NewRowEncoder(j.spec.LookupSchema)
	if j.spec.Residual != nil {
		var err error
		if j.residual, err = expr.CompileFilter(j.spec.Residual, ctx.Env()); err != nil {
			return fmt.Errorf("operators: lookup join condition: %w", err)
		}
	}
	j.out = newJoinOutput(j.spec.OutputSchema, len(j.spec.InputSchema), nil)
	j.schema = j.spec.OutputSchema.ArrowSchema()
	j.pending = map[string]int{}
	return j.table.Open(ctx)
}

// Process joins the rows of b with the lookup table's rows. It borrows b.
func (j *LookupJoin) Process(input int, b types.Batch, out Collector) error {
	if input != 0 {
		return fmt.Errorf("operators: lookup join has no input %d", input)
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	if err := j.resolveKeys(cols, n); err != nil {
		return err
	}
	kinds := b.Kinds()
	if j.residual == nil {
		for i := 0; i < n; i++ {
			if err := j.emitRow(cols, i, kinds[i], out); err != nil {
				return err
			}
		}
		return j.out.flush(out)
	}
	return j.processResidual(cols, kinds, out)
}

// emitRow appends input row i joined with each row of its key, or padded.
func (j *LookupJoin) emitRow(cols []arrow.Array, i int, kind int8, out Collector) error {
	var rows [][]byte
	if k := j.rowKey[i]; k >= 0 {
		rows = j.found[k]
	}
	if len(rows) == 0 {
		if j.spec.OuterLeft {
			j.out.appendPadded(0, cols, i, kind)
		}
	}
	for _, r := range rows {
		if err := j.out.appendJoined(0, cols, i, r, kind); err != nil {
			return err
		}
	}
	if j.out.len() >= joinBatchRows {
		return j.out.flush(out)
	}
	return nil
}

// processResidual joins the rows of a batch as candidates, keeps those that
// satisfy the residual and pads (LEFT) the input rows left without one.
func (j *LookupJoin) processResidual(cols []arrow.Array, kinds []int8, out Collector) error {
	j.candRow = j.candRow[:0]
	for i := range j.rowKey {
		if k := j.rowKey[i]; k >= 0 {
			for _, r := range j.found[k] {
				if err := j.out.appendJoined(0, cols, i, r, kinds[i]); err != nil {
					return err
				}
				j.candRow = append(j.candRow, i)
			}
		}
	}
	cand := takeBatch(j.schema, j.out.rb, &j.out.kinds)
	j.out.rb.Reserve(joinBatchRows)
	defer cand.Release()
	var err error
	if j.sel, err = j.residual.Select(cand, j.sel); err != nil {
		return err
	}
	ccols := cand.Rec.Columns()[:cand.NumCols()]
	for _, c := range j.sel {
		j.out.rb.AppendColumns(0, ccols, int(c))
		j.out.rb.EndRow()
		j.out.kinds = append(j.out.kinds, kinds[j.candRow[c]])
		if j.out.len() >= joinBatchRows {
			if err := j.out.flush(out); err != nil {
				return err
			}
		}
	}
	if j.spec.OuterLeft {
		// NB: rows are padded after the matched ones of the batch; a
		// changelog's order matters only per key, and a row's padded and
		// joined forms never both appear.
		matched := make([]bool, len(j.rowKey))
		for _, c := range j.sel {
			matched[j.candRow[c]] = true
		}
		for i, m := range matched {
			if !m {
				j.out.appendPadded(0, cols, i, kinds[i])
			}
		}
	}
	return j.out.flush(out)
}

// resolveKeys sets, for each row of the batch, the index of its key's rows
// in j.found (-1 for a NULL key), reading the keys the cache lacks.
func (j *LookupJoin) resolveKeys(cols []arrow.Array, n int) error {
	j.keyCols = j.keyCols[:0]
	for _, k := range j.spec.InputKeys {
		j.keyCols = append(j.keyCols, cols[k])
	}
	j.rowKey, j.found, j.toRead, j.readIdx = j.rowKey[:0], j.found[:0], j.toRead[:0], j.readIdx[:0]
	clear(j.pending)
	now := j.now()
	for i := 0; i < n; i++ {
		if types.AnyNull(j.keyCols, i) {
			j.rowKey = append(j.rowKey, -1)
			continue
		}
		j.keyBuf = j.keyEnc.EncodeKey(j.keyBuf[:0], j.keyCols, i)
		if k, ok := j.pending[string(j.keyBuf)]; ok {
			j.rowKey = append(j.rowKey, k)
			continue
		}
		k := len(j.found)
		j.pending[string(j.keyBuf)] = k
		j.rowKey = append(j.rowKey, k)
		if j.cache != nil {
			if rows, ok := j.cache.get(j.keyBuf, now); ok {
				j.found = append(j.found, rows)
				continue
			}
		}
		j.found = append(j.found, nil)
		vals := make([]any, len(j.keyCols))
		for c, col := range j.keyCols {
			vals[c] = lookupValue(col, i)
		}
		j.toRead = append(j.toRead, vals)
		j.readIdx = append(j.readIdx, k)
	}
	if len(j.toRead) == 0 {
		return nil
	}
	lcols, match, err := j.lookup(j.toRead)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range lcols {
			c.Release()
		}
	}()
	for r, m := range match {
		if m < 0 || m >= len(j.readIdx) {
			return fmt.Errorf("operators: lookup table %s matched key %d of %d", j.spec.TableName, m, len(j.readIdx))
		}
		k := j.readIdx[m]
		j.found[k] = append(j.found[k], j.lookupEnc.AppendRow(nil, lcols, r))
	}
	if j.cache != nil {
		for key, k := range j.pending {
			if j.isRead(k) {
				j.cache.put([]byte(key), j.found[k], now)
			}
		}
	}
	return nil
}

// isRead reports whether key index k was read in this batch (not cached).
func (j *LookupJoin) isRead(k int) bool {
	// NB: readIdx is ascending.
	lo, hi := 0, len(j.readIdx)
	for lo < hi {
		m := (lo + hi) / 2
		if j.readIdx[m] < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(j.readIdx) && j.readIdx[lo] == k
}

// lookup calls the table, retrying a failure up to MaxRetries times with a
// doubling wait, as Flink's JDBC lookup function does.
func (j *LookupJoin) lookup(keys [][]any) ([]arrow.Array, []int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if j.done != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-j.done:
				cancel()
			case <-stop:
			}
		}()
	}
	wait := lookupBackoff
	for attempt := 0; ; attempt++ {
		j.lookups++
		cols, match, err := j.table.Lookup(ctx, keys)
		if err == nil {
			j.keysRead += int64(len(keys))
			return cols, match, nil
		}
		if attempt >= j.spec.MaxRetries || ctx.Err() != nil {
			return nil, nil, types.WithClass(fmt.Errorf("lookup table %s: %w", j.spec.TableName, err), types.ClassExternal)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// lookupValue is row i of col as a database/sql argument.
func lookupValue(col arrow.Array, i int) any {
	switch c := col.(type) {
	case *array.Boolean:
		return c.Value(i)
	case *array.Int8:
		return int64(c.Value(i))
	case *array.Int16:
		return int64(c.Value(i))
	case *array.Int32:
		return int64(c.Value(i))
	case *array.Int64:
		return c.Value(i)
	case *array.Float32:
		return float64(c.Value(i))
	case *array.Float64:
		return c.Value(i)
	case *array.String:
		return c.Value(i)
	case *array.Binary:
		return append([]byte(nil), c.Value(i)...)
	case *array.Decimal128:
		return c.Value(i).ToString(c.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return time.Unix(int64(c.Value(i))*86400, 0).UTC()
	case *array.Timestamp:
		return time.Unix(0, int64(c.Value(i))).UTC()
	}
	panic(fmt.Sprintf("operators: lookup key of Arrow type %s", col.DataType()))
}

// EndInput has nothing to flush: every batch is joined as it arrives.
func (j *LookupJoin) EndInput(input int, out Collector) error { return nil }

// Close closes the lookup table. It is safe after a failed Open.
func (j *LookupJoin) Close() error {
	if j.out != nil {
		j.out.release()
	}
	if j.table == nil {
		return nil
	}
	return j.table.Close()
}

// LookupStats reports the lookup calls made and keys read, and the cache's
// hits and misses (zero without a cache).
func (j *LookupJoin) LookupStats() (lookups, keysRead, hits, misses int64) {
	if j.cache != nil {
		hits, misses = j.cache.hits, j.cache.misses
	}
	return j.lookups, j.keysRead, hits, misses
}
