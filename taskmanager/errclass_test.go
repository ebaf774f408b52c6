package taskmanager

import (
	"testing"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// TestWireClass holds types.ErrorClass and the wire enum to the same values.
func TestWireClass(t *testing.T) {
	for c, want := range map[types.ErrorClass]braidv1.ErrorClass{
		types.ClassUnknown:  braidv1.ErrorClass_ERROR_CLASS_UNSPECIFIED,
		types.ClassUser:     braidv1.ErrorClass_ERROR_CLASS_USER,
		types.ClassExternal: braidv1.ErrorClass_ERROR_CLASS_EXTERNAL,
		types.ClassInternal: braidv1.ErrorClass_ERROR_CLASS_INTERNAL,
		types.ClassLostPeer: braidv1.ErrorClass_ERROR_CLASS_LOST_PEER,
		99:                  braidv1.ErrorClass_ERROR_CLASS_UNSPECIFIED,
	} {
		if got := wireClass(c); got != want {
			t.Errorf("wireClass(%v) = %v, want %v", c, got, want)
		}
	}
}
