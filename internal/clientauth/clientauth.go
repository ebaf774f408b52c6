// Package clientauth authenticates the clients of a job manager's client
// API and says what each may do.
//
// A client presents a bearer token in the "authorization" metadata of every
// call ("Bearer <token>"). The job manager accepts:
//
//   - static tokens from a tokens file, one per line: "<token> <role>
//     <principal>", with '#' comments; the file is read again when it
//     changes;
//   - JSON Web Tokens signed by a configured issuer, verified against the
//     keys of a JWKS file (RS256, RS384, RS512, ES256, ES384, ES512): the
//     principal is the "sub" claim, the role the "braid_role" claim
//     ("viewer" unless it says "admin"), and "exp", "nbf", "iss" and, when
//     configured, "aud" are checked.
//
// Without a tokens file or an issuer every caller is the anonymous admin
// (Config.Anonymous), which a job manager allows only on loopback or when
// told --insecure.
//
// Roles: a viewer lists, describes and cancels its own jobs and runs
// statements that change nothing beyond its session (queries, SHOW,
// DESCRIBE, EXPLAIN, SET, RESET, USE); an admin also changes the catalog,
// runs INSERTs, stops, rescales and takes savepoints, and sees and cancels
// every principal's jobs.
package clientauth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Role is what a principal may do.
type Role int

const (
	// Viewer lists and describes its own jobs and runs read-only queries.
	Viewer Role = iota
	// Admin may do everything.
	Admin
)

func (r Role) String() string {
	if r == Admin {
		return "admin"
	}
	return "viewer"
}

// ParseRole reads "viewer" or "admin".
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "viewer":
		return Viewer, nil
	case "admin":
		return Admin, nil
	}
	return Viewer, fmt.Errorf("unknown role %q (roles: viewer, admin)", s)
}

// Principal is an authenticated caller.
type Principal struct {
	Name string
	Role Role
}

// Anonymous is the caller of a job manager without authentication.
var Anonymous = Principal{Name: "anonymous", Role: Admin}

// IsAdmin reports whether p may do everything.
func (p Principal) IsAdmin() bool { return p.Role == Admin }

// Config says how clients authenticate.
type Config struct {
	// TokensFile holds static tokens ("<token> <role> <principal>" lines).
	TokensFile string
	// JWTIssuer and JWKSFile enable JSON Web Tokens of that issuer, signed
	// by a key of the JWKS file; JWTAudience, when set, must be in "aud".
	JWTIssuer, JWKSFile, JWTAudience string
}

// Enabled reports whether cfg authenticates anyone (else every caller is
// Anonymous).
func (cfg Config) Enabled() bool { return cfg.TokensFile != "" || cfg.JWTIssuer != "" }

// Authenticator checks bearer tokens.
type Authenticator struct {
	cfg    Config
	tokens *tokensFile // nil without a tokens file
	jwt    *jwtVerifier
}

// New reads cfg's files; a missing or malformed file fails here.
func New(cfg Config) (*Authenticator, error) {
	a := &Authenticator{cfg: cfg}
	if cfg.TokensFile != "" {
		t := &tokensFile{path: cfg.TokensFile}
		if err := t.load(); err != nil {
			return nil, err
		}
		a.tokens = t
	}
	if (cfg.JWTIssuer == "") != (cfg.JWKSFile == "") {
		return nil, errors.New("clientauth: a JWT issuer needs a JWKS file, and a JWKS file an issuer")
	}
	if cfg.JWTIssuer != "" {
		v, err := newJWTVerifier(cfg.JWTIssuer, cfg.JWKSFile, cfg.JWTAudience)
		if err != nil {
			return nil, err
		}
		a.jwt = v
	}
	return a, nil
}

// Enabled reports whether callers must authenticate.
func (a *Authenticator) Enabled() bool { return a.cfg.Enabled() }

// Authenticate returns the principal of the call in ctx: Anonymous when
// authentication is off, else the principal its bearer token names. A
// missing, unknown, expired or badly signed token is Unauthenticated, with
// no detail beyond that.
func (a *Authenticator) Authenticate(ctx context.Context) (Principal, error) {
	if !a.Enabled() {
		return Anonymous, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) != 1 {
		return Principal{}, status.Error(codes.Unauthenticated, "a bearer token is required (braid --token or BRAID_TOKEN)")
	}
	tok, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok || tok == "" {
		return Principal{}, status.Error(codes.Unauthenticated, `the authorization metadata must be "Bearer <token>"`)
	}
	if a.tokens != nil {
		if p, ok := a.tokens.lookup(tok); ok {
			return p, nil
		}
	}
	if a.jwt != nil && strings.Count(tok, ".") == 2 {
		if p, err := a.jwt.verify(tok, time.Now()); err == nil {
			return p, nil
		}
	}
	return Principal{}, status.Error(codes.Unauthenticated, "the token is not valid")
}

// tokensFile is a static tokens file, read again when it changes (checked
// at most every reloadEvery). A change that cannot be read keeps the
// tokens in use.
type tokensFile struct {
	path string
	mu   struct {
		sync.Mutex
		tokens  map[string]Principal
		mod     time.Time
		size    int64
		checked time.Time
	}
}

const reloadEvery = 5 * time.Second

func (t *tokensFile) load() error {
	fi, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("clientauth: tokens file: %w", err)
	}
	tokens, err := parseTokens(t.path)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.mu.tokens, t.mu.mod, t.mu.size, t.mu.checked = tokens, fi.ModTime(), fi.Size(), time.Now()
	t.mu.Unlock()
	return nil
}

func (t *tokensFile) lookup(tok string) (Principal, bool) {
	t.mu.Lock()
	stale := time.Since(t.mu.checked) >= reloadEvery
	if stale {
		t.mu.checked = time.Now()
	}
	t.mu.Unlock()
	if stale {
		if fi, err := os.Stat(t.path); err == nil {
			t.mu.Lock()
			changed := !fi.ModTime().Equal(t.mu.mod) || fi.Size() != t.mu.size
			t.mu.Unlock()
			if changed {
				_ = t.load() // NB: a bad edit keeps the old tokens
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.mu.tokens[tok]
	return p, ok
}

// parseTokens reads a tokens file.
func parseTokens(path string) (map[string]Principal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("clientauth: tokens file: %w", err)
	}
	defer f.Close()
	out := map[string]Principal{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("clientauth: %s:%d: want \"<token> <role> <principal>\"", path, n)
		}
		role, err := ParseRole(fields[1])
		if err != nil {
			return nil, fmt.Errorf("clientauth: %s:%d: %v", path, n, err)
		}
		if len(fields[0]) < 16 {
			return nil, fmt.Errorf("clientauth: %s:%d: the token is shorter than 16 characters", path, n)
		}
		if _, dup := out[fields[0]]; dup {
			return nil, fmt.Errorf("clientauth: %s:%d: the token appears twice", path, n)
		}
		out[fields[0]] = Principal{Name: fields[2], Role: role}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("clientauth: tokens file: %w", err)
	}
	return out, nil
}
