package taskmanager

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"256MB": 256e6, "64MiB": 64 << 20, "1GiB": 1 << 30, "1.5k": 1536, "4096": 4096, "10 b": 10, "2gb": 2e9,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MB", "-1MB", "12XB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}
