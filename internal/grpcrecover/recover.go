// Package grpcrecover keeps a gRPC server serving when a handler panics:
// its interceptors turn the panic into a codes.Internal error naming the
// method, and log the panic with its stack.
//
//	srv := grpc.NewServer(append(opts, grpcrecover.ServerOptions(log)...)...)
//
// NB: only the handler's own goroutine is covered. A panic in a goroutine
// that a handler starts still kills the process; such goroutines recover
// themselves (as the runtime's subtask loop does).
package grpcrecover

import (
	"context"
	"runtime/debug"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ServerOptions returns the unary and stream interceptors that recover
// panics, logging them to log (nil: no logging).
func ServerOptions(log *zap.Logger) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(UnaryInterceptor(log)),
		grpc.ChainStreamInterceptor(StreamInterceptor(log)),
	}
}

// UnaryInterceptor recovers a panic in a unary handler into a
// codes.Internal error: "internal error in /pkg.Service/Method: <panic>".
func UnaryInterceptor(log *zap.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				resp, err = nil, recovered(log, info.FullMethod, p)
			}
		}()
		return handler(ctx, req)
	}
}

// StreamInterceptor recovers a panic in a streaming handler into a
// codes.Internal error, as UnaryInterceptor does.
func StreamInterceptor(log *zap.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = recovered(log, info.FullMethod, p)
			}
		}()
		return handler(srv, ss)
	}
}

func recovered(log *zap.Logger, method string, p any) error {
	if log != nil {
		log.Error("gRPC handler panicked", zap.String("method", method), zap.Any("panic", p),
			zap.ByteString("stack", debug.Stack()))
	}
	return status.Errorf(codes.Internal, "internal error in %s: %v", method, p)
}
