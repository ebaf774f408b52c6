package connectors

import (
	"fmt"
	"net"
	"path"
	"strings"

	"github.com/braidflow/braid/catalog"
)

// Allowlist limits what tables users may create on a shared cluster:
// which connectors, and which hosts a connector may reach. A nil list
// allows anything.
type Allowlist struct {
	// Connectors are the connector names users may create tables with
	// ('connector' option values); "managed" names managed tables (no
	// 'connector' option). Nil allows every connector.
	Connectors []string
	// Hosts are the hosts a connector may reach (Kafka bootstrap servers,
	// databases): a host name or address, optionally with ":port", and
	// '*' matching within one label ("*.kafka.internal"). Nil allows every
	// host; the cluster's own default log is always allowed.
	Hosts []string
}

// ManagedConnector names managed tables in Allowlist.Connectors.
const ManagedConnector = "managed"

// checkTable refuses a table whose connector or hosts the list does not
// allow, naming the table, what is refused and what is allowed.
func (a *Allowlist) checkTable(t *catalog.Table, hosts []string) error {
	if a == nil {
		return nil
	}
	conn := t.Connector()
	name := conn
	if conn == "" {
		name = ManagedConnector
	}
	if a.Connectors != nil && !contains(a.Connectors, name) {
		return fmt.Errorf("table %s: connector '%s' is not allowed on this cluster (allowed: %s)", tableName(t), name, strings.Join(a.Connectors, ", "))
	}
	if a.Hosts == nil {
		return nil
	}
	for _, h := range hosts {
		if !a.allowsHost(h) {
			return fmt.Errorf("table %s: host %s is not allowed on this cluster (allowed: %s)", tableName(t), h, strings.Join(a.Hosts, ", "))
		}
	}
	return nil
}

// allowsHost reports whether addr (host or host:port) matches an allowed
// host pattern.
func (a *Allowlist) allowsHost(addr string) bool {
	host, port := addr, ""
	if h, p, err := net.SplitHostPort(addr); err == nil {
		host, port = h, p
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pat := range a.Hosts {
		ph, pp := pat, ""
		if h, p, err := net.SplitHostPort(pat); err == nil {
			ph, pp = h, p
		}
		if pp != "" && pp != port {
			continue
		}
		// NB: path.Match's '*' stops at '/', not '.': check label counts
		// so that "*.example.com" does not match "a.b.example.com".
		ph = strings.ToLower(ph)
		if strings.Count(ph, ".") != strings.Count(host, ".") {
			continue
		}
		if ok, _ := path.Match(ph, host); ok {
			return true
		}
	}
	return false
}
