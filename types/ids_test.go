package types

import (
	"strings"
	"testing"
)

func TestCheckID(t *testing.T) {
	for _, id := range []string{"a", "9f2c1d0e5b7a4c3d", "tm-a", "host.example.com-6124", "job_1"} {
		if err := CheckID("job id", id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for id, want := range map[string]string{
		"":                       "job id is empty",
		"../../x":                "may hold only",
		"a/b":                    "may hold only",
		".hidden":                "must start with a letter or digit",
		"-x":                     "must start",
		"a b":                    "may hold only",
		"a\x00":                  "may hold only",
		strings.Repeat("a", 129): "over the limit of 128",
		"caf\u00e9":              "may hold only",
	} {
		if err := CheckID("job id", id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", id, err, want)
		}
	}
}
