package clientauth

import (
	"context"

	"google.golang.org/grpc"
)

type principalKey struct{}

// NewContext returns ctx carrying p, the caller of the call ctx belongs to.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal NewContext put in ctx; ok is false when
// there is none (a call that did not pass the interceptor of
// ServerOptions).
func FromContext(ctx context.Context) (p Principal, ok bool) {
	p, ok = ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// ServerOptions returns the interceptors that authenticate the calls of the
// methods client selects (full method names, "/pkg.Service/Method") and
// put the caller's Principal in their contexts (see FromContext). A call
// that fails Authenticate ends there with its Unauthenticated error; calls
// of other methods pass untouched.
func (a *Authenticator) ServerOptions(client func(fullMethod string) bool) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if !client(info.FullMethod) {
				return h(ctx, req)
			}
			p, err := a.Authenticate(ctx)
			if err != nil {
				return nil, err
			}
			return h(NewContext(ctx, p), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if !client(info.FullMethod) {
				return h(srv, ss)
			}
			p, err := a.Authenticate(ss.Context())
			if err != nil {
				return err
			}
			return h(srv, &principalStream{ServerStream: ss, ctx: NewContext(ss.Context(), p)})
		}),
	}
}

// principalStream is a server stream whose context carries the caller.
type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *principalStream) Context() context.Context { return s.ctx }
