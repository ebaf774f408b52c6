package types

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestErrorClass(t *testing.T) {
	base := io.ErrUnexpectedEOF
	err := WithClass(base, ClassExternal)
	if err.Error() != base.Error() {
		t.Errorf("message changed: %q", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not see through the class")
	}
	if got := ClassOf(err); got != ClassExternal {
		t.Errorf("ClassOf = %v, want external", got)
	}
	// Wrapped further, the class is still found.
	wrapped := fmt.Errorf("read orders: %w", err)
	if got := ClassOf(wrapped); got != ClassExternal {
		t.Errorf("ClassOf(wrapped) = %v, want external", got)
	}
	// The outermost class wins.
	if got := ClassOf(WithClass(wrapped, ClassUser)); got != ClassUser {
		t.Errorf("ClassOf(reclassified) = %v, want user", got)
	}
	if ClassOf(base) != ClassUnknown || ClassOf(nil) != ClassUnknown {
		t.Error("an unclassified error has a class")
	}
	if WithClass(nil, ClassUser) != nil {
		t.Error("WithClass(nil) is not nil")
	}
	for c, want := range map[ErrorClass]string{ClassUnknown: "unknown", ClassUser: "user", ClassExternal: "external",
		ClassInternal: "internal", ClassLostPeer: "lost peer", 9: "ErrorClass(9)"} {
		if c.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(c), c.String(), want)
		}
	}
}

type codeErr struct{ code int }

func (e *codeErr) Error() string { return fmt.Sprint("code ", e.code) }

func TestErrorClassAs(t *testing.T) {
	err := WithClass(fmt.Errorf("x: %w", &codeErr{7}), ClassInternal)
	var ce *codeErr
	if !errors.As(err, &ce) || ce.code != 7 {
		t.Errorf("errors.As does not see through the class: %v", ce)
	}
}
