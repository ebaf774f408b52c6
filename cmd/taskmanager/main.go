// Command taskmanager runs a Braid task manager.
//
//	taskmanager --jobmanager jobmanager:6123 --cluster-secret-file /etc/braid/cluster-secret --listen :6124 --slots 4 --data-dir /var/lib/braid --state-cache 256MiB
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	_ "github.com/braidflow/braid/connectors" // registers every source and sink
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/taskmanager"
)

func main() {
	jm := flag.String("jobmanager", "127.0.0.1:6123", "the job manager's gRPC address, or a comma-separated list of highly available job managers (the task manager follows the leader)")
	listen := flag.String("listen", taskmanager.DefaultListen, "listen address of TaskService and DataService")
	advertise := flag.String("advertise", "", "address others reach this task manager at (default: the listen address, hostname for an unspecified host)")
	slots := flag.Int("slots", taskmanager.DefaultSlots, "number of slots")
	dataDir := flag.String("data-dir", "", "directory of local state (default: a temporary directory)")
	stateCache := flag.String("state-cache", "256MiB", "state cache budget, e.g. 256MB, 64MiB, 1GiB")
	id := flag.String("id", "", "task manager id (default: hostname-port)")
	secretFile := flag.String("cluster-secret-file", "", "file of the cluster secret (the job manager's <data-dir>/cluster-secret, or its --cluster-secret-file)")
	tlsCert := flag.String("tls-cert", "", "this member's certificate (PEM) for mutual TLS between job and task managers")
	tlsKey := flag.String("tls-key", "", "the key of --tls-cert (PEM)")
	tlsCA := flag.String("tls-ca", "", "the CA that signs every member's certificate (PEM)")
	flag.Parse()
	members := memberauth.Config{CertFile: *tlsCert, KeyFile: *tlsKey, CAFile: *tlsCA}
	if *secretFile != "" {
		secret, err := memberauth.ReadSecret(*secretFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "taskmanager: --cluster-secret-file:", err)
			os.Exit(2)
		}
		members.Secret = secret
	}

	cache, err := taskmanager.ParseSize(*stateCache)
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskmanager: --state-cache:", err)
		os.Exit(2)
	}
	log, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskmanager:", err)
		os.Exit(1)
	}
	defer log.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tm, err := taskmanager.New(taskmanager.Config{
		JobManager: *jm, Listen: *listen, Advertise: *advertise, Slots: *slots,
		DataDir: *dataDir, StateCacheBytes: cache, ID: *id, Logger: log, Members: members,
	})
	if err == nil {
		err = tm.Start(ctx)
	}
	if err != nil {
		// NB: the reason goes to the user plainly, not as a log record
		// with a stack trace.
		fmt.Fprintf(os.Stderr, "task manager did not start: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("taskmanager listening on", tm.Addr())
	fmt.Println("taskmanager id", tm.ID())
	<-ctx.Done()
	log.Info("shutting down")
	if err := tm.Close(); err != nil {
		log.Error("shutdown", zap.Error(err))
		os.Exit(1)
	}
}
