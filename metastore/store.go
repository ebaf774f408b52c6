package metastore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/braidflow/braid/catalog"
)

// DefaultPrefix is the key prefix every Braid key lives under unless
// Connect is given another.
const DefaultPrefix = "/braid"

// ErrNotFound is returned (wrapped with the name) for a missing job, table or
// database; it is catalog.ErrNotFound, so errors.Is matches either.
var ErrNotFound = catalog.ErrNotFound

// ErrExists is catalog.ErrExists, returned when creating something that
// already exists.
var ErrExists = catalog.ErrExists

// Store is the cluster's etcd-backed metadata: catalog, job records and task
// manager membership, all under one key prefix. It is safe for concurrent
// use. Every method uses the context it is given for its etcd calls.
type Store struct {
	client *clientv3.Client
	prefix string
	logger *zap.Logger

	mu struct {
		sync.Mutex
		// statusCheck, when set, vets every job status change.
		statusCheck func(from, to string) bool
	}
}

// Connect dials etcd at endpoints and checks that it answers within ctx.
// prefix "" means DefaultPrefix; a trailing slash is dropped. opts adjust
// the connection (WithTLS). The Store owns the client: Close releases it.
func Connect(ctx context.Context, endpoints []string, prefix string, logger *zap.Logger, opts ...Option) (*Store, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("metastore: no etcd endpoints")
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Context:     context.WithoutCancel(ctx),
		Logger:      logger.Named("etcd-client").WithOptions(zap.IncreaseLevel(zap.ErrorLevel)),
	}
	for _, o := range opts {
		o(&cfg)
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("metastore: connect to etcd %v: %w", endpoints, err)
	}
	// clientv3.New does not wait for a connection; one read proves etcd is
	// reachable so a wrong --etcd flag fails here, with the endpoints named.
	if _, err := client.Get(ctx, prefix+"/", clientv3.WithCountOnly(), clientv3.WithPrefix()); err != nil {
		client.Close()
		return nil, fmt.Errorf("metastore: etcd %v unreachable%s: %w", endpoints, tlsHint(cfg.TLS != nil, err), err)
	}
	return &Store{client: client, prefix: prefix, logger: logger}, nil
}

// Close releases the etcd client. Watches started by the Store end.
func (s *Store) Close() error {
	return s.client.Close()
}

// Client returns the underlying etcd client, for leader election and other
// callers that need etcd directly. It stays owned by the Store.
func (s *Store) Client() *clientv3.Client { return s.client }

// Prefix returns the key prefix, without a trailing slash.
func (s *Store) Prefix() string { return s.prefix }

// SetStatusCheck installs a check that SetJobStatus applies to every status
// change (from the stored status to the new one); a change it rejects fails
// with ErrIllegalTransition. The job manager installs
// scheduler.JobStatus.CanTransition here. nil removes the check.
func (s *Store) SetStatusCheck(check func(from, to string) bool) {
	s.mu.Lock()
	s.mu.statusCheck = check
	s.mu.Unlock()
}

func (s *Store) statusCheck() func(from, to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.statusCheck
}

// key joins path segments under the prefix, escaping each so that a name
// containing '/' cannot reach into another key's space.
func (s *Store) key(segments ...string) string {
	var b strings.Builder
	b.WriteString(s.prefix)
	for _, seg := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(seg))
	}
	return b.String()
}

// dir is key with a trailing slash, for prefix ranges.
func (s *Store) dir(segments ...string) string {
	return s.key(segments...) + "/"
}
