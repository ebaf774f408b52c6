// Command jobmanager runs a Braid job manager.
//
//	jobmanager --listen :6123 --http :8081 --data-dir /var/lib/braid --etcd etcd:2379 --kafka kafka:9092 \
//	  --client-tokens-file /etc/braid/client-tokens
//
// Clients authenticate with a token (--client-tokens-file, or JSON Web
// Tokens with --jwt-issuer and --jwt-jwks-file). Without either every
// caller is the anonymous admin, which is allowed only on a loopback
// --listen or with --insecure.
//
// Without --etcd it runs an embedded etcd, and without --kafka an embedded
// Kafka-protocol broker, both under --data-dir.
//
// With --ha several job managers share one etcd and one Kafka (both
// required): one leads, the others stand by and take over when its lease
// (--leader-lease) lapses. A leader that loses its leadership exits with
// status 3, to be started again as a standby.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/connectors"
	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/jobmanager"
	"github.com/braidflow/braid/metastore"
)

func main() {
	listen := flag.String("listen", jobmanager.DefaultListen, "gRPC listen address")
	httpAddr := flag.String("http", jobmanager.DefaultHTTP, `HTTP address of /healthz and /metrics ("" disables)`)
	dataDir := flag.String("data-dir", "braid-data", "directory of the embedded etcd and broker")
	etcd := flag.String("etcd", "", "comma-separated etcd endpoints (empty: run an embedded etcd)")
	etcdCert := flag.String("etcd-cert", "", "client certificate (PEM) for a TLS connection to --etcd, when etcd requires one")
	etcdKey := flag.String("etcd-key", "", "the key of --etcd-cert (PEM)")
	etcdCA := flag.String("etcd-ca", "", "CA (PEM) that signed etcd's certificate; setting it (or --etcd-cert) connects to --etcd over TLS")
	kafka := flag.String("kafka", "", "comma-separated Kafka bootstrap servers (empty: run an embedded broker)")
	heartbeat := flag.Duration("heartbeat-timeout", jobmanager.DefaultHeartbeatTimeout, "a task manager silent this long is lost")
	// Each --checkpoint-* flag is the cluster's default of one job option;
	// the job manager checks them as it checks the same options in SET.
	cpFlags := map[string]string{
		"checkpoint-interval":           "execution.checkpointing.interval",
		"checkpoint-timeout":            "execution.checkpointing.timeout",
		"checkpoint-min-pause":          "execution.checkpointing.min-pause",
		"checkpoint-max-concurrent":     "execution.checkpointing.max-concurrent-checkpoints",
		"checkpoint-tolerable-failures": "execution.checkpointing.tolerable-failed-checkpoints",
		"checkpoint-mode":               "execution.checkpointing.mode",
		"checkpoints-retained":          "state.checkpoints.num-retained",
	}
	for name, option := range cpFlags {
		flag.String(name, "", "cluster default of '"+option+"' (Flink's syntax, e.g. 10s, AT_LEAST_ONCE)")
	}
	ha := flag.Bool("ha", false, "high availability: campaign for leadership with the other job managers on --etcd (requires --etcd and --kafka)")
	leaderLease := flag.Duration("leader-lease", jobmanager.DefaultLeaderLease, "with --ha, a leader silent this long is replaced (whole seconds)")
	advertise := flag.String("advertise", "", "address task managers and clients reach this job manager at (default: the listen address, hostname for an unspecified host)")
	checkpointDir := flag.String("checkpoint-dir", "", "default checkpoint storage: a directory, file:// or s3://bucket/prefix?endpoint=...&region=... URI (empty: <data-dir>/checkpoints)")
	secretFile := flag.String("cluster-secret-file", "", "file of the secret task managers must present (default: <data-dir>/cluster-secret, created on first start; required with --ha unless certificates are given)")
	tlsCert := flag.String("tls-cert", "", "this member's certificate (PEM) for mutual TLS between job and task managers")
	tlsKey := flag.String("tls-key", "", "the key of --tls-cert (PEM)")
	tlsCA := flag.String("tls-ca", "", "the CA that signs every member's certificate (PEM)")
	allowConnectors := flag.String("allowed-connectors", "", "comma-separated connectors users may create tables with ('managed' for managed tables; empty: any)")
	tokensFile := flag.String("client-tokens-file", "", `clients' static tokens, one "<token> <role> <principal>" per line (role: viewer or admin)`)
	jwtIssuer := flag.String("jwt-issuer", "", `accept clients' JSON Web Tokens of this issuer ("iss"), verified with --jwt-jwks-file`)
	jwksFile := flag.String("jwt-jwks-file", "", "JWKS file of the keys that sign --jwt-issuer's tokens (RSA or EC)")
	jwtAudience := flag.String("jwt-audience", "", `with --jwt-issuer, a JWT's "aud" must contain this (empty: not checked)`)
	insecureClients := flag.Bool("insecure", false, "allow unauthenticated clients (each the anonymous admin) on a non-loopback --listen")
	allowHosts := flag.String("allowed-hosts", "", "comma-separated hosts connectors may reach, host or host:port, '*' matching one label (empty: any)")
	var limits jobmanager.Limits
	flag.IntVar(&limits.SessionMaxNum, "session-max-num", jobmanager.DefaultSessionMaxNum, "most open SQL sessions in the cluster (Flink's sql-gateway.session.max-num)")
	flag.DurationVar(&limits.SessionIdleTimeout, "session-idle-timeout", jobmanager.DefaultSessionIdleTimeout, "a session without statements this long is closed (Flink's sql-gateway.session.idle-timeout)")
	flag.DurationVar(&limits.SessionCheckInterval, "session-check-interval", jobmanager.DefaultSessionCheckInterval, "how often idle sessions are looked for (Flink's sql-gateway.session.check-interval)")
	flag.IntVar(&limits.SessionsPerClient, "sessions-per-client", jobmanager.DefaultSessionsPerClient, "most open SQL sessions of one client (its principal, or its host without client authentication)")
	flag.IntVar(&limits.SessionMaxOptions, "session-max-options", jobmanager.DefaultSessionMaxOptions, "most options (SET) one session holds")
	flag.IntVar(&limits.SessionMaxTemporary, "session-max-temporary", jobmanager.DefaultSessionMaxTemporary, "most temporary tables and views one session holds")
	flag.IntVar(&limits.SessionMaxBytes, "session-max-bytes", jobmanager.DefaultSessionMaxBytes, "most bytes of option keys and values one session holds")
	flag.DurationVar(&limits.PlannerTimeout, "planner-timeout", jobmanager.DefaultPlannerTimeout, "planning one statement stops after this long (braid.planner.timeout)")
	flag.DurationVar(&limits.SlotRequestTimeout, "slot-request-timeout", jobmanager.DefaultSlotRequestTimeout, "a job waits this long for free slots before it fails (Flink's slot.request.timeout; sessions may SET their own)")
	// The --jobstore.* flags carry Flink's options of the same names.
	jsFlags := []string{jobmanager.OptionJobStoreExpiration, jobmanager.OptionJobStoreMaxCapacity}
	flag.String(jobmanager.OptionJobStoreExpiration, "3600", "seconds (or a duration such as 10min) an ended job is kept before it is forgotten")
	flag.String(jobmanager.OptionJobStoreMaxCapacity, "-1", "most ended jobs kept, the earliest ended forgotten first (-1: unlimited)")
	flag.Parse()
	var allow *connectors.Allowlist
	if *allowConnectors != "" || *allowHosts != "" {
		allow = &connectors.Allowlist{Connectors: splitList(*allowConnectors), Hosts: splitList(*allowHosts)}
	}

	cpDefaults := map[string]string{}
	jsOptions := map[string]string{}
	flag.Visit(func(f *flag.Flag) {
		if option, ok := cpFlags[f.Name]; ok {
			cpDefaults[option] = f.Value.String()
		}
		if slices.Contains(jsFlags, f.Name) {
			jsOptions[f.Name] = f.Value.String()
		}
	})
	jobStore, err := jobmanager.ParseJobStoreOptions(jsOptions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobmanager: --"+err.Error())
		os.Exit(2)
	}

	log, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobmanager:", err)
		os.Exit(1)
	}
	defer log.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	jm, err := jobmanager.New(jobmanager.Config{
		Listen: *listen, HTTP: *httpAddr, DataDir: *dataDir,
		Etcd: splitList(*etcd), EtcdTLS: metastore.TLSFiles{CertFile: *etcdCert, KeyFile: *etcdKey, CAFile: *etcdCA},
		Kafka:  splitList(*kafka),
		Logger: log, HeartbeatTimeout: *heartbeat, CheckpointDir: *checkpointDir, CheckpointOptions: cpDefaults,
		HA: *ha, LeaderLease: *leaderLease, Advertise: *advertise,
		ClusterSecretFile: *secretFile, Members: memberauth.Config{CertFile: *tlsCert, KeyFile: *tlsKey, CAFile: *tlsCA},
		Allow:    allow,
		Limits:   limits,
		Clients:  clientauth.Config{TokensFile: *tokensFile, JWTIssuer: *jwtIssuer, JWKSFile: *jwksFile, JWTAudience: *jwtAudience},
		Insecure: *insecureClients,
		JobStore: jobStore,
	})
	if err == nil {
		jm.SetGateway(jobmanager.NewSQLGateway(jm))
		startCtx, cancel := context.WithTimeout(ctx, time.Minute)
		err = jm.Start(startCtx)
		cancel()
	}
	if err != nil {
		// NB: the reason goes to the user plainly, not as a log record
		// with a stack trace.
		fmt.Fprintf(os.Stderr, "job manager did not start: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("jobmanager listening on", jm.Addr())
	if a := jm.HTTPAddr(); a != "" {
		fmt.Println("jobmanager http on", a)
	}
	fmt.Println("jobmanager brokers", strings.Join(jm.Brokers(), ","))
	if jm.AnonymousClients() {
		fmt.Println("jobmanager clients are not authenticated: every caller is admin")
	}
	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case <-jm.Deposed():
		log.Error("lost the leadership; exiting so that this job manager is started again as a standby")
		code = 3
	}
	if err := jm.Close(); err != nil {
		log.Error("shutdown", zap.Error(err))
		code = max(code, 1)
	}
	if code != 0 {
		log.Sync()
		os.Exit(code)
	}
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
