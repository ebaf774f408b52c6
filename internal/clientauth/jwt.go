package clientauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// roleClaim is the claim that names a JWT principal's role.
const roleClaim = "braid_role"

// jwtVerifier verifies JSON Web Tokens of one issuer against the keys of a
// JWKS file.
type jwtVerifier struct {
	issuer, audience string
	keys             map[string]crypto.PublicKey // by kid; "" for a key without one
}

func newJWTVerifier(issuer, jwksFile, audience string) (*jwtVerifier, error) {
	b, err := os.ReadFile(jwksFile)
	if err != nil {
		return nil, fmt.Errorf("clientauth: JWKS file: %w", err)
	}
	keys, err := parseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("clientauth: JWKS file %s: %w", jwksFile, err)
	}
	return &jwtVerifier{issuer: issuer, audience: audience, keys: keys}, nil
}

func (v *jwtVerifier) verify(token string, now time.Time) (Principal, error) {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"}),
		jwt.WithIssuer(v.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithLeeway(30 * time.Second),
	}
	if v.audience != "" {
		opts = append(opts, jwt.WithAudience(v.audience))
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, ok := v.keys[kid]
		if !ok {
			return nil, fmt.Errorf("no key %q", kid)
		}
		return k, nil
	}, opts...)
	if err != nil {
		return Principal{}, err
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return Principal{}, errors.New("no sub claim")
	}
	p := Principal{Name: sub, Role: Viewer}
	if r, ok := claims[roleClaim].(string); ok && r == "admin" {
		p.Role = Admin
	}
	return p, nil
}

// parseJWKS reads the RSA and EC public keys of a JWKS document.
func parseJWKS(b []byte) (map[string]crypto.PublicKey, error) {
	var doc struct {
		Keys []struct {
			Kty, Kid, Use string
			N, E          string
			Crv, X, Y     string
		} `json:"keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	keys := map[string]crypto.PublicKey{}
	for i, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var pub crypto.PublicKey
		switch k.Kty {
		case "RSA":
			n, err1 := b64int(k.N)
			e, err2 := b64int(k.E)
			if err1 != nil || err2 != nil || !e.IsInt64() || e.Int64() < 3 || n.BitLen() < 2048 {
				return nil, fmt.Errorf("key %d: a bad RSA key (n, e; at least 2048 bits)", i)
			}
			pub = &rsa.PublicKey{N: n, E: int(e.Int64())}
		case "EC":
			var curve elliptic.Curve
			switch k.Crv {
			case "P-256":
				curve = elliptic.P256()
			case "P-384":
				curve = elliptic.P384()
			case "P-521":
				curve = elliptic.P521()
			default:
				return nil, fmt.Errorf("key %d: unsupported curve %q", i, k.Crv)
			}
			x, err1 := base64.RawURLEncoding.DecodeString(k.X)
			y, err2 := base64.RawURLEncoding.DecodeString(k.Y)
			size := (curve.Params().BitSize + 7) / 8
			if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
				return nil, fmt.Errorf("key %d: a bad EC key (x and y of %d bytes each)", i, size)
			}
			// NB: parsing checks that the point is on the curve.
			ec, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
			if err != nil {
				return nil, fmt.Errorf("key %d: a bad EC key: %v", i, err)
			}
			pub = ec
		default:
			continue
		}
		if _, dup := keys[k.Kid]; dup {
			return nil, fmt.Errorf("key %d: kid %q appears twice", i, k.Kid)
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("no RSA or EC signing key")
	}
	return keys, nil
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}
