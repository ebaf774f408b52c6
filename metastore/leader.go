package metastore

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Leadership is one term of this process as the cluster's leading job
// manager, won by Campaign. Its Revision fences writes that only the leader
// may make (CommitCheckpoint): once another process leads, they fail.
type Leadership struct {
	session  *concurrency.Session
	election *concurrency.Election
	// key and rev are the term's leader key and its create revision, kept
	// because Resign clears them in election.
	key string
	rev int64
}

// Campaign blocks until this process (named value, e.g. its address) leads
// the election under <prefix>/leader, or ctx ends. The term lasts while the
// process keeps its session lease alive (renewed in the background, lapsing
// ttl after the process stops); Done reports its end. The caller must Resign
// or Close the Leadership.
func (s *Store) Campaign(ctx context.Context, value string, ttl time.Duration) (*Leadership, error) {
	secs := max(int((ttl+time.Second-1)/time.Second), 1)
	session, err := concurrency.NewSession(s.client, concurrency.WithTTL(secs), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("metastore: leader session: %w", err)
	}
	election := concurrency.NewElection(session, s.key("leader"))
	if err := election.Campaign(ctx, value); err != nil {
		session.Close()
		return nil, fmt.Errorf("metastore: campaign for leader: %w", err)
	}
	return &Leadership{session: session, election: election, key: election.Key(), rev: election.Rev()}, nil
}

// Leader returns the current leader's value; ErrNotFound when there is
// none.
func (s *Store) Leader(ctx context.Context) (string, error) {
	resp, err := s.client.Get(ctx, s.dir("leader"), clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("metastore: read leader: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return "", fmt.Errorf("leader: %w", ErrNotFound)
	}
	return string(resp.Kvs[0].Value), nil
}

// Revision is the term's fencing token: the create revision of its leader
// key, larger for every later term.
func (l *Leadership) Revision() int64 { return l.rev }

// Done is closed when the term ends: the lease lapsed or Resign/Close ran.
func (l *Leadership) Done() <-chan struct{} { return l.session.Done() }

// fence is the compare that holds only while this term leads.
func (l *Leadership) fence() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(l.key), "=", l.rev)
}

// fenced reports whether lead no longer leads: its leader key is gone or
// belongs to a later term.
func (s *Store) fenced(ctx context.Context, lead *Leadership) (bool, error) {
	got, err := s.client.Get(ctx, lead.key)
	if err != nil {
		return false, err
	}
	return len(got.Kvs) == 0 || got.Kvs[0].CreateRevision != lead.Revision(), nil
}

// Resign gives up leadership so another campaigner takes over at once, and
// ends the term.
func (l *Leadership) Resign(ctx context.Context) error {
	err := l.election.Resign(ctx)
	return errors.Join(err, l.session.Close())
}

// Close ends the term by revoking its lease. It is safe after Resign.
func (l *Leadership) Close() error { return l.session.Close() }
