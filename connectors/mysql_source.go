package connectors

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterSource(jobgraph.KindMySQLScan, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.MySQLScanSpec](spec)
		if err != nil {
			return nil, err
		}
		return &MySQLScan{spec: *s}, nil
	})
}

// MySQLScan reads every row of a MySQL table once, as +I rows, from subtask
// 0 (other subtasks end at once): SELECT <columns> FROM db.table ORDER BY
// every column, so that the order is the same each time the query runs.
// It is bounded.
//
// Its position (SnapshotState) is how many rows it emitted. A restored scan
// runs the query again and skips that many rows: rows the database changed
// in between may be read twice or missed, as a re-read of a changing table
// does in Flink's JDBC source.
type MySQLScan struct {
	spec    jobgraph.MySQLScanSpec
	subtask int
	batch   int
	db      *sql.DB
	// emitted is how many rows were emitted (the position).
	emitted int64
}

var (
	_ operators.Source       = (*MySQLScan)(nil)
	_ operators.Checkpointer = (*MySQLScan)(nil)
)

type mysqlScanPosition struct {
	V       int   `json:"v"`
	Emitted int64 `json:"emitted"`
}

// Open restores the position and connects (subtask 0 only).
func (s *MySQLScan) Open(ctx *operators.Context) error {
	s.subtask, s.batch = ctx.Subtask, batchRows(ctx, maxBatchRows)
	if r := ctx.Restore; r.ID != 0 && len(r.State) > 0 && len(r.State[0]) > 0 {
		var pos mysqlScanPosition
		if err := decodePosition("mysql", r.State[0], &pos, &pos.V); err != nil {
			return err
		}
		s.emitted = pos.Emitted
	}
	if s.subtask != 0 {
		return nil
	}
	db, err := sql.Open("mysql", MySQLDSN(s.spec.Table))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	s.db = db
	return nil
}

// Run reads the table and emits its rows after the restored position.
func (s *MySQLScan) Run(ctx context.Context, out operators.Collector) error {
	if s.subtask != 0 {
		return nil
	}
	t := s.spec.Table
	cols := make([]string, len(t.Columns))
	order := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i], order[i] = quoteIdent(c), strconv.Itoa(i+1)
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(t.Database) + "." + quoteIdent(t.Table) + " ORDER BY " + strings.Join(order, ", ")
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return types.WithClass(fmt.Errorf("mysql table %s.%s at %s: %w", t.Database, t.Table, mysqlAddr(t), err), types.ClassExternal)
	}
	defer rows.Close()
	schema := s.spec.Schema.ArrowSchema()
	r := newMySQLRows(memory.DefaultAllocator, s.spec.Schema)
	defer func() { r.release() }()
	var read int64
	flush := func() error {
		if len(r.match) == 0 {
			return nil
		}
		arrs, _, _ := r.finish()
		n := len(r.match)
		b := types.NewInsertBatch(schema, arrs, n)
		for _, a := range arrs {
			a.Release()
		}
		r.match = r.match[:0]
		// The position moves first: a checkpoint taken inside Emit counts b.
		s.emitted += int64(n)
		err := out.Emit(b)
		b.Release()
		return err
	}
	for rows.Next() {
		if err := rows.Scan(r.dest...); err != nil {
			return types.WithClass(fmt.Errorf("mysql table %s.%s: %w", t.Database, t.Table, err), types.ClassExternal)
		}
		read++
		if read <= s.emitted {
			continue
		}
		if err := r.appendRow(0); err != nil {
			return fmt.Errorf("mysql table %s.%s: %w", t.Database, t.Table, err)
		}
		if len(r.match) >= max(s.batch, 1) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return types.WithClass(fmt.Errorf("mysql table %s.%s: %w", t.Database, t.Table, err), types.ClassExternal)
	}
	return flush()
}

// SnapshotState implements operators.Checkpointer: the rows emitted.
func (s *MySQLScan) SnapshotState(int64) ([]byte, error) {
	return encodePosition(mysqlScanPosition{V: positionVersion, Emitted: s.emitted})
}

// NotifyCheckpointComplete implements operators.Checkpointer; it does
// nothing.
func (s *MySQLScan) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer; it does
// nothing.
func (s *MySQLScan) NotifyCheckpointAborted(int64) error { return nil }

// Close closes the connection. It is safe after a failed Open.
func (s *MySQLScan) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}
