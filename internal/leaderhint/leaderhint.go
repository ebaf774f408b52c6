// Package leaderhint is how a standby job manager names the leader in its
// answers, and how task managers and clients read it back: codes.Unavailable
// with an ErrorInfo detail (reason "NOT_LEADER", domain "braid", metadata
// "leader" = the leader's address, "" while none leads).
package leaderhint

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reason is the ErrorInfo reason of a standby's answer.
const Reason = "NOT_LEADER"

// Key is the ErrorInfo metadata key holding the leader's address.
const Key = "leader"

// Error returns a standby's answer: Unavailable with msg, naming leader.
func Error(leader, msg string) error {
	st, err := status.New(codes.Unavailable, msg).WithDetails(&errdetails.ErrorInfo{
		Reason: Reason, Domain: "braid", Metadata: map[string]string{Key: leader},
	})
	if err != nil {
		return status.Error(codes.Unavailable, msg)
	}
	return st.Err()
}

// Parse returns the leader's address a standby named in err; ok is false
// when err is not a standby's answer. leader is "" when no job manager
// led when the standby answered.
func Parse(err error) (leader string, ok bool) {
	st, isStatus := status.FromError(err)
	if !isStatus || st.Code() != codes.Unavailable {
		return "", false
	}
	for _, d := range st.Details() {
		if info, isInfo := d.(*errdetails.ErrorInfo); isInfo && info.Reason == Reason {
			return info.Metadata[Key], true
		}
	}
	return "", false
}
