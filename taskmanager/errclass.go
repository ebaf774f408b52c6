package taskmanager

import (
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// wireClass converts an error class to its wire enum; the two share their
// values, and an unknown value travels as unspecified.
func wireClass(c types.ErrorClass) braidv1.ErrorClass {
	w := braidv1.ErrorClass(c)
	if _, ok := braidv1.ErrorClass_name[int32(w)]; !ok {
		return braidv1.ErrorClass_ERROR_CLASS_UNSPECIFIED
	}
	return w
}
