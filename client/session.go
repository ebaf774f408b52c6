package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// ResultColumn is one column of a query result.
type ResultColumn struct {
	Name string
	Type types.DataType
}

// ResultInfo describes the result of a statement.
type ResultInfo struct {
	Columns []ResultColumn
	// Changelog is false for insert-only results (SHOW, DESCRIBE).
	Changelog bool
	// JobID is the job producing the rows, if any.
	JobID string
	// Location is the session time zone TIMESTAMP_LTZ values are shown in.
	Location *time.Location
	// Order is the ORDER BY of a global Top-N result (ORDER BY ... LIMIT):
	// a renderer that materializes the final rows shows them in this order.
	// Empty when the rows have no order to keep.
	Order []SortKey
}

// SortKey is one ORDER BY key of a result.
type SortKey struct {
	// Column is the index of the key in ResultInfo.Columns.
	Column     int
	Desc       bool
	NullsFirst bool
}

// Handler receives what a script produces, statement by statement (stmt is
// the 0-based index of the statement in the script). The calls of one
// Execute are made one at a time and in stream order.
type Handler interface {
	// Status reports a statement without a result table; jobID is set when
	// the statement started a job (INSERT).
	Status(stmt int, msg, jobID string)
	// Schema starts a result.
	Schema(stmt int, r ResultInfo)
	// Batch delivers rows of the current result. b is valid only during the
	// call: a handler that keeps it must Retain it (and later Release it).
	Batch(stmt int, b types.Batch)
	// End closes the result with the job's final status.
	End(stmt int, status string)
}

// Session is a server-side session: catalog context (current catalog and
// database) and properties set with SET. Statements of one session run one
// after another; a Session must not run two Executes at once.
type Session struct {
	c  *Client
	id string
}

// OpenSession opens a session with the given properties (such as
// "table.local-time-zone"). props may be nil.
func (c *Client) OpenSession(ctx context.Context, props map[string]string) (*Session, error) {
	resp, err := c.rpc.OpenSession(ctx, &braidv1.OpenSessionRequest{Properties: props})
	if err != nil {
		return nil, c.convert(ctx, err)
	}
	return &Session{c: c, id: resp.GetSessionId()}, nil
}

// ID returns the server's session id.
func (s *Session) ID() string { return s.id }

// Close ends the session on the server. It is safe to call more than once.
func (s *Session) Close(ctx context.Context) error {
	_, err := s.c.rpc.CloseSession(ctx, &braidv1.CloseSessionRequest{SessionId: s.id})
	return s.c.convert(ctx, err)
}

// Execute runs script (one or more statements separated by ';') and hands
// its output to h. With follow, queries over unbounded sources keep running
// until ctx is cancelled; without it they read what exists and stop.
//
// Execute blocks until the server ends the stream, the first failing
// statement (whose error is returned, with the server's message as text),
// or ctx's end. Cancelling ctx cancels the running statement on the server
// and Execute returns ctx.Err().
func (s *Session) Execute(ctx context.Context, script string, follow bool, h Handler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := s.c.rpc.Execute(ctx, &braidv1.ExecuteRequest{SessionId: s.id, Script: script, Follow: follow})
	if err != nil {
		return s.c.convert(ctx, err)
	}
	var cur *resultDecoder
	defer func() {
		if cur != nil {
			cur.abort(errors.New("client: result stream ended"))
		}
	}()
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			if cur != nil {
				return fmt.Errorf("client: statement %d: result ended without ResultEnd", cur.stmt+1)
			}
			return nil
		}
		if err != nil {
			return s.c.convert(ctx, err)
		}
		stmt := int(msg.GetStatement())
		switch p := msg.GetPayload().(type) {
		case *braidv1.ExecuteResponse_Status:
			if cur != nil {
				return fmt.Errorf("client: statement %d: status before the end of the result of statement %d", stmt+1, cur.stmt+1)
			}
			h.Status(stmt, p.Status.GetMessage(), p.Status.GetJobId())
		case *braidv1.ExecuteResponse_Schema:
			if cur != nil {
				return fmt.Errorf("client: statement %d: a second result schema", stmt+1)
			}
			cols := make([]ResultColumn, 0, len(p.Schema.GetColumns()))
			for _, c := range p.Schema.GetColumns() {
				t, err := types.ParseType(c.GetType())
				if err != nil {
					return fmt.Errorf("client: statement %d: column %q: %w", stmt+1, c.GetName(), err)
				}
				cols = append(cols, ResultColumn{Name: c.GetName(), Type: t})
			}
			loc, err := types.LoadZone(p.Schema.GetTimeZone())
			if err != nil {
				return fmt.Errorf("client: statement %d: %w", stmt+1, err)
			}
			var order []SortKey
			for _, k := range p.Schema.GetOrder() {
				if c := int(k.GetColumn()); c < 0 || c >= len(cols) {
					return fmt.Errorf("client: statement %d: sort key on column %d of %d", stmt+1, c, len(cols))
				}
				order = append(order, SortKey{Column: int(k.GetColumn()), Desc: k.GetDescending(), NullsFirst: k.GetNullsFirst()})
			}
			h.Schema(stmt, ResultInfo{Columns: cols, Changelog: p.Schema.GetChangelog(), JobID: p.Schema.GetJobId(), Location: loc, Order: order})
			cur = newResultDecoder(stmt, h)
		case *braidv1.ExecuteResponse_Batch:
			if cur == nil || cur.stmt != stmt {
				return fmt.Errorf("client: statement %d: result batch without a schema", stmt+1)
			}
			if err := cur.feed(p.Batch.GetArrowIpc()); err != nil {
				return fmt.Errorf("client: statement %d: %w", stmt+1, err)
			}
		case *braidv1.ExecuteResponse_End:
			if cur == nil || cur.stmt != stmt {
				return fmt.Errorf("client: statement %d: result end without a schema", stmt+1)
			}
			err := cur.finish()
			cur = nil
			if err != nil {
				return fmt.Errorf("client: statement %d: %w", stmt+1, err)
			}
			h.End(stmt, p.End.GetJobStatus())
		default:
			return fmt.Errorf("client: statement %d: unknown response payload %T", stmt+1, p)
		}
	}
}

// resultDecoder turns the ResultBatch bytes of one result, which together
// form one Arrow IPC stream but may split messages anywhere, into batches.
// The IPC reader runs in its own goroutine, reading from a pipe the receive
// loop writes into. Only the reader calls Batch; the loop calls End only
// after the reader has finished, and nothing else can arrive while a result
// is open, so the handler is never called from two goroutines at once.
type resultDecoder struct {
	stmt int
	h    Handler
	pw   *io.PipeWriter
	pr   *io.PipeReader
	done chan struct{}
	once sync.Once
	err  error // set by the reader goroutine before done is closed
	fed  bool
}

func newResultDecoder(stmt int, h Handler) *resultDecoder {
	pr, pw := io.Pipe()
	return &resultDecoder{stmt: stmt, h: h, pr: pr, pw: pw, done: make(chan struct{})}
}

func (d *resultDecoder) start() {
	d.once.Do(func() { go d.run() })
}

func (d *resultDecoder) run() {
	defer close(d.done)
	r, err := ipc.NewReader(d.pr)
	if err != nil {
		d.err = fmt.Errorf("decoding result: %w", err)
		d.pr.CloseWithError(d.err)
		return
	}
	defer r.Release()
	if _, err := types.SchemaFromArrow(r.Schema()); err != nil {
		d.err = fmt.Errorf("decoding result: %w", err)
		d.pr.CloseWithError(d.err)
		return
	}
	for r.Next() {
		d.h.Batch(d.stmt, types.Batch{Rec: r.RecordBatch()})
	}
	if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
		d.err = fmt.Errorf("decoding result: %w", err)
		d.pr.CloseWithError(d.err)
	}
}

// feed hands the reader the next bytes of the stream.
func (d *resultDecoder) feed(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	d.start()
	d.fed = true
	if _, err := d.pw.Write(b); err != nil {
		<-d.done
		if d.err != nil {
			return d.err
		}
		return err
	}
	return nil
}

// finish ends the stream and waits for the reader to deliver what remains.
// A result that carried no bytes at all had no rows.
func (d *resultDecoder) finish() error {
	d.pw.Close()
	if !d.fed {
		return nil
	}
	<-d.done
	return d.err
}

// abort stops the reader without waiting for more bytes.
func (d *resultDecoder) abort(err error) {
	d.pw.CloseWithError(err)
	if d.fed {
		<-d.done
	}
}
