package memberauth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// reloadEvery bounds how often the certificate files are checked for a
// change.
const reloadEvery = 10 * time.Second

// certs holds a member's certificate and the cluster's CA, read again from
// their files when these change. A file that cannot be read or parsed on
// reload keeps the previous certificates in use.
//
// Member certificates must allow both server and client authentication
// (extended key usages serverAuth and clientAuth): each member both serves
// and calls.
type certs struct {
	certFile, keyFile, caFile string
	serverName                string

	mu struct {
		sync.Mutex
		cert    *tls.Certificate
		pool    *x509.CertPool
		stamps  [3]stamp
		checked time.Time
	}
}

// stamp identifies a version of a file.
type stamp struct {
	mod  time.Time
	size int64
}

func loadCerts(certFile, keyFile, caFile, serverName string) (*certs, error) {
	c := &certs{certFile: certFile, keyFile: keyFile, caFile: caFile, serverName: serverName}
	cert, pool, stamps, err := c.read()
	if err != nil {
		return nil, err
	}
	c.mu.cert, c.mu.pool, c.mu.stamps, c.mu.checked = cert, pool, stamps, time.Now()
	return c, nil
}

func (c *certs) read() (*tls.Certificate, *x509.CertPool, [3]stamp, error) {
	var stamps [3]stamp
	for i, f := range []string{c.certFile, c.keyFile, c.caFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, nil, stamps, fmt.Errorf("memberauth: %w", err)
		}
		stamps[i] = stamp{fi.ModTime(), fi.Size()}
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return nil, nil, stamps, fmt.Errorf("memberauth: certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	ca, err := os.ReadFile(c.caFile)
	if err != nil {
		return nil, nil, stamps, fmt.Errorf("memberauth: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, nil, stamps, fmt.Errorf("memberauth: CA file %s holds no PEM certificate", c.caFile)
	}
	return &cert, pool, stamps, nil
}

// current returns the certificate and CA pool in use, reloading them first
// when a file changed (checked at most every reloadEvery).
func (c *certs) current() (*tls.Certificate, *x509.CertPool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.mu.checked) < reloadEvery {
		return c.mu.cert, c.mu.pool
	}
	c.mu.checked = time.Now()
	var now [3]stamp
	for i, f := range []string{c.certFile, c.keyFile, c.caFile} {
		if fi, err := os.Stat(f); err == nil {
			now[i] = stamp{fi.ModTime(), fi.Size()}
		}
	}
	if now == c.mu.stamps {
		return c.mu.cert, c.mu.pool
	}
	if cert, pool, stamps, err := c.read(); err == nil {
		c.mu.cert, c.mu.pool, c.mu.stamps = cert, pool, stamps
	}
	return c.mu.cert, c.mu.pool
}

// serverConfig serves with the current certificate and verifies client
// certificates, when given, against the current CA. NB: given, not
// required: clients of the client API have none; member methods require a
// verified one (Members.Check).
func (c *certs) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, pool := c.current()
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				Certificates: []tls.Certificate{*cert},
				ClientCAs:    pool,
				ClientAuth:   tls.VerifyClientCertIfGiven,
			}, nil
		},
	}
}

// clientConfig presents the current certificate and verifies the server's
// against the current CA (and serverName, when set).
func (c *certs) clientConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// NB: verified by VerifyConnection against the CA as it is now,
		// which a fixed RootCAs could not follow when the CA file changes.
		InsecureSkipVerify: true,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := c.current()
			if cert == nil {
				return &tls.Certificate{}, nil // none
			}
			return cert, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("memberauth: the server presented no certificate")
			}
			_, pool := c.current()
			opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			if c.serverName != "" {
				opts.DNSName = c.serverName
			}
			if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
				return fmt.Errorf("memberauth: the server's certificate: %w", err)
			}
			return nil
		},
	}
}
