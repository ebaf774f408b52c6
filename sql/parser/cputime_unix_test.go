//go:build unix

package parser

import (
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time the process has used, which,
// unlike the wall time, other processes sharing the machine do not inflate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
