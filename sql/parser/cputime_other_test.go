//go:build !unix

package parser

import "time"

// cpuTime is not measured here: BenchmarkParseLarge reports no CPU time.
func cpuTime() time.Duration { return 0 }
