package connectors

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/brianvoe/gofakeit/v7"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// ConnectorFaker is flink-faker's connector name.
const ConnectorFaker = "faker"

func init() {
	operators.RegisterSource(jobgraph.KindFaker, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.FakerSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewFakerSource(*s)
	})
}

// fakerDefaultRate is flink-faker's default 'rows-per-second'.
const fakerDefaultRate = 10000

var fakerFieldOptions = []string{"expression", "null-rate", "length"}

// FakerSpecFor reads the options of a 'faker' table as flink-faker does:
// 'rows-per-second' (default 10000), 'number-of-rows' (unbounded when
// absent or -1) and per column 'fields.<col>.expression' (required; a
// MAP's are 'fields.<col>.key.expression' and '.value.expression', a
// ROW's 'fields.<col>.<field>.expression'), 'fields.<col>.null-rate' (0 to
// 1) and 'fields.<col>.length' (elements of an ARRAY, MAP or MULTISET,
// default 1). Every expression is compiled, so an unknown provider or
// method, or bad arguments, fail here; errors name the table, the option
// and the expression.
func FakerSpecFor(t *catalog.Table) (jobgraph.FakerSpec, error) {
	name := tableName(t)
	schema := t.PhysicalSchema()
	spec := jobgraph.FakerSpec{Schema: schema, Fields: make([]jobgraph.FakerField, len(schema)), RowsPerSecond: fakerDefaultRate, Table: name}
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	// The options each column reads, by key.
	known := map[string]bool{"connector": true, "rows-per-second": true, "number-of-rows": true}
	for i, f := range schema {
		spec.Fields[i].Length = 1
		for _, k := range fakerExpressionKeys(f) {
			known[k] = true
		}
		known["fields."+f.Name+".null-rate"] = true
		known["fields."+f.Name+".length"] = true
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return spec, fmt.Errorf("table %s: unsupported option '%s' for connector 'faker' (supported: connector, rows-per-second, number-of-rows, fields.<column>.%s; columns: %s)",
				name, k, strings.Join(fakerFieldOptions, "|"), strings.Join(schema.Names(), ", "))
		}
	}
	if v, ok := t.Options["rows-per-second"]; ok {
		v = strings.TrimSpace(v)
		r, err := strconv.ParseInt(v, 10, 64)
		if err != nil || r <= 0 {
			return spec, bad("rows-per-second", "must be a whole number > 0, got '%s'", v)
		}
		spec.RowsPerSecond = float64(r)
	}
	if v, ok := t.Options["number-of-rows"]; ok {
		v = strings.TrimSpace(v)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			return spec, bad("number-of-rows", "must be a whole number >= 0 (or -1, unbounded), got '%s'", v)
		}
		switch n {
		case -1:
			n = 0 // flink-faker's default: unbounded
		case 0:
			n = -1 // no rows at all; 0 in the spec means unbounded
		}
		spec.NumberOfRows = n
	}
	for i, f := range schema {
		fs := &spec.Fields[i]
		for _, k := range fakerExpressionKeys(f) {
			e, ok := t.Options[k]
			if !ok {
				return spec, fmt.Errorf("table %s: Every column needs a corresponding expression. No expression found for %s. (set option '%s')", name, f.Name, k)
			}
			fs.Expressions = append(fs.Expressions, e)
		}
		if v, ok := t.Options["fields."+f.Name+".null-rate"]; ok {
			r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(r >= 0 && r <= 1) {
				return spec, bad("fields."+f.Name+".null-rate", "must be a number from 0 to 1 (Null rate needs to be in [0,1]), got '%s'", v)
			}
			fs.NullRate = r
		}
		if v, ok := t.Options["fields."+f.Name+".length"]; ok {
			k := "fields." + f.Name + ".length"
			n, err := strconv.Atoi(strings.TrimSpace(v))
			collection := f.Type.IsArray() || f.Type.IsMap() || f.Type.IsMultiset()
			switch {
			case err != nil:
				return spec, bad(k, "must be a whole number, got '%s'", v)
			case n != 1 && !collection:
				return spec, bad(k, "applies to ARRAY, MAP and MULTISET columns (Collection length may not be set for %s with type %v)", f.Name, f.Type)
			case n <= 0 || n > DatagenMaxLength:
				return spec, bad(k, "must be from 1 to %d (Collection length needs to be positive), got '%s'", DatagenMaxLength, v)
			}
			fs.Length = n
		}
	}
	cols, err := compileFakerColumns(spec)
	if err != nil {
		return spec, err
	}
	// Convert one value of each column, from a fixed seed: an expression
	// whose text the column's type cannot read (letters into an INT) fails
	// at CREATE TABLE rather than in the running job.
	g := newFakerGenerator(cols, 1)
	for i, c := range cols {
		if _, err := c.value(g.ctx, g.pcg, 0, time.Now()); err != nil {
			return spec, fmt.Errorf("table %s: column %s: %w", name, schema[i].Name, err)
		}
	}
	return spec, nil
}

// fakerExpressionKeys are the options that hold the expressions of column
// f, as flink-faker reads them.
func fakerExpressionKeys(f types.Field) []string {
	p := "fields." + f.Name + "."
	switch {
	case f.Type.IsMap():
		return []string{p + "key.expression", p + "value.expression"}
	case f.Type.IsRow():
		out := make([]string, f.Type.NumFields())
		for i := range out {
			out[i] = p + f.Type.FieldAt(i).Name + ".expression"
		}
		return out
	}
	return []string{p + "expression"}
}

// fakerColumn generates one column.
type fakerColumn struct {
	field types.Field
	cfg   jobgraph.FakerField
	exprs []*fakerExpr
	// parts are the types the expressions' values convert to: the column's
	// own type, an ARRAY's or MULTISET's element, a MAP's key and value or
	// a ROW's fields.
	parts []types.DataType
	key   uint64
}

// compileFakerColumns compiles every expression of spec.
func compileFakerColumns(spec jobgraph.FakerSpec) ([]*fakerColumn, error) {
	if len(spec.Fields) != len(spec.Schema) {
		return nil, fmt.Errorf("faker: %d field configs for %d columns", len(spec.Fields), len(spec.Schema))
	}
	cols := make([]*fakerColumn, len(spec.Schema))
	for i, f := range spec.Schema {
		c := &fakerColumn{field: f, cfg: spec.Fields[i]}
		t := f.Type
		switch {
		case t.IsArray(), t.IsMultiset():
			c.parts = []types.DataType{t.Elem()}
		case t.IsMap():
			c.parts = []types.DataType{t.MapKey(), t.MapValue()}
		case t.IsRow():
			for j := 0; j < t.NumFields(); j++ {
				c.parts = append(c.parts, t.FieldAt(j).Type)
			}
		default:
			c.parts = []types.DataType{t}
		}
		for _, pt := range c.parts {
			if !fakerScalar(pt) {
				what := pt.String()
				if pt == t {
					return nil, fmt.Errorf("table %s: column %s is %v: the faker connector makes CHAR, VARCHAR, STRING, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ values and ARRAY, MAP, MULTISET and ROW of them", spec.Table, f.Name, what)
				}
				return nil, fmt.Errorf("table %s: column %s is %v: the elements or fields of a faker column must be of a scalar type, not %s", spec.Table, f.Name, t, what)
			}
		}
		keys := fakerExpressionKeys(f)
		if len(c.cfg.Expressions) != len(keys) {
			return nil, fmt.Errorf("table %s: column %s has %d expressions, needs %d", spec.Table, f.Name, len(c.cfg.Expressions), len(keys))
		}
		for j, src := range c.cfg.Expressions {
			e, err := compileFakerExpr(src)
			if err != nil {
				return nil, fmt.Errorf("table %s: option '%s': invalid expression for column \"%s\": %v in '%s'", spec.Table, keys[j], f.Name, err, src)
			}
			c.exprs = append(c.exprs, e)
		}
		cols[i] = c
	}
	return cols, nil
}

func fakerScalar(t types.DataType) bool {
	switch t.Kind {
	case types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindFloat, types.KindDouble, types.KindDecimal, types.KindChar, types.KindVarChar,
		types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		return true
	}
	return false
}

// fakerGenerator holds the random source the columns share.
type fakerGenerator struct {
	pcg *rand.PCG
	ctx *fakerCtx
}

func newFakerGenerator(cols []*fakerColumn, seed uint64) *fakerGenerator {
	pcg := rand.NewPCG(0, 0)
	for i, c := range cols {
		c.key = splitmix64(splitmix64(seed) ^ uint64(i))
	}
	return &fakerGenerator{pcg: pcg, ctx: &fakerCtx{rng: rand.New(pcg), f: gofakeit.NewFaker(pcg, false)}}
}

// value makes the column's value in row (of this subtask): nil for NULL,
// else in the Go form of types/value.go. It reseeds pcg, so the value
// depends on (key, row) only, and on now for date expressions.
func (c *fakerColumn) value(ctx *fakerCtx, pcg *rand.PCG, row int64, now time.Time) (any, error) {
	pcg.Seed(c.key, splitmix64(uint64(row)))
	ctx.now = now
	// As flink-faker: a value is made when nextFloat() >= null-rate.
	if c.cfg.NullRate > 0 && ctx.rng.Float32() < float32(c.cfg.NullRate) {
		return nil, nil
	}
	t := c.field.Type
	if !t.IsComposite() {
		return fakerConvert(c.exprs[0].eval(ctx), t)
	}
	var keys, vals []any
	switch {
	case t.IsRow():
		for j, e := range c.exprs {
			v, err := fakerConvert(e.eval(ctx), c.parts[j])
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
	case t.IsArray():
		for range c.cfg.Length {
			v, err := fakerConvert(c.exprs[0].eval(ctx), c.parts[0])
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
	default:
		// A MAP or MULTISET: entries by key, a repeated key keeping its
		// last value (a MAP) or counting (a MULTISET), as flink-faker's
		// HashMap does.
		index := map[any]int{}
		for range c.cfg.Length {
			k, err := fakerConvert(c.exprs[0].eval(ctx), c.parts[0])
			if err != nil {
				return nil, err
			}
			var v any = int64(1)
			if t.IsMap() {
				if v, err = fakerConvert(c.exprs[1].eval(ctx), c.parts[1]); err != nil {
					return nil, err
				}
			}
			hk := k
			if d, ok := k.(decimal128.Num); ok {
				hk = d.BigInt().String()
			}
			if at, ok := index[hk]; ok {
				if t.IsMap() {
					vals[at] = v
				} else {
					vals[at] = vals[at].(int64) + 1
				}
				continue
			}
			index[hk] = len(keys)
			keys = append(keys, k)
			vals = append(vals, v)
		}
	}
	return types.AppendComposite(nil, t, keys, vals), nil
}

// fakerConvert converts one generated value to type t as flink-faker's
// FakerUtils does: numbers and booleans parsed from the text, DATE and
// TIMESTAMPs from 'yyyy-MM-dd HH:mm:ss[.fffffffff]' (the text of a date
// expression; here in UTC), TIME from a nanosecond of the day (the text
// of a time expression).
func fakerConvert(o fakerOut, t types.DataType) (any, error) {
	switch t.Kind {
	case types.KindChar, types.KindVarChar:
		return o.text(), nil
	case types.KindBoolean:
		return strings.EqualFold(o.text(), "true"), nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		bits := 64
		switch t.Kind {
		case types.KindTinyInt:
			bits = 8
		case types.KindSmallInt:
			bits = 16
		case types.KindInt:
			bits = 32
		}
		s := o.text()
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fakerNumberError(s, t)
		}
		return v, nil
	case types.KindFloat, types.KindDouble:
		s := strings.TrimSpace(o.text())
		if n := len(s); n > 1 && strings.ContainsRune("fFdD", rune(s[n-1])) && s[n-2] != 'e' && s[n-2] != 'E' {
			s = s[:n-1] // Java's optional type suffix
		}
		bits := 64
		if t.Kind == types.KindFloat {
			bits = 32
		}
		v, err := strconv.ParseFloat(s, bits)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return nil, fakerNumberError(o.text(), t)
		}
		return v, nil
	case types.KindDecimal:
		return fakerDecimal(o.text(), t)
	case types.KindDate:
		ms := o.ms
		if !o.isTime {
			ns, err := parseFakerTimestamp(o.text())
			if err != nil {
				return nil, err
			}
			ms = ns / int64(time.Millisecond)
		}
		return ms / 86_400_000, nil // NB: Java's division, toward zero
	case types.KindTime:
		s := o.text()
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cannot read '%s' as a TIME: a TIME column takes a nanosecond of the day, as #{time.future ...} makes (For input string: \"%s\")", s, s)
		}
		ms := n / 1_000_000
		if ms < 0 || ms >= 86_400_000 {
			return nil, fmt.Errorf("cannot read '%s' as a TIME: %d ms is not a time of day", s, ms)
		}
		return ms, nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		var ns int64
		if o.isTime {
			ns = o.ms * int64(time.Millisecond)
		} else {
			var err error
			if ns, err = parseFakerTimestamp(o.text()); err != nil {
				return nil, err
			}
		}
		if t.Precision < 9 {
			unit := int64(math.Pow10(9 - t.Precision))
			ns -= ((ns % unit) + unit) % unit
		}
		return ns, nil
	}
	return nil, fmt.Errorf("the faker connector cannot make %v values", t)
}

func fakerNumberError(s string, t types.DataType) error {
	return fmt.Errorf("cannot read '%s' as %v (For input string: \"%s\")", s, t, s)
}

// fakerDecimal reads s as Java's new BigDecimal(s), rounded half up to t's
// scale; a value with more digits than t's precision is NULL, as Flink's
// DecimalData.fromBigDecimal makes it.
func fakerDecimal(s string, t types.DataType) (any, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/ \t") {
		return nil, fakerNumberError(s, t)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
	// Round half up (away from zero) to a whole number.
	num, den := new(big.Int).Set(r.Num()), r.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision)), nil)
	if new(big.Int).Abs(q).Cmp(limit) >= 0 {
		return nil, nil
	}
	return decimal128.FromBigInt(q), nil
}

// parseFakerTimestamp reads 'yyyy-MM-dd HH:mm:ss' with an optional
// fraction of up to 9 digits (flink-faker's pattern, Java's Timestamp
// text), in UTC, as nanoseconds since the epoch.
func parseFakerTimestamp(s string) (int64, error) {
	bad := func() (int64, error) {
		return 0, fmt.Errorf("cannot read '%s' as a timestamp: flink-faker reads 'yyyy-MM-dd HH:mm:ss[.fffffffff]', as #{date.past ...} makes", s)
	}
	if len(s) < 19 || s[10] != ' ' {
		return bad()
	}
	t, err := time.Parse("2006-01-02 15:04:05", s[:19])
	if err != nil {
		return bad()
	}
	ns := t.UnixNano()
	rest := s[19:]
	if rest == "" {
		return ns, nil
	}
	if rest[0] != '.' || len(rest) > 10 {
		return bad()
	}
	frac := rest[1:]
	for _, ch := range frac {
		if ch < '0' || ch > '9' {
			return bad()
		}
	}
	if frac != "" {
		f, _ := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		ns += f
	}
	return ns, nil
}

// FakerSource generates rows as flink-faker does. Subtask i of p makes its
// share of 'number-of-rows' (all of them: the source is unbounded when the
// option is absent) at its share of 'rows-per-second', and ends when its
// share is done (Run returns nil).
//
// Row n of subtask i is a pure function of (seed, i, n) and the clock: each
// value comes from a generator seeded by (seed, i, column, n). Its position
// (SnapshotState) is the seed and the rows emitted; restored, it continues
// with the rows it would have made. A table with 'number-of-rows' cannot
// be restored at another parallelism (its rows are split by subtask
// number); one without can: subtask i continues old subtask i's rows, or
// starts at row 0.
type FakerSource struct {
	spec    jobgraph.FakerSpec
	schema  *arrow.Schema
	cols    []*fakerColumn
	gen     *fakerGenerator
	seed    int64
	limit   int64 // rows this subtask emits; -1 unbounded
	rate    float64
	batch   int64
	subtask int
	par     int
	done    int64 // rows passed to Emit

	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var (
	_ operators.Source       = (*FakerSource)(nil)
	_ operators.Checkpointer = (*FakerSource)(nil)
)

// NewFakerSource compiles spec's expressions and returns its source.
func NewFakerSource(spec jobgraph.FakerSpec) (*FakerSource, error) {
	cols, err := compileFakerColumns(spec)
	if err != nil {
		return nil, err
	}
	return &FakerSource{spec: spec, schema: spec.Schema.ArrowSchema(), cols: cols, now: time.Now, sleep: sleepCtx}, nil
}

// Open implements operators.Source. It restores the position from
// ctx.Restore.
func (s *FakerSource) Open(ctx *operators.Context) error {
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
	if s.limit >= 0 && s.done > s.limit {
		return fmt.Errorf("faker table %s: checkpointed position %d is past this subtask's %d rows", s.spec.Table, s.done, s.limit)
	}
	s.gen = newFakerGenerator(s.cols, splitmix64(uint64(s.seed))^uint64(ctx.Subtask)<<32)
	// As flink-faker, every subtask makes at least one row a second.
	rps := int64(s.spec.RowsPerSecond)
	share := rps / int64(p)
	if rps%int64(p) > int64(ctx.Subtask) {
		share++
	}
	s.rate = float64(max(share, 1))
	s.batch = int64(batchRows(ctx, maxBatchRows))
	return nil
}

type fakerPosition = datagenPosition

func (s *FakerSource) restore(r operators.Restore) error {
	if r.ID == 0 {
		return nil
	}
	var found bool
	for _, b := range r.State {
		if len(b) == 0 {
			continue
		}
		var pos fakerPosition
		if err := decodePosition("faker table "+s.spec.Table, b, &pos, &pos.V); err != nil {
			return err
		}
		if pos.Parallelism != s.par && s.spec.NumberOfRows > 0 {
			return fmt.Errorf("faker table %s cannot be restored at another parallelism (%d -> %d): its 'number-of-rows' are split among the subtasks",
				s.spec.Table, pos.Parallelism, s.par)
		}
		s.seed = pos.Seed
		if pos.Subtask == s.subtask {
			s.done, found = pos.Rows, true
		}
	}
	if !found && !r.Rescaled && len(r.State) > 0 {
		return fmt.Errorf("faker table %s: checkpoint %d holds no position for subtask %d", s.spec.Table, r.ID, s.subtask)
	}
	return nil
}

// Run implements operators.Source.
func (s *FakerSource) Run(ctx context.Context, out operators.Collector) error {
	// About a tenth of a second of rows per batch.
	target := min(max(int64(s.rate/10), 1), max(s.batch, 1))
	// The first batch is small, so that its size tells how many rows fit
	// in datagenBatchBytes.
	batch := min(target, 64)
	start, first := s.now(), s.done
	for s.limit < 0 || s.done < s.limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := batch
		if s.limit >= 0 {
			n = min(n, s.limit-s.done)
		}
		b, err := s.generate(s.done, int(n))
		if err != nil {
			return err
		}
		// Long values (paragraphs, large collections) make smaller batches:
		// the next one aims at datagenBatchBytes.
		batch = target
		if size := batchBytes(b); size > 0 {
			batch = min(max(n*datagenBatchBytes/size, 1), target)
		}
		// The position moves first: a checkpoint taken inside Emit counts b.
		s.done += n
		err = out.Emit(b)
		b.Release()
		if err != nil {
			return err
		}
		due := start.Add(time.Duration(float64(s.done-first) / s.rate * float64(time.Second)))
		if err := s.throttle(ctx, due, out); err != nil {
			return err
		}
	}
	return nil
}

// batchBytes is the size of b's column buffers.
func batchBytes(b types.Batch) int64 {
	var n int64
	for i := range b.NumCols() {
		for _, buf := range b.Column(i).Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n
}

func (s *FakerSource) throttle(ctx context.Context, due time.Time, out operators.Collector) error {
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

// generate builds rows first..first+n-1 of this subtask.
func (s *FakerSource) generate(first int64, n int) (types.Batch, error) {
	cols := make([]arrow.Array, len(s.cols))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	now := s.now()
	for i, c := range s.cols {
		a, err := s.buildColumn(c, first, n, now)
		if err != nil {
			release()
			return types.Batch{}, fmt.Errorf("faker table %s: column %s: %w", s.spec.Table, c.field.Name, err)
		}
		cols[i] = a
	}
	b := types.NewInsertBatch(s.schema, cols, n)
	release()
	return b, nil
}

func (s *FakerSource) buildColumn(c *fakerColumn, first int64, n int, now time.Time) (arrow.Array, error) {
	b := array.NewBuilder(memory.DefaultAllocator, c.field.Type.ArrowType())
	defer b.Release()
	b.Reserve(n)
	for r := 0; r < n; r++ {
		v, err := c.value(s.gen.ctx, s.gen.pcg, first+int64(r), now)
		if err != nil {
			return nil, err
		}
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.Int8Builder:
			b.Append(int8(v.(int64)))
		case *array.Int16Builder:
			b.Append(int16(v.(int64)))
		case *array.Int32Builder:
			b.Append(int32(v.(int64)))
		case *array.Int64Builder:
			b.Append(v.(int64))
		case *array.Float32Builder:
			b.Append(float32(v.(float64)))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.Decimal128Builder:
			b.Append(v.(decimal128.Num))
		case *array.Date32Builder:
			b.Append(arrow.Date32(v.(int64)))
		case *array.Time32Builder:
			b.Append(arrow.Time32(v.(int64)))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v.(int64)))
		case *array.BinaryBuilder:
			b.Append(v.([]byte))
		default:
			return nil, fmt.Errorf("no builder for %v", c.field.Type)
		}
	}
	return b.NewArray(), nil
}

// SnapshotState implements operators.Checkpointer: the seed and the rows
// emitted.
func (s *FakerSource) SnapshotState(int64) ([]byte, error) {
	return encodePosition(fakerPosition{V: positionVersion, Subtask: s.subtask, Parallelism: s.par, Seed: s.seed, Rows: s.done})
}

// NotifyCheckpointComplete implements operators.Checkpointer; it does
// nothing.
func (s *FakerSource) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer; it does
// nothing.
func (s *FakerSource) NotifyCheckpointAborted(int64) error { return nil }

// Close implements operators.Source.
func (s *FakerSource) Close() error { return nil }
