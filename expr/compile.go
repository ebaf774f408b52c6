package expr

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/types"
)

// Env is the session context of evaluation.
type Env struct {
	// Location is the session time zone (table.local-time-zone); nil is UTC.
	Location *time.Location
	// Now returns the current time; nil is time.Now. CURRENT_TIMESTAMP and
	// friends read it once per batch.
	Now func() time.Time
	// MaxStringBytes limits the length in bytes of each string or binary
	// value a function computes (REPLACE, CONCAT, CAST to CHAR(n), ...);
	// one over it fails the evaluation. 0 or less means
	// DefaultMaxStringBytes. Constant folding in Compile applies it too.
	MaxStringBytes int
	// Watermark returns the current watermark where the expression runs,
	// in milliseconds, and false when there is none yet; nil is none.
	// CURRENT_WATERMARK reads it once per batch.
	Watermark func() (int64, bool)
}

func (e *Env) watermark() (int64, bool) {
	if e == nil || e.Watermark == nil {
		return 0, false
	}
	return e.Watermark()
}

func (e *Env) loc() *time.Location {
	if e == nil || e.Location == nil {
		return time.UTC
	}
	return e.Location
}

func (e *Env) now() time.Time {
	if e == nil || e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// evalCtx is the state of one evaluation over one batch.
type evalCtx struct {
	b   types.Batch
	n   int
	loc *time.Location
	env *Env
	now time.Time
	// active marks the rows whose values matter (nil: all). Kernels that can
	// fail (division, casts) only fail on active rows, so that
	// CASE WHEN b <> 0 THEN a / b END is safe.
	active []bool
}

func (ec *evalCtx) isActive(i int) bool { return ec.active == nil || ec.active[i] }

type node interface {
	eval(ec *evalCtx) (*vec, error)
}

type kernel func(ec *evalCtx, args []*vec) (*vec, error)

type colNode struct {
	idx int
	t   types.DataType
}

func (c *colNode) eval(ec *evalCtx) (*vec, error) {
	if c.idx < 0 || c.idx >= ec.b.NumCols() {
		return nil, fmt.Errorf("expr: column $%d out of range (batch has %d columns)", c.idx, ec.b.NumCols())
	}
	return fromArrow(ec.b.Column(c.idx), c.t)
}

type litNode struct {
	one    *vec
	cached *vec
}

func (l *litNode) eval(ec *evalCtx) (*vec, error) {
	if l.cached == nil || l.cached.n < ec.n {
		l.cached = broadcast(l.one, max(ec.n, 16))
	}
	if l.cached.n == ec.n {
		return l.cached, nil
	}
	c := *l.cached
	c.n = ec.n
	if c.valid != nil {
		c.valid = c.valid[:ec.n]
	}
	switch {
	case c.b != nil:
		c.b = c.b[:ec.n]
	case c.i64 != nil:
		c.i64 = c.i64[:ec.n]
	case c.f64 != nil:
		c.f64 = c.f64[:ec.n]
	case c.dec != nil:
		c.dec = c.dec[:ec.n]
	case c.str != nil:
		c.str = c.str[:ec.n]
	case c.bin != nil:
		c.bin = c.bin[:ec.n]
	}
	return &c, nil
}

// callNode evaluates its arguments eagerly, then applies a kernel.
type callNode struct {
	args []node
	fn   kernel
}

func (c *callNode) eval(ec *evalCtx) (*vec, error) {
	vs := make([]*vec, len(c.args))
	for i, a := range c.args {
		v, err := a.eval(ec)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return c.fn(ec, vs)
}

// Evaluator computes one expression over batches. It is not safe for
// concurrent use (literal broadcasts are cached in it).
type Evaluator struct {
	root node
	t    types.DataType
	env  *Env
	// col >= 0 when the expression is a bare column: Eval then returns the
	// input column itself (with a new reference).
	col int
}

// Compile prepares e for evaluation. Literal-only subtrees without side
// effects are folded. env may be nil (UTC, wall clock).
func Compile(e *Expr, env *Env) (*Evaluator, error) {
	if env == nil {
		env = &Env{}
	}
	n, err := compileNode(e, env)
	if err != nil {
		return nil, err
	}
	ev := &Evaluator{root: n, t: e.Type, env: env, col: -1}
	if e.Op == OpColumn {
		ev.col = e.Col
	}
	return ev, nil
}

// Type returns the SQL type of the values Eval produces.
func (ev *Evaluator) Type() types.DataType { return ev.t }

// Eval computes the expression for every row of b and returns a new array
// of b.NumRows() rows in Type's Arrow layout; the caller releases it. b is
// borrowed. Errors are runtime failures (a bad CAST, division by zero, a
// string over Env.MaxStringBytes) that name the function and the value.
func (ev *Evaluator) Eval(b types.Batch) (arrow.Array, error) {
	if ev.col >= 0 && ev.col < b.NumCols() {
		c := b.Column(ev.col)
		c.Retain()
		return c, nil
	}
	v, err := ev.evalVec(b)
	if err != nil {
		return nil, err
	}
	return v.toArrow(ev.t)
}

func (ev *Evaluator) evalVec(b types.Batch) (*vec, error) {
	ec := &evalCtx{b: b, n: b.NumRows(), loc: ev.env.loc(), env: ev.env, now: ev.env.now()}
	return ev.root.eval(ec)
}

// Filter selects the rows of a batch where a BOOLEAN predicate is TRUE.
type Filter struct {
	ev *Evaluator
}

// CompileFilter prepares the BOOLEAN predicate e.
func CompileFilter(e *Expr, env *Env) (*Filter, error) {
	if e.Type.Kind != types.KindBoolean && e.Type.Kind != types.KindNull {
		return nil, userErrorf("filter condition must be BOOLEAN, got %v", e.Type)
	}
	ev, err := Compile(e, env)
	if err != nil {
		return nil, err
	}
	ev.col = -1
	return &Filter{ev: ev}, nil
}

// Select returns the indices of the rows of b where the predicate is TRUE
// (NULL counts as false), in ascending order. It appends to sel[:0], so a
// caller may pass the previous result back to reuse its storage.
func (f *Filter) Select(b types.Batch, sel []int32) ([]int32, error) {
	sel = sel[:0]
	v, err := f.ev.evalVec(b)
	if err != nil {
		return nil, err
	}
	if v.b == nil {
		return sel, nil
	}
	if v.valid == nil {
		for i, ok := range v.b[:v.n] {
			if ok {
				sel = append(sel, int32(i))
			}
		}
		return sel, nil
	}
	for i, ok := range v.b[:v.n] {
		if ok && v.valid[i] {
			sel = append(sel, int32(i))
		}
	}
	return sel, nil
}

func compileNode(e *Expr, env *Env) (node, error) {
	switch e.Op {
	case OpColumn:
		if classOf(e.Type) == clsNull && e.Type.Kind != types.KindNull {
			return nil, fmt.Errorf("expr: bad column type %v", e.Type)
		}
		return &colNode{idx: e.Col, t: e.Type}, nil
	case OpLiteral:
		v, err := normalizeValue(e.Value, e.Type)
		if err != nil {
			return nil, fmt.Errorf("expr: %w", err)
		}
		return &litNode{one: literalVec(v, e.Type)}, nil
	case OpCall:
	default:
		return nil, fmt.Errorf("expr: unknown node kind %q", e.Op)
	}
	args := make([]node, len(e.Args))
	constant := !isVolatile(e.Func)
	for i, a := range e.Args {
		n, err := compileNode(a, env)
		if err != nil {
			return nil, err
		}
		args[i] = n
		if _, ok := n.(*litNode); !ok {
			constant = false
		}
	}
	n, err := buildCall(e, args)
	if err != nil {
		return nil, err
	}
	if constant {
		// Fold: evaluate once on a one-row batch. A failure (1/0) is left
		// to happen at run time, where it fails the job as Flink does.
		ec := &evalCtx{n: 1, loc: env.loc(), env: env, now: env.now()}
		if v, err := n.eval(ec); err == nil {
			one := *v
			one.borrowed = true
			return &litNode{one: &one}, nil
		}
	}
	return n, nil
}
