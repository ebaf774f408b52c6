package leaderhint

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParse(t *testing.T) {
	if got, ok := Parse(Error("10.0.0.2:6123", "standby")); !ok || got != "10.0.0.2:6123" {
		t.Fatalf("Parse = %q, %v", got, ok)
	}
	if got, ok := Parse(Error("", "no leader")); !ok || got != "" {
		t.Fatalf("Parse without a leader = %q, %v", got, ok)
	}
	for _, err := range []error{nil, errors.New("x"), status.Error(codes.Unavailable, "connection refused")} {
		if _, ok := Parse(err); ok {
			t.Errorf("Parse(%v) found a hint", err)
		}
	}
}
