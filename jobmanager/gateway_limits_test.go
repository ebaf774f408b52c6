package jobmanager_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/internal/msgsize"
	"github.com/braidflow/braid/jobmanager"
	"github.com/braidflow/braid/localcluster"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/sql/parser"
)

func startLimitedCluster(t *testing.T, limits jobmanager.Limits) (*localcluster.Cluster, *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		cl.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		cl.Close()
	})
	return cl, c
}

// clientFrom is a raw client of the job manager at addr whose connections
// come from the loopback address local, a second client host.
func clientFrom(t *testing.T, addr, local string) braidv1.ClientServiceClient {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return braidv1.NewClientServiceClient(conn)
}

func wantExhausted(t *testing.T, what string, err error, says ...string) {
	t.Helper()
	var se *client.ServerError
	code := status.Code(err)
	if errors.As(err, &se) {
		code = se.Code
	}
	if code != codes.ResourceExhausted {
		t.Fatalf("%s: %v (code %s), want ResourceExhausted", what, err, code)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not say %q", what, err, s)
		}
	}
}

// TestSessionLimits: the cluster-wide cap (sql-gateway.session.max-num)
// and the per-client cap refuse a session with ResourceExhausted naming
// the limit and its value, closing a session makes room, and a session's
// options are capped in number and bytes.
func TestSessionLimits(t *testing.T) {
	cl, c := startLimitedCluster(t, jobmanager.Limits{SessionMaxNum: 3, SessionsPerClient: 2, SessionMaxOptions: 3, SessionMaxBytes: 200})
	ctx := context.Background()
	s1 := openSession(t, c)
	openSession(t, c)
	_, err := c.OpenSession(ctx, nil)
	wantExhausted(t, "a third session of one client", err, "client host 127.0.0.1 has 2 open sessions", "--sessions-per-client = 2")

	other := clientFrom(t, cl.Endpoint(), "127.0.0.2")
	o1, err := other.OpenSession(ctx, &braidv1.OpenSessionRequest{})
	if err != nil {
		t.Fatalf("another client's first session: %v", err)
	}
	_, err = other.OpenSession(ctx, &braidv1.OpenSessionRequest{})
	wantExhausted(t, "a fourth session in the cluster", err, "3 open sessions", "sql-gateway.session.max-num = 3")
	if _, err := other.CloseSession(ctx, &braidv1.CloseSessionRequest{SessionId: o1.SessionId}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.OpenSession(ctx, &braidv1.OpenSessionRequest{}); err != nil {
		t.Fatalf("a session after one closed: %v", err)
	}

	// Options: table.local-time-zone is one of the three.
	run(t, s1, "SET 'parallelism.default' = '1';")
	run(t, s1, "SET 'parallelism.default' = '2';") // replacing counts once
	wantExhausted(t, "a long option", execErr(t, s1, "SET 'execution.savepoint.path' = '/"+strings.Repeat("x", 200)+"';"), "over the limit of 200 bytes per session")
	run(t, s1, "SET 'table.exec.state.ttl' = '1 h';")
	wantExhausted(t, "a fourth option", execErr(t, s1, "SET 'pipeline.max-parallelism' = '64';"), "4 options", "limit of 3 per session")
	_, err = other.OpenSession(ctx, &braidv1.OpenSessionRequest{Properties: map[string]string{"parallelism.default": "1", "pipeline.max-parallelism": "4", "table.exec.state.ttl": "1 h"}})
	wantExhausted(t, "OpenSession with too many properties", err, "limit of 3 per session")
	equal(t, "the session after the refusals", run(t, s1, "SET;").rows,
		[]string{"+I[parallelism.default, 2]", "+I[table.exec.state.ttl, 1 h]", "+I[table.local-time-zone, UTC]"})
}

// TestSessionMaxTemporary: a session holds at most SessionMaxTemporary
// temporary tables and views; dropping one makes room.
func TestSessionMaxTemporary(t *testing.T) {
	_, c := startLimitedCluster(t, jobmanager.Limits{SessionMaxTemporary: 2})
	s := openSession(t, c)
	run(t, s, "CREATE TEMPORARY TABLE t1 (a INT) WITH ('connector' = 'blackhole');")
	run(t, s, "CREATE TEMPORARY VIEW v1 AS SELECT 1 AS a;")
	wantExhausted(t, "a third temporary table", execErr(t, s, "CREATE TEMPORARY TABLE t2 (a INT) WITH ('connector' = 'blackhole');"),
		"line 1, column 24", "2 temporary tables and views", "--session-max-temporary = 2")
	wantExhausted(t, "a third temporary view", execErr(t, s, "CREATE TEMPORARY VIEW v2 AS SELECT 1 AS a;"), "--session-max-temporary = 2")
	run(t, s, "CREATE TABLE p (a INT) WITH ('connector' = 'blackhole');") // permanent tables do not count
	run(t, s, "DROP TEMPORARY VIEW v1;")
	run(t, s, "CREATE TEMPORARY VIEW v2 AS SELECT 1 AS a;")
}

// TestSessionIdleTimeout: a session without statements for longer than
// sql-gateway.session.idle-timeout is closed, and its next Execute says
// it expired; a session whose statement runs meanwhile is not idle; an
// expired session no longer counts against its client.
func TestSessionIdleTimeout(t *testing.T) {
	_, c := startLimitedCluster(t, jobmanager.Limits{SessionIdleTimeout: 300 * time.Millisecond, SessionCheckInterval: 20 * time.Millisecond, SessionsPerClient: 2})
	idle := openSession(t, c)
	busy := openSession(t, c)
	// About a second of rows: busy runs a statement through several checks
	// past the idle timeout.
	r := run(t, busy, "CREATE TEMPORARY TABLE slow (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5', 'number-of-rows' = '5');"+
		"SELECT COUNT(*) FROM slow;")
	equal(t, "the busy session's count", r.rows[len(r.rows)-1:], []string{"+U[5]"})
	run(t, busy, "SELECT 1;")
	err := execErr(t, idle, "SELECT 1;")
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != codes.NotFound || !strings.Contains(err.Error(), "expired") ||
		!strings.Contains(err.Error(), "sql-gateway.session.idle-timeout (300ms)") {
		t.Fatalf("Execute on an idle session: %v", err)
	}
	// The expired session made room for another of this client.
	openSession(t, c)
}

// TestScriptTooLarge: a script over the parser's 1 MiB is refused before
// it is parsed, with the limit in the message.
func TestScriptTooLarge(t *testing.T) {
	_, c := startLimitedCluster(t, jobmanager.Limits{})
	s := openSession(t, c)
	err := execErr(t, s, "SELECT 1;"+strings.Repeat(" ", parser.MaxScriptBytes))
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != codes.InvalidArgument || !strings.Contains(err.Error(), "over the limit of 1048576 bytes (1 MiB) per Execute") {
		t.Fatalf("a 1 MiB script: %v", err)
	}
	run(t, s, "SELECT 1;")
}

// TestPlannerTimeout: planning that takes longer than the planner timeout
// fails with DeadlineExceeded naming braid.planner.timeout.
func TestPlannerTimeout(t *testing.T) {
	_, c := startLimitedCluster(t, jobmanager.Limits{PlannerTimeout: time.Nanosecond})
	s := openSession(t, c)
	err := execErr(t, s, "SELECT 1;")
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != codes.DeadlineExceeded || !strings.Contains(err.Error(), "braid.planner.timeout (1ns)") {
		t.Fatalf("planning past the timeout: %v", err)
	}
	run(t, s, "SET 'parallelism.default' = '1';") // no planning, no timeout
}

// TestSessionSlotRequestTimeout: a session's slot.request.timeout bounds
// how long its job waits for slots; the error names the job and the
// slots.
func TestSessionSlotRequestTimeout(t *testing.T) {
	_, c := startLimitedCluster(t, jobmanager.Limits{})
	s := openSession(t, c)
	run(t, s, "SET 'slot.request.timeout' = '200 ms'; SET 'parallelism.default' = '8';")
	err := execErr(t, s, "CREATE TEMPORARY TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10'); SELECT k, COUNT(*) FROM g GROUP BY k;")
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != codes.ResourceExhausted || !strings.Contains(err.Error(), "the 8 slots it needs within slot.request.timeout (200ms): 4 of 4 slots are free") {
		t.Fatalf("a job of 8 slots on 4: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "job ") {
		t.Errorf("error %q does not start with the job id", err)
	}
}

// TestMessageTooLarge: a request over the control plane's message limit
// (msgsize.Control, 64 MiB) fails with ResourceExhausted, and the job
// manager goes on serving the same connection.
func TestMessageTooLarge(t *testing.T) {
	cl, c := startLimitedCluster(t, jobmanager.Limits{})
	raw := clientFrom(t, cl.Endpoint(), "127.0.0.1")
	ctx := context.Background()
	s, err := raw.OpenSession(ctx, &braidv1.OpenSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := raw.Execute(ctx, &braidv1.ExecuteRequest{SessionId: s.SessionId, Script: strings.Repeat(" ", msgsize.Control+1)})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a request of 64 MiB and a byte: %v", err)
	}
	if _, err := raw.CloseSession(ctx, &braidv1.CloseSessionRequest{SessionId: s.SessionId}); err != nil {
		t.Fatalf("the connection after the refusal: %v", err)
	}
	run(t, openSession(t, c), "SELECT 1;")
}
