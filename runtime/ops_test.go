package runtime

import (
	"context"

	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// Test-only operator kinds.
const (
	kindSeq      = "runtime_test.seq"      // source of (k, v) rows
	kindIdentity = "runtime_test.identity" // passes batches through, checks contracts
	kindSink     = "runtime_test.sink"     // records what reaches it
)

var seqSchema = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}}

func init() {
	operators.RegisterSource(kindSeq, func(spec jobgraph.Spec) (operators.Source, error) {
		cfg, err := operators.SpecAs[*seqConfig](spec)
		if err != nil {
			return nil, err
		}
		return &seqSource{cfg: *cfg}, nil
	})
	operators.RegisterOperator(kindIdentity, func(spec jobgraph.Spec) (operators.Operator, error) {
		cfg, err := operators.SpecAs[*identityConfig](spec)
		if err != nil {
			return nil, err
		}
		return &identity{cfg: *cfg}, nil
	})
	operators.RegisterOperator(kindSink, func(spec jobgraph.Spec) (operators.Operator, error) {
		cfg, err := operators.SpecAs[*sinkConfig](spec)
		if err != nil {
			return nil, err
		}
		return &sink{cfg: *cfg}, nil
	})
}

type seqConfig struct {
	Rows    int  `json:"rows"` // per subtask
	Batch   int  `json:"batch"`
	Endless bool `json:"endless"`
}

var _ jobgraph.Spec = (*seqConfig)(nil)

func (*seqConfig) Kind() string    { return kindSeq }
func (*seqConfig) Inputs() int     { return 0 }
func (*seqConfig) Validate() error { return nil }

// seqSource emits v = subtask*Rows + i for i < Rows, with k = v mod 97, in
// batches; an endless one keeps going until cancelled.
type seqSource struct {
	cfg     seqConfig
	subtask int
}

func (s *seqSource) Open(ctx *operators.Context) error { s.subtask = ctx.Subtask; return nil }
func (s *seqSource) Close() error                      { return nil }

func (s *seqSource) Run(ctx context.Context, out operators.Collector) error {
	as := seqSchema.ArrowSchema()
	base := int64(s.subtask * s.cfg.Rows)
	for i := 0; s.cfg.Endless || i < s.cfg.Rows; i += s.cfg.Batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := s.cfg.Batch
		if !s.cfg.Endless && i+n > s.cfg.Rows {
			n = s.cfg.Rows - i
		}
		kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		for j := 0; j < n; j++ {
			v := base + int64(i+j)
			kb.Append(v % 97)
			vb.Append(v)
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
		kb.Release()
		vb.Release()
		b := types.NewInsertBatch(as, cols, n)
		cols[0].Release()
		cols[1].Release()
		err := out.Emit(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

type identityConfig struct {
	// CheckKeyGroups fails on a row whose column 0 hashes outside this
	// subtask's key groups.
	CheckKeyGroups bool `json:"check_key_groups"`
	// PanicAfter panics on that many-th batch when positive.
	PanicAfter int `json:"panic_after"`
}

var _ jobgraph.Spec = (*identityConfig)(nil)

func (*identityConfig) Kind() string    { return kindIdentity }
func (*identityConfig) Inputs() int     { return 1 }
func (*identityConfig) Validate() error { return nil }

type identity struct {
	cfg     identityConfig
	ctx     *operators.Context
	batches int
	ended   bool
}

func (op *identity) Open(ctx *operators.Context) error { op.ctx = ctx; return nil }
func (op *identity) Close() error                      { return nil }

func (op *identity) Process(input int, b types.Batch, out operators.Collector) error {
	if op.ended || input != 0 {
		return fmt.Errorf("identity: batch on input %d (ended %v)", input, op.ended)
	}
	op.batches++
	if op.cfg.PanicAfter > 0 && op.batches >= op.cfg.PanicAfter {
		panic("identity: injected panic")
	}
	if op.cfg.CheckKeyGroups {
		hs := make([]uint64, b.NumRows())
		types.HashColumns([]arrow.Array{b.Column(0)}, hs)
		for _, h := range hs {
			if kg := types.KeyGroupForHash(h, op.ctx.MaxParallelism); !op.ctx.KeyGroups.Contains(kg) {
				return fmt.Errorf("identity: key group %d outside %v", kg, op.ctx.KeyGroups)
			}
		}
	}
	return out.Emit(b)
}

func (op *identity) EndInput(input int, out operators.Collector) error {
	if op.ended || input != 0 {
		return fmt.Errorf("identity: EndInput(%d) twice or on a wrong input", input)
	}
	op.ended = true
	return nil
}

type sinkConfig struct {
	ID string `json:"id"`
}

var _ jobgraph.Spec = (*sinkConfig)(nil)

func (*sinkConfig) Kind() string    { return kindSink }
func (*sinkConfig) Inputs() int     { return 1 }
func (*sinkConfig) Validate() error { return nil }

// sinkState is what the sinks of one test saw.
type sinkState struct {
	mu     sync.Mutex
	rows   map[int64]int
	ends   int
	closed int
	errs   []error
}

var sinks sync.Map // id -> *sinkState

func newSinkState(id string) *sinkState {
	st := &sinkState{rows: map[int64]int{}}
	sinks.Store(id, st)
	return st
}

func (st *sinkState) count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.rows)
}

type sink struct {
	cfg   sinkConfig
	st    *sinkState
	ended bool
}

func (op *sink) Open(ctx *operators.Context) error {
	v, ok := sinks.Load(op.cfg.ID)
	if !ok {
		return errors.New("sink: unknown test id " + op.cfg.ID)
	}
	op.st = v.(*sinkState)
	return nil
}

func (op *sink) Process(input int, b types.Batch, out operators.Collector) error {
	op.st.mu.Lock()
	defer op.st.mu.Unlock()
	if op.ended {
		op.st.errs = append(op.st.errs, errors.New("sink: batch after end of input"))
	}
	vs := b.Column(1).(*array.Int64)
	for i := 0; i < vs.Len(); i++ {
		op.st.rows[vs.Value(i)]++
	}
	return nil
}

func (op *sink) EndInput(input int, out operators.Collector) error {
	op.st.mu.Lock()
	defer op.st.mu.Unlock()
	if op.ended {
		op.st.errs = append(op.st.errs, errors.New("sink: EndInput twice"))
	}
	op.ended = true
	op.st.ends++
	return nil
}

func (op *sink) Close() error {
	op.st.mu.Lock()
	defer op.st.mu.Unlock()
	op.st.closed++
	return nil
}
