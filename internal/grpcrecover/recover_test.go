package grpcrecover

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

func TestUnaryInterceptor(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	ic := UnaryInterceptor(zap.New(core))
	info := &grpc.UnaryServerInfo{FullMethod: "/braid.v1.ClientService/Execute"}
	_, err := ic(context.Background(), nil, info, func(context.Context, any) (any, error) {
		var s []int
		return s[3], nil // an index out of range panics
	})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "internal error in /braid.v1.ClientService/Execute: runtime error: index out of range [3] with length 0") {
		t.Errorf("err = %v", err)
	}
	if logs.Len() != 1 || !strings.Contains(logs.All()[0].ContextMap()["stack"].(string), "TestUnaryInterceptor") {
		t.Errorf("panic not logged with its stack: %v", logs.All())
	}
	// A handler that does not panic passes through untouched.
	want := errors.New("plain")
	resp, err := ic(context.Background(), nil, info, func(context.Context, any) (any, error) { return 7, want })
	if resp != 7 || err != want {
		t.Errorf("pass-through = %v, %v", resp, err)
	}
}

func TestStreamInterceptor(t *testing.T) {
	ic := StreamInterceptor(nil)
	info := &grpc.StreamServerInfo{FullMethod: "/braid.v1.DataService/Exchange"}
	err := ic(nil, nil, info, func(any, grpc.ServerStream) error { panic("boom") })
	if status.Code(err) != codes.Internal || status.Convert(err).Message() != "internal error in /braid.v1.DataService/Exchange: boom" {
		t.Errorf("err = %v", err)
	}
}

// TestServerKeepsServing panics in a unary and a streaming handler of a
// real server and checks that the server answers the next call.
func TestServerKeepsServing(t *testing.T) {
	srv := grpc.NewServer(ServerOptions(zap.NewNop())...)
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "test.Panicker",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "Boom", Handler: unary("Boom", func() { panic("unary boom") })},
			{MethodName: "Ok", Handler: unary("Ok", func() {})},
		},
		Streams: []grpc.StreamDesc{{StreamName: "StreamBoom", ServerStreams: true,
			Handler: func(any, grpc.ServerStream) error { panic("stream boom") }}},
	}, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()

	err = conn.Invoke(ctx, "/test.Panicker/Boom", &emptypb.Empty{}, &emptypb.Empty{})
	if status.Code(err) != codes.Internal || status.Convert(err).Message() != "internal error in /test.Panicker/Boom: unary boom" {
		t.Errorf("Boom: %v", err)
	}
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/test.Panicker/StreamBoom")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(&emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	err = st.RecvMsg(&emptypb.Empty{})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "stream boom") {
		t.Errorf("StreamBoom: %v", err)
	}
	if err := conn.Invoke(ctx, "/test.Panicker/Ok", &emptypb.Empty{}, &emptypb.Empty{}); err != nil {
		t.Errorf("the server stopped serving after a panic: %v", err)
	}
}

// unary returns a method handler that decodes an Empty, runs f and answers
// an Empty, going through the server's interceptor.
func unary(name string, f func()) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := &emptypb.Empty{}
		if err := dec(in); err != nil {
			return nil, err
		}
		h := func(context.Context, any) (any, error) {
			f()
			return &emptypb.Empty{}, nil
		}
		if ic == nil {
			return h(ctx, in)
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/test.Panicker/" + name}, h)
	}
}
