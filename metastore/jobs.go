package metastore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrIllegalTransition is returned by SetJobStatus when the installed status
// check (see SetStatusCheck) rejects the change.
var ErrIllegalTransition = errors.New("illegal job status transition")

// JobRecord is what etcd holds about a job. The immutable part (everything
// but Status, Error and EndUnixMs) is stored at jobs/<id>/spec, the mutable
// part at jobs/<id>/status, so status changes do not rewrite the graph.
//
// NB: etcd holds the cluster's truth, small: the graph and placements are
// stored compressed, a graph over MaxInlineGraphBytes compressed is kept
// outside etcd (GraphRef), and the SQL text is cut to MaxSQLBytes.
type JobRecord struct {
	ID, Name string
	// SQL is the statement the job runs. PutJobAs keeps its first
	// MaxSQLBytes, followed by a note saying it was cut.
	SQL string
	// Owner names the principal that submitted the job ("" for a job
	// recorded before clients authenticated, or submitted by no client).
	Owner string
	// Status is one of the scheduler.JobStatus strings ("CREATED", "RUNNING",
	// "FINISHED", "FAILED", "CANCELED").
	Status      string
	Error       string
	StartUnixMs int64
	EndUnixMs   int64
	// Graph is the proto-encoded braidv1.JobGraph when the record holds
	// it; nil when GraphRef is set.
	Graph []byte
	// GraphRef, when set, locates the graph outside etcd.
	GraphRef *GraphRef
	// Placements is opaque here: the job manager's encoding of where each
	// subtask runs.
	Placements []byte
}

type jobSpec struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	SQL         string `json:"sql,omitempty"`
	Owner       string `json:"owner,omitempty"`
	StartUnixMs int64  `json:"start_unix_ms,omitempty"`
	// Graph and Placements are the uncompressed form records written
	// before compression have; they are read, never written.
	Graph      []byte `json:"graph,omitempty"`
	Placements []byte `json:"placements,omitempty"`
	// GraphZstd and PlacementsZstd are CompressGraph's encoding.
	GraphZstd      []byte    `json:"graph_zstd,omitempty"`
	GraphRef       *GraphRef `json:"graph_ref,omitempty"`
	PlacementsZstd []byte    `json:"placements_zstd,omitempty"`
}

type jobStatus struct {
	Status    string `json:"status"`
	Error     string `json:"error,omitempty"`
	EndUnixMs int64  `json:"end_unix_ms,omitempty"`
}

// encodeSpec encodes j's immutable part, compressed and within the
// limits; a *RecordTooLargeError when it is not.
func encodeSpec(j *JobRecord) ([]byte, error) {
	spec := jobSpec{ID: j.ID, Name: j.Name, SQL: cutSQL(j.SQL), Owner: j.Owner, StartUnixMs: j.StartUnixMs, GraphRef: j.GraphRef}
	if j.GraphRef == nil {
		spec.GraphZstd = CompressGraph(j.Graph)
		if n := len(spec.GraphZstd); n > MaxInlineGraphBytes {
			return nil, &RecordTooLargeError{JobID: j.ID, What: PartGraph, Size: n, Limit: MaxInlineGraphBytes}
		}
	}
	spec.PlacementsZstd = CompressGraph(j.Placements)
	val, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("metastore: encode job %s: %w", j.ID, err)
	}
	if len(val) > MaxJobRecordBytes {
		return nil, &RecordTooLargeError{JobID: j.ID, What: PartRecord, Size: len(val), Limit: MaxJobRecordBytes}
	}
	return val, nil
}

func (s *Store) jobKey(id, leaf string) string { return s.key("jobs", id, leaf) }

// PutJob writes j's spec and status in one transaction, replacing an
// existing record with the same ID. j is not retained. PutJob does not
// apply the status check: it is how a record is created or restored.
func (s *Store) PutJob(ctx context.Context, j *JobRecord) error {
	return s.PutJobAs(ctx, nil, j)
}

// PutJobAs is PutJob fenced by lead: the record is written only while lead
// still leads, and the call fails with ErrFenced (writing nothing) once
// another job manager does, so a deposed leader cannot create a job the
// new leader does not know it runs. lead nil means unfenced. A record over
// the limits fails with a *RecordTooLargeError, writing nothing.
func (s *Store) PutJobAs(ctx context.Context, lead *Leadership, j *JobRecord) error {
	if j.ID == "" {
		return fmt.Errorf("metastore: job without an id")
	}
	spec, err := encodeSpec(j)
	if err != nil {
		return err
	}
	status, err := json.Marshal(jobStatus{Status: j.Status, Error: j.Error, EndUnixMs: j.EndUnixMs})
	if err != nil {
		return fmt.Errorf("metastore: encode job %s status: %w", j.ID, err)
	}
	ops := []clientv3.Op{
		clientv3.OpPut(s.jobKey(j.ID, "spec"), string(spec)),
		clientv3.OpPut(s.jobKey(j.ID, "status"), string(status)),
	}
	if err := s.fencedTxn(ctx, lead, ops...); err != nil {
		return fmt.Errorf("metastore: put job %s: %w", j.ID, err)
	}
	return nil
}

// SetJobGraphAs replaces the graph (and placements) of job id's spec, as a
// rescale does, fenced by lead as PutJobAs is: graph inline, or ref when
// the graph is kept outside etcd (graph is then ignored). The rest of the
// spec and the status are kept; ErrNotFound for an unknown job, a
// *RecordTooLargeError over the limits. It returns the GraphRef the spec
// had before, which the caller may delete once it is not ref.
func (s *Store) SetJobGraphAs(ctx context.Context, lead *Leadership, id string, graph []byte, ref *GraphRef, placements []byte) (prev *GraphRef, err error) {
	key := s.jobKey(id, "spec")
	for {
		resp, err := s.client.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("metastore: read job %s: %w", id, err)
		}
		if len(resp.Kvs) == 0 {
			return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
		}
		j, err := decodeJob(resp.Kvs[0].Value, nil)
		if err != nil {
			return nil, err
		}
		prev = j.GraphRef
		j.Graph, j.GraphRef, j.Placements = graph, ref, placements
		if ref != nil {
			j.Graph = nil
		}
		val, err := encodeSpec(j)
		if err != nil {
			return nil, err
		}
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)}
		if lead != nil {
			cmps = append(cmps, lead.fence())
		}
		txn, err := s.client.Txn(ctx).If(cmps...).Then(clientv3.OpPut(key, string(val))).Commit()
		if err != nil {
			return nil, fmt.Errorf("metastore: set job %s graph: %w", id, err)
		}
		if txn.Succeeded {
			return prev, nil
		}
		if lead != nil {
			if fenced, err := s.fenced(ctx, lead); err != nil {
				return nil, fmt.Errorf("metastore: set job %s graph: %w", id, err)
			} else if fenced {
				return nil, fmt.Errorf("job %s graph: %w", id, ErrFenced)
			}
		}
	}
}

// DeleteJobAs removes everything etcd holds under job id: its spec,
// status and checkpoint pointers, fenced by lead as PutJobAs is. It
// deletes no file: the caller deletes a GraphRef's file, and the
// checkpoints' files stay for a user to restore from. Deleting an unknown
// job is not an error.
func (s *Store) DeleteJobAs(ctx context.Context, lead *Leadership, id string) error {
	if id == "" {
		return fmt.Errorf("metastore: job without an id")
	}
	if err := s.fencedTxn(ctx, lead, clientv3.OpDelete(s.dir("jobs", id), clientv3.WithPrefix())); err != nil {
		return fmt.Errorf("metastore: delete job %s: %w", id, err)
	}
	return nil
}

// fencedTxn commits ops in one transaction, only while lead leads (any
// time when lead is nil); ErrFenced when it does not any more.
func (s *Store) fencedTxn(ctx context.Context, lead *Leadership, ops ...clientv3.Op) error {
	txn := s.client.Txn(ctx)
	if lead != nil {
		txn = txn.If(lead.fence())
	}
	resp, err := txn.Then(ops...).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return ErrFenced
	}
	return nil
}

// SetJobStatus changes a job's status, error message and end time. It is a
// compare-and-swap on the status key, retried when another writer got there
// first, so the status check always sees the status it replaces. It fails
// with ErrNotFound for an unknown job and ErrIllegalTransition when the
// check rejects the change; setting the current status again is allowed and
// rewrites errMsg and endUnixMs.
func (s *Store) SetJobStatus(ctx context.Context, id, status, errMsg string, endUnixMs int64) error {
	return s.SetJobStatusAs(ctx, nil, id, status, errMsg, endUnixMs)
}

// SetJobStatusAs is SetJobStatus fenced by lead: the change is made only
// while lead still leads, and fails with ErrFenced (writing nothing) once
// another job manager does. lead nil means unfenced.
func (s *Store) SetJobStatusAs(ctx context.Context, lead *Leadership, id, status, errMsg string, endUnixMs int64) error {
	key := s.jobKey(id, "status")
	val, err := json.Marshal(jobStatus{Status: status, Error: errMsg, EndUnixMs: endUnixMs})
	if err != nil {
		return fmt.Errorf("metastore: encode job %s status: %w", id, err)
	}
	check := s.statusCheck()
	for {
		resp, err := s.client.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("metastore: read job %s status: %w", id, err)
		}
		if len(resp.Kvs) == 0 {
			return fmt.Errorf("job %s: %w", id, ErrNotFound)
		}
		kv := resp.Kvs[0]
		var cur jobStatus
		if err := json.Unmarshal(kv.Value, &cur); err != nil {
			return fmt.Errorf("metastore: decode job %s status: %w", id, err)
		}
		if check != nil && cur.Status != status && !check(cur.Status, status) {
			return fmt.Errorf("job %s: %s -> %s: %w", id, cur.Status, status, ErrIllegalTransition)
		}
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)}
		if lead != nil {
			cmps = append(cmps, lead.fence())
		}
		txn, err := s.client.Txn(ctx).If(cmps...).Then(clientv3.OpPut(key, string(val))).Commit()
		if err != nil {
			return fmt.Errorf("metastore: set job %s status: %w", id, err)
		}
		if txn.Succeeded {
			return nil
		}
		if lead != nil {
			if fenced, err := s.fenced(ctx, lead); err != nil {
				return fmt.Errorf("metastore: set job %s status: %w", id, err)
			} else if fenced {
				return fmt.Errorf("job %s status %s: %w", id, status, ErrFenced)
			}
		}
	}
}

// GetJob returns the job's record; ErrNotFound (wrapped with the id) when
// there is none.
func (s *Store) GetJob(ctx context.Context, id string) (*JobRecord, error) {
	resp, err := s.client.Txn(ctx).Then(
		clientv3.OpGet(s.jobKey(id, "spec")),
		clientv3.OpGet(s.jobKey(id, "status")),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("metastore: get job %s: %w", id, err)
	}
	specKvs := resp.Responses[0].GetResponseRange().Kvs
	if len(specKvs) == 0 {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	var statusVal []byte
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		statusVal = kvs[0].Value
	}
	return decodeJob(specKvs[0].Value, statusVal)
}

func decodeJob(specVal, statusVal []byte) (*JobRecord, error) {
	var spec jobSpec
	if err := json.Unmarshal(specVal, &spec); err != nil {
		return nil, fmt.Errorf("metastore: decode job spec: %w", err)
	}
	var st jobStatus
	if statusVal != nil {
		if err := json.Unmarshal(statusVal, &st); err != nil {
			return nil, fmt.Errorf("metastore: decode job %s status: %w", spec.ID, err)
		}
	}
	j := &JobRecord{
		ID: spec.ID, Name: spec.Name, SQL: spec.SQL, Owner: spec.Owner,
		Status: st.Status, Error: st.Error,
		StartUnixMs: spec.StartUnixMs, EndUnixMs: st.EndUnixMs,
		Graph: spec.Graph, GraphRef: spec.GraphRef, Placements: spec.Placements,
	}
	var err error
	if spec.GraphZstd != nil {
		if j.Graph, err = DecompressGraph(spec.GraphZstd); err != nil {
			return nil, fmt.Errorf("metastore: job %s graph: %w", spec.ID, err)
		}
	}
	if spec.PlacementsZstd != nil {
		if j.Placements, err = DecompressGraph(spec.PlacementsZstd); err != nil {
			return nil, fmt.Errorf("metastore: job %s placements: %w", spec.ID, err)
		}
	}
	return j, nil
}

// ListJobs returns every job, ordered by start time then id, from one
// consistent read. Keys under jobs/<id>/ other than spec and status (such
// as checkpoint pointers) are skipped.
func (s *Store) ListJobs(ctx context.Context) ([]*JobRecord, error) {
	dir := s.dir("jobs")
	resp, err := s.client.Get(ctx, dir, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("metastore: list jobs: %w", err)
	}
	specs := map[string][]byte{}
	statuses := map[string][]byte{}
	for _, kv := range resp.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), dir)
		esc, leaf, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		id, err := url.PathUnescape(esc)
		if err != nil {
			continue
		}
		switch leaf {
		case "spec":
			specs[id] = kv.Value
		case "status":
			statuses[id] = kv.Value
		}
	}
	jobs := make([]*JobRecord, 0, len(specs))
	for id, spec := range specs {
		j, err := decodeJob(spec, statuses[id])
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	sort.Slice(jobs, func(a, b int) bool {
		if jobs[a].StartUnixMs != jobs[b].StartUnixMs {
			return jobs[a].StartUnixMs < jobs[b].StartUnixMs
		}
		return jobs[a].ID < jobs[b].ID
	})
	return jobs, nil
}
