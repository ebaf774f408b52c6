package jobgraph

import (
	"errors"
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// The specs' own checks (Spec.Validate). Errors name the field at fault;
// Graph.Validate prefixes the vertex and operator.

func (s *CalcSpec) Validate() error {
	if len(s.Projections) != len(s.OutputSchema) {
		return fmt.Errorf("%d projections for %d output columns", len(s.Projections), len(s.OutputSchema))
	}
	if err := checkExpr("filter", s.Filter, len(s.InputSchema), false); err != nil {
		return err
	}
	for i, e := range s.Projections {
		if err := checkExpr(fmt.Sprintf("projection %d", i), e, len(s.InputSchema), true); err != nil {
			return err
		}
	}
	return nil
}

func (s *UnnestSpec) Validate() error {
	if s.Collection == nil {
		return errors.New("no collection")
	}
	if err := checkExpr("collection", s.Collection, len(s.InputSchema), true); err != nil {
		return err
	}
	t := s.Collection.Type
	if !t.IsArray() && !t.IsMap() && !t.IsMultiset() {
		return fmt.Errorf("collection is %v, not an ARRAY, MAP or MULTISET", t)
	}
	if len(s.OutputSchema) <= len(s.InputSchema) {
		return fmt.Errorf("%d output columns for %d input columns", len(s.OutputSchema), len(s.InputSchema))
	}
	return nil
}

func (s *JoinSpec) Validate() error {
	if len(s.LeftKeys) != len(s.RightKeys) {
		return fmt.Errorf("%d left keys but %d right keys", len(s.LeftKeys), len(s.RightKeys))
	}
	if err := checkColumns("left key", s.LeftKeys, s.LeftSchema); err != nil {
		return err
	}
	if err := checkColumns("right key", s.RightKeys, s.RightSchema); err != nil {
		return err
	}
	width := len(s.LeftSchema) + len(s.RightSchema)
	if len(s.OutputSchema) != width {
		return fmt.Errorf("%d output columns for %d left and %d right columns", len(s.OutputSchema), len(s.LeftSchema), len(s.RightSchema))
	}
	if err := checkExpr("residual", s.Residual, width, false); err != nil {
		return err
	}
	if s.LeftTTLMs < 0 || s.RightTTLMs < 0 {
		return fmt.Errorf("negative state TTL (left %d ms, right %d ms)", s.LeftTTLMs, s.RightTTLMs)
	}
	return nil
}

func (s *SemiJoinSpec) Validate() error {
	if len(s.LeftKeys) != len(s.RightKeys) {
		return fmt.Errorf("%d left keys but %d right keys", len(s.LeftKeys), len(s.RightKeys))
	}
	if err := checkColumns("left key", s.LeftKeys, s.LeftSchema); err != nil {
		return err
	}
	if err := checkColumns("right key", s.RightKeys, s.RightSchema); err != nil {
		return err
	}
	if err := checkExpr("residual", s.Residual, len(s.LeftSchema)+len(s.RightSchema), false); err != nil {
		return err
	}
	if s.LeftTTLMs < 0 || s.RightTTLMs < 0 {
		return fmt.Errorf("negative state TTL (left %d ms, right %d ms)", s.LeftTTLMs, s.RightTTLMs)
	}
	return nil
}

func (s *IntervalJoinSpec) Validate() error {
	if err := s.JoinSpec.Validate(); err != nil {
		return err
	}
	return checkTimedJoin(&s.JoinSpec, s.LeftTime, s.RightTime)
}

func (s *TemporalJoinSpec) Validate() error {
	if err := s.JoinSpec.Validate(); err != nil {
		return err
	}
	return checkTimedJoin(&s.JoinSpec, s.LeftTime, s.RightTime)
}

func (s *LookupJoinSpec) Validate() error {
	if len(s.InputKeys) == 0 || len(s.InputKeys) != len(s.LookupKeys) {
		return fmt.Errorf("a lookup join needs pairs of keys, got %d input and %d lookup keys", len(s.InputKeys), len(s.LookupKeys))
	}
	if err := checkColumns("input key", s.InputKeys, s.InputSchema); err != nil {
		return err
	}
	if err := checkColumns("lookup key", s.LookupKeys, s.LookupSchema); err != nil {
		return err
	}
	width := len(s.InputSchema) + len(s.LookupSchema)
	if len(s.OutputSchema) != width {
		return fmt.Errorf("%d output columns for %d input and %d lookup columns", len(s.OutputSchema), len(s.InputSchema), len(s.LookupSchema))
	}
	if err := checkExpr("residual", s.Residual, width, false); err != nil {
		return err
	}
	if len(s.Table.Columns) != len(s.LookupSchema) {
		return fmt.Errorf("%d database columns for %d lookup columns", len(s.Table.Columns), len(s.LookupSchema))
	}
	if s.Table.Host == "" || s.Table.Port <= 0 || s.Table.Port > 65535 || s.Table.Database == "" || s.Table.Table == "" {
		return errors.New("a lookup table needs a host, a port, a database and a table")
	}
	if s.MaxRetries < 0 || s.Cache.MaxRows < 0 || s.Cache.ExpireAfterWriteMs < 0 || s.Cache.ExpireAfterAccessMs < 0 {
		return errors.New("negative lookup retries or cache limits")
	}
	return nil
}

func (s *MySQLScanSpec) Validate() error {
	if len(s.Table.Columns) != len(s.Schema) || len(s.Schema) == 0 {
		return fmt.Errorf("%d database columns for %d columns", len(s.Table.Columns), len(s.Schema))
	}
	if s.Table.Host == "" || s.Table.Port <= 0 || s.Table.Port > 65535 || s.Table.Database == "" || s.Table.Table == "" {
		return errors.New("a MySQL table needs a host, a port, a database and a table")
	}
	return nil
}

// checkTimedJoin checks what interval and temporal joins add to a join:
// keys, and a rowtime column on each side.
func checkTimedJoin(j *JoinSpec, left, right int) error {
	if len(j.LeftKeys) == 0 {
		return errors.New("an event-time join needs equality keys")
	}
	if err := checkColumns("left rowtime", []int{left}, j.LeftSchema); err != nil {
		return err
	}
	return checkColumns("right rowtime", []int{right}, j.RightSchema)
}

func (s *NormalizeSpec) Validate() error {
	if len(s.Keys) == 0 {
		return errors.New("no key columns")
	}
	return checkColumns("key", s.Keys, s.Schema)
}

func (s *ReplicateSpec) Validate() error {
	if err := checkColumns("count", []int{s.Count}, s.Schema); err != nil {
		return err
	}
	if s.Schema[s.Count].Type.Kind != types.KindBigInt {
		return fmt.Errorf("count column %d is %v, not BIGINT", s.Count, s.Schema[s.Count].Type)
	}
	return nil
}

// maxExpandSets bounds the copies an Expand makes of each row: a CUBE of
// 12 keys has 4096 sets, more than any real query groups by.
const maxExpandSets = 4096

func (s *ExpandSpec) Validate() error {
	if len(s.Sets) == 0 || len(s.Sets) > maxExpandSets {
		return fmt.Errorf("%d grouping sets, want 1 to %d", len(s.Sets), maxExpandSets)
	}
	for _, set := range s.Sets {
		if err := checkColumns("grouping set", set, s.Schema); err != nil {
			return err
		}
		for _, c := range set {
			if !s.Schema[c].Type.Nullable() {
				return fmt.Errorf("grouping set column %d is NOT NULL", c)
			}
		}
	}
	return nil
}

func (s *SinkMaterializeSpec) Validate() error {
	if len(s.Keys) == 0 {
		return errors.New("no key columns")
	}
	if s.TTLMs < 0 {
		return fmt.Errorf("negative TTL %d ms", s.TTLMs)
	}
	if err := checkColumns("key", s.Keys, s.Schema); err != nil {
		return err
	}
	return checkColumns("upsert key", s.UpsertKey, s.Schema)
}

func (s *GroupAggSpec) Validate() error {
	if err := checkColumns("group key", s.Keys, s.InputSchema); err != nil {
		return err
	}
	if want := len(s.Keys) + len(s.Aggs); len(s.OutputSchema) != want {
		return fmt.Errorf("%d output columns for %d keys and %d aggregates", len(s.OutputSchema), len(s.Keys), len(s.Aggs))
	}
	if s.TTLMs < 0 {
		return fmt.Errorf("negative state TTL %d ms", s.TTLMs)
	}
	return checkAggs(s.Aggs, s.InputSchema)
}

func (s *WindowAggSpec) Validate() error {
	if err := checkColumns("group key", s.Keys, s.InputSchema); err != nil {
		return err
	}
	if err := checkColumns("rowtime", []int{s.Rowtime}, s.InputSchema); err != nil {
		return err
	}
	if want := len(s.Keys) + 3 + len(s.Aggs); len(s.OutputSchema) != want {
		return fmt.Errorf("%d output columns for %d keys, 3 window columns and %d aggregates", len(s.OutputSchema), len(s.Keys), len(s.Aggs))
	}
	w := s.Window
	switch {
	case w.Kind == WindowSession:
		if w.GapMs <= 0 {
			return fmt.Errorf("session window gap %d ms is not positive", w.GapMs)
		}
	case w.SizeMs <= 0:
		return fmt.Errorf("window size %d ms is not positive", w.SizeMs)
	case w.Kind == WindowTumble:
	case w.Kind == WindowHop || w.Kind == WindowCumulate:
		if w.StepMs <= 0 {
			return fmt.Errorf("%s window step %d ms is not positive", w.Kind, w.StepMs)
		}
	default:
		return fmt.Errorf("unknown window kind %q (use %s, %s, %s or %s)", w.Kind, WindowTumble, WindowHop, WindowCumulate, WindowSession)
	}
	return checkAggs(s.Aggs, s.InputSchema)
}

func (s *OverAggSpec) Validate() error {
	if err := checkColumns("partition", s.Partition, s.InputSchema); err != nil {
		return err
	}
	if err := checkColumns("rowtime", []int{s.Rowtime}, s.InputSchema); err != nil {
		return err
	}
	if !s.InputSchema[s.Rowtime].Type.IsTimestamp() {
		return fmt.Errorf("rowtime column %d is %v, not a timestamp", s.Rowtime, s.InputSchema[s.Rowtime].Type)
	}
	if want := len(s.InputSchema) + len(s.Aggs); len(s.OutputSchema) != want {
		return fmt.Errorf("%d output columns for %d input columns and %d aggregates", len(s.OutputSchema), len(s.InputSchema), len(s.Aggs))
	}
	if !s.Unbounded && s.Preceding < 0 {
		return fmt.Errorf("negative frame offset %d", s.Preceding)
	}
	for i, a := range s.Aggs {
		switch {
		case a.Distinct || a.Filtered:
			return fmt.Errorf("aggregate %d (%s): an OVER aggregate takes no DISTINCT or FILTER", i, a.Func)
		case a.Func != AggCount && a.Func != AggSum && a.Func != AggAvg && a.Func != AggMin && a.Func != AggMax:
			return fmt.Errorf("aggregate %d: %s is not an OVER aggregate (COUNT, SUM, AVG, MIN, MAX)", i, a.Func)
		}
	}
	return checkAggs(s.Aggs, s.InputSchema)
}

// checkAggs checks each aggregate's function and argument column.
func checkAggs(aggs []AggCall, in types.Schema) error {
	for i, a := range aggs {
		switch a.Func {
		case AggCount, AggSum, AggAvg, AggMin, AggMax, AggListAgg, AggFirstValue, AggLastValue,
			AggStddevPop, AggStddevSamp, AggVarPop, AggVarSamp:
		default:
			return fmt.Errorf("aggregate %d: unknown function %q", i, a.Func)
		}
		if a.Filtered {
			if err := checkColumns(fmt.Sprintf("aggregate %d (%s) filter", i, a.Func), []int{a.Filter}, in); err != nil {
				return err
			}
			if in[a.Filter].Type.Kind != types.KindBoolean {
				return fmt.Errorf("aggregate %d (%s): filter column %d is %v, not BOOLEAN", i, a.Func, a.Filter, in[a.Filter].Type)
			}
		}
		if len(a.More) > 0 && (a.Func != AggCount || a.Arg < 0) {
			return fmt.Errorf("aggregate %d (%s): only COUNT takes several arguments", i, a.Func)
		}
		if err := checkColumns(fmt.Sprintf("aggregate %d (%s) argument", i, a.Func), a.More, in); err != nil {
			return err
		}
		if a.Separator != nil && a.Func != AggListAgg {
			return fmt.Errorf("aggregate %d (%s): only LISTAGG takes a separator", i, a.Func)
		}
		if a.Arg == -1 && a.Func == AggCount {
			continue
		}
		if err := checkColumns(fmt.Sprintf("aggregate %d (%s) argument", i, a.Func), []int{a.Arg}, in); err != nil {
			return err
		}
	}
	return nil
}

func (s *RankSpec) Validate() error {
	if s.Limit < 1 {
		return fmt.Errorf("limit %d is not positive", s.Limit)
	}
	if len(s.OrderBy) == 0 {
		return errors.New("no ORDER BY key")
	}
	switch s.RankType {
	case "":
	case RankTypeRank, RankTypeDenseRank:
		if !s.EmitAtEnd {
			return fmt.Errorf("%s needs emit_at_end (it runs in batch mode only)", s.RankType)
		}
	default:
		return fmt.Errorf("unknown rank type %q", s.RankType)
	}
	if err := checkColumns("partition", s.Partition, s.InputSchema); err != nil {
		return err
	}
	for _, k := range s.OrderBy {
		if err := checkColumns("sort", []int{k.Col}, s.InputSchema); err != nil {
			return err
		}
	}
	return nil
}

func (s *DeduplicateSpec) Validate() error {
	if err := checkColumns("key", s.Keys, s.InputSchema); err != nil {
		return err
	}
	if s.RowtimeCol != -1 {
		if err := checkColumns("rowtime", []int{s.RowtimeCol}, s.InputSchema); err != nil {
			return err
		}
		if k := s.InputSchema[s.RowtimeCol].Type.Kind; k != types.KindTimestamp && k != types.KindTimestampLTZ {
			return fmt.Errorf("rowtime column %d is %v, not a timestamp", s.RowtimeCol, s.InputSchema[s.RowtimeCol].Type)
		}
	}
	if s.TTLMs < 0 {
		return fmt.Errorf("negative state TTL %d ms", s.TTLMs)
	}
	return nil
}

func (s *WindowRankSpec) Validate() error {
	if s.Limit < 1 {
		return fmt.Errorf("limit %d is not positive", s.Limit)
	}
	if len(s.OrderBy) == 0 {
		return errors.New("no ORDER BY key")
	}
	if err := checkColumns("partition", s.Partition, s.InputSchema); err != nil {
		return err
	}
	for _, k := range s.OrderBy {
		if err := checkColumns("sort", []int{k.Col}, s.InputSchema); err != nil {
			return err
		}
	}
	return checkWindowColumns(s.WindowStart, s.WindowEnd, s.InputSchema)
}

func (s *WindowDeduplicateSpec) Validate() error {
	if err := checkColumns("key", s.Keys, s.InputSchema); err != nil {
		return err
	}
	if err := checkColumns("rowtime", []int{s.RowtimeCol}, s.InputSchema); err != nil {
		return err
	}
	if k := s.InputSchema[s.RowtimeCol].Type.Kind; k != types.KindTimestamp && k != types.KindTimestampLTZ {
		return fmt.Errorf("rowtime column %d is %v, not a timestamp", s.RowtimeCol, s.InputSchema[s.RowtimeCol].Type)
	}
	return checkWindowColumns(s.WindowStart, s.WindowEnd, s.InputSchema)
}

// checkWindowColumns checks the window_start and window_end columns of a
// window rank or deduplicate: TIMESTAMP columns of its input.
func checkWindowColumns(start, end int, schema types.Schema) error {
	if err := checkColumns("window", []int{start, end}, schema); err != nil {
		return err
	}
	for _, c := range []int{start, end} {
		if schema[c].Type.Kind != types.KindTimestamp {
			return fmt.Errorf("window column %d is %v, not a TIMESTAMP", c, schema[c].Type)
		}
	}
	return nil
}

func (s *BatchSortSpec) Validate() error {
	if s.Limit < 0 || s.Offset < 0 {
		return fmt.Errorf("limit %d and offset %d must not be negative", s.Limit, s.Offset)
	}
	if len(s.InputSchema) == 0 {
		return errors.New("no input column")
	}
	for _, k := range s.OrderBy {
		if err := checkColumns("sort", []int{k.Col}, s.InputSchema); err != nil {
			return err
		}
	}
	return nil
}

func (s *WatermarkAssignerSpec) Validate() error {
	if err := checkColumns("rowtime", []int{s.Rowtime}, s.InputSchema); err != nil {
		return err
	}
	return checkExpr("watermark", s.Watermark, len(s.InputSchema), true)
}

func (s *ValuesSpec) Validate() error {
	for r, row := range s.Rows {
		if len(row) != len(s.Schema) {
			return fmt.Errorf("row %d has %d values for %d columns", r+1, len(row), len(s.Schema))
		}
		for c, e := range row {
			if err := checkExpr(fmt.Sprintf("row %d, column %s", r+1, s.Schema[c].Name), e, 0, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *CollectSpec) Validate() error   { return nil }
func (s *PrintSpec) Validate() error     { return nil }
func (s *BlackholeSpec) Validate() error { return nil }

func (s *ManagedSourceSpec) Validate() error { return checkTopic(s.Topic) }
func (s *ManagedSinkSpec) Validate() error   { return checkTopic(s.Topic) }

func (s *KafkaSourceSpec) Validate() error {
	if err := checkTopic(s.Topic); err != nil {
		return err
	}
	if len(s.Brokers) == 0 {
		return errors.New("no brokers")
	}
	if s.Metadata != nil {
		if len(s.Metadata) != len(s.Schema) {
			return fmt.Errorf("%d metadata entries for %d columns", len(s.Metadata), len(s.Schema))
		}
		for i, m := range s.Metadata {
			if m == "" {
				continue
			}
			k, ok := LookupMetadata("kafka", m)
			if !ok {
				return fmt.Errorf("column %d: unknown metadata key %q", i, m)
			}
			if !s.Schema[i].Type.Equal(k.Type) {
				return fmt.Errorf("column %d: metadata %q is %v, not %v", i, m, k.Type, s.Schema[i].Type)
			}
		}
	}
	if err := checkKeyFields(s.Upsert, s.KeyFields, len(s.Schema)); err != nil {
		return err
	}
	if f := s.ValueFormat(); f.Validate() != nil {
		return f.Validate()
	}
	switch s.StartupMode {
	case KafkaStartEarliest, KafkaStartLatest, KafkaStartTimestamp:
		return nil
	}
	return fmt.Errorf("unknown startup mode %q", s.StartupMode)
}

// checkKeyFields checks the key columns of an upsert-kafka source or sink
// over n columns.
func checkKeyFields(upsert bool, keys []int, n int) error {
	if upsert && len(keys) == 0 {
		return errors.New("upsert without key columns")
	}
	seen := map[int]bool{}
	for _, k := range keys {
		if k < 0 || k >= n || seen[k] {
			return fmt.Errorf("key column %d is out of range or repeated", k)
		}
		seen[k] = true
	}
	return nil
}

func (s *KafkaSinkSpec) Validate() error {
	if err := checkTopic(s.Topic); err != nil {
		return err
	}
	if len(s.Brokers) == 0 {
		return errors.New("no brokers")
	}
	if err := checkKeyFields(s.Upsert, s.KeyFields, len(s.Schema)); err != nil {
		return err
	}
	if f := s.ValueFormat(); f.Validate() != nil {
		return f.Validate()
	}
	switch s.Guarantee {
	case "", KafkaDeliveryNone, KafkaDeliveryAtLeastOnce:
		return nil
	case KafkaDeliveryExactlyOnce:
		if s.TransactionalIDPrefix == "" {
			return errors.New("exactly-once delivery without a transactional id prefix")
		}
		return nil
	}
	return fmt.Errorf("unknown delivery guarantee %q", s.Guarantee)
}

func (s *DatagenSpec) Validate() error {
	if len(s.Fields) != len(s.Schema) {
		return fmt.Errorf("%d field configs for %d columns", len(s.Fields), len(s.Schema))
	}
	for i, f := range s.Fields {
		if f.Kind != "random" && f.Kind != "sequence" {
			return fmt.Errorf("column %s: unknown kind %q (use random or sequence)", s.Schema[i].Name, f.Kind)
		}
		if !(f.NullRate >= 0 && f.NullRate <= 1) {
			return fmt.Errorf("column %s: null rate %v is outside [0, 1]", s.Schema[i].Name, f.NullRate)
		}
	}
	if !(s.RowsPerSecond >= 0) || s.NumberOfRows < 0 {
		return fmt.Errorf("rows per second %v and number of rows %d must not be negative", s.RowsPerSecond, s.NumberOfRows)
	}
	return nil
}

func (s *NexmarkSpec) Validate() error {
	if len(s.Schema) != 4 {
		return fmt.Errorf("%d columns; a nexmark source has 4 (event_type, person, auction, bid)", len(s.Schema))
	}
	if s.EventsNum < 0 || !(s.FirstEventRate > 0) || !(s.NextEventRate > 0) {
		return fmt.Errorf("events %d, first rate %v and next rate %v: the count must not be negative and the rates must be positive",
			s.EventsNum, s.FirstEventRate, s.NextEventRate)
	}
	if s.PersonProportion < 0 || s.AuctionProportion < 0 || s.BidProportion < 0 || s.PersonProportion+s.AuctionProportion+s.BidProportion <= 0 {
		return fmt.Errorf("proportions %d, %d, %d must not be negative and must not all be 0", s.PersonProportion, s.AuctionProportion, s.BidProportion)
	}
	if s.HotAuctionRatio < 1 || s.HotSellerRatio < 1 || s.HotBidderRatio < 1 {
		return fmt.Errorf("hot ratios %d, %d, %d must be at least 1", s.HotAuctionRatio, s.HotSellerRatio, s.HotBidderRatio)
	}
	return nil
}

func checkTopic(topic string) error {
	if topic == "" {
		return errors.New("no topic")
	}
	return nil
}

// checkColumns checks that every column of cols indexes schema.
func checkColumns(what string, cols []int, schema types.Schema) error {
	for _, c := range cols {
		if c < 0 || c >= len(schema) {
			return fmt.Errorf("%s column %d is outside the %d columns of its schema", what, c, len(schema))
		}
	}
	return nil
}

// checkExpr checks that e reads only columns below width; a nil e is an
// error only when required.
func checkExpr(what string, e *expr.Expr, width int, required bool) error {
	if e == nil {
		if required {
			return fmt.Errorf("%s has no expression", what)
		}
		return nil
	}
	var bad error
	var walk func(*expr.Expr)
	walk = func(e *expr.Expr) {
		if e == nil || bad != nil {
			return
		}
		if e.Op == expr.OpColumn && (e.Col < 0 || e.Col >= width) {
			bad = fmt.Errorf("%s reads column %d of %d", what, e.Col, width)
			return
		}
		for _, a := range e.Args {
			walk(a)
		}
	}
	walk(e)
	return bad
}

func (s *WindowTVFSpec) Validate() error {
	if err := checkColumns("rowtime", []int{s.Rowtime}, s.InputSchema); err != nil {
		return err
	}
	if !s.InputSchema[s.Rowtime].Type.IsTimestamp() {
		return fmt.Errorf("rowtime column %d is %v, not a timestamp", s.Rowtime, s.InputSchema[s.Rowtime].Type)
	}
	if want := len(s.InputSchema) + 3; len(s.OutputSchema) != want {
		return fmt.Errorf("%d output columns for %d input columns and 3 window columns", len(s.OutputSchema), len(s.InputSchema))
	}
	return checkWindowSpec(s.Window)
}

func (s *WindowJoinSpec) Validate() error {
	if len(s.LeftKeys) != len(s.RightKeys) {
		return fmt.Errorf("%d left keys but %d right keys", len(s.LeftKeys), len(s.RightKeys))
	}
	if err := checkColumns("left key", s.LeftKeys, s.LeftSchema); err != nil {
		return err
	}
	if err := checkColumns("right key", s.RightKeys, s.RightSchema); err != nil {
		return err
	}
	for _, c := range []struct {
		what string
		col  int
		s    types.Schema
	}{{"left window_start", s.LeftWindowStart, s.LeftSchema}, {"left window_end", s.LeftWindowEnd, s.LeftSchema},
		{"right window_start", s.RightWindowStart, s.RightSchema}, {"right window_end", s.RightWindowEnd, s.RightSchema}} {
		if err := checkColumns(c.what, []int{c.col}, c.s); err != nil {
			return err
		}
		if !c.s[c.col].Type.IsTimestamp() {
			return fmt.Errorf("%s column %d is %v, not a timestamp", c.what, c.col, c.s[c.col].Type)
		}
	}
	width := len(s.LeftSchema) + len(s.RightSchema)
	switch s.JoinType {
	case WindowJoinInner, WindowJoinLeft, WindowJoinRight, WindowJoinFull:
		if len(s.OutputSchema) != width {
			return fmt.Errorf("%d output columns for %d left and %d right columns", len(s.OutputSchema), len(s.LeftSchema), len(s.RightSchema))
		}
	case WindowJoinSemi, WindowJoinAnti:
		if len(s.OutputSchema) != len(s.LeftSchema) {
			return fmt.Errorf("%d output columns for %d left columns", len(s.OutputSchema), len(s.LeftSchema))
		}
	default:
		return fmt.Errorf("unknown join type %q (use %s, %s, %s, %s, %s or %s)", s.JoinType,
			WindowJoinInner, WindowJoinLeft, WindowJoinRight, WindowJoinFull, WindowJoinSemi, WindowJoinAnti)
	}
	if err := checkExpr("residual", s.Residual, width, false); err != nil {
		return err
	}
	return checkWindowSpec(s.Window)
}

// checkWindowSpec checks a window function's sizes.
func checkWindowSpec(w WindowSpec) error {
	switch {
	case w.SizeMs <= 0:
		return fmt.Errorf("window size %d ms is not positive", w.SizeMs)
	case w.Kind == WindowTumble:
	case w.Kind == WindowHop || w.Kind == WindowCumulate:
		if w.StepMs <= 0 {
			return fmt.Errorf("%s window step %d ms is not positive", w.Kind, w.StepMs)
		}
		if w.SizeMs%w.StepMs != 0 {
			return fmt.Errorf("%s window size %d ms is not a multiple of its step %d ms", w.Kind, w.SizeMs, w.StepMs)
		}
	default:
		return fmt.Errorf("unknown window kind %q (use %s, %s or %s)", w.Kind, WindowTumble, WindowHop, WindowCumulate)
	}
	return nil
}
