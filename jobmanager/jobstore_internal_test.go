package jobmanager

import (
	"strings"
	"testing"
	"time"
)

func TestExpiredJobs(t *testing.T) {
	ended := []endedJob{{"c", 3000}, {"a", 1000}, {"b", 2000}, {"d", 3000}}
	for _, tc := range []struct {
		name string
		now  int64
		cfg  JobStoreConfig
		want string
	}{
		{"none expired", 3500, JobStoreConfig{ExpirationTime: time.Hour}, ""},
		{"by age", 3500, JobStoreConfig{ExpirationTime: 1500 * time.Millisecond}, "a,b"},
		{"age is inclusive", 4000, JobStoreConfig{ExpirationTime: time.Second}, "a,b,c,d"},
		{"by capacity, earliest ended first", 3500, JobStoreConfig{ExpirationTime: time.Hour, MaxCapacity: 1}, "a,b,c"},
		{"capacity and age", 3500, JobStoreConfig{ExpirationTime: 2 * time.Second, MaxCapacity: 3}, "a"},
		{"unlimited and never", 1 << 40, JobStoreConfig{ExpirationTime: -1, MaxCapacity: -1}, ""},
	} {
		if got := strings.Join(expiredJobs(ended, tc.now, tc.cfg), ","); got != tc.want {
			t.Errorf("%s: expired %q, want %q", tc.name, got, tc.want)
		}
	}
	if ended[0].id != "c" {
		t.Fatal("expiredJobs changed its input")
	}
}

func TestParseJobStoreOptions(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want JobStoreConfig
		err  string
	}{
		{map[string]string{}, JobStoreConfig{}, ""},
		{map[string]string{"jobstore.expiration-time": "3600"}, JobStoreConfig{ExpirationTime: time.Hour}, ""},
		{map[string]string{"jobstore.expiration-time": "10 min", "jobstore.max-capacity": "5"}, JobStoreConfig{ExpirationTime: 10 * time.Minute, MaxCapacity: 5}, ""},
		{map[string]string{"jobstore.max-capacity": "-1"}, JobStoreConfig{MaxCapacity: -1}, ""},
		{map[string]string{"jobstore.expiration-time": "0"}, JobStoreConfig{}, "not a positive number of seconds"},
		{map[string]string{"jobstore.expiration-time": "soon"}, JobStoreConfig{}, "invalid duration"},
		{map[string]string{"jobstore.max-capacity": "0"}, JobStoreConfig{}, "not a positive count"},
		{map[string]string{"jobstore.type": "file"}, JobStoreConfig{}, "unknown job store option"},
	} {
		got, err := ParseJobStoreOptions(tc.opts)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one with %q", tc.opts, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.opts, got, err, tc.want)
		}
	}
}
