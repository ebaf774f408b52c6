package jobmanager_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/internal/memberauth"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

func dialWith(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestStrangersCannotAct: a caller without the cluster's secret can
// neither call the job manager's ClusterService (register, heartbeat,
// report, push results) nor a task manager's TaskService or DataService;
// each refusal is Unauthenticated and names nothing of the cluster.
func TestStrangersCannotAct(t *testing.T) {
	cl, _, _ := checkpointCluster(t)
	ctx := testCtx(t)
	plain := grpc.WithTransportCredentials(insecure.NewCredentials())
	stranger := braidv1.NewClusterServiceClient(dialWith(t, cl.Endpoint(), plain))
	wrong, err := memberauth.New(memberauth.Config{Secret: "not-the-cluster-secret"})
	if err != nil {
		t.Fatal(err)
	}
	guesser := braidv1.NewClusterServiceClient(dialWith(t, cl.Endpoint(), wrong.DialOptions()...))
	for name, c := range map[string]braidv1.ClusterServiceClient{"no secret": stranger, "wrong secret": guesser} {
		_, err := c.RegisterTaskManager(ctx, &braidv1.RegisterTaskManagerRequest{TaskManagerId: "tm-0", Address: "127.0.0.1:1", Slots: 8})
		checkRefused(t, name+": register under a live id", err)
		_, err = c.Heartbeat(ctx, &braidv1.HeartbeatRequest{TaskManagerId: "tm-0"})
		checkRefused(t, name+": heartbeat", err)
		_, err = c.ReportTaskStatus(ctx, &braidv1.TaskStatusReport{JobId: "j", TaskManagerId: "tm-0", State: braidv1.TaskState_TASK_STATE_FAILED})
		checkRefused(t, name+": status report", err)
		push, err := c.PushResults(ctx)
		if err == nil {
			push.Send(&braidv1.ResultChunk{JobId: "j", ArrowIpc: []byte("rows")})
			_, err = push.CloseAndRecv()
		}
		checkRefused(t, name+": result push", err)
	}
	tm := cl.TaskManagers()[0]
	ts := braidv1.NewTaskServiceClient(dialWith(t, tm.Addr(), plain))
	_, err = ts.DeployTasks(ctx, &braidv1.DeployTasksRequest{Graph: &braidv1.JobGraph{JobId: "x"}})
	checkRefused(t, "deploy on a task manager", err)
	_, err = ts.CancelJob(ctx, &braidv1.CancelTasksRequest{JobId: "x"})
	checkRefused(t, "cancel on a task manager", err)
	ds, err := braidv1.NewDataServiceClient(dialWith(t, tm.Addr(), plain)).Exchange(ctx)
	if err == nil {
		ds.Send(&braidv1.DataMessage{Payload: &braidv1.DataMessage_Header{Header: &braidv1.ChannelHeader{JobId: "x"}}})
		_, err = ds.CloseAndRecv()
	}
	checkRefused(t, "data stream into a task manager", err)
	if n := len(cl.JobManager().SlotsSnapshot()); n != 2 {
		t.Errorf("%d task managers registered, want the cluster's 2", n)
	}
}

func checkRefused(t *testing.T, what string, err error) {
	t.Helper()
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("%s: %v, want Unauthenticated", what, err)
		return
	}
	if msg := status.Convert(err).Message(); msg != "not a member of this cluster" {
		t.Errorf("%s: the refusal says %q", what, msg)
	}
}

// TestMembersCannotForge: a member (it has the secret) that registered as
// an intruder can neither speak for another task manager (its heartbeat
// does not renew the other's lease, its reports and acknowledgements are
// refused) nor fail a job by reporting a subtask placed elsewhere, nor push
// rows into a query without the job's result token.
func TestMembersCannotForge(t *testing.T) {
	cl, s, _ := checkpointCluster(t)
	ctx := testCtx(t)
	members, err := memberauth.New(cl.JobManager().MemberConfig())
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, `SET 'parallelism.default' = '1';`+endlessAgg)
	id := startInsert(t, s, "INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;")
	c := braidv1.NewClusterServiceClient(dialWith(t, cl.Endpoint(), members.DialOptions()...))
	reg, err := c.RegisterTaskManager(ctx, &braidv1.RegisterTaskManagerRequest{TaskManagerId: "intruder", Address: "127.0.0.1:1", Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	as := func(tmID, inc string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, memberauth.TaskManagerHeader, tmID, memberauth.IncarnationHeader, inc)
	}
	// Its own registration works.
	if hb, err := c.Heartbeat(as("intruder", reg.Incarnation), &braidv1.HeartbeatRequest{TaskManagerId: "intruder"}); err != nil || !hb.Known {
		t.Fatalf("own heartbeat: %+v %v", hb, err)
	}
	// It cannot keep another task manager alive, nor report for it.
	victim := cl.TaskManagers()[0].ID()
	if hb, err := c.Heartbeat(as(victim, reg.Incarnation), &braidv1.HeartbeatRequest{TaskManagerId: victim}); err != nil || hb.Known {
		t.Errorf("heartbeat for %s with the intruder's incarnation: %+v %v, want known=false", victim, hb, err)
	}
	if hb, err := c.Heartbeat(as("intruder", reg.Incarnation), &braidv1.HeartbeatRequest{TaskManagerId: victim}); err != nil || hb.Known {
		t.Errorf("heartbeat naming %s from the intruder: %+v %v, want known=false", victim, hb, err)
	}
	d, err := clientDescribe(t, cl.Endpoint(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Vertices {
		for _, st := range v.Subtasks {
			forged := &braidv1.TaskStatusReport{JobId: id, Vertex: int32(v.ID), Subtask: int32(st.Index), State: braidv1.TaskState_TASK_STATE_FAILED,
				Error: "forged", TaskManagerId: st.TaskManagerID}
			if _, err := c.ReportTaskStatus(as("intruder", reg.Incarnation), forged); status.Code(err) != codes.PermissionDenied {
				t.Errorf("report naming %s from the intruder: %v, want PermissionDenied", st.TaskManagerID, err)
			}
			// Under its own name the report is taken, but it does not
			// speak for a subtask placed elsewhere.
			forged.TaskManagerId = "intruder"
			if _, err := c.ReportTaskStatus(as("intruder", reg.Incarnation), forged); err != nil {
				t.Errorf("report of the intruder: %v", err)
			}
			ack := &braidv1.CheckpointAck{JobId: id, Vertex: int32(v.ID), Subtask: int32(st.Index), TaskManagerId: st.TaskManagerID, CheckpointId: 1, Declined: true}
			if _, err := c.AcknowledgeCheckpoint(as("intruder", reg.Incarnation), ack); status.Code(err) != codes.PermissionDenied {
				t.Errorf("acknowledgement naming %s from the intruder: %v, want PermissionDenied", st.TaskManagerID, err)
			}
		}
	}
	push, err := c.PushResults(as("intruder", reg.Incarnation))
	if err == nil {
		push.Send(&braidv1.ResultChunk{JobId: id, ArrowIpc: []byte("rows")})
		_, err = push.CloseAndRecv()
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("result push without the job's token: %v, want NotFound", err)
	}
	time.Sleep(300 * time.Millisecond)
	if st := cl.JobManager().Job(id).Status(); st != "RUNNING" {
		t.Fatalf("after the forgeries the job is %s, want RUNNING", st)
	}
}

func clientDescribe(t *testing.T, endpoint, id string) (client.JobDetail, error) {
	t.Helper()
	c, err := client.Dial(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.DescribeJob(context.Background(), id)
}
