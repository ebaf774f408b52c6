package clientauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func withToken(tok string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStaticTokens(t *testing.T) {
	path := write(t, "tokens", "# token role principal\nadmin-token-000000001 admin alice\n\nviewer-token-00000001 viewer bob\n")
	a, err := New(Config{TokensFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := a.Authenticate(withToken("admin-token-000000001")); err != nil || p != (Principal{"alice", Admin}) {
		t.Errorf("admin: %+v %v", p, err)
	}
	if p, err := a.Authenticate(withToken("viewer-token-00000001")); err != nil || p != (Principal{"bob", Viewer}) {
		t.Errorf("viewer: %+v %v", p, err)
	}
	for _, ctx := range []context.Context{withToken("nope-nope-nope-nope"), context.Background(),
		metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Basic x"))} {
		if _, err := a.Authenticate(ctx); status.Code(err) != codes.Unauthenticated {
			t.Errorf("bad credentials: %v, want Unauthenticated", err)
		}
	}
	// The file is read again when it changes.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(path, []byte("viewer-token-00000001 admin bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.tokens.mu.Lock()
	a.tokens.mu.checked = time.Time{}
	a.tokens.mu.Unlock()
	if p, err := a.Authenticate(withToken("viewer-token-00000001")); err != nil || p.Role != Admin {
		t.Errorf("after the change: %+v %v", p, err)
	}
	if _, err := a.Authenticate(withToken("admin-token-000000001")); err == nil {
		t.Error("a removed token still works")
	}
	for content, want := range map[string]string{
		"a b":                      "want",
		"short viewer x":           "shorter than 16",
		"0123456789abcdefg root x": "unknown role",
		"0123456789abcdefg viewer x\n0123456789abcdefg admin y": "twice",
	} {
		if _, err := New(Config{TokensFile: write(t, "bad", content)}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("tokens %q: %v, want %q", content, err, want)
		}
	}
}

func TestAnonymous(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := a.Authenticate(context.Background()); err != nil || p != Anonymous || a.Enabled() {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	jwks := fmt.Sprintf(`{"keys":[{"kty":"EC","kid":"k1","use":"sig","crv":"P-256","x":"%s","y":"%s"}]}`,
		b64(key.X.FillBytes(make([]byte, 32))), b64(key.Y.FillBytes(make([]byte, 32))))
	a, err := New(Config{JWTIssuer: "https://idp.example", JWKSFile: write(t, "jwks.json", jwks), JWTAudience: "braid"})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(k *ecdsa.PrivateKey, claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now()
	good := jwt.MapClaims{"iss": "https://idp.example", "sub": "carol", "aud": "braid", "exp": now.Add(time.Hour).Unix(), "braid_role": "admin"}
	if p, err := a.Authenticate(withToken(sign(key, good))); err != nil || p != (Principal{"carol", Admin}) {
		t.Errorf("good token: %+v %v", p, err)
	}
	viewer := jwt.MapClaims{"iss": "https://idp.example", "sub": "dan", "aud": "braid", "exp": now.Add(time.Hour).Unix()}
	if p, err := a.Authenticate(withToken(sign(key, viewer))); err != nil || p != (Principal{"dan", Viewer}) {
		t.Errorf("token without a role: %+v %v", p, err)
	}
	for name, c := range map[string]jwt.MapClaims{
		"expired":      {"iss": "https://idp.example", "sub": "x", "aud": "braid", "exp": now.Add(-time.Hour).Unix()},
		"other issuer": {"iss": "https://evil.example", "sub": "x", "aud": "braid", "exp": now.Add(time.Hour).Unix()},
		"other aud":    {"iss": "https://idp.example", "sub": "x", "aud": "other", "exp": now.Add(time.Hour).Unix()},
		"no exp":       {"iss": "https://idp.example", "sub": "x", "aud": "braid"},
		"no sub":       {"iss": "https://idp.example", "aud": "braid", "exp": now.Add(time.Hour).Unix()},
	} {
		if _, err := a.Authenticate(withToken(sign(key, c))); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
	}
	if _, err := a.Authenticate(withToken(sign(other, good))); status.Code(err) != codes.Unauthenticated {
		t.Errorf("signed by another key: %v", err)
	}
	// alg=none and HMAC tokens are refused whatever they claim.
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, good).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := a.Authenticate(withToken(none)); status.Code(err) != codes.Unauthenticated {
		t.Errorf("alg none: %v", err)
	}
	if _, err := New(Config{JWTIssuer: "x"}); err == nil {
		t.Error("an issuer without JWKS was accepted")
	}
}
