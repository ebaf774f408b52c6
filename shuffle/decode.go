package shuffle

import (
	"fmt"
	"io"
	"runtime/debug"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

// decoder turns the Arrow IPC bytes of one remote channel back into
// batches. Every DataMessage holds whole IPC messages (the sender flushes
// only after complete writes), the first one starting with the schema.
//
// The bytes come from another process, and arrow-go's reader trusts them:
// it sizes slices by the counts and lengths a message claims and follows
// its offsets, so a few hundred crafted bytes can make it allocate
// gigabytes or recurse without end. So the decoder cuts the messages
// itself and checks each one against what Braid's own encoder writes
// (ipccheck.go) before arrow-go reads it, then hands it over whole
// (ipcMessages): the arrays of a decoded batch are slices of the received
// bytes, and decoding allocates nothing in proportion to what a message
// claims, only to the number of columns (at most maxSchemaFields).
type decoder struct {
	msgs  ipcMessages
	alloc budgetAllocator
	rdr   *ipc.Reader
	cols  []ipcColumn // the channel's columns, once its schema came
}

// feed decodes p, the arrow_ipc payload of one DataMessage, and hands each
// batch to emit, which owns it unless it fails. Input Braid would not have
// sent fails with a *badStreamError; emit's errors are returned unchanged.
func (d *decoder) feed(p []byte, emit func(types.Batch) error) error {
	if len(p) > maxMessage {
		return badStreamf("Arrow IPC payload of %d bytes (limit %d)", len(p), maxMessage)
	}
	// NB: the decoded arrays point into p, and arrow-go reads their values
	// through unsafe casts that want them aligned. The checks make every
	// buffer start a multiple of 8 bytes into p; gRPC's slices start
	// 8-byte aligned, other callers' (a fuzzer's) need not.
	if uintptr(unsafe.Pointer(unsafe.SliceData(p)))%8 != 0 {
		p = alignedCopy(p)
	}
	for at := 0; at < len(p); {
		b, n, err := d.decode(p[at:])
		if err != nil {
			return badStreamf("Arrow IPC message at byte %d of %d: %w", at, len(p), err)
		}
		at += n
		if b.Rec == nil {
			continue // the schema
		}
		if err := emit(b); err != nil {
			b.Release()
			return err
		}
	}
	return nil
}

// alignedCopy copies p into an 8-byte aligned buffer.
func alignedCopy(p []byte) []byte {
	words := make([]uint64, (len(p)+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(p))
	copy(b, p)
	return b
}

// decode decodes the first IPC message of p, n bytes long: the channel's
// schema (b is then empty), or one record batch after it.
func (d *decoder) decode(p []byte) (b types.Batch, n int, err error) {
	// NB: the checks should leave arrow-go (and themselves) nothing to
	// panic on; should one be missed, the panic fails this stream, not the
	// task manager.
	defer func() {
		if r := recover(); r != nil {
			b, err = types.Batch{}, &uncheckedError{err: fmt.Errorf("decoding panicked: %v", r), stack: debug.Stack()}
		}
	}()
	m, rest, err := cutIPCMessage(p)
	if err != nil {
		return b, 0, err
	}
	n = len(p) - len(rest)
	if d.rdr == nil {
		return b, n, d.readSchema(m)
	}
	if err := checkIPCRecordBatch(m, d.cols); err != nil {
		return b, 0, err
	}
	d.msgs.put(m, &d.alloc)
	if !d.rdr.Next() {
		err := d.rdr.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return b, 0, &uncheckedError{err: fmt.Errorf("decoding record batch: %w", err)}
	}
	rec := d.rdr.RecordBatch()
	rec.Retain()
	return types.Batch{Rec: rec}, n, nil
}

// readSchema starts the reader on the channel's schema message.
func (d *decoder) readSchema(m ipcMessage) error {
	if err := checkIPCSchema(m); err != nil {
		return err
	}
	d.msgs.put(m, &d.alloc)
	r, err := ipc.NewReaderFromMessageReader(&d.msgs, ipc.WithAllocator(&d.alloc))
	if err != nil {
		return &uncheckedError{err: fmt.Errorf("decoding schema: %w", err)}
	}
	cols, err := braidColumns(r.Schema())
	if err != nil {
		r.Release()
		return err
	}
	d.rdr, d.cols = r, cols
	return nil
}

func (d *decoder) release() {
	if d.rdr != nil {
		d.rdr.Release()
	}
}

// uncheckedError is a decoding failure that the checks should have
// prevented: arrow-go refused a message they let through, or decoding
// panicked (stack is then set). The stream fails as for any bad input;
// FuzzDecodeFrame reports it as a bug.
type uncheckedError struct {
	err   error
	stack []byte
}

func (e *uncheckedError) Error() string { return e.err.Error() }
func (e *uncheckedError) Unwrap() error { return e.err }

// ipcMessages is the ipc.MessageReader of a decoder: it holds the one
// checked message that the reader's next call takes.
type ipcMessages struct {
	next *ipc.Message
}

var _ ipc.MessageReader = (*ipcMessages)(nil)

// put queues m, whose bytes the decoded arrays will share, and gives the
// allocator a budget of m's size for decoding it.
func (q *ipcMessages) put(m ipcMessage, alloc *budgetAllocator) {
	q.next = ipc.NewMessage(memory.NewBufferBytes(m.meta), memory.NewBufferBytes(m.body))
	alloc.left = len(m.meta) + len(m.body)
}

// Message returns the queued message, io.EOF when there is none.
func (q *ipcMessages) Message() (*ipc.Message, error) {
	m := q.next
	if m == nil {
		return nil, io.EOF
	}
	q.next = nil
	return m, nil
}

func (q *ipcMessages) Retain()  {}
func (q *ipcMessages) Release() {}

// budgetAllocator is the allocator of a decoder's ipc.Reader. Decoding a
// checked message needs no allocation through it (arrays share the
// message's bytes; compression and dictionaries are refused), so it is a
// tripwire: should arrow-go allocate on a path the checks do not know, a
// message still cannot make it allocate more than the message's own size.
// Allocate panics beyond that budget; decode recovers.
//
// Allocate and Reallocate are called from the decoder's goroutine only;
// Free, from whichever goroutine releases a batch, touches no budget.
type budgetAllocator struct {
	left int // bytes the message being decoded may still allocate
}

var _ memory.Allocator = (*budgetAllocator)(nil)

func (a *budgetAllocator) take(n int) {
	if n > a.left {
		panic(fmt.Sprintf("shuffle: Arrow decoder asked for %d bytes, %d left for this message", n, a.left))
	}
	a.left -= n
}

func (a *budgetAllocator) Allocate(n int) []byte {
	a.take(n)
	return memory.DefaultAllocator.Allocate(n)
}

func (a *budgetAllocator) Reallocate(n int, b []byte) []byte {
	a.take(max(n-len(b), 0))
	return memory.DefaultAllocator.Reallocate(n, b)
}

func (a *budgetAllocator) Free(b []byte) { memory.DefaultAllocator.Free(b) }
