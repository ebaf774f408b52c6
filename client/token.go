package client

import (
	"context"
	"crypto/tls"

	"google.golang.org/grpc"
)

// Option configures Dial.
type Option func(*dialOptions)

type dialOptions struct {
	grpc []grpc.DialOption
	// tls, when set, connects over TLS (WithTLS).
	tls *tls.Config
}

// WithToken sends token as a bearer token ("authorization: Bearer
// <token>") with every call, as a job manager that authenticates its
// clients requires (a static token or a JSON Web Token). It is sent over
// plaintext connections too: use it on a network you trust, or with TLS.
// An empty token sends nothing.
func WithToken(token string) Option {
	return func(o *dialOptions) {
		if token != "" {
			o.grpc = append(o.grpc, grpc.WithPerRPCCredentials(bearer(token)))
		}
	}
}

// bearer is a token sent in the authorization metadata of every call.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false: the job manager may serve without TLS.
func (bearer) RequireTransportSecurity() bool { return false }
