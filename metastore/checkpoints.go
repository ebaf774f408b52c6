package metastore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrFenced is returned by CommitCheckpoint when the Leadership it was given
// no longer leads: a newer job manager owns the job.
var ErrFenced = errors.New("not the leader any more")

// ErrConflict is returned by CommitCheckpoint when the job's latest
// checkpoint is not the one the caller expected.
var ErrConflict = errors.New("latest checkpoint changed")

// CheckpointPointer is what etcd holds about a completed checkpoint: where
// its manifest is, never its data.
type CheckpointPointer struct {
	ID int64 `json:"id"`
	// Path locates the checkpoint's _metadata manifest in checkpoint storage.
	Path            string `json:"path"`
	Savepoint       bool   `json:"savepoint,omitempty"`
	CompletedUnixMs int64  `json:"completed_unix_ms"`
}

func (s *Store) checkpointKey(jobID string, id int64) string {
	// Zero-padded so keys sort by id.
	return s.key("jobs", jobID, "checkpoints", fmt.Sprintf("%020d", id))
}

// CommitCheckpoint records cp as job jobID's checkpoint and its latest, in
// one transaction that holds only while lead still leads (ErrFenced
// otherwise; lead nil means unfenced, for a single job manager) and while
// the latest checkpoint id is prevLatest (ErrConflict otherwise; 0 means
// none yet). When it returns another error the outcome is unknown: read
// LatestCheckpoint back and reconcile before deleting anything.
func (s *Store) CommitCheckpoint(ctx context.Context, lead *Leadership, jobID string, cp CheckpointPointer, prevLatest int64) error {
	if cp.ID <= prevLatest {
		return fmt.Errorf("metastore: checkpoint %d of job %s does not follow %d", cp.ID, jobID, prevLatest)
	}
	val, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("metastore: encode checkpoint %d: %w", cp.ID, err)
	}
	// NB: latest-id holds the latest id as plain text so the transaction can
	// compare it; latest holds the whole pointer for readers.
	latest := s.jobKey(jobID, "latest")
	var cmps []clientv3.Cmp
	if prevLatest == 0 {
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(latest), "=", 0))
	} else {
		cmps = append(cmps, clientv3.Compare(clientv3.Value(s.jobKey(jobID, "latest-id")), "=", fmt.Sprint(prevLatest)))
	}
	if lead != nil {
		cmps = append(cmps, lead.fence())
	}
	resp, err := s.client.Txn(ctx).If(cmps...).Then(
		clientv3.OpPut(s.checkpointKey(jobID, cp.ID), string(val)),
		clientv3.OpPut(latest, string(val)),
		clientv3.OpPut(s.jobKey(jobID, "latest-id"), fmt.Sprint(cp.ID)),
	).Commit()
	if err != nil {
		return fmt.Errorf("metastore: commit checkpoint %d of job %s (outcome unknown): %w", cp.ID, jobID, err)
	}
	if resp.Succeeded {
		return nil
	}
	if lead != nil {
		// Tell the two failures apart with a read; either way nothing was
		// written.
		if fenced, err := s.fenced(ctx, lead); err == nil && fenced {
			return fmt.Errorf("checkpoint %d of job %s: %w", cp.ID, jobID, ErrFenced)
		}
	}
	return fmt.Errorf("checkpoint %d of job %s: expected latest %d: %w", cp.ID, jobID, prevLatest, ErrConflict)
}

// LatestCheckpoint returns job jobID's latest committed checkpoint; ok is
// false when there is none.
func (s *Store) LatestCheckpoint(ctx context.Context, jobID string) (cp CheckpointPointer, ok bool, err error) {
	resp, err := s.client.Get(ctx, s.jobKey(jobID, "latest"))
	if err != nil {
		return cp, false, fmt.Errorf("metastore: latest checkpoint of job %s: %w", jobID, err)
	}
	if len(resp.Kvs) == 0 {
		return cp, false, nil
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &cp); err != nil {
		return cp, false, fmt.Errorf("metastore: decode latest checkpoint of job %s: %w", jobID, err)
	}
	return cp, true, nil
}

// ListCheckpoints returns job jobID's retained checkpoints, oldest first.
func (s *Store) ListCheckpoints(ctx context.Context, jobID string) ([]CheckpointPointer, error) {
	resp, err := s.client.Get(ctx, s.dir("jobs", jobID, "checkpoints"), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("metastore: list checkpoints of job %s: %w", jobID, err)
	}
	out := make([]CheckpointPointer, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var cp CheckpointPointer
		if err := json.Unmarshal(kv.Value, &cp); err != nil {
			return nil, fmt.Errorf("metastore: decode checkpoint %s: %w", kv.Key, err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// DeleteCheckpoint forgets checkpoint id of job jobID (after retention
// dropped it). The latest checkpoint cannot be deleted. Deleting an unknown
// id is not an error.
func (s *Store) DeleteCheckpoint(ctx context.Context, jobID string, id int64) error {
	latestID := s.jobKey(jobID, "latest-id")
	del := clientv3.OpDelete(s.checkpointKey(jobID, id))
	// A value compare fails on a missing key, so "no latest at all" is its
	// own branch.
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(latestID), "=", 0)).
		Then(del).
		Else(clientv3.OpTxn(
			[]clientv3.Cmp{clientv3.Compare(clientv3.Value(latestID), "!=", fmt.Sprint(id))},
			[]clientv3.Op{del}, nil)).
		Commit()
	if err != nil {
		return fmt.Errorf("metastore: delete checkpoint %d of job %s: %w", id, jobID, err)
	}
	if !resp.Succeeded && !resp.Responses[0].GetResponseTxn().Succeeded {
		return fmt.Errorf("metastore: checkpoint %d is job %s's latest and cannot be deleted", id, jobID)
	}
	return nil
}
