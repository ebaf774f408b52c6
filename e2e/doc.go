// Package e2e holds Braid's end-to-end tests, plus failure tests on a
// multi-process cluster. The conformance cases from the users' tutorials
// (testdata/conformance, see its README) run three ways:
//
//   - straight through, as a user would: braid sql --local -f CASE.sql on an
//     embedded local cluster (TestConformanceLocal);
//   - against separately started jobmanager and taskmanager processes on
//     loopback, each case in a database of its own (TestConformanceProcesses);
//   - with a savepoint taken mid-run and a restore at another parallelism,
//     through the Go client on an in-process cluster: the final SELECT
//     follows the first part of the input at parallelism 2, stops with a
//     savepoint, and resumes from it at parallelism 1 and 3 after the rest
//     of the input was written; both changelogs together must give the
//     expected result (TestConformanceSavepointRescale).
//
// Cases Braid does not support yet must fail with a positioned "not
// supported yet" error (TestConformanceUnsupported).
//
// The binaries come from $BRAID_BIN when set (make test sets it), otherwise
// TestMain builds them into a temporary directory.
package e2e
