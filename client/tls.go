package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// transport returns the transport credentials of the connections: plain
// text unless WithTLS.
func (c *dialOptions) transport() grpc.DialOption {
	if c.tls == nil {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(c.tls))
}

// WithTLS connects over TLS configured by cfg, as job managers whose
// members use mutual TLS require (see TLSFiles); nil means plain text.
// Dial completes a TLS handshake with the first reachable job manager, so
// a certificate that does not verify is reported there.
func WithTLS(cfg *tls.Config) Option {
	return func(c *dialOptions) { c.tls = cfg }
}

// TLSFiles name the PEM files of a TLS connection to job managers. CAFile
// verifies the job manager's certificate (empty: the system's roots).
// CertFile and KeyFile are a client certificate, which job managers accept
// but do not require (both or neither). ServerName, when set, is the name
// the job manager's certificate must carry instead of the endpoint's host.
type TLSFiles struct {
	CAFile, CertFile, KeyFile, ServerName string
}

// Config reads the files into a TLS configuration for WithTLS. The files
// are read once.
func (f TLSFiles) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate %s and key %s: %w", f.CertFile, f.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", f.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
