package main

import (
	"flag"
	"os"

	"github.com/braidflow/braid/client"
)

// tlsFlags adds the flags of a TLS connection to the job manager to fs;
// the function it returns gives Dial's options once fs is parsed (none
// when no flag and no BRAID_TLS_* variable is set).
func tlsFlags(fs *flag.FlagSet) func() ([]client.Option, error) {
	ca := fs.String("tls-ca", os.Getenv("BRAID_TLS_CA"), "connect over TLS, verifying the job manager's certificate with the CA in `FILE` (PEM), as a job manager whose members use mutual TLS requires (default $BRAID_TLS_CA)")
	cert := fs.String("tls-cert", os.Getenv("BRAID_TLS_CERT"), "present the client certificate in `FILE` (PEM) over TLS; optional (default $BRAID_TLS_CERT)")
	key := fs.String("tls-key", os.Getenv("BRAID_TLS_KEY"), "the key of --tls-cert, `FILE` (PEM) (default $BRAID_TLS_KEY)")
	name := fs.String("tls-server-name", "", "the `NAME` the job manager's certificate must carry (default: the endpoint's host)")
	return func() ([]client.Option, error) {
		files := client.TLSFiles{CAFile: *ca, CertFile: *cert, KeyFile: *key, ServerName: *name}
		if files == (client.TLSFiles{}) {
			return nil, nil
		}
		cfg, err := files.Config()
		if err != nil {
			return nil, err
		}
		return []client.Option{client.WithTLS(cfg)}, nil
	}
}
