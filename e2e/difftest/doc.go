// Package difftest is a differential test of Braid's streaming engine:
// random tables, rows and queries run on an embedded local cluster and
// through a naive reference evaluator written for the test (ref_test.go),
// which reads the parser's syntax tree and shares no code with the
// planner, expr or operators. The final result of every query (its
// changelog applied to a multiset) must equal the reference's. A query
// that differs is shrunk and reported as a script that braid sql --local
// -f repro.sql --format tsv runs.
//
//	go test ./e2e/difftest                                   # make test's size
//	go test ./e2e/difftest -difftest.cases=5000 -difftest.seed=7
//	go test ./e2e/difftest -difftest.features=+distinct-agg,-tumble
//
// See defaultFeatures in gen_test.go for the generator's switches.
package difftest
