package types

import (
	"errors"
	"strconv"
)

// ErrorClass says who caused a failure, so that the job manager can decide
// whether restarting a job can help. Its values are those of the wire enum
// braidv1.ErrorClass, in the same order; types does not import the proto
// package, so the two servers convert at their gRPC boundary.
type ErrorClass int

const (
	// ClassUnknown is a failure nobody classified.
	ClassUnknown ErrorClass = iota
	// ClassUser: the query or its data is wrong (a record that does not
	// parse, a division by zero that fails the job); a restart replays the
	// same input and fails the same way.
	ClassUser
	// ClassExternal: a system outside Braid failed (Kafka, etcd, S3).
	ClassExternal
	// ClassInternal: a bug in Braid (a panic, a broken invariant).
	ClassInternal
	// ClassLostPeer: another process of the cluster went away (a task
	// manager, a data connection).
	ClassLostPeer
)

func (c ErrorClass) String() string {
	switch c {
	case ClassUnknown:
		return "unknown"
	case ClassUser:
		return "user"
	case ClassExternal:
		return "external"
	case ClassInternal:
		return "internal"
	case ClassLostPeer:
		return "lost peer"
	}
	return "ErrorClass(" + strconv.Itoa(int(c)) + ")"
}

// classified is an error with a class. Its message is the wrapped error's,
// unchanged.
type classified struct {
	err   error
	class ErrorClass
}

func (e *classified) Error() string { return e.err.Error() }
func (e *classified) Unwrap() error { return e.err }

// WithClass returns err marked with class c; errors.Is and errors.As see
// through the mark, and the message is err's. WithClass(nil, c) is nil.
func WithClass(err error, c ErrorClass) error {
	if err == nil {
		return nil
	}
	return &classified{err: err, class: c}
}

// ClassOf returns the class of the outermost classified error in err's
// chain: a layer that knows more (say, a sink that recognises a bad record
// inside a Kafka error) wraps again and wins. ClassUnknown when none.
func ClassOf(err error) ErrorClass {
	var c *classified
	if errors.As(err, &c) {
		return c.class
	}
	return ClassUnknown
}
