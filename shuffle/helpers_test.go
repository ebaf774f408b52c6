package shuffle

import (
	"fmt"
	"net"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testSchema = types.Schema{
	{Name: "k", Type: types.BigInt},
	{Name: "v", Type: types.BigInt},
	{Name: "s", Type: types.String},
}

// makeBatch builds n rows (k, v, s) with v = base+i, k = v mod keys and a
// 16-character s; every seventh s is NULL when withNulls is set.
func makeBatch(base, n, keys int, withNulls bool) types.Batch {
	mem := memory.DefaultAllocator
	kb, vb, sb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	defer kb.Release()
	defer vb.Release()
	defer sb.Release()
	kb.Reserve(n)
	vb.Reserve(n)
	sb.Reserve(n)
	sb.ReserveData(16 * n)
	for i := 0; i < n; i++ {
		v := base + i
		kb.UnsafeAppend(int64(v % keys))
		vb.UnsafeAppend(int64(v))
		if withNulls && v%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("row-%011d", v))
		}
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), sb.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return types.NewInsertBatch(testSchema.ArrowSchema(), cols, n)
}

// startTM serves an Exchange on a loopback port, as one task manager.
func startTM(t testing.TB) (*Exchange, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExchange(ExchangeOptions{})
	srv := grpc.NewServer(ServerOptions()...)
	braidv1.RegisterDataServiceServer(srv, x)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	t.Cleanup(func() {
		_ = x.Close()
		srv.Stop()
		<-done
	})
	return x, lis.Addr().String()
}
