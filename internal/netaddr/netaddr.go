// Package netaddr holds the address rule both servers share: the address
// a server is known by when it was not told one.
package netaddr

import (
	"net"
	"os"
)

// Advertise returns the address a server is named by: configured when set,
// else the address it bound, with an unspecified host (":6123",
// "0.0.0.0:6123") replaced by the machine's hostname, or 127.0.0.1 when the
// hostname is unknown.
func Advertise(configured string, bound net.Addr) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return bound.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "127.0.0.1"
		}
	}
	return net.JoinHostPort(host, port)
}
