package connectors

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/braidflow/braid/internal/mysqltest"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(stopMySQL{m})
}

// stopMySQL runs the tests, then stops the in-process MySQL server.
type stopMySQL struct{ m *testing.M }

func (s stopMySQL) Run() int {
	code := s.m.Run()
	mysqltest.Stop()
	return code
}

// testSchema is BIGINT, STRING, DOUBLE.
var testSchema = types.Schema{
	{Name: "id", Type: types.BigInt},
	{Name: "name", Type: types.String},
	{Name: "score", Type: types.Double},
}

// testBatch builds a batch of testSchema with ids from..to-1, the given kind
// for every row, and a NULL name on every third row.
func testBatch(from, to int, kind types.RowKind) types.Batch {
	n := to - from
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	db := array.NewFloat64Builder(memory.DefaultAllocator)
	defer ib.Release()
	defer sb.Release()
	defer db.Release()
	kinds := make([]int8, n)
	for i := from; i < to; i++ {
		ib.Append(int64(i))
		if i%3 == 0 {
			sb.AppendNull()
		} else {
			sb.Append("n" + strings.Repeat("x", i%5))
		}
		db.Append(float64(i) / 2)
		kinds[i-from] = int8(kind)
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), db.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return types.NewBatch(testSchema.ArrowSchema(), cols, kinds)
}

// collector keeps what is emitted to it, as formatted rows.
type collector struct {
	schema types.Schema
	mu     sync.Mutex
	rows   []string
	sizes  []int
	notify chan struct{}
}

func newCollector(s types.Schema) *collector {
	return &collector{schema: s, notify: make(chan struct{}, 1)}
}

func (c *collector) Emit(b types.Batch) error {
	out := string(appendRows(nil, "", c.schema, b, time.UTC))
	c.mu.Lock()
	c.rows = append(c.rows, strings.Split(strings.TrimSuffix(out, "\n"), "\n")...)
	c.sizes = append(c.sizes, b.NumRows())
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil
}

func (c *collector) Rows() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.rows...)
}

func (c *collector) waitRows(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if r := c.Rows(); len(r) >= n {
			return r
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("timed out waiting for %d rows, have %d", n, len(c.Rows()))
		}
	}
}

// formatted returns the rows of batches as the print sink formats them.
func formatted(bs ...types.Batch) []string {
	var out []string
	for _, b := range bs {
		s := string(appendRows(nil, "", testSchema, b, time.UTC))
		out = append(out, strings.Split(strings.TrimSuffix(s, "\n"), "\n")...)
	}
	return out
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// runSource opens src as subtask sub of par and runs it to the end.
func runSource(t *testing.T, ctx context.Context, src operators.Source, octx *operators.Context, out operators.Collector) error {
	t.Helper()
	if err := src.Open(octx); err != nil {
		t.Fatalf("open: %v", err)
	}
	defer src.Close()
	return src.Run(ctx, out)
}
