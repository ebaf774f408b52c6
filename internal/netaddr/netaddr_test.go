package netaddr

import (
	"net"
	"os"
	"testing"
)

func TestAdvertise(t *testing.T) {
	host, _ := os.Hostname()
	if host == "" {
		host = "127.0.0.1"
	}
	for _, c := range []struct {
		configured, bound, want string
	}{
		{"jm:6123", "0.0.0.0:6123", "jm:6123"},
		{"", "127.0.0.1:7001", "127.0.0.1:7001"},
		{"", "0.0.0.0:7001", net.JoinHostPort(host, "7001")},
		{"", "[::]:7001", net.JoinHostPort(host, "7001")},
	} {
		addr, err := net.ResolveTCPAddr("tcp", c.bound)
		if err != nil {
			t.Fatal(err)
		}
		if got := Advertise(c.configured, addr); got != c.want {
			t.Errorf("Advertise(%q, %s) = %q, want %q", c.configured, c.bound, got, c.want)
		}
	}
}
