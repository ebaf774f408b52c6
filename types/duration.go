package types

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration as Flink's configuration does: a number
// and an optional unit, "3d", "1 h", "10min", "30 s", "500ms"; a bare number
// is milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid duration '%s': it must start with a number, as in '3d', '1 h', '10 min', '500 ms'", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid duration '%s': %v", s, err)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	var u time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		u = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		u = time.Second
	case "m", "min", "mins", "minute", "minutes":
		u = time.Minute
	case "h", "hour", "hours":
		u = time.Hour
	case "d", "day", "days":
		u = 24 * time.Hour
	case "us", "µs", "micro", "micros", "microsecond", "microseconds":
		u = time.Microsecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		u = time.Nanosecond
	default:
		return 0, fmt.Errorf("invalid duration '%s': unknown unit '%s' (use d, h, min, s or ms)", s, unit)
	}
	return time.Duration(n) * u, nil
}
