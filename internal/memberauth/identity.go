package memberauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Metadata keys with which a task manager names itself to the job manager,
// and a collect sink proves it was deployed.
const (
	// TaskManagerHeader carries the calling task manager's id.
	TaskManagerHeader = "braid-task-manager"
	// IncarnationHeader carries the incarnation the job manager gave that
	// task manager when it registered: a call of an earlier registration
	// (a process since replaced) or of a member posing as another is
	// refused.
	IncarnationHeader = "braid-incarnation"
	// ResultTokenHeader carries the result token of a job attempt, which
	// only the task managers it was deployed to know.
	ResultTokenHeader = "braid-result-token"
)

// NewToken returns a fresh random token (128 bits, hex).
func NewToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// Equal compares two tokens in constant time.
func Equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// Caller returns the task manager id and incarnation an incoming call
// carries ("" when absent).
func Caller(ctx context.Context) (id, incarnation string) {
	md, _ := metadata.FromIncomingContext(ctx)
	return first(md, TaskManagerHeader), first(md, IncarnationHeader)
}

// ResultToken returns the result token an incoming call carries.
func ResultToken(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	return first(md, ResultTokenHeader)
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) == 1 {
		return v[0]
	}
	return ""
}

// Identify returns interceptors that add the calling task manager's id and
// current incarnation (as incarnation reports them; nothing before the
// first registration) to every outgoing call.
func Identify(id string, incarnation func() string) []grpc.DialOption {
	add := func(ctx context.Context) context.Context {
		if inc := incarnation(); inc != "" {
			return metadata.AppendToOutgoingContext(ctx, TaskManagerHeader, id, IncarnationHeader, inc)
		}
		return ctx
	}
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(add(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(add(ctx), desc, cc, method, opts...)
		}),
	}
}
