package taskmanager

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize parses a byte size such as the --state-cache flag takes: a
// number with an optional unit, decimal (KB, MB, GB, TB) or binary (KiB,
// MiB, GiB, TiB; K, M, G are binary too), case-insensitive; "B" or no unit
// is bytes.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mult   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size like 256MB or 64MiB", s)
	}
	return int64(n * float64(mult)), nil
}
