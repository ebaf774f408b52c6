package jobmanager_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/jobmanager"
	"github.com/braidflow/braid/localcluster"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// The tokens of authCluster's principals.
const (
	aliceToken = "alice-admin-token-0001" // admin
	bobToken   = "bob-viewer-token-00001" // viewer
	carolToken = "carol-viewer-token-001" // viewer
)

// authCluster starts a local cluster whose clients authenticate with the
// tokens above (and cfg's JWT settings, when given).
func authCluster(t *testing.T, cfg clientauth.Config) *localcluster.Cluster {
	t.Helper()
	cfg.TokensFile = filepath.Join(t.TempDir(), "client-tokens")
	tokens := fmt.Sprintf("# token role principal\n%s admin alice\n%s viewer bob\n%s viewer carol\n", aliceToken, bobToken, carolToken)
	if err := os.WriteFile(cfg.TokensFile, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: t.TempDir(), TaskManagers: 2, Slots: 2, Clients: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// dialAs connects to cl with token ("" sends none).
func dialAs(t *testing.T, cl *localcluster.Cluster, token string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), cl.Endpoint(), client.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// code is the gRPC code of a client error.
func code(err error) codes.Code {
	var se *client.ServerError
	if errors.As(err, &se) {
		return se.Code
	}
	if err == nil {
		return codes.OK
	}
	return codes.Unknown
}

// TestClientsMustAuthenticate: without a token, or with one the job
// manager does not know, every ClientService call is Unauthenticated and
// the refusal names nothing of the cluster; the task managers (members)
// and the gRPC health service are not asked for a client token.
func TestClientsMustAuthenticate(t *testing.T) {
	cl := authCluster(t, clientauth.Config{})
	ctx := testCtx(t)
	if n := len(cl.JobManager().SlotsSnapshot()); n != 2 {
		t.Fatalf("%d task managers registered, want 2", n)
	}
	for name, tok := range map[string]string{"no token": "", "unknown token": "not-a-token-of-this-cluster"} {
		c := dialAs(t, cl, tok)
		_, err := c.ListJobs(ctx)
		if code(err) != codes.Unauthenticated || !strings.HasPrefix(err.Error(), "Unauthenticated: ") {
			t.Errorf("%s: ListJobs: %v, want Unauthenticated", name, err)
		}
		if _, err := c.DescribeJob(ctx, "0123456789abcdef"); code(err) != codes.Unauthenticated {
			t.Errorf("%s: DescribeJob: %v, want Unauthenticated", name, err)
		}
		if err := c.CancelJob(ctx, "0123456789abcdef"); code(err) != codes.Unauthenticated {
			t.Errorf("%s: CancelJob: %v, want Unauthenticated", name, err)
		}
		if _, err := c.OpenSession(ctx, nil); code(err) != codes.Unauthenticated {
			t.Errorf("%s: OpenSession: %v, want Unauthenticated", name, err)
		}
	}
	conn := dialWith(t, cl.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	// Execute is a stream: refused as well, whatever the session id.
	stream, err := braidv1.NewClientServiceClient(conn).Execute(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer nope-nope-nope-nope"),
		&braidv1.ExecuteRequest{SessionId: "x", Script: "SELECT 1;"})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unauthenticated || status.Convert(err).Message() != "the token is not valid" {
		t.Errorf("Execute with a bad token: %v, want Unauthenticated saying only that the token is not valid", err)
	}
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health check without a token: %v", err)
	}
	if _, err := dialAs(t, cl, aliceToken).ListJobs(ctx); err != nil {
		t.Errorf("ListJobs as alice: %v", err)
	}
}

// TestViewerRole: a viewer runs queries and statements that change only
// its session, and is refused everything else (DDL, INSERT, STOP JOB,
// cancel, stop, savepoint, rescale) with PermissionDenied naming what it
// tried, its role and the position.
func TestViewerRole(t *testing.T) {
	cl := authCluster(t, clientauth.Config{})
	ctx := testCtx(t)
	admin := openSession(t, dialAs(t, cl, aliceToken))
	run(t, admin, `SET 'parallelism.default' = '1';
		SET 'execution.checkpointing.interval' = '500ms';`+endlessAgg)
	id := startInsert(t, admin, "INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;")
	waitRunning(t, cl.JobManager(), id)

	bob := dialAs(t, cl, bobToken)
	viewer := openSession(t, bob)
	equal(t, "SELECT as a viewer", run(t, viewer, "SELECT 1 + 1;").rows, []string{"+I[2]"})
	run(t, viewer, "SET 'table.local-time-zone' = 'UTC'; RESET 'table.local-time-zone'; USE default_database; SHOW TABLES; DESCRIBE gen; EXPLAIN SELECT k FROM gen;")
	// A temporary view changes only the viewer's session.
	run(t, viewer, "CREATE TEMPORARY VIEW mine AS SELECT 1 AS one; SHOW VIEWS; DROP TEMPORARY VIEW mine;")
	for sql, kind := range map[string]string{
		"CREATE TABLE t (x INT) WITH ('connector' = 'blackhole');": "CREATE TABLE",
		"DROP TABLE sink;":                               "DROP TABLE",
		"CREATE DATABASE d;":                             "CREATE DATABASE",
		"CREATE VIEW v AS SELECT 1;":                     "CREATE VIEW",
		"DROP VIEW v;":                                   "DROP VIEW",
		"INSERT INTO sink SELECT k, 1 FROM gen;":         "INSERT",
		"EXECUTE INSERT INTO sink SELECT k, 1 FROM gen;": "INSERT",
		"STOP JOB '" + id + "';":                         "STOP JOB",
		"BEGIN STATEMENT SET;":                           "a statement set",
		"ALTER TABLE sink SET ('k' = 'v');":              "ALTER TABLE",
		"CREATE TABLE c AS SELECT 1;":                    "CREATE TABLE",
	} {
		err := execErr(t, viewer, "SELECT 1;\n  "+sql)
		want := "Permission denied: sql: line 2, column 3: " + kind + " needs the admin role (bob is a viewer)"
		if code(err) != codes.PermissionDenied || err.Error() != want {
			t.Errorf("%s as a viewer: %v (%s), want %q", sql, err, code(err), want)
		}
	}
	if err := bob.CancelJob(ctx, id); code(err) != codes.NotFound {
		t.Errorf("a viewer cancels another's job: %v, want NotFound", err)
	}
	if _, _, err := bob.StopJob(ctx, id, true, ""); code(err) != codes.PermissionDenied {
		t.Errorf("stop as a viewer: %v", err)
	}
	if _, _, err := bob.TriggerSavepoint(ctx, id, ""); code(err) != codes.PermissionDenied {
		t.Errorf("savepoint as a viewer: %v", err)
	}
	if _, _, err := bob.RescaleJob(ctx, id, 2); code(err) != codes.PermissionDenied {
		t.Errorf("rescale as a viewer: %v", err)
	}
	if st := cl.JobManager().Job(id).Status(); st != jobmanager.StatusRunning {
		t.Fatalf("after the viewer's attempts the job is %s, want RUNNING", st)
	}
	// An admin may do all of it.
	if _, _, err := dialAs(t, cl, aliceToken).TriggerSavepoint(ctx, id, ""); err != nil {
		t.Errorf("savepoint as an admin: %v", err)
	}
	run(t, admin, "STOP JOB '"+id+"';")
}

// TestJobsBelongToTheirOwner: a viewer lists and describes only its own
// jobs; another principal's job is not found exactly as a missing one is,
// in ListJobs, DescribeJob and SHOW JOBS. An admin sees every job. A
// session is its principal's: another's id is an unknown session.
func TestJobsBelongToTheirOwner(t *testing.T) {
	cl := authCluster(t, clientauth.Config{})
	ctx := testCtx(t)
	alice := dialAs(t, cl, aliceToken)
	admin := openSession(t, alice)
	run(t, admin, `SET 'parallelism.default' = '1';`+endlessAgg)
	aliceJob := startInsert(t, admin, "INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;")
	bob, carol := dialAs(t, cl, bobToken), dialAs(t, cl, carolToken)
	bobSession := openSession(t, bob)
	bobJob := queryJob(t, bobSession, "SELECT 42;")

	listed := func(c *client.Client) []string {
		t.Helper()
		jobs, err := c.ListJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		return ids
	}
	equal(t, "bob's jobs", listed(bob), []string{bobJob})
	equal(t, "carol's jobs", listed(carol), nil)
	equal(t, "alice's jobs", listed(alice), []string{bobJob, aliceJob})
	equal(t, "SHOW JOBS as bob", column0(run(t, bobSession, "SHOW JOBS;").rows), []string{bobJob})
	all, err := alice.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, j := range all {
		owners[j.ID] = j.Owner
	}
	if owners[aliceJob] != "alice" || owners[bobJob] != "bob" {
		t.Errorf("owners %v, want alice's and bob's", owners)
	}

	_, missing := carol.DescribeJob(ctx, "0123456789abcdef")
	for _, id := range []string{aliceJob, bobJob} {
		_, err := carol.DescribeJob(ctx, id)
		if code(err) != codes.NotFound || err.Error() != strings.Replace(missing.Error(), "0123456789abcdef", id, 1) {
			t.Errorf("carol describes %s: %v, want it as missing as %v", id, err, missing)
		}
	}
	if _, err := bob.DescribeJob(ctx, bobJob); err != nil {
		t.Errorf("bob describes his job: %v", err)
	}
	if _, err := alice.DescribeJob(ctx, bobJob); err != nil {
		t.Errorf("alice describes bob's job: %v", err)
	}
	// bob may cancel his own job (here one that ended), not alice's.
	if err := bob.CancelJob(ctx, bobJob); code(err) == codes.PermissionDenied || code(err) == codes.NotFound {
		t.Errorf("bob cancels his job: %v", err)
	}
	if err := bob.CancelJob(ctx, aliceJob); code(err) != codes.NotFound {
		t.Errorf("bob cancels alice's job: %v, want NotFound", err)
	}

	// carol cannot use nor close bob's session.
	rpc := braidv1.NewClientServiceClient(dialWith(t, cl.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials())))
	asCarol := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+carolToken)
	execute := func(session string) error {
		stream, err := rpc.Execute(asCarol, &braidv1.ExecuteRequest{SessionId: session, Script: "SELECT 1;"})
		if err == nil {
			_, err = stream.Recv()
		}
		return err
	}
	errOther, errMissing := execute(bobSession.ID()), execute("0123456789abcdef")
	if status.Code(errOther) != codes.NotFound ||
		status.Convert(errOther).Message() != strings.Replace(status.Convert(errMissing).Message(), "0123456789abcdef", bobSession.ID(), 1) {
		t.Errorf("carol executes in bob's session: %v, want it as unknown as %v", errOther, errMissing)
	}
	if _, err := rpc.CloseSession(asCarol, &braidv1.CloseSessionRequest{SessionId: bobSession.ID()}); err != nil {
		t.Errorf("carol closes bob's session: %v", err)
	}
	equal(t, "bob's session after carol closed it", run(t, bobSession, "SELECT 7;").rows, []string{"+I[7]"})
	if err := alice.CancelJob(ctx, aliceJob); err != nil {
		t.Fatal(err)
	}
}

// schemaRows records the job id of a query's result.
type schemaRows struct {
	*rows
	jobID string
}

func (r *schemaRows) Schema(i int, res client.ResultInfo) {
	r.rows.Schema(i, res)
	r.jobID = res.JobID
}

// queryJob runs a query and returns the id of its job.
func queryJob(t *testing.T, s *client.Session, sql string) string {
	t.Helper()
	r := &schemaRows{rows: newRows()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Execute(ctx, sql, false, r); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if r.jobID == "" {
		t.Fatalf("%s: no job id", sql)
	}
	return r.jobID
}

// waitRunning waits until job id is RUNNING.
func waitRunning(t *testing.T, jm *jobmanager.JobManager, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for jm.Job(id).Status() != jobmanager.StatusRunning {
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s after 30s, want RUNNING", id, jm.Job(id).Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func column0(rows []string) []string {
	var out []string
	for _, r := range rows {
		f := strings.SplitN(strings.TrimSuffix(strings.TrimPrefix(r, "+I["), "]"), ", ", 2)
		out = append(out, f[0])
	}
	return out
}

// TestJWTClients: a JSON Web Token of the configured issuer, signed by a
// key of the JWKS file, authenticates its subject in the role its
// braid_role claim names; an expired one does not.
func TestJWTClients(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks := fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":"test","use":"sig","alg":"RS256","n":"%s","e":"%s"}]}`,
		b64(key.N.Bytes()), b64(big.NewInt(int64(key.E)).Bytes()))
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, []byte(jwks), 0o600); err != nil {
		t.Fatal(err)
	}
	cl := authCluster(t, clientauth.Config{JWTIssuer: "https://idp.test", JWKSFile: jwksFile, JWTAudience: "braid"})
	sign := func(sub, role string, exp time.Duration) string {
		claims := jwt.MapClaims{"iss": "https://idp.test", "aud": "braid", "sub": sub, "exp": time.Now().Add(exp).Unix()}
		if role != "" {
			claims["braid_role"] = role
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		tok.Header["kid"] = "test"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := testCtx(t)
	dave := openSession(t, dialAs(t, cl, sign("dave", "admin", time.Hour)))
	run(t, dave, "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole');")
	erin := openSession(t, dialAs(t, cl, sign("erin", "", time.Hour)))
	equal(t, "erin's SELECT", run(t, erin, "SELECT 3;").rows, []string{"+I[3]"})
	if err := execErr(t, erin, "DROP TABLE t;"); code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "(erin is a viewer)") {
		t.Errorf("DROP TABLE with a viewer's JWT: %v", err)
	}
	if _, err := dialAs(t, cl, sign("dave", "admin", -time.Hour)).ListJobs(ctx); code(err) != codes.Unauthenticated {
		t.Errorf("an expired JWT: %v, want Unauthenticated", err)
	}
}

// TestAnonymousAdminOnlyOnLoopback: without client authentication a job
// manager starts only on a loopback address, or when told Insecure.
func TestAnonymousAdminOnlyOnLoopback(t *testing.T) {
	for _, c := range []struct {
		listen   string
		insecure bool
		ok       bool
	}{
		{":0", false, false},
		{"0.0.0.0:0", false, false},
		{"[::]:0", false, false},
		{"192.0.2.1:6123", false, false},
		{":0", true, true},
		{"127.0.0.1:0", false, true},
		{"127.1.2.3:0", false, true},
		{"localhost:0", false, true},
		{"[::1]:0", false, true},
	} {
		jm, err := jobmanager.New(jobmanager.Config{Listen: c.listen, DataDir: t.TempDir(), Insecure: c.insecure})
		switch {
		case c.ok && err != nil:
			t.Errorf("listen %s, insecure %v: %v", c.listen, c.insecure, err)
		case !c.ok && err == nil:
			t.Errorf("listen %s without client authentication: accepted", c.listen)
		case !c.ok && !(strings.Contains(err.Error(), "--client-tokens-file") && strings.Contains(err.Error(), "--jwt-issuer") && strings.Contains(err.Error(), "--insecure")):
			t.Errorf("listen %s: the refusal does not name the flags: %v", c.listen, err)
		case c.ok && !jm.AnonymousClients():
			t.Errorf("listen %s: clients authenticated without a tokens file", c.listen)
		}
	}
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte(aliceToken+" admin alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	jm, err := jobmanager.New(jobmanager.Config{Listen: ":0", DataDir: t.TempDir(), Clients: clientauth.Config{TokensFile: tokens}})
	if err != nil || jm.AnonymousClients() {
		t.Errorf("listen :0 with a tokens file: %v", err)
	}
}
