package taskmanager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/operators"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// resultWriter streams a collect sink's batches to the job manager as one
// Arrow IPC stream cut into ResultChunks. The stream opens on the first
// Write; the first chunk carries the schema. Close ends the IPC stream and
// sends end=true, then waits for the job manager's acknowledgement, so the
// rows are delivered before the subtask reports FINISHED. Checkpoint sends
// a chunk that marks a barrier. Every chunk names the job attempt, so the
// job manager drops what a superseded attempt still sends.
type resultWriter struct {
	ctx     context.Context
	client  braidv1.ClusterServiceClient
	jobID   string
	subtask int32
	attempt int32
	// token is the job's result token from the deploy request, which the
	// job manager checks before it takes any chunk.
	token string

	mu     sync.Mutex
	stream grpc.ClientStreamingClient[braidv1.ResultChunk, braidv1.PushResultsAck]
	buf    bytes.Buffer // reused for every chunk
	w      *ipc.Writer
	closed bool
}

var _ operators.ResultWriter = (*resultWriter)(nil)

func (r *resultWriter) open() error {
	if r.stream != nil {
		return nil
	}
	s, err := r.client.PushResults(metadata.AppendToOutgoingContext(r.ctx, memberauth.ResultTokenHeader, r.token))
	if err != nil {
		return fmt.Errorf("taskmanager: open the result stream to the job manager: %w", err)
	}
	r.stream = s
	return nil
}

// Write encodes b and sends it. It borrows b.
func (r *resultWriter) Write(b types.Batch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("taskmanager: write to a closed result writer")
	}
	if err := r.open(); err != nil {
		return err
	}
	if r.w == nil {
		r.w = ipc.NewWriter(&r.buf, ipc.WithSchema(b.Rec.Schema()))
	}
	r.buf.Reset()
	if err := r.w.Write(b.Rec); err != nil {
		return fmt.Errorf("taskmanager: encode result batch: %w", err)
	}
	return r.send(&braidv1.ResultChunk{ArrowIpc: r.buf.Bytes()})
}

// Checkpoint marks checkpoint id's barrier in the stream. Before the first
// Write there is nothing to mark: the stream is not opened for it.
func (r *resultWriter) Checkpoint(id int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.stream == nil {
		return nil
	}
	return r.send(&braidv1.ResultChunk{CheckpointId: id})
}

// send ships c, naming the job, subtask and attempt. NB: gRPC serializes
// the message inside Send, so buf may be reused as soon as Send returns.
func (r *resultWriter) send(c *braidv1.ResultChunk) error {
	c.JobId, c.Subtask, c.Attempt = r.jobID, r.subtask, r.attempt
	err := r.stream.Send(c)
	if err != nil {
		// The real cause arrives with CloseAndRecv.
		if _, rerr := r.stream.CloseAndRecv(); rerr != nil {
			err = rerr
		}
		return fmt.Errorf("taskmanager: send results to the job manager: %w", err)
	}
	return nil
}

// Detach ends the stream to the job manager without ending the results, as
// a sink stopped at a savepoint does (its results are complete up to the
// savepoint's barrier; the job manager ends the client's result when the
// job finishes). It waits for the job manager's acknowledgement, so every
// chunk sent was taken before the subtask reports FINISHED. It does nothing
// after Close or when nothing was sent; later Writes fail.
func (r *resultWriter) Detach() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.stream == nil {
		return nil
	}
	if _, err := r.stream.CloseAndRecv(); err != nil {
		return fmt.Errorf("taskmanager: results not acknowledged by the job manager: %w", err)
	}
	return nil
}

// release gives up a stream the sink did not end (the subtask failed or
// was canceled), without waiting for the job manager.
func (r *resultWriter) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil && !r.closed {
		r.stream.CloseSend()
	}
	r.closed = true
}

// Close ends the result stream. It is idempotent.
func (r *resultWriter) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if err := r.open(); err != nil {
		return err
	}
	r.buf.Reset()
	if r.w != nil {
		if err := r.w.Close(); err != nil {
			return fmt.Errorf("taskmanager: end the result stream: %w", err)
		}
	}
	if err := r.send(&braidv1.ResultChunk{ArrowIpc: r.buf.Bytes(), End: true}); err != nil {
		return err
	}
	if _, err := r.stream.CloseAndRecv(); err != nil {
		return fmt.Errorf("taskmanager: results not acknowledged by the job manager: %w", err)
	}
	return nil
}
