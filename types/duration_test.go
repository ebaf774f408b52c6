package types

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3d": 72 * time.Hour, "1 h": time.Hour, "10min": 10 * time.Minute, "30 s": 30 * time.Second,
		"500ms": 500 * time.Millisecond, "1500": 1500 * time.Millisecond, " 2 days ": 48 * time.Hour,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "3 weeks", "-1s", "1.5h"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}
