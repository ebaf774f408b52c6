package jobgraph

import (
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// Operator kinds. Each names an operator or source registered with
// operators.RegisterOperator / RegisterSource, configured by the spec
// struct beside it (on the wire, that spec's JSON).
const (
	KindCalc              = "calc"               // CalcSpec
	KindJoinInner         = "join_inner"         // JoinSpec
	KindJoinOuter         = "join_outer"         // JoinSpec with OuterLeft and/or OuterRight
	KindValues            = "values"             // ValuesSpec (source)
	KindCollect           = "collect"            // CollectSpec (sink)
	KindManagedSource     = "managed_source"     // ManagedSourceSpec (source)
	KindManagedSink       = "managed_sink"       // ManagedSinkSpec (sink)
	KindDatagen           = "datagen"            // DatagenSpec (source)
	KindNexmark           = "nexmark"            // NexmarkSpec (source)
	KindPrint             = "print"              // PrintSpec (sink)
	KindBlackhole         = "blackhole"          // BlackholeSpec (sink)
	KindNormalize         = "normalize"          // NormalizeSpec
	KindGroupAggregate    = "group_aggregate"    // GroupAggSpec
	KindWatermarkAssigner = "watermark_assigner" // WatermarkAssignerSpec
	KindWindowAggregate   = "window_aggregate"   // WindowAggSpec
	KindJoinInterval      = "join_interval"      // IntervalJoinSpec
	KindJoinTemporal      = "join_temporal"      // TemporalJoinSpec
	KindJoinLookup        = "join_lookup"        // LookupJoinSpec
	KindMySQLScan         = "mysql_scan"         // MySQLScanSpec (source)
	KindRank              = "rank"               // RankSpec
	KindReplicate         = "replicate"          // ReplicateSpec
	KindExpand            = "expand"             // ExpandSpec
	KindSinkMaterialize   = "sink_materialize"   // SinkMaterializeSpec
	KindKafkaSource       = "kafka_source"       // KafkaSourceSpec (source)
	KindKafkaSink         = "kafka_sink"         // KafkaSinkSpec (sink)
	KindJoinSemi          = "join_semi"          // SemiJoinSpec
	KindOverAggregate     = "over_aggregate"     // OverAggSpec
	KindBatchSort         = "batch_sort"         // BatchSortSpec
	KindDeduplicate       = "deduplicate"        // DeduplicateSpec
	KindUnnest            = "unnest"             // UnnestSpec
	KindWindowTVF         = "window_tvf"         // WindowTVFSpec
	KindWindowRank        = "window_rank"        // WindowRankSpec
	KindWindowDedup       = "window_deduplicate" // WindowDeduplicateSpec
	KindWindowJoin        = "window_join"        // WindowJoinSpec
)

// CalcSpec filters rows, then computes the output columns.
type CalcSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	// Filter is a BOOLEAN predicate over the input; nil keeps every row.
	Filter *expr.Expr `json:"filter,omitempty"`
	// Projections compute the output columns from the input columns.
	Projections  []*expr.Expr `json:"projections"`
	OutputSchema types.Schema `json:"output_schema"`
}

var _ Spec = (*CalcSpec)(nil)

func (*CalcSpec) Kind() string { return KindCalc }
func (*CalcSpec) Inputs() int  { return 1 }

// UnnestSpec joins each input row with the elements of a collection
// computed from it (Flink's correlate over $UNNEST_ROWS$): for every
// element, the input row followed by the element's columns, with the
// input row's kind. Collection is an ARRAY, MAP or MULTISET expression
// over InputSchema. The element columns are an ARRAY's element (a ROW
// element's fields), a MAP's key and value, or a MULTISET's element (once
// per count); Ordinality adds the 1-based position. Outer (LEFT JOIN ...
// ON TRUE) emits a row whose element columns are NULL for an empty or NULL
// collection. OutputSchema is InputSchema then the element columns.
type UnnestSpec struct {
	InputSchema  types.Schema `json:"input_schema"`
	Collection   *expr.Expr   `json:"collection"`
	Ordinality   bool         `json:"ordinality,omitempty"`
	Outer        bool         `json:"outer,omitempty"`
	OutputSchema types.Schema `json:"output_schema"`
}

var _ Spec = (*UnnestSpec)(nil)

func (*UnnestSpec) Kind() string { return KindUnnest }
func (*UnnestSpec) Inputs() int  { return 1 }

// JoinSpec configures a regular (unwindowed) equi-join of two changelogs.
type JoinSpec struct {
	LeftSchema  types.Schema `json:"left_schema"`
	RightSchema types.Schema `json:"right_schema"`
	// LeftKeys and RightKeys are the equality key columns, pairwise of one type.
	LeftKeys  []int `json:"left_keys"`
	RightKeys []int `json:"right_keys"`
	// Residual is a predicate over the joined row (left columns, then right
	// columns) that a match must also satisfy; nil when there is none.
	Residual     *expr.Expr   `json:"residual,omitempty"`
	OutputSchema types.Schema `json:"output_schema"`
	// OuterLeft and OuterRight make the join a LEFT (left rows without a
	// match are emitted padded with NULLs), RIGHT or, with both, FULL outer
	// join. Outer joins take no Residual yet.
	OuterLeft  bool `json:"outer_left,omitempty"`
	OuterRight bool `json:"outer_right,omitempty"`
	// LeftTTLMs and RightTTLMs are how long a side keeps a row after its
	// last write (table.exec.state.ttl or the STATE_TTL hint); 0 keeps it
	// forever.
	LeftTTLMs  int64 `json:"left_ttl_ms,omitempty"`
	RightTTLMs int64 `json:"right_ttl_ms,omitempty"`
}

var _ Spec = (*JoinSpec)(nil)

// Kind is KindJoinOuter when the join preserves a side, else KindJoinInner.
func (s *JoinSpec) Kind() string {
	if s.OuterLeft || s.OuterRight {
		return KindJoinOuter
	}
	return KindJoinInner
}

func (*JoinSpec) Inputs() int { return 2 }

// SemiJoinSpec configures a regular semi join (EXISTS, IN) or, with Anti,
// anti join (NOT EXISTS, NOT IN) of two changelogs, as Flink's
// StreamingSemiAntiJoinOperator runs it: a left row is emitted while it has
// at least one match on the right (semi) or none (anti). A match is a right
// row with equal keys that satisfies Residual (a predicate over the left
// columns, then the right columns; nil for none). The output is the left
// columns only. Without keys, both inputs go to one subtask.
type SemiJoinSpec struct {
	LeftSchema  types.Schema `json:"left_schema"`
	RightSchema types.Schema `json:"right_schema"`
	// LeftKeys and RightKeys are the equality key columns, pairwise of one
	// type; a row with a NULL key never matches.
	LeftKeys  []int      `json:"left_keys"`
	RightKeys []int      `json:"right_keys"`
	Residual  *expr.Expr `json:"residual,omitempty"`
	Anti      bool       `json:"anti,omitempty"`
	// LeftTTLMs and RightTTLMs are how long a side keeps a row after its
	// last write (table.exec.state.ttl); 0 keeps it forever.
	LeftTTLMs  int64 `json:"left_ttl_ms,omitempty"`
	RightTTLMs int64 `json:"right_ttl_ms,omitempty"`
}

var _ Spec = (*SemiJoinSpec)(nil)

func (*SemiJoinSpec) Kind() string { return KindJoinSemi }
func (*SemiJoinSpec) Inputs() int  { return 2 }

// IntervalJoinSpec configures an event-time interval join: an equi-join
// (INNER, or LEFT, RIGHT, FULL OUTER with OuterLeft/OuterRight) whose rows
// also satisfy LowerMs <= left.rowtime - right.rowtime <= UpperMs (both
// bounds inclusive, in ms). LeftTime and RightTime are the rowtime columns
// in LeftSchema and RightSchema. Its inputs are insert-only; its output is
// too: outer rows are padded when they expire. Residual may hold outer join
// conditions too. The TTL fields of JoinSpec are ignored: watermarks clean
// the state.
type IntervalJoinSpec struct {
	JoinSpec
	LeftTime  int   `json:"left_time"`
	RightTime int   `json:"right_time"`
	LowerMs   int64 `json:"lower_ms"`
	UpperMs   int64 `json:"upper_ms"`
}

var _ Spec = (*IntervalJoinSpec)(nil)

func (*IntervalJoinSpec) Kind() string { return KindJoinInterval }
func (*IntervalJoinSpec) Inputs() int  { return 2 }

// TemporalJoinSpec configures an event-time temporal join (FOR SYSTEM_TIME
// AS OF left.rowtime): each left row joins the version of its key in the
// right (versioned) input valid at the left row's rowtime, INNER or LEFT
// (OuterLeft). LeftTime and RightTime are the rowtime columns in LeftSchema
// and RightSchema. The right input is a changelog keyed by RightKeys (+I/+U
// start a version, -D ends one, -U is ignored); the output is insert-only.
// OuterRight and the TTL fields of JoinSpec are ignored.
type TemporalJoinSpec struct {
	JoinSpec
	LeftTime  int `json:"left_time"`
	RightTime int `json:"right_time"`
}

var _ Spec = (*TemporalJoinSpec)(nil)

func (*TemporalJoinSpec) Kind() string { return KindJoinTemporal }
func (*TemporalJoinSpec) Inputs() int  { return 2 }

// LookupJoinSpec configures a processing-time lookup join (FOR SYSTEM_TIME
// AS OF PROCTIME() on a lookup table, Flink's LookupJoin): each input row
// queries the external Table for the rows whose LookupKeys columns equal
// the row's InputKeys columns (pairwise of one type; a NULL key matches
// nothing), and is joined with every returned row that satisfies Residual
// (over the input columns, then the LookupSchema columns; nil for none).
// An input row with no match is dropped, or padded with NULLs when
// OuterLeft (LEFT JOIN). Each output row keeps its input row's kind.
// LookupSchema is the table's physical columns, in the order the external
// table is read; OutputSchema is InputSchema then LookupSchema.
type LookupJoinSpec struct {
	InputSchema  types.Schema `json:"input_schema"`
	LookupSchema types.Schema `json:"lookup_schema"`
	InputKeys    []int        `json:"input_keys"`
	LookupKeys   []int        `json:"lookup_keys"`
	Residual     *expr.Expr   `json:"residual,omitempty"`
	OutputSchema types.Schema `json:"output_schema"`
	OuterLeft    bool         `json:"outer_left,omitempty"`
	// TableName is the catalog table's name, for plans and errors.
	TableName string      `json:"table_name"`
	Table     MySQLTable  `json:"table"`
	Cache     LookupCache `json:"cache"`
	// MaxRetries is 'lookup.max-retries': how many times a failed query is
	// retried before the job fails.
	MaxRetries int `json:"max_retries"`
}

var _ Spec = (*LookupJoinSpec)(nil)

func (*LookupJoinSpec) Kind() string { return KindJoinLookup }
func (*LookupJoinSpec) Inputs() int  { return 1 }

// MySQLTable is where a MySQL (or MariaDB) table lives and how to log in:
// the 'mysql' connector's hostname, port, username, password,
// database-name and table-name, or the 'jdbc' connector's url.
type MySQLTable struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	User     string `json:"user"`
	Password string `json:"password,omitempty"`
	Database string `json:"database"`
	Table    string `json:"table"`
	// Columns are the table's column names in the database, one per
	// column of the lookup schema.
	Columns []string `json:"columns"`
}

// MySQLScanSpec reads every row of a MySQL table once, from one subtask:
// a bounded scan of a 'mysql' or 'jdbc' table outside a lookup join.
// Schema is the table's columns, Table.Columns their names in the database.
type MySQLScanSpec struct {
	Table  MySQLTable   `json:"table"`
	Schema types.Schema `json:"schema"`
}

var _ Spec = (*MySQLScanSpec)(nil)

func (*MySQLScanSpec) Kind() string { return KindMySQLScan }
func (*MySQLScanSpec) Inputs() int  { return 0 }

// LookupCache is a lookup table's cache ('lookup.cache' = 'PARTIAL'), used
// when Enabled: at most MaxRows keys (0: no limit), each kept
// ExpireAfterWriteMs after it was loaded and ExpireAfterAccessMs after it
// was last read (0: no such limit), keys without rows included when
// CacheMissingKey.
type LookupCache struct {
	Enabled             bool  `json:"enabled,omitempty"`
	MaxRows             int64 `json:"max_rows,omitempty"`
	ExpireAfterWriteMs  int64 `json:"expire_after_write_ms,omitempty"`
	ExpireAfterAccessMs int64 `json:"expire_after_access_ms,omitempty"`
	CacheMissingKey     bool  `json:"cache_missing_key,omitempty"`
}

// NormalizeSpec turns an upsert stream (each row the latest version of its
// key; -D deletes the key) into a changelog with retractions, keeping the
// last row of each key: a new key emits +I, a changed row -U old and +U new,
// a delete -D old. An unchanged row emits nothing and -U rows are ignored.
// Its input is hash-partitioned on Keys.
type NormalizeSpec struct {
	Schema types.Schema `json:"schema"`
	Keys   []int        `json:"keys"`
	// TTLMs drops a key's row that long (processing time) after its last
	// write; with a TTL an unchanged row is emitted again as -U/+U, as
	// Flink's does, to keep downstream state alive.
	TTLMs int64 `json:"ttl_ms,omitempty"`
}

var _ Spec = (*NormalizeSpec)(nil)

func (*NormalizeSpec) Kind() string { return KindNormalize }
func (*NormalizeSpec) Inputs() int  { return 1 }

// ReplicateSpec emits each input row Count times (none when the count is
// NULL or not positive), with the row's kind and without the count column:
// the replication under INTERSECT ALL and EXCEPT ALL. Count is the index of
// a BIGINT column of Schema; the output is Schema without it.
type ReplicateSpec struct {
	Schema types.Schema `json:"schema"`
	Count  int          `json:"count"`
}

var _ Spec = (*ReplicateSpec)(nil)

func (*ReplicateSpec) Kind() string { return KindReplicate }
func (*ReplicateSpec) Inputs() int  { return 1 }

// ExpandSpec emits each input row once per grouping set, with the row's
// kind: copy i has the columns Sets[i] set to NULL and a last BIGINT NOT
// NULL column $e holding i. It is Flink's Expand under GROUPING SETS,
// ROLLUP and CUBE; the aggregate after it groups by the keys and $e. The
// output is Schema then $e.
type ExpandSpec struct {
	Schema types.Schema `json:"schema"`
	Sets   [][]int      `json:"sets"`
}

var _ Spec = (*ExpandSpec)(nil)

func (*ExpandSpec) Kind() string { return KindExpand }
func (*ExpandSpec) Inputs() int  { return 1 }

// OutputSchema is Schema then the $e column.
func (s *ExpandSpec) OutputSchema() types.Schema {
	return append(append(types.Schema{}, s.Schema...), types.Field{Name: "$e", Type: types.BigInt.WithNullable(false)})
}

// SinkMaterializeSpec is Flink's SinkUpsertMaterializer, between an
// updating stream and an upsert sink whose primary key (Keys) is not a key
// of the stream: per sink key it keeps the rows the stream has added and not
// retracted, in arrival order, and emits the latest as the key's row, so a
// retraction of an older row changes nothing and one of the latest brings
// the one before it back. UpsertKey, when set, is a unique key of the
// stream: an added row replaces the stored row with the same UpsertKey
// values, and a retraction removes that row, whatever its other columns
// hold. The input arrives hashed on Keys; the output has Schema, with +I,
// +U and -D rows. TTLMs drops a key's rows that long after its last write.
type SinkMaterializeSpec struct {
	Schema    types.Schema `json:"schema"`
	Keys      []int        `json:"keys"`
	UpsertKey []int        `json:"upsert_key,omitempty"`
	TTLMs     int64        `json:"ttl_ms,omitempty"`
}

var _ Spec = (*SinkMaterializeSpec)(nil)

func (*SinkMaterializeSpec) Kind() string { return KindSinkMaterialize }
func (*SinkMaterializeSpec) Inputs() int  { return 1 }

// Aggregate functions of AggCall.Func.
const (
	AggCount = "COUNT" // COUNT(x), or COUNT(*) with Arg -1
	AggSum   = "SUM"
	AggAvg   = "AVG"
	AggMin   = "MIN"
	AggMax   = "MAX"

	AggListAgg    = "LISTAGG"     // LISTAGG(s [, Separator]): the non-NULL values joined in arrival order
	AggFirstValue = "FIRST_VALUE" // the first non-NULL value to arrive that is still there
	AggLastValue  = "LAST_VALUE"  // the last non-NULL value to arrive that is still there
	AggStddevPop  = "STDDEV_POP"
	AggStddevSamp = "STDDEV_SAMP"
	AggVarPop     = "VAR_POP"
	AggVarSamp    = "VAR_SAMP"
)

// AggCall is one aggregate of a GroupAggSpec. Its result type is the
// matching column of the spec's OutputSchema, as the planner typed it.
type AggCall struct {
	Func string `json:"func"`
	// Arg is the input column aggregated; -1 for COUNT(*).
	Arg int `json:"arg"`
	// Distinct aggregates each distinct non-NULL value of Arg once, as
	// NAME(DISTINCT x) does: a value counts while at least one row with it
	// is live.
	Distinct bool `json:"distinct,omitempty"`
	// Filtered marks FILTER (WHERE ...): a row reaches the aggregate (or its
	// distinct view) only where the BOOLEAN input column Filter is TRUE.
	Filtered bool `json:"filtered,omitempty"`
	Filter   int  `json:"filter,omitempty"`
	// Separator is LISTAGG's separator; nil means ",".
	Separator *string `json:"separator,omitempty"`
	// More holds COUNT's further argument columns, COUNT(a, b): a row
	// counts when none of Arg and More is NULL (with Distinct, each
	// distinct tuple once).
	More []int `json:"more,omitempty"`
}

// GroupAggSpec configures a streaming GROUP BY aggregate over a changelog,
// as Flink's GroupAggregate runs it: per group, +I for the first row, -U
// old and +U new when the result changes, -D when the group's last row is
// retracted. Its input is hash-partitioned on Keys (a single subtask when
// there are none: a global aggregate). The output is the key columns, then
// one column per aggregate.
type GroupAggSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	Keys        []int        `json:"keys"`
	Aggs        []AggCall    `json:"aggs"`
	// OutputSchema is the key columns (with the input's types) followed by
	// the aggregates' result types.
	OutputSchema types.Schema `json:"output_schema"`
	// InputRetracts is true when the input may carry -U/-D rows; MIN and
	// MAX then keep every value of the group (with its count), so that
	// retracting the current minimum finds the next one.
	InputRetracts bool `json:"input_retracts,omitempty"`
	// TTLMs is how long a group's state lives after its last write
	// (table.exec.state.ttl); 0 keeps it forever. With a TTL, an update
	// that leaves the result unchanged still emits -U/+U, as in Flink.
	TTLMs int64 `json:"ttl_ms,omitempty"`
}

var _ Spec = (*GroupAggSpec)(nil)

func (*GroupAggSpec) Kind() string { return KindGroupAggregate }
func (*GroupAggSpec) Inputs() int  { return 1 }

// SortKey is one ORDER BY key of a RankSpec. NULL sorts first ascending and
// last descending, as Flink's default null direction has it, unless
// NullsFirst/NullsLast say otherwise.
type SortKey struct {
	Col        int  `json:"col"`
	Desc       bool `json:"desc,omitempty"`
	NullsFirst bool `json:"nulls_first,omitempty"`
	NullsLast  bool `json:"nulls_last,omitempty"`
}

// RankSpec configures a streaming Top-N, as Flink's Rank with
// rankType=[ROW_NUMBER] and rankRange=[rankStart=1, rankEnd=Limit]: per
// partition (the Partition columns; none for ORDER BY ... LIMIT, which
// runs on one subtask) it keeps the first Limit rows in OrderBy order,
// ties in arrival order, and emits -D for a row that leaves them and +I for
// one that enters. The output rows are the input rows, unchanged, with the
// row number after them when OutputRankNumber is set.
type RankSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	Partition   []int        `json:"partition,omitempty"`
	OrderBy     []SortKey    `json:"order_by"`
	Limit       int64        `json:"limit"`
	// InputRetracts is true when the input may carry -U/-D rows: the
	// operator then keeps every row of a partition, since a retraction can
	// bring a lower row back into the top; otherwise only the top Limit.
	InputRetracts bool `json:"input_retracts,omitempty"`
	// OutputRankNumber appends the row number (BIGINT NOT NULL, named
	// RankNumberColumn) to every output row, as Flink's outputRankNumber:
	// a row whose rank changes is then updated with -U/+U.
	OutputRankNumber bool `json:"output_rank_number,omitempty"`
	// RankType is the ranking function: "" (ROW_NUMBER), RankTypeRank or
	// RankTypeDenseRank. The last two need EmitAtEnd.
	RankType string `json:"rank_type,omitempty"`
	// EmitAtEnd (batch mode) keeps every row and emits nothing until the
	// input ends; then it emits, as +I, each partition's rows whose rank
	// is at most Limit (all rows tied at a rank for RANK and DENSE_RANK).
	EmitAtEnd bool `json:"emit_at_end,omitempty"`
	// TTLMs drops a stored row that long (processing time) after it was
	// written, as Flink's Top-N state TTL does: an expired row leaves the
	// partition without a retraction.
	TTLMs int64 `json:"ttl_ms,omitempty"`
}

// The ranking functions of RankSpec.RankType besides ROW_NUMBER.
const (
	RankTypeRank      = "RANK"
	RankTypeDenseRank = "DENSE_RANK"
)

// RankNumberColumn is the name of a Rank's row number output column, as
// Flink's plans name it.
const RankNumberColumn = "w0$o0"

// OutputSchema is the rank's output: the input columns, then the row
// number when OutputRankNumber is set.
func (s *RankSpec) OutputSchema() types.Schema {
	out := append(types.Schema{}, s.InputSchema...)
	if s.OutputRankNumber {
		out = append(out, types.Field{Name: RankNumberColumn, Type: types.BigInt.WithNullable(false)})
	}
	return out
}

var _ Spec = (*RankSpec)(nil)

func (*RankSpec) Kind() string { return KindRank }
func (*RankSpec) Inputs() int  { return 1 }

// DeduplicateSpec configures Flink's Deduplicate: ROW_NUMBER() OVER
// (PARTITION BY Keys ORDER BY a time attribute) filtered by rn = 1, over an
// insert-only input. Per key it keeps one row: the first (KeepLastRow
// false: ORDER BY ... ASC) or the last (DESC). On processing time
// (RowtimeCol -1) "first" and "last" are arrival order; on event time they
// compare the RowtimeCol values, a later arrival winning a tie for the last
// row and losing it for the first. The output rows are the input rows:
// +I for a key's first kept row, -U old and +U new when a row replaces the
// kept one (processing-time keep-first never does, so it is insert-only).
// With no Keys it runs on one subtask.
type DeduplicateSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	Keys        []int        `json:"keys,omitempty"`
	KeepLastRow bool         `json:"keep_last_row,omitempty"`
	// RowtimeCol is the rowtime column ordered by, or -1 for processing
	// time.
	RowtimeCol int `json:"rowtime_col"`
	// TTLMs is how long a key's row lives after its last write
	// (table.exec.state.ttl); 0 keeps it forever. With a TTL, a
	// processing-time keep-last row equal to the kept one still emits
	// -U/+U, as Flink's does.
	TTLMs int64 `json:"ttl_ms,omitempty"`
}

var _ Spec = (*DeduplicateSpec)(nil)

func (*DeduplicateSpec) Kind() string { return KindDeduplicate }
func (*DeduplicateSpec) Inputs() int  { return 1 }

// WindowRankSpec configures Flink's WindowRank: a Top-N (ROW_NUMBER,
// rankStart=1, rankEnd=Limit) per (Partition key, window), over an
// insert-only input that carries its window in the columns WindowStart and
// WindowEnd (a window function's or a window aggregate's). Rows are
// buffered per (key, window_end), ordered by OrderBy with ties in arrival
// order; when the watermark reaches window_end - 1 the window's first
// Limit rows are emitted as +I, in rank order, and its state is dropped. A
// row whose window has fired is dropped as late. The output rows are the
// input rows, with the row number after them when OutputRankNumber is set.
// Window only names the window in plans. With no Partition it runs on one
// subtask.
type WindowRankSpec struct {
	InputSchema      types.Schema `json:"input_schema"`
	Partition        []int        `json:"partition,omitempty"`
	OrderBy          []SortKey    `json:"order_by"`
	Limit            int64        `json:"limit"`
	OutputRankNumber bool         `json:"output_rank_number,omitempty"`
	WindowStart      int          `json:"window_start"`
	WindowEnd        int          `json:"window_end"`
	Window           WindowSpec   `json:"window"`
}

// OutputSchema is the window rank's output: the input columns, then the
// row number when OutputRankNumber is set.
func (s *WindowRankSpec) OutputSchema() types.Schema {
	out := append(types.Schema{}, s.InputSchema...)
	if s.OutputRankNumber {
		out = append(out, types.Field{Name: RankNumberColumn, Type: types.BigInt.WithNullable(false)})
	}
	return out
}

var _ Spec = (*WindowRankSpec)(nil)

func (*WindowRankSpec) Kind() string { return KindWindowRank }
func (*WindowRankSpec) Inputs() int  { return 1 }

// WindowDeduplicateSpec configures Flink's WindowDeduplicate: ROW_NUMBER()
// OVER (PARTITION BY window_start, window_end, Keys ORDER BY a rowtime)
// filtered by rn = 1, over an insert-only input that carries its window in
// the columns WindowStart and WindowEnd. Per (key, window) it keeps one
// row: the one with the smallest RowtimeCol value (KeepLastRow false, the
// earlier arrival winning a tie) or the greatest (KeepLastRow, the later
// arrival winning a tie), and emits it as +I when the watermark reaches
// window_end - 1. A row whose window has fired is dropped as late. The
// output rows are the input rows. Window only names the window in plans.
// With no Keys it runs on one subtask.
type WindowDeduplicateSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	Keys        []int        `json:"keys,omitempty"`
	KeepLastRow bool         `json:"keep_last_row,omitempty"`
	RowtimeCol  int          `json:"rowtime_col"`
	WindowStart int          `json:"window_start"`
	WindowEnd   int          `json:"window_end"`
	Window      WindowSpec   `json:"window"`
}

var _ Spec = (*WindowDeduplicateSpec)(nil)

func (*WindowDeduplicateSpec) Kind() string { return KindWindowDedup }
func (*WindowDeduplicateSpec) Inputs() int  { return 1 }

// BatchSortSpec configures the end of a batch-mode query
// (execution.runtime-mode = batch): it applies its input changelog to the
// result (+I and +U add a row, -U and -D remove an equal one) and, once
// every input has ended, emits the final rows as +I, sorted by OrderBy
// when there is one, skipping the first Offset and keeping at most Limit
// (0: all). With neither OrderBy nor a limit it may run at any
// parallelism, behind a HASH edge on every column; otherwise on one
// subtask behind a SINGLE edge, so the order is global.
type BatchSortSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	OrderBy     []SortKey    `json:"order_by,omitempty"`
	Limit       int64        `json:"limit,omitempty"`
	Offset      int64        `json:"offset,omitempty"`
}

var _ Spec = (*BatchSortSpec)(nil)

func (*BatchSortSpec) Kind() string { return KindBatchSort }
func (*BatchSortSpec) Inputs() int  { return 1 }

// Global reports whether the spec needs all rows on one subtask: it
// sorts, skips or cuts.
func (s *BatchSortSpec) Global() bool {
	return len(s.OrderBy) > 0 || s.Limit > 0 || s.Offset > 0
}

// WatermarkAssignerSpec generates the watermarks of a table with a
// WATERMARK FOR declaration. Rows pass through unchanged; a NULL rowtime
// fails the job.
type WatermarkAssignerSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	// Rowtime is the WATERMARK FOR column.
	Rowtime int `json:"rowtime"`
	// Watermark is the watermark expression over the input columns; it
	// returns a timestamp.
	Watermark *expr.Expr `json:"watermark"`
	// Text is the expression's SQL text, for plans and errors.
	Text string `json:"text,omitempty"`
}

var _ Spec = (*WatermarkAssignerSpec)(nil)

func (*WatermarkAssignerSpec) Kind() string { return KindWatermarkAssigner }
func (*WatermarkAssignerSpec) Inputs() int  { return 1 }

// Window kinds of WindowSpec.Kind.
const (
	WindowTumble   = "TUMBLE"
	WindowHop      = "HOP"
	WindowCumulate = "CUMULATE"
	WindowSession  = "SESSION"
)

// WindowSpec is a window table-valued function's windows, aligned to the
// epoch (no offset): TUMBLE windows of SizeMs; HOP windows of SizeMs every
// StepMs (the slide); CUMULATE windows starting every SizeMs and ending
// every StepMs within it; SESSION windows of each group key, where a row
// at ts opens [ts, ts+GapMs) and windows that overlap or touch merge.
type WindowSpec struct {
	Kind   string `json:"kind"`
	SizeMs int64  `json:"size_ms,omitempty"`
	StepMs int64  `json:"step_ms,omitempty"`
	GapMs  int64  `json:"gap_ms,omitempty"`
	// OffsetMs shifts the alignment of TUMBLE, HOP and CUMULATE windows:
	// their starts are OffsetMs past a multiple of the step (the size of
	// a TUMBLE, of a CUMULATE's window). It may be negative.
	OffsetMs int64 `json:"offset_ms,omitempty"`
}

// WindowAggSpec configures a window aggregate: rows are assigned to the
// windows of Window by their Rowtime column, accumulated per (key,
// window), and each window emits one insert row per key once the watermark
// reaches window_end - 1, after which its state is dropped. Its input is
// insert-only and hash-partitioned on Keys (one subtask without keys). The
// output is the key columns, window_start, window_end, window_time, then
// one column per aggregate.
type WindowAggSpec struct {
	InputSchema types.Schema `json:"input_schema"`
	Keys        []int        `json:"keys"`
	Rowtime     int          `json:"rowtime"`
	Window      WindowSpec   `json:"window"`
	// Proctime makes the windows processing-time windows: rows go to the
	// windows of the operator's clock when they arrive (Rowtime, the
	// PROCTIME() column, is not read), and a window fires once the clock
	// passes its end - 1, or at the end of the input.
	Proctime     bool         `json:"proctime,omitempty"`
	Aggs         []AggCall    `json:"aggs"`
	OutputSchema types.Schema `json:"output_schema"`
}

var _ Spec = (*WindowAggSpec)(nil)

func (*WindowAggSpec) Kind() string { return KindWindowAggregate }
func (*WindowAggSpec) Inputs() int  { return 1 }

// WindowTVFSpec configures a windowing table-valued function (TUMBLE,
// HOP, CUMULATE) as a relation, as Flink's WindowTableFunction operator
// runs it: each input row is emitted once per window of Window that its
// Rowtime column falls in (in the window assigner's order), followed by
// window_start, window_end and window_time (window_end - 1 ms). It is
// stateless and drops no late rows; a row with a NULL rowtime is dropped.
// The output is InputSchema then the three window columns.
type WindowTVFSpec struct {
	InputSchema  types.Schema `json:"input_schema"`
	Rowtime      int          `json:"rowtime"`
	Window       WindowSpec   `json:"window"`
	OutputSchema types.Schema `json:"output_schema"`
}

var _ Spec = (*WindowTVFSpec)(nil)

func (*WindowTVFSpec) Kind() string { return KindWindowTVF }
func (*WindowTVFSpec) Inputs() int  { return 1 }

// Window join types (WindowJoinSpec.JoinType), as Flink's FlinkJoinType.
const (
	WindowJoinInner = "INNER"
	WindowJoinLeft  = "LEFT"
	WindowJoinRight = "RIGHT"
	WindowJoinFull  = "FULL"
	WindowJoinSemi  = "SEMI"
	WindowJoinAnti  = "ANTI"
)

// WindowJoinSpec configures Flink's window join of two window function
// relations with the same Window: rows of each side are buffered per
// (join key, window_end) until the watermark reaches window_end - 1, then
// the window's rows of both sides are joined, emitted as inserts (outer
// sides padded with NULLs; SEMI and ANTI emit left rows) and dropped. A
// row whose window has fired already is dropped as late. LeftWindowEnd and
// RightWindowEnd are the window_end columns; LeftWindowStart and
// RightWindowStart the window_start ones (equal once window_end is). The
// join keys are the equalities besides the window columns, pairwise of one
// type (a NULL key never matches); without keys both inputs go to one
// subtask. Residual is a predicate over the left then the right columns
// checked on every pair of a key's rows. Its inputs are insert-only; the
// output is the left then the right columns (the left ones for SEMI and
// ANTI).
type WindowJoinSpec struct {
	LeftSchema       types.Schema `json:"left_schema"`
	RightSchema      types.Schema `json:"right_schema"`
	LeftKeys         []int        `json:"left_keys"`
	RightKeys        []int        `json:"right_keys"`
	LeftWindowStart  int          `json:"left_window_start"`
	LeftWindowEnd    int          `json:"left_window_end"`
	RightWindowStart int          `json:"right_window_start"`
	RightWindowEnd   int          `json:"right_window_end"`
	Window           WindowSpec   `json:"window"`
	JoinType         string       `json:"join_type"`
	Residual         *expr.Expr   `json:"residual,omitempty"`
	OutputSchema     types.Schema `json:"output_schema"`
}

var _ Spec = (*WindowJoinSpec)(nil)

func (*WindowJoinSpec) Kind() string { return KindWindowJoin }
func (*WindowJoinSpec) Inputs() int  { return 2 }

// SemiOrAnti reports whether the join emits left rows only.
func (s *WindowJoinSpec) SemiOrAnti() bool {
	return s.JoinType == WindowJoinSemi || s.JoinType == WindowJoinAnti
}

// OverAggSpec configures a rowtime OVER aggregation, as Flink's
// OverAggregate: per partition (the Partition columns; none runs on one
// subtask) the rows are buffered until the watermark reaches their
// Rowtime, then taken in rowtime order, and each emits one insert row, its
// columns followed by one column per aggregate over its frame. A ROWS
// frame holds the row and the Preceding rows before it (ties in arrival
// order); a RANGE frame the rows whose rowtime is at most Preceding ms
// before the row's, ties included. Unbounded frames hold every earlier
// row (Preceding is then unused). The input is insert-only and
// hash-partitioned on Partition.
type OverAggSpec struct {
	InputSchema  types.Schema `json:"input_schema"`
	Partition    []int        `json:"partition,omitempty"`
	Rowtime      int          `json:"rowtime"`
	Rows         bool         `json:"rows,omitempty"`
	Unbounded    bool         `json:"unbounded,omitempty"`
	Preceding    int64        `json:"preceding,omitempty"`
	Aggs         []AggCall    `json:"aggs"`
	OutputSchema types.Schema `json:"output_schema"`
}

var _ Spec = (*OverAggSpec)(nil)

func (*OverAggSpec) Kind() string { return KindOverAggregate }
func (*OverAggSpec) Inputs() int  { return 1 }

// ValuesSpec is a bounded source of constant rows, as INSERT ... VALUES
// produces. Each row holds one expression per column, already cast to the
// column's type. Only subtask 0 emits.
type ValuesSpec struct {
	Schema types.Schema   `json:"schema"`
	Rows   [][]*expr.Expr `json:"rows"`
}

var _ Spec = (*ValuesSpec)(nil)

func (*ValuesSpec) Kind() string { return KindValues }
func (*ValuesSpec) Inputs() int  { return 0 }

// CollectSpec sends its input to the client through operators.Context.Results.
type CollectSpec struct {
	Schema types.Schema `json:"schema"`
}

var _ Spec = (*CollectSpec)(nil)

func (*CollectSpec) Kind() string { return KindCollect }
func (*CollectSpec) Inputs() int  { return 1 }

// ManagedSourceSpec reads a managed table from the cluster's default log.
type ManagedSourceSpec struct {
	Topic  string       `json:"topic"`
	Schema types.Schema `json:"schema"`
	// Bounded makes the source read up to the end offsets it sees at start.
	Bounded bool `json:"bounded"`
}

var _ Spec = (*ManagedSourceSpec)(nil)

func (*ManagedSourceSpec) Kind() string { return KindManagedSource }
func (*ManagedSourceSpec) Inputs() int  { return 0 }

// ManagedSinkSpec appends to a managed table.
type ManagedSinkSpec struct {
	Topic  string       `json:"topic"`
	Schema types.Schema `json:"schema"`
}

var _ Spec = (*ManagedSinkSpec)(nil)

func (*ManagedSinkSpec) Kind() string { return KindManagedSink }
func (*ManagedSinkSpec) Inputs() int  { return 1 }

// Kafka startup modes of KafkaSourceSpec.StartupMode.
const (
	KafkaStartEarliest  = "earliest-offset"
	KafkaStartLatest    = "latest-offset"
	KafkaStartTimestamp = "timestamp"
)

// KafkaSourceSpec reads one topic of an external Kafka cluster whose record
// values are JSON objects, one row each.
type KafkaSourceSpec struct {
	Topic   string       `json:"topic"`
	Brokers []string     `json:"brokers"`
	Schema  types.Schema `json:"schema"`
	// Metadata, when set, has one entry per column of Schema: the
	// metadata key (see ReadableMetadata) the column holds, in the key's
	// type, or "" for a field of the record value.
	Metadata []string `json:"metadata,omitempty"`
	// Upsert reads the topic as upsert-kafka does: each record's key holds
	// the KeyFields columns (a JSON object of their names without
	// KeyPrefix), a record is an upsert of its key (+U), and one with no
	// value a delete of it (-D). With ValueExceptKey the value holds the
	// other columns; otherwise it holds every column, and a delete's key
	// columns are read from its key.
	Upsert         bool   `json:"upsert,omitempty"`
	KeyFields      []int  `json:"key_fields,omitempty"`
	KeyPrefix      string `json:"key_prefix,omitempty"`
	ValueExceptKey bool   `json:"value_except_key,omitempty"`
	// StartupMode is one of the KafkaStart constants; StartupTimestampMs
	// goes with KafkaStartTimestamp.
	StartupMode        string `json:"startup_mode"`
	StartupTimestampMs int64  `json:"startup_timestamp_ms,omitempty"`
	// Bounded makes the source stop at the end offsets it lists at start
	// ('scan.bounded.mode' = 'latest-offset').
	Bounded bool `json:"bounded,omitempty"`
	// Format is the record values' format (see ValueFormat).
	Format *FormatSpec `json:"format,omitempty"`
	// FailOnMissingField and IgnoreParseErrors are the json format's
	// 'json.fail-on-missing-field' and 'json.ignore-parse-errors' of a spec
	// without Format, written before formats existed; they are read only
	// then.
	FailOnMissingField bool `json:"fail_on_missing_field,omitempty"`
	IgnoreParseErrors  bool `json:"ignore_parse_errors,omitempty"`
	// GroupID is 'properties.group.id': the consumer group the source
	// commits checkpointed offsets to, for monitoring only.
	GroupID string `json:"group_id,omitempty"`
}

var _ Spec = (*KafkaSourceSpec)(nil)

func (*KafkaSourceSpec) Kind() string { return KindKafkaSource }
func (*KafkaSourceSpec) Inputs() int  { return 0 }

// KafkaSinkSpec appends insert-only rows, one record per row in the value
// format (json by default), to one topic of an external Kafka cluster.
type KafkaSinkSpec struct {
	Topic   string       `json:"topic"`
	Brokers []string     `json:"brokers"`
	Schema  types.Schema `json:"schema"`
	// Upsert writes as upsert-kafka does: each record keyed by the
	// KeyFields columns (a JSON object of their names without KeyPrefix),
	// +I and +U rows as upserts, -D rows as tombstones (no value), -U rows
	// not at all. ValueExceptKey leaves the key columns out of the value.
	Upsert         bool   `json:"upsert,omitempty"`
	KeyFields      []int  `json:"key_fields,omitempty"`
	KeyPrefix      string `json:"key_prefix,omitempty"`
	ValueExceptKey bool   `json:"value_except_key,omitempty"`
	// Format is the record values' format (see ValueFormat).
	Format *FormatSpec `json:"format,omitempty"`
	// RoundRobin spreads records over partitions in turn; otherwise the
	// client's default (sticky) partitioner places them.
	RoundRobin bool `json:"round_robin,omitempty"`
	// Guarantee is 'sink.delivery-guarantee': KafkaDeliveryNone,
	// KafkaDeliveryAtLeastOnce (the default, also for "") or
	// KafkaDeliveryExactlyOnce.
	Guarantee string `json:"guarantee,omitempty"`
	// TransactionalIDPrefix is 'sink.transactional-id-prefix', required for
	// exactly-once.
	TransactionalIDPrefix string `json:"transactional_id_prefix,omitempty"`
}

var _ Spec = (*KafkaSinkSpec)(nil)

func (*KafkaSinkSpec) Kind() string { return KindKafkaSink }
func (*KafkaSinkSpec) Inputs() int  { return 1 }

// Kafka sink delivery guarantees of KafkaSinkSpec.Guarantee, with Flink's
// names.
const (
	KafkaDeliveryNone        = "none"
	KafkaDeliveryAtLeastOnce = "at-least-once"
	KafkaDeliveryExactlyOnce = "exactly-once"
)

// DatagenField configures one column of a datagen source.
type DatagenField struct {
	// Kind is "random" or "sequence".
	Kind   string `json:"kind"`
	Min    string `json:"min,omitempty"`
	Max    string `json:"max,omitempty"`
	Start  string `json:"start,omitempty"`
	End    string `json:"end,omitempty"`
	Length int    `json:"length,omitempty"`
	// VarLen makes a random string or binary 1 to Length long instead of
	// exactly Length ('fields.#.var-len').
	VarLen bool `json:"var_len,omitempty"`
	// NullRate is the fraction of NULLs, 0 by default.
	NullRate float64 `json:"null_rate,omitempty"`
}

// DatagenSpec generates rows.
type DatagenSpec struct {
	Schema types.Schema   `json:"schema"`
	Fields []DatagenField `json:"fields"`
	// RowsPerSecond limits the rate over all subtasks; 0 is unlimited.
	RowsPerSecond float64 `json:"rows_per_second"`
	// NumberOfRows bounds the source over all subtasks; 0 is unbounded.
	NumberOfRows int64 `json:"number_of_rows"`
	Seed         int64 `json:"seed,omitempty"`
	// Table names the table in errors ("db.name").
	Table string `json:"table,omitempty"`
}

var _ Spec = (*DatagenSpec)(nil)

func (*DatagenSpec) Kind() string { return KindDatagen }
func (*DatagenSpec) Inputs() int  { return 0 }

// NexmarkSpec generates the Nexmark benchmark's events: people,
// auctions and bids, one ROW column of each, as the reference Nexmark
// generator's Flink connector does (see docs/connectors.md).
type NexmarkSpec struct {
	Schema types.Schema `json:"schema"`
	// EventsNum bounds the events over all subtasks; 0 is unbounded.
	EventsNum int64 `json:"events_num"`
	// FirstEventRate and NextEventRate are events per second of event
	// time; event timestamps advance at FirstEventRate.
	FirstEventRate float64 `json:"first_event_rate"`
	NextEventRate  float64 `json:"next_event_rate"`
	// The proportions of people, auctions and bids among the events.
	PersonProportion  int64 `json:"person_proportion"`
	AuctionProportion int64 `json:"auction_proportion"`
	BidProportion     int64 `json:"bid_proportion"`
	// One in each ratio of bids, auctions and bids goes to a random recent
	// auction, seller and bidder; the rest to the hot one.
	HotAuctionRatio int64 `json:"hot_auction_ratio"`
	HotSellerRatio  int64 `json:"hot_seller_ratio"`
	HotBidderRatio  int64 `json:"hot_bidder_ratio"`
	// BaseTime is the event time (ms since the epoch) of event number 0,
	// fixed when the job is planned or by the table's 'base-time'.
	BaseTime int64 `json:"base_time"`
	// Table names the table in errors ("db.name").
	Table string `json:"table,omitempty"`
}

var _ Spec = (*NexmarkSpec)(nil)

func (*NexmarkSpec) Kind() string { return KindNexmark }
func (*NexmarkSpec) Inputs() int  { return 0 }

// PrintSpec writes rows to the task manager's standard output as Flink's
// print connector does: "+I[1, foo]", with an optional identifier prefix.
type PrintSpec struct {
	Schema     types.Schema `json:"schema"`
	Identifier string       `json:"identifier,omitempty"`
	// StandardError writes to standard error instead of standard output
	// ('standard-error' = 'true').
	StandardError bool   `json:"standard_error,omitempty"`
	TableName     string `json:"table_name"`
}

var _ Spec = (*PrintSpec)(nil)

func (*PrintSpec) Kind() string { return KindPrint }
func (*PrintSpec) Inputs() int  { return 1 }

// BlackholeSpec discards its input.
type BlackholeSpec struct {
	Schema types.Schema `json:"schema"`
}

var _ Spec = (*BlackholeSpec)(nil)

func (*BlackholeSpec) Kind() string { return KindBlackhole }
func (*BlackholeSpec) Inputs() int  { return 1 }
