package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/braidflow/braid/taskmanager"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Result is what one run of a runner measured.
type Result struct {
	Name    string
	Rows    int64
	Elapsed time.Duration
	// RowsPerSec is Rows / Elapsed.
	RowsPerSec float64
	// RowsPerSecPerCore is RowsPerSec / runtime.GOMAXPROCS(0).
	RowsPerSecPerCore float64
	// Extra holds runner-specific figures (peak memory, cache statistics),
	// formatted for people.
	Extra map[string]string
	// Details break the run's figures down (one line per checkpoint, per
	// kill); braid bench prints them indented under the result's line.
	Details []string
}

// newResult fills in the rates of a run.
func newResult(name string, rows int64, elapsed time.Duration) Result {
	r := Result{Name: name, Rows: rows, Elapsed: elapsed, Extra: map[string]string{}}
	if s := elapsed.Seconds(); s > 0 {
		r.RowsPerSec = float64(rows) / s
		r.RowsPerSecPerCore = r.RowsPerSec / float64(runtime.GOMAXPROCS(0))
	}
	return r
}

// ExtraKeys returns the keys of Extra, sorted.
func (r Result) ExtraKeys() []string {
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String formats r on one line: name, rows, seconds, rates, then the extras
// in key order. A run that counts no rows (a checkpoint or recovery run)
// prints only its name and seconds before the extras.
func (r Result) String() string {
	var sb strings.Builder
	if r.Rows == 0 {
		fmt.Fprintf(&sb, "%-18s seconds=%.3f", r.Name, r.Elapsed.Seconds())
	} else {
		fmt.Fprintf(&sb, "%-18s rows=%d seconds=%.3f rows/s=%s rows/s/core=%s",
			r.Name, r.Rows, r.Elapsed.Seconds(), humanRate(r.RowsPerSec), humanRate(r.RowsPerSecPerCore))
	}
	for _, k := range r.ExtraKeys() {
		fmt.Fprintf(&sb, " %s=%s", k, r.Extra[k])
	}
	return sb.String()
}

// humanRate prints a rate with an SI suffix: 12.3M.
func humanRate(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + "G"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "K"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func mib(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + "MiB" }

// ProcMemory is a process's resident memory from /proc/<pid>/status.
type ProcMemory struct {
	// HWM is VmHWM, the peak resident set size; RSS is VmRSS, the current one.
	HWM, RSS uint64
}

// ReadProcMemory reads VmHWM and VmRSS of pid (0 for this process). It fails
// where /proc is not available.
func ReadProcMemory(pid int) (ProcMemory, error) {
	path := "/proc/self/status"
	if pid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ProcMemory{}, err
	}
	var m ProcMemory
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		f := strings.Fields(rest) // "123456 kB"
		if len(f) != 2 || f[1] != "kB" {
			return ProcMemory{}, fmt.Errorf("bench: %s: cannot parse %q", path, sc.Text())
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return ProcMemory{}, fmt.Errorf("bench: %s: %w", path, err)
		}
		if name == "VmHWM" {
			m.HWM = kb << 10
		} else {
			m.RSS = kb << 10
		}
	}
	if m.HWM == 0 && m.RSS == 0 {
		return ProcMemory{}, fmt.Errorf("bench: %s has no VmHWM/VmRSS", path)
	}
	return m, nil
}

// resetPeakRSS asks Linux to reset this process's VmHWM to its current RSS
// (writing 5 to clear_refs), so a runner reports its own peak rather than an
// earlier runner's. It reports whether the reset worked.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// ParseSize parses a positive byte size as the taskmanager's --state-cache
// flag does (taskmanager.ParseSize).
func ParseSize(s string) (int64, error) {
	n, err := taskmanager.ParseSize(s)
	if err == nil && n <= 0 {
		err = fmt.Errorf("%q is not a positive size like 64MB or 64MiB", s)
	}
	return n, err
}
