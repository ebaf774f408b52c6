package jobmanager

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// DefaultResultBufferBytes is Config.ResultBufferBytes's default.
const DefaultResultBufferBytes = 64 << 20

// errStaleAttempt refuses a result chunk of a superseded job attempt.
var errStaleAttempt = errors.New("result chunk of a superseded job attempt")

// resultBuffer holds back the result stream of a SELECT whose job takes
// checkpoints, so the client sees each change exactly once although the job
// may restart from a checkpoint and replay what came after it.
//
// The collect sink marks each checkpoint's barrier in its stream. Bytes up
// to a barrier become ready when that checkpoint completes (or when the job
// restarts from it); the bytes after the last such barrier are pending, and
// a restart drops them, because the new attempt produces them again. Every
// attempt's sink opens a new Arrow IPC stream, whose first message is the
// schema: the buffer strips it from every stream and hands it out once,
// ahead of the first bytes released, so the client reads one IPC stream.
//
// It is a plain value: the Job guards it with a mutex and calls the result
// handler with what take returns, outside that mutex.
type resultBuffer struct {
	limit   int64 // most bytes held; accept fails beyond it
	attempt int32 // chunks of other attempts are refused

	schema    []byte // the IPC schema message, once a stream sent it
	schemaOut bool   // take has handed out the schema

	chunks    []heldChunk // in arrival order
	held      int64       // bytes in chunks
	ready     int         // chunks[:ready] may be handed out
	completed int64       // highest completed checkpoint id
	released  int64       // highest barrier in chunks[:ready] or handed out
	ended     bool        // the current attempt's sink sent its end
}

// heldChunk is part of the IPC stream (data) or a barrier mark (barrier > 0).
type heldChunk struct {
	data    []byte
	barrier int64
}

func newResultBuffer(limit int64) *resultBuffer {
	if limit <= 0 {
		limit = DefaultResultBufferBytes
	}
	return &resultBuffer{limit: limit}
}

// accept takes one chunk of attempt's stream; first says no data chunk of
// that stream came before (its data starts with the schema message). It
// copies data. It fails with errStaleAttempt for another attempt's chunk,
// and when the buffer would hold more than its limit.
func (b *resultBuffer) accept(attempt int32, data []byte, barrier int64, end, first bool) error {
	if attempt != b.attempt {
		return errStaleAttempt
	}
	if first && len(data) > 0 {
		schema, rest, err := splitSchema(data)
		if err != nil {
			return err
		}
		// NB: every attempt runs the same plan, so its schema is the one
		// the client already has.
		if b.schema == nil {
			b.schema = bytes.Clone(schema)
		}
		data = rest
	}
	if len(data) > 0 {
		if b.held+int64(len(data)) > b.limit {
			return fmt.Errorf("more than %s of results wait for a checkpoint to complete; lower execution.checkpointing.interval (results reach the client only when the checkpoint after them completes)", byteSize(b.limit))
		}
		b.chunks = append(b.chunks, heldChunk{data: bytes.Clone(data)})
		b.held += int64(len(data))
	}
	if barrier > 0 {
		b.chunks = append(b.chunks, heldChunk{barrier: barrier})
		b.advance()
	}
	if end {
		b.ended = true
	}
	return nil
}

// complete records that checkpoint id completed. It reports whether bytes
// became ready.
func (b *resultBuffer) complete(id int64) bool {
	if id > b.completed {
		b.completed = id
	}
	before := b.ready
	b.advance()
	return b.ready > before
}

// advance makes ready every chunk up to the last barrier of a completed
// checkpoint. NB: barriers reach the sink in increasing order, and the last
// completed checkpoint covers every row before it, even before barriers of
// checkpoints that were aborted.
func (b *resultBuffer) advance() {
	for i := b.ready; i < len(b.chunks); i++ {
		if c := b.chunks[i]; c.barrier > 0 && c.barrier <= b.completed {
			b.ready = i + 1
			b.released = max(b.released, c.barrier)
		}
	}
}

// take removes and returns the ready bytes in order, the schema message
// ahead of the first; all held bytes when all is set (the job finished:
// nothing will be replayed). The returned slices are the caller's.
func (b *resultBuffer) take(all bool) [][]byte {
	n := b.ready
	if all {
		n = len(b.chunks)
	}
	var out [][]byte
	for _, c := range b.chunks[:n] {
		if len(c.data) == 0 {
			continue
		}
		if !b.schemaOut && b.schema != nil {
			out = append(out, b.schema)
			b.schemaOut = true
		}
		out = append(out, c.data)
		b.held -= int64(len(c.data))
	}
	b.chunks = append(b.chunks[:0:0], b.chunks[n:]...)
	b.ready -= min(n, b.ready)
	return out
}

// restart prepares for attempt, which resumes from checkpoint restoreID (0:
// from the start). The bytes up to restoreID's barrier become ready; the
// bytes after it are dropped, since attempt produces them again. It fails
// when bytes after restoreID's barrier were already released: the client
// would see them twice.
func (b *resultBuffer) restart(attempt int32, restoreID int64) error {
	if b.released > restoreID {
		return fmt.Errorf("results up to checkpoint %d were released to the client, but the job restarts from checkpoint %d", b.released, restoreID)
	}
	keep := 0
	for i, c := range b.chunks {
		if c.barrier > 0 && c.barrier <= restoreID {
			keep = i + 1
			b.released = max(b.released, c.barrier)
		}
	}
	for _, c := range b.chunks[keep:] {
		b.held -= int64(len(c.data))
	}
	b.chunks = b.chunks[:keep]
	b.ready = keep
	b.completed = max(b.completed, restoreID)
	b.attempt = attempt
	b.ended = false
	return nil
}

// splitSchema splits an IPC stream's first bytes into its first message,
// which must be the schema, and the rest.
func splitSchema(data []byte) (schema, rest []byte, err error) {
	r := bytes.NewReader(data)
	mr := ipc.NewMessageReader(r)
	defer mr.Release()
	msg, err := mr.Message()
	if err != nil {
		return nil, nil, fmt.Errorf("result stream: read its first message: %w", err)
	}
	if msg.Type() != ipc.MessageSchema {
		return nil, nil, fmt.Errorf("result stream: first message is a %s, not the schema", msg.Type())
	}
	// NB: the message reader reads exactly one message, no further.
	n := len(data) - r.Len()
	return data[:n], data[n:], nil
}

func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
