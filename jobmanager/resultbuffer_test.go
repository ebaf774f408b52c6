package jobmanager

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var testResultSchema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)

// sinkStream plays one attempt's collect sink: an IPC stream cut into
// chunks the way the task manager's result writer cuts it.
type sinkStream struct {
	t     *testing.T
	b     *resultBuffer
	att   int32
	buf   bytes.Buffer
	w     *ipc.Writer
	first bool
}

func newSinkStream(t *testing.T, b *resultBuffer, attempt int32) *sinkStream {
	return &sinkStream{t: t, b: b, att: attempt, first: true}
}

func (s *sinkStream) push(data []byte, barrier int64, end bool) error {
	err := s.b.accept(s.att, data, barrier, end, s.first)
	if len(data) > 0 {
		s.first = false
	}
	return err
}

// rows writes one batch of vals and pushes it.
func (s *sinkStream) rows(vals ...int64) error {
	if s.w == nil {
		s.w = ipc.NewWriter(&s.buf, ipc.WithSchema(testResultSchema))
	}
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	bld.AppendValues(vals, nil)
	col := bld.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(testResultSchema, []arrow.Array{col}, int64(len(vals)))
	defer rec.Release()
	s.buf.Reset()
	if err := s.w.Write(rec); err != nil {
		s.t.Fatal(err)
	}
	return s.push(s.buf.Bytes(), 0, false)
}

func (s *sinkStream) barrier(id int64) error { return s.push(nil, id, false) }

func (s *sinkStream) end() error {
	s.buf.Reset()
	if s.w != nil {
		if err := s.w.Close(); err != nil {
			s.t.Fatal(err)
		}
	}
	return s.push(s.buf.Bytes(), 0, true)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// client is what the result handler saw: the bytes of one IPC stream.
type client struct{ got bytes.Buffer }

func (c *client) take(b *resultBuffer, all bool) {
	for _, p := range b.take(all) {
		c.got.Write(p)
	}
}

// values decodes what the client saw as one IPC stream.
func (c *client) values(t *testing.T) []int64 {
	t.Helper()
	if c.got.Len() == 0 {
		return nil
	}
	r, err := ipc.NewReader(bytes.NewReader(c.got.Bytes()))
	if err != nil {
		t.Fatalf("client cannot read the result stream: %v", err)
	}
	defer r.Release()
	var out []int64
	for r.Next() {
		out = append(out, r.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("client cannot read the result stream: %v", err)
	}
	return out
}

func TestResultBufferReleasesOnCompletion(t *testing.T) {
	b := newResultBuffer(0)
	s := newSinkStream(t, b, 0)
	var c client
	must(t, s.rows(1, 2))
	must(t, s.barrier(1))
	must(t, s.rows(3))
	c.take(b, false)
	if v := c.values(t); v != nil {
		t.Fatalf("released %v before checkpoint 1 completed", v)
	}
	if !b.complete(1) {
		t.Fatal("completing checkpoint 1 made nothing ready")
	}
	c.take(b, false)
	if v, want := c.values(t), []int64{1, 2}; !reflect.DeepEqual(v, want) {
		t.Fatalf("after checkpoint 1: %v, want %v", v, want)
	}
	// A checkpoint may complete before its barrier reaches the job manager.
	if b.complete(2) {
		t.Fatal("checkpoint 2 released rows before its barrier arrived")
	}
	must(t, s.rows(4))
	must(t, s.barrier(2))
	must(t, s.rows(5))
	c.take(b, false)
	if v, want := c.values(t), []int64{1, 2, 3, 4}; !reflect.DeepEqual(v, want) {
		t.Fatalf("after barrier 2: %v, want %v", v, want)
	}
	must(t, s.end())
	c.take(b, true)
	if v, want := c.values(t), []int64{1, 2, 3, 4, 5}; !reflect.DeepEqual(v, want) {
		t.Fatalf("at the end: %v, want %v", v, want)
	}
	if b.held != 0 || len(b.chunks) != 0 {
		t.Errorf("still holds %d bytes in %d chunks", b.held, len(b.chunks))
	}
}

func TestResultBufferRestart(t *testing.T) {
	b := newResultBuffer(0)
	var c client
	a0 := newSinkStream(t, b, 0)
	must(t, a0.rows(1))
	must(t, a0.barrier(1))
	must(t, a0.rows(2))
	must(t, a0.barrier(2))
	must(t, a0.rows(3))
	b.complete(1)
	c.take(b, false)
	// Checkpoint 2 completed, but the job manager learned of it only from
	// the restart: the new attempt resumes from it.
	must(t, b.restart(1, 2))
	if err := a0.rows(99); !errors.Is(err, errStaleAttempt) {
		t.Fatalf("a chunk of the failed attempt was accepted: %v", err)
	}
	a1 := newSinkStream(t, b, 1)
	must(t, a1.rows(3, 4)) // its own schema comes first and is stripped
	must(t, a1.barrier(5))
	must(t, a1.rows(6))
	must(t, a1.end())
	c.take(b, true)
	if v, want := c.values(t), []int64{1, 2, 3, 4, 6}; !reflect.DeepEqual(v, want) {
		t.Fatalf("got %v, want %v", v, want)
	}
}

func TestResultBufferRestartFromScratch(t *testing.T) {
	b := newResultBuffer(0)
	var c client
	a0 := newSinkStream(t, b, 0)
	must(t, a0.rows(1))
	must(t, a0.barrier(1)) // never completes
	must(t, a0.rows(2))
	must(t, b.restart(1, 0))
	c.take(b, false)
	if c.got.Len() != 0 {
		t.Fatal("released rows of a failed attempt that no checkpoint covers")
	}
	a1 := newSinkStream(t, b, 1)
	must(t, a1.rows(1))
	must(t, a1.rows(2))
	must(t, a1.end())
	c.take(b, true)
	if v, want := c.values(t), []int64{1, 2}; !reflect.DeepEqual(v, want) {
		t.Fatalf("got %v, want %v", v, want)
	}
	// A restart behind what was released cannot keep the guarantee.
	b2 := newResultBuffer(0)
	s := newSinkStream(t, b2, 0)
	must(t, s.rows(1))
	must(t, s.barrier(3))
	b2.complete(3)
	if err := b2.restart(1, 2); err == nil {
		t.Error("restart from checkpoint 2 accepted after checkpoint 3's rows were released")
	}
}

func TestResultBufferLimit(t *testing.T) {
	b := newResultBuffer(1000)
	s := newSinkStream(t, b, 0)
	vals := make([]int64, 100)
	must(t, s.rows(vals...)) // about 800 bytes
	err := s.rows(vals...)
	if err == nil || !strings.Contains(err.Error(), "execution.checkpointing.interval") {
		t.Fatalf("over the limit: %v", err)
	}
	// Released bytes no longer count.
	b = newResultBuffer(1000)
	s = newSinkStream(t, b, 0)
	must(t, s.rows(vals...))
	must(t, s.barrier(1))
	b.complete(1)
	b.take(false)
	must(t, s.rows(vals...))
}

func TestSplitSchema(t *testing.T) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(testResultSchema))
	must(t, w.Close()) // schema and end-of-stream
	schema, rest, err := splitSchema(buf.Bytes())
	must(t, err)
	if len(schema) == 0 || len(rest) != 8 {
		t.Fatalf("schema %d bytes, rest %d bytes (want the 8-byte end-of-stream marker)", len(schema), len(rest))
	}
	if _, _, err := splitSchema(rest); err == nil {
		t.Error("an end-of-stream marker split as a schema")
	}
	if _, _, err := splitSchema([]byte{1, 2}); err == nil {
		t.Error("garbage split as a schema")
	}
}
