// Package msgsize holds, in one place, the largest gRPC message each of
// Braid's connections carries, and the options that set them. gRPC's own
// defaults (4 MiB received, unlimited sent) are never relied on: every
// server and every dial sets both directions explicitly.
//
//	srv := grpc.NewServer(append(opts, msgsize.ControlServerOptions()...)...)
//	conn, err := grpc.NewClient(addr, append(opts, msgsize.ControlDialOptions()...)...)
//
// A message over a limit fails its call with ResourceExhausted; the
// connection stays up.
package msgsize

import "google.golang.org/grpc"

const (
	// Control bounds one message of the control plane, both ways: client
	// requests to the job manager (an ExecuteRequest's script is further
	// limited to 1 MiB by the parser), task managers' calls to the job
	// manager (status reports, collect-sink result chunks) and the job
	// manager's calls to task managers (DeployTasks carries the whole job
	// graph).
	Control = 64 << 20
	// Data bounds one message of the data exchange between task managers
	// (a DataMessage: one Arrow IPC batch or a coalesced group); the
	// shuffle package also checks each payload against it before
	// decoding.
	Data = 64 << 20
	// DataAck bounds what a data sender accepts back: an empty ack.
	DataAck = 4 << 10
	// Result bounds one message the client library accepts from the job
	// manager (an ExecuteResponse carrying a result batch): more than the
	// job manager ever receives from a collect sink (Control), so a wide
	// batch that reached the job manager also reaches the client.
	Result = 256 << 20
)

// ControlServerOptions set the job manager's server limits: Control
// received, Result sent.
func ControlServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(Control), grpc.MaxSendMsgSize(Result)}
}

// ControlDialOptions set the limits of a member's connection to another
// member's control service: Control both ways.
func ControlDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(Control), grpc.MaxCallRecvMsgSize(Control))}
}

// ClientDialOptions set the client library's limits: Control sent (what
// the job manager accepts), Result received.
func ClientDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(Control), grpc.MaxCallRecvMsgSize(Result))}
}
