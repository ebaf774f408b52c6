package metastore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Option adjusts how Connect connects to etcd.
type Option func(*clientv3.Config)

// WithTLS connects to etcd over TLS configured by cfg (see TLSConfig);
// nil leaves the connection in plain text.
func WithTLS(cfg *tls.Config) Option {
	return func(c *clientv3.Config) { c.TLS = cfg }
}

// TLSFiles name the PEM files of a TLS connection to an external etcd:
// CAFile verifies etcd's certificate (empty: the system's roots), and
// CertFile and KeyFile are the client certificate etcd may require of its
// clients (both or neither).
type TLSFiles struct {
	CertFile, KeyFile, CAFile string
}

// Empty reports whether no file is named: etcd is reached in plain text.
func (f TLSFiles) Empty() bool { return f == TLSFiles{} }

// Config reads the files into a client TLS configuration; nil when f is
// empty. The files are read once.
func (f TLSFiles) Config() (*tls.Config, error) {
	if f.Empty() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, errors.New("metastore: an etcd client certificate needs both its certificate and its key file")
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("metastore: etcd client certificate %s and key %s: %w", f.CertFile, f.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("metastore: etcd CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("metastore: etcd CA file %s holds no PEM certificate", f.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// tlsHint suggests the TLS settings when a first read of etcd failed in a
// way a TLS mismatch causes; "" otherwise.
func tlsHint(withTLS bool, err error) string {
	m := err.Error()
	switch {
	case withTLS && (strings.Contains(m, "certificate") || strings.Contains(m, "tls:") || strings.Contains(m, "deadline exceeded")):
		return " (over TLS: check that the CA signed etcd's certificate and that etcd accepts the client certificate)"
	case !withTLS && (strings.Contains(m, "deadline exceeded") || strings.Contains(m, "connection reset") || strings.Contains(m, "EOF")):
		return " (if etcd serves TLS, give its CA and a client certificate)"
	}
	return ""
}
