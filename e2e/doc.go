// Package e2e holds Braid's end-to-end tests: the conformance cases from
// the users' tutorials, run through the braid CLI against an embedded local
// cluster and against separately started jobmanager and taskmanager
// processes on loopback, plus failure tests on such a cluster.
//
// The binaries come from $BRAID_BIN when set (make test sets it), otherwise
// TestMain builds them into a temporary directory.
package e2e
