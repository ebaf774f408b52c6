package connectors

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterSource(jobgraph.KindDatagen, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.DatagenSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewDatagenSource(*s)
	})
}

// Datagen options, as Flink names them.
const (
	datagenDefaultRate      = 10000
	datagenDefaultStrLength = 100
)

var datagenFieldOptions = []string{"kind", "min", "max", "max-past", "length", "start", "end", "null-rate"}

// DatagenSpecFor reads the options of a 'datagen' table: 'rows-per-second'
// (default 10000), 'number-of-rows' (unbounded when absent) and, per column,
// 'fields.<col>.kind' (random, the default, or sequence), 'min'/'max' (random
// numbers), 'max-past' (random timestamps: how far before now, e.g. '5 s';
// default 0), 'length' (random strings and bytes, default 100),
// 'start'/'end' (sequences, both required) and 'null-rate' (0 to 1). Errors
// name the option and the table.
//
// NB: DatagenField has no max-past field, so for TIMESTAMP and TIMESTAMP_LTZ
// columns Max carries max-past in milliseconds.
func DatagenSpecFor(t *catalog.Table) (jobgraph.DatagenSpec, error) {
	name := t.Database + "." + t.Name
	schema := t.PhysicalSchema()
	spec := jobgraph.DatagenSpec{Schema: schema, Fields: make([]jobgraph.DatagenField, len(schema)), RowsPerSecond: datagenDefaultRate, Table: name}
	col := map[string]int{}
	for i, f := range schema {
		col[f.Name] = i
		spec.Fields[i].Kind = "random"
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	for _, k := range keys {
		v := strings.TrimSpace(t.Options[k])
		switch k {
		case "connector":
			continue
		case "rows-per-second":
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r <= 0 || math.IsInf(r, 0) {
				return spec, bad(k, "must be a positive number, got '%s'", v)
			}
			spec.RowsPerSecond = r
			continue
		case "number-of-rows":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return spec, bad(k, "must be a whole number >= 0, got '%s'", v)
			}
			if n == 0 {
				n = -1 // no rows at all; 0 in the spec means unbounded
			}
			spec.NumberOfRows = n
			continue
		}
		rest, ok := strings.CutPrefix(k, "fields.")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot < 0 {
			return spec, fmt.Errorf("table %s: unsupported option '%s' for connector 'datagen' (supported: %s)",
				name, k, strings.Join(datagenOptionNames(), ", "))
		}
		cname, opt := rest[:dot], rest[dot+1:]
		i, ok := col[cname]
		if !ok {
			return spec, bad(k, "names no physical column of the table (columns: %s)", strings.Join(schema.Names(), ", "))
		}
		f := &spec.Fields[i]
		ft := schema[i].Type
		switch opt {
		case "kind":
			if v != "random" && v != "sequence" {
				return spec, bad(k, "must be 'random' or 'sequence', got '%s'", v)
			}
			f.Kind = v
		case "min":
			f.Min = v
		case "max":
			f.Max = v
		case "max-past":
			if !ft.IsTimestamp() {
				return spec, bad(k, "applies only to TIMESTAMP columns, %s is %v", cname, ft)
			}
			d, err := parseFlinkDuration(v)
			if err != nil {
				return spec, bad(k, "%v", err)
			}
			f.Max = strconv.FormatInt(d.Milliseconds(), 10)
		case "length":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return spec, bad(k, "must be a positive whole number, got '%s'", v)
			}
			f.Length = n
		case "start":
			f.Start = v
		case "end":
			f.End = v
		case "null-rate":
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || r > 1 {
				return spec, bad(k, "must be a number from 0 to 1, got '%s'", v)
			}
			f.NullRate = r
		default:
			return spec, fmt.Errorf("table %s: unsupported option '%s' for connector 'datagen' (supported per column: fields.<column>.%s)",
				name, k, strings.Join(datagenFieldOptions, "|"))
		}
	}
	for i := range spec.Fields {
		if _, err := newDatagenColumn(schema[i], spec.Fields[i], 0, 1); err != nil {
			return spec, fmt.Errorf("table %s: %w", name, err)
		}
	}
	return spec, nil
}

func datagenOptionNames() []string {
	out := []string{"connector", "rows-per-second", "number-of-rows"}
	for _, o := range datagenFieldOptions {
		out = append(out, "fields.<column>."+o)
	}
	return out
}

// parseFlinkDuration reads a duration as Flink writes one: "500" (ms),
// "5 s", "10s", "1 min", "2 h", "1 d", "100 ms".
func parseFlinkDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad duration '%s'", s)
	}
	unit := strings.TrimSpace(s[i:])
	var d time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		d = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		d = time.Second
	case "min", "mins", "minute", "minutes":
		d = time.Minute
	case "h", "hour", "hours":
		d = time.Hour
	case "d", "day", "days":
		d = 24 * time.Hour
	default:
		return 0, fmt.Errorf("bad duration unit in '%s'", s)
	}
	return time.Duration(n) * d, nil
}

// DatagenSource generates rows as Flink's datagen connector does. Subtask i
// of p generates its share of 'number-of-rows' and the values i, i+p, i+2p,
// ... of each sequence; it ends when its share is done or a sequence is
// exhausted (Run returns nil) and otherwise runs until its context is
// cancelled. The rate, over all subtasks, is RowsPerSecond.
//
// Row n of subtask i is a pure function of (seed, i, n): sequence values
// are computed from n, and each random value comes from a generator seeded
// by (seed, i, column, n). Its position (SnapshotState) is therefore the
// seed and the number of rows it emitted; restored, it continues with
// exactly the rows it would have produced (values taken from the clock,
// such as random timestamps, excepted). At another parallelism a table
// with 'number-of-rows' or a sequence cannot be restored (its rows are
// split among the subtasks by their number) and Open fails; a table of
// random values only is: subtask i continues old subtask i's rows, or
// starts at row 0 if there was none.
type DatagenSource struct {
	spec    jobgraph.DatagenSpec
	schema  *arrow.Schema
	cols    []*datagenColumn
	pcg     *rand.PCG
	rng     *rand.Rand // draws from pcg
	seed    int64
	limit   int64 // rows this subtask emits; -1 unbounded
	rate    float64
	subtask int
	par     int
	// done counts the rows passed to Emit.
	done int64

	// now and sleep are the clock; tests replace them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var (
	_ operators.Source       = (*DatagenSource)(nil)
	_ operators.Checkpointer = (*DatagenSource)(nil)
)

// datagenPosition is a DatagenSource's position.
type datagenPosition struct {
	V           int   `json:"v"`
	Subtask     int   `json:"subtask"`
	Parallelism int   `json:"parallelism"`
	Seed        int64 `json:"seed"`
	Rows        int64 `json:"rows"`
}

// NewDatagenSource checks spec and returns its source.
func NewDatagenSource(spec jobgraph.DatagenSpec) (*DatagenSource, error) {
	if len(spec.Fields) != len(spec.Schema) {
		return nil, fmt.Errorf("datagen: %d field configs for %d columns", len(spec.Fields), len(spec.Schema))
	}
	return &DatagenSource{spec: spec, schema: spec.Schema.ArrowSchema(), now: time.Now, sleep: sleepCtx}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Open implements operators.Source. It restores the position from
// ctx.Restore.
func (s *DatagenSource) Open(ctx *operators.Context) error {
	p := max(ctx.Parallelism, 1)
	s.subtask, s.par = ctx.Subtask, p
	s.seed = s.spec.Seed
	if s.seed == 0 {
		s.seed = time.Now().UnixNano()
	}
	s.done = 0
	if err := s.restore(ctx.Restore); err != nil {
		return err
	}
	s.pcg = rand.NewPCG(0, 0)
	s.rng = rand.New(s.pcg)
	s.limit = -1
	switch n := s.spec.NumberOfRows; {
	case n < 0:
		s.limit = 0
	case n > 0:
		s.limit = n / int64(p)
		if int64(ctx.Subtask) < n%int64(p) {
			s.limit++
		}
	}
	s.cols = make([]*datagenColumn, len(s.spec.Schema))
	for i, f := range s.spec.Schema {
		c, err := newDatagenColumn(f, s.spec.Fields[i], ctx.Subtask, p)
		if err != nil {
			return fmt.Errorf("datagen: %w", err)
		}
		c.key = splitmix64(splitmix64(uint64(s.seed)) ^ uint64(ctx.Subtask)<<32 ^ uint64(i))
		s.cols[i] = c
		if c.seqCount >= 0 && (s.limit < 0 || c.seqCount < s.limit) {
			s.limit = c.seqCount
		}
	}
	if s.limit >= 0 && s.done > s.limit {
		return fmt.Errorf("datagen table %s: checkpointed position %d is past this subtask's %d rows", s.spec.Table, s.done, s.limit)
	}
	s.rate = s.spec.RowsPerSecond / float64(p)
	return nil
}

// restore reads s's seed and row count from r.
func (s *DatagenSource) restore(r operators.Restore) error {
	if r.ID == 0 {
		return nil
	}
	var found bool
	for _, b := range r.State {
		if len(b) == 0 {
			continue
		}
		var pos datagenPosition
		if err := decodePosition("datagen table "+s.spec.Table, b, &pos, &pos.V); err != nil {
			return err
		}
		if pos.Parallelism != s.par && s.partitioned() {
			return fmt.Errorf("datagen table %s cannot be restored at another parallelism (%d -> %d): its 'number-of-rows' or sequences are split among the subtasks",
				s.spec.Table, pos.Parallelism, s.par)
		}
		s.seed = pos.Seed
		if pos.Subtask == s.subtask {
			s.done, found = pos.Rows, true
		}
	}
	if !found && !r.Rescaled && len(r.State) > 0 {
		return fmt.Errorf("datagen table %s: checkpoint %d holds no position for subtask %d", s.spec.Table, r.ID, s.subtask)
	}
	return nil
}

// partitioned reports whether the table's rows are split among subtasks
// by their number: a row count or a sequence.
func (s *DatagenSource) partitioned() bool {
	if s.spec.NumberOfRows > 0 {
		return true
	}
	for _, f := range s.spec.Fields {
		if f.Kind == "sequence" {
			return true
		}
	}
	return false
}

// Run implements operators.Source.
func (s *DatagenSource) Run(ctx context.Context, out operators.Collector) error {
	batch := int64(maxBatchRows)
	if s.rate > 0 {
		// About a tenth of a second of rows per batch keeps latency low at
		// small rates and batches large at high ones.
		batch = min(max(int64(s.rate/10), 1), maxBatchRows)
	}
	start, first := s.now(), s.done
	for s.limit < 0 || s.done < s.limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := batch
		if s.limit >= 0 {
			n = min(n, s.limit-s.done)
		}
		b := s.generate(s.done, int(n))
		// The position moves first: a checkpoint taken inside Emit counts b.
		s.done += n
		err := out.Emit(b)
		b.Release()
		if err != nil {
			return err
		}
		if s.rate > 0 {
			due := start.Add(time.Duration(float64(s.done-first) / s.rate * float64(time.Second)))
			if err := s.throttle(ctx, due, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// throttle sleeps until due, calling operators.Idle at least every
// idleEvery so that checkpoints are not held up.
func (s *DatagenSource) throttle(ctx context.Context, due time.Time, out operators.Collector) error {
	for {
		d := due.Sub(s.now())
		if d <= 0 {
			return nil
		}
		if err := s.sleep(ctx, min(d, idleEvery)); err != nil {
			return err
		}
		if err := operators.Idle(out); err != nil {
			return err
		}
	}
}

// SnapshotState implements operators.Checkpointer: the seed and the rows
// emitted.
func (s *DatagenSource) SnapshotState(int64) ([]byte, error) {
	return encodePosition(datagenPosition{V: positionVersion, Subtask: s.subtask, Parallelism: s.par, Seed: s.seed, Rows: s.done})
}

// NotifyCheckpointComplete implements operators.Checkpointer; it does
// nothing.
func (s *DatagenSource) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer; it does
// nothing.
func (s *DatagenSource) NotifyCheckpointAborted(int64) error { return nil }

// generate builds rows first..first+n-1 of this subtask.
func (s *DatagenSource) generate(first int64, n int) types.Batch {
	cols := make([]arrow.Array, len(s.cols))
	now := s.now()
	for i, c := range s.cols {
		cols[i] = c.build(s.pcg, s.rng, first, n, now)
	}
	b := types.NewInsertBatch(s.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return b
}

// Close implements operators.Source.
func (s *DatagenSource) Close() error { return nil }

// datagenColumn generates one column.
type datagenColumn struct {
	field    types.Field
	cfg      jobgraph.DatagenField
	seq      bool
	step     int64 // parallelism: the distance between a subtask's values
	seqFirst int64 // this subtask's first value offset from start
	seqCount int64 // values left for this subtask; -1 for random columns
	// key seeds, with a row's number, the generator of this column's value
	// in that row (see cellSeed).
	key uint64

	// Parsed bounds: integers and sequences use the int form, floats and
	// decimals the float form.
	imin, imax int64
	fmin, fmax float64
	length     int
	maxPast    int64 // ms
}

func newDatagenColumn(f types.Field, cfg jobgraph.DatagenField, subtask, par int) (*datagenColumn, error) {
	c := &datagenColumn{field: f, cfg: cfg, step: int64(par), seqCount: -1, length: cfg.Length}
	opt := func(o string) string { return "fields." + f.Name + "." + o }
	t := f.Type
	if cfg.Kind == "sequence" {
		c.seq = true
		if cfg.Start == "" || cfg.End == "" {
			return nil, fmt.Errorf("sequence column %s needs options '%s' and '%s'", f.Name, opt("start"), opt("end"))
		}
		if !(t.IsNumeric() || t.IsString()) {
			return nil, fmt.Errorf("option '%s': a sequence of %v is not supported (numbers and strings are)", opt("kind"), t)
		}
		start, err1 := strconv.ParseInt(cfg.Start, 10, 64)
		end, err2 := strconv.ParseInt(cfg.End, 10, 64)
		if err1 != nil {
			return nil, fmt.Errorf("option '%s' must be a whole number, got '%s'", opt("start"), cfg.Start)
		}
		if err2 != nil || end < start {
			return nil, fmt.Errorf("option '%s' must be a whole number >= start (%d), got '%s'", opt("end"), start, cfg.End)
		}
		if t.IsInteger() {
			lo, hi := intRange(t)
			if start < lo || end > hi {
				return nil, fmt.Errorf("options '%s'..'%s' exceed the range of %v", opt("start"), opt("end"), t)
			}
		}
		c.imin, c.imax = start, end
		total := uint64(end-start) + 1
		mine := total / uint64(par)
		if uint64(subtask) < total%uint64(par) {
			mine++
		}
		c.seqFirst, c.seqCount = int64(subtask), int64(mine)
		return c, nil
	}
	if cfg.Start != "" || cfg.End != "" {
		return nil, fmt.Errorf("options '%s'/'%s' apply to sequences; set '%s' = 'sequence'", opt("start"), opt("end"), opt("kind"))
	}
	if (cfg.Min != "" || cfg.Max != "") && !t.IsNumeric() && !t.IsTimestamp() {
		return nil, fmt.Errorf("options '%s'/'%s' apply to numeric columns, %s is %v", opt("min"), opt("max"), f.Name, t)
	}
	if cfg.Length != 0 && !t.IsString() && !t.IsBinary() {
		return nil, fmt.Errorf("option '%s' applies to string and binary columns, %s is %v", opt("length"), f.Name, t)
	}
	switch {
	case t.Kind == types.KindBoolean, t.Kind == types.KindDate, t.Kind == types.KindTime, t.Kind == types.KindNull:
	case t.IsInteger():
		lo, hi := intRange(t)
		c.imin, c.imax = lo, hi
		var err error
		if cfg.Min != "" {
			if c.imin, err = strconv.ParseInt(cfg.Min, 10, 64); err != nil || c.imin < lo || c.imin > hi {
				return nil, fmt.Errorf("option '%s' must be a whole number in the range of %v, got '%s'", opt("min"), t, cfg.Min)
			}
		}
		if cfg.Max != "" {
			if c.imax, err = strconv.ParseInt(cfg.Max, 10, 64); err != nil || c.imax < lo || c.imax > hi {
				return nil, fmt.Errorf("option '%s' must be a whole number in the range of %v, got '%s'", opt("max"), t, cfg.Max)
			}
		}
		if c.imin > c.imax {
			return nil, fmt.Errorf("option '%s' (%d) is above '%s' (%d)", opt("min"), c.imin, opt("max"), c.imax)
		}
	case t.Kind == types.KindFloat, t.Kind == types.KindDouble, t.Kind == types.KindDecimal:
		c.fmin, c.fmax = 0, math.MaxFloat32
		if t.Kind == types.KindDouble {
			c.fmax = math.MaxFloat64
		}
		if t.Kind == types.KindDecimal {
			c.fmax = math.Pow10(t.Precision-t.Scale) - math.Pow10(-t.Scale)
			c.fmin = -c.fmax
		}
		var err error
		if cfg.Min != "" {
			if c.fmin, err = strconv.ParseFloat(cfg.Min, 64); err != nil {
				return nil, fmt.Errorf("option '%s' must be a number, got '%s'", opt("min"), cfg.Min)
			}
		}
		if cfg.Max != "" {
			if c.fmax, err = strconv.ParseFloat(cfg.Max, 64); err != nil {
				return nil, fmt.Errorf("option '%s' must be a number, got '%s'", opt("max"), cfg.Max)
			}
		}
		if c.fmin > c.fmax {
			return nil, fmt.Errorf("option '%s' (%s) is above '%s' (%s)", opt("min"), cfg.Min, opt("max"), cfg.Max)
		}
	case t.IsString(), t.IsBinary():
		if c.length == 0 {
			c.length = datagenDefaultStrLength
		}
		if t.Kind == types.KindChar || t.Kind == types.KindBinary || t.Length < c.length {
			c.length = t.Length
		}
	case t.IsTimestamp():
		if cfg.Min != "" {
			return nil, fmt.Errorf("option '%s' does not apply to %v; use '%s'", opt("min"), t, opt("max-past"))
		}
		if cfg.Max != "" {
			ms, err := strconv.ParseInt(cfg.Max, 10, 64)
			if err != nil || ms < 0 {
				return nil, fmt.Errorf("option '%s' must be a duration, got '%s'", opt("max-past"), cfg.Max)
			}
			c.maxPast = ms
		}
	default:
		return nil, fmt.Errorf("column %s: datagen cannot generate %v", f.Name, t)
	}
	return c, nil
}

func intRange(t types.DataType) (int64, int64) {
	switch t.Kind {
	case types.KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case types.KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case types.KindInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// build generates this subtask's rows first..first+n-1 of the column. rng
// draws from pcg, which build reseeds for each row so that a row's value
// depends on its number only.
func (c *datagenColumn) build(pcg *rand.PCG, rng *rand.Rand, first int64, n int, now time.Time) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, c.field.Type.ArrowType())
	defer b.Release()
	b.Reserve(n)
	random := !c.seq || c.cfg.NullRate > 0
	for r := 0; r < n; r++ {
		if random {
			pcg.Seed(c.key, splitmix64(uint64(first+int64(r))))
		}
		if c.cfg.NullRate > 0 && rng.Float64() < c.cfg.NullRate {
			b.AppendNull()
			continue
		}
		if c.seq {
			c.appendSeq(b, c.imin+c.seqFirst+(first+int64(r))*c.step)
		} else {
			c.appendRandom(b, rng, now)
		}
	}
	return b.NewArray()
}

func (c *datagenColumn) appendSeq(b array.Builder, v int64) {
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v))
	case *array.Int16Builder:
		b.Append(int16(v))
	case *array.Int32Builder:
		b.Append(int32(v))
	case *array.Int64Builder:
		b.Append(v)
	case *array.Float32Builder:
		b.Append(float32(v))
	case *array.Float64Builder:
		b.Append(float64(v))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v).IncreaseScaleBy(int32(c.field.Type.Scale)))
	case *array.StringBuilder:
		b.Append(strconv.FormatInt(v, 10))
	}
}

func (c *datagenColumn) appendRandom(b array.Builder, rng *rand.Rand, now time.Time) {
	switch b := b.(type) {
	case *array.NullBuilder:
		b.AppendNull()
	case *array.BooleanBuilder:
		b.Append(rng.IntN(2) == 1)
	case *array.Int8Builder:
		b.Append(int8(c.randInt(rng)))
	case *array.Int16Builder:
		b.Append(int16(c.randInt(rng)))
	case *array.Int32Builder:
		b.Append(int32(c.randInt(rng)))
	case *array.Int64Builder:
		b.Append(c.randInt(rng))
	case *array.Float32Builder:
		b.Append(float32(c.randFloat(rng)))
	case *array.Float64Builder:
		b.Append(c.randFloat(rng))
	case *array.Decimal128Builder:
		t := c.field.Type
		v, err := decimal128.FromFloat64(c.randFloat(rng), int32(t.Precision), int32(t.Scale))
		if err != nil {
			v = decimal128.Num{}
		}
		b.Append(v)
	case *array.StringBuilder:
		buf := make([]byte, (c.length+1)/2)
		fillRandom(rng, buf)
		b.Append(hex.EncodeToString(buf)[:c.length])
	case *array.BinaryBuilder:
		buf := make([]byte, c.length)
		fillRandom(rng, buf)
		b.Append(buf)
	case *array.Date32Builder:
		b.Append(arrow.Date32(now.Unix() / 86400))
	case *array.Time32Builder:
		b.Append(arrow.Time32(now.UnixMilli() % 86400000))
	case *array.TimestampBuilder:
		ms := now.UnixMilli()
		if c.maxPast > 0 {
			ms -= rng.Int64N(c.maxPast + 1)
		}
		b.Append(arrow.Timestamp(ms * int64(time.Millisecond)))
	}
}

func (c *datagenColumn) randInt(rng *rand.Rand) int64 {
	span := uint64(c.imax - c.imin)
	if span == math.MaxUint64 {
		return int64(rng.Uint64())
	}
	return c.imin + int64(rng.Uint64N(span+1))
}

func (c *datagenColumn) randFloat(rng *rand.Rand) float64 {
	// Halves keep max-min finite for the full DOUBLE range.
	return c.fmin + (c.fmax/2-c.fmin/2)*rng.Float64()*2
}

func fillRandom(rng *rand.Rand, buf []byte) {
	for i := 0; i < len(buf); i += 8 {
		v := rng.Uint64()
		for j := i; j < min(i+8, len(buf)); j++ {
			buf[j] = byte(v)
			v >>= 8
		}
	}
}

// splitmix64 scrambles x (SplitMix64's finaliser), so that seeds of nearby
// rows, columns and subtasks give unrelated generators.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
