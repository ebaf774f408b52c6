// Package memberauth makes the members of a Braid cluster (job managers and
// task managers) prove to each other that they belong to it, so that no
// stranger who can reach a port can register as a task manager, deploy a
// dataflow, feed a subtask's inbox or push rows into a query's result.
//
// A cluster authenticates its members in one of two ways:
//
//   - Mutual TLS, when certificates are configured: every member serves with
//     its certificate and presents it when it calls another; a member
//     method (see Members.ServerOptions) accepts only callers whose
//     certificate the cluster's CA signed. The files are read again when
//     they change, so certificates can be rotated without a restart.
//   - A cluster secret otherwise: a random token that the job manager
//     creates in its data directory on first start (LoadOrCreateSecret) and
//     that every task manager is given. Members send it with every call to a
//     member method (in the SecretHeader metadata) and check it, in
//     constant time, on every call they serve.
//
// With both, calls must pass both checks. With neither (Insecure), members
// trust every caller: for tests and clusters on a private network only.
//
//	m, err := memberauth.New(memberauth.Config{Secret: secret})
//	srv := grpc.NewServer(m.ServerOptions(isMemberMethod)...)
//	conn, err := grpc.NewClient(addr, m.DialOptions()...)
package memberauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// SecretHeader is the metadata key that carries the cluster secret.
const SecretHeader = "braid-cluster-secret"

// secretBytes is the entropy of a created secret.
const secretBytes = 32

// Config says how members authenticate.
type Config struct {
	// Secret is the cluster secret; "" for none.
	Secret string
	// CertFile and KeyFile are this member's certificate and key (PEM);
	// CAFile holds the certificates of the CA that signs the members'
	// certificates. All three or none.
	CertFile, KeyFile, CAFile string
	// ServerName is the name a member checks in the certificates of the
	// members it calls; "" checks only that the CA signed them (members
	// are reached by address, often an IP).
	ServerName string
}

// Members authenticates the calls between cluster members.
type Members struct {
	secret string
	tls    *certs // nil without TLS
}

// ErrUnauthenticated is what a refused caller gets: nothing more, so a
// stranger learns nothing about the cluster.
var ErrUnauthenticated = status.Error(codes.Unauthenticated, "not a member of this cluster")

// New checks cfg and returns its Members; the certificate files are read
// once now, so a missing or bad file fails at start.
func New(cfg Config) (*Members, error) {
	m := &Members{secret: cfg.Secret}
	files := []string{cfg.CertFile, cfg.KeyFile, cfg.CAFile}
	set := 0
	for _, f := range files {
		if f != "" {
			set++
		}
	}
	switch set {
	case 0:
	case 3:
		c, err := loadCerts(cfg.CertFile, cfg.KeyFile, cfg.CAFile, cfg.ServerName)
		if err != nil {
			return nil, err
		}
		m.tls = c
	default:
		return nil, errors.New("memberauth: give the certificate, its key and the CA together (--tls-cert, --tls-key, --tls-ca)")
	}
	if cfg.Secret != "" && len(cfg.Secret) < 16 {
		return nil, errors.New("memberauth: the cluster secret is shorter than 16 characters")
	}
	return m, nil
}

// Insecure reports whether members trust every caller.
func (m *Members) Insecure() bool { return m.secret == "" && m.tls == nil }

// TLS reports whether members talk TLS.
func (m *Members) TLS() bool { return m.tls != nil }

// ServerOptions returns the options of a member's gRPC server: its
// transport (TLS or plaintext) and interceptors that refuse, with
// ErrUnauthenticated, every call to a method for which member reports true
// unless the caller proved it is a member. Other methods (the client API,
// health, reflection) are left to their own checks.
func (m *Members) ServerOptions(member func(fullMethod string) bool) []grpc.ServerOption {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if m.tls != nil {
		creds = credentials.NewTLS(m.tls.serverConfig())
	}
	return []grpc.ServerOption{
		grpc.Creds(creds),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if member(info.FullMethod) {
				if err := m.Check(ctx); err != nil {
					return nil, err
				}
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if member(info.FullMethod) {
				if err := m.Check(ss.Context()); err != nil {
					return err
				}
			}
			return h(srv, ss)
		}),
	}
}

// Check returns nil when the caller of the call in ctx proved it is a
// member, and ErrUnauthenticated otherwise.
func (m *Members) Check(ctx context.Context) error {
	if m.tls != nil && !verifiedPeer(ctx) {
		return ErrUnauthenticated
	}
	if m.secret != "" {
		md, _ := metadata.FromIncomingContext(ctx)
		got := md.Get(SecretHeader)
		if len(got) != 1 || subtle.ConstantTimeCompare([]byte(got[0]), []byte(m.secret)) != 1 {
			return ErrUnauthenticated
		}
	}
	return nil
}

// verifiedPeer reports whether the peer presented a certificate that the
// server verified against the cluster's CA.
func verifiedPeer(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	return ok && len(ti.State.VerifiedChains) > 0
}

// DialOptions returns the options with which a member calls another: its
// transport and, with a secret, the secret on every call.
func (m *Members) DialOptions() []grpc.DialOption {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if m.tls != nil {
		creds = credentials.NewTLS(m.tls.clientConfig())
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if m.secret != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(secretCreds{secret: m.secret, tls: m.tls != nil}))
	}
	return opts
}

// secretCreds sends the cluster secret with every call.
type secretCreds struct {
	secret string
	tls    bool
}

func (c secretCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{SecretHeader: c.secret}, nil
}

// RequireTransportSecurity is false: without certificates the secret goes
// in plaintext, which protects against strangers who can reach a port but
// not against those who can read the network (use TLS for that).
func (c secretCreds) RequireTransportSecurity() bool { return false }

// LoadOrCreateSecret returns the secret in path, creating it (a random
// token, readable by its owner only) when the file does not exist. The job
// manager keeps its cluster's secret this way in its data directory.
func LoadOrCreateSecret(path string) (string, error) {
	if s, err := ReadSecret(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	s := hex.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("memberauth: cluster secret: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return ReadSecret(path) // created meanwhile by another process
	}
	if err != nil {
		return "", fmt.Errorf("memberauth: cluster secret: %w", err)
	}
	if _, err := f.WriteString(s + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("memberauth: cluster secret: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", fmt.Errorf("memberauth: cluster secret: %w", err)
	}
	return s, f.Close()
}

// ReadSecret reads the secret in path (surrounding white space ignored).
func ReadSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("memberauth: cluster secret: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("memberauth: cluster secret file %s is empty", path)
	}
	return s, nil
}
