// Package connectors holds Braid's sources and sinks and the embedded broker
// that stores managed tables.
//
// Each connector registers its operator kinds (jobgraph.Kind*) with the
// operators registry in an init function, so the runtime builds them from
// their typed specs (jobgraph.ValuesSpec, ...):
//
//	values          ValuesSource: constant rows, emitted by subtask 0
//	datagen         DatagenSource: Flink's datagen (random and sequence columns)
//	managed_source  ManagedSource: a managed table's Kafka topic
//	managed_sink    ManagedSink: appends batches to a managed table's topic
//	print           PrintSink: "+I[1, foo]" lines on standard output
//	blackhole       BlackholeSink: discards
//	collect         CollectSink: hands the changelog to the client
//
// The planner reaches connectors through a Resolver, which validates a
// table's options and returns the spec to put in the job graph:
//
//	r := &connectors.Resolver{Brokers: broker.Addrs()}
//	if err := r.CreateTable(ctx, table); err != nil { ... } // managed: creates its topic
//	spec, maxPar, err := r.SourceSpec(table, bounded)
//
// A managed table (no 'connector' option) lives in the topic ManagedTopic
// names. Each record's value is one Arrow IPC stream: the table's schema
// (types.Schema.ArrowSchema, trailing "$op" column included) and one record
// batch, so row kinds survive the round trip and a reader needs no other
// metadata. Sources emit batches of at most 4096 rows (the session's
// braid.exec.source.batch-size sets another size; a managed table's source
// emits the batches its writers wrote) that they own until Emit returns; sinks borrow the batches they are given.
//
// Every source is an operators.Checkpointer whose position is a small
// versioned JSON object (source_position.go): values its next row, datagen
// its seed and row count, the kafka and managed sources (which share
// log_reader.go) the next offset of each partition they own.
package connectors
