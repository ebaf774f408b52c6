package taskmanager

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"

	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/memberauth"
)

// Defaults of Config.
const (
	DefaultListen          = ":6124"
	DefaultSlots           = 2
	DefaultStateCacheBytes = 256 << 20
)

// Config configures a TaskManager. Zero values select defaults.
type Config struct {
	// JobManager is the job manager's gRPC address, or several separated by
	// commas when job managers run highly available: the task manager
	// registers with whichever leads and follows the leader when it
	// changes. Required.
	JobManager string
	// Listen is the address of TaskService and DataService; DefaultListen
	// when empty, ":0" picks a free port.
	Listen string
	// Advertise is the address other servers use to reach this one. When
	// empty it is the listen address, with an unspecified host replaced by
	// the hostname.
	Advertise string
	// Slots is how many subtasks the task manager offers to run;
	// DefaultSlots when zero.
	Slots int
	// DataDir holds the subtasks' local state, under jobs/<job>/. A
	// temporary directory when empty.
	DataDir string
	// StateCacheBytes is the task manager's budget for the write-back caches
	// of its subtasks' state, split evenly over its slots.
	StateCacheBytes int64
	// ID names the task manager; hostname-port when empty.
	ID     string
	Logger *zap.Logger
	// Build builds subtasks; nil selects the runtime. Tests and embedders
	// that run their own subtasks set it.
	Build BuildFunc
	// Members says how this task manager and the rest of the cluster
	// authenticate each other: the cluster secret that the job manager
	// created (its data dir's cluster-secret, or --cluster-secret-file)
	// and/or member certificates. The zero value trusts everyone and is
	// trusted by no job manager that authenticates its members.
	Members memberauth.Config
}

func (c *Config) setDefaults() error {
	if c.JobManager == "" {
		return errors.New("taskmanager: the job manager's address is required (--jobmanager)")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Slots <= 0 {
		c.Slots = DefaultSlots
	}
	if c.StateCacheBytes <= 0 {
		c.StateCacheBytes = DefaultStateCacheBytes
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return nil
}

// defaultID returns hostname-port, or a random id when the hostname is
// unknown.
func defaultID(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	if h, err := os.Hostname(); err == nil && h != "" && port != "" {
		return h + "-" + port
	}
	var b [6]byte
	rand.Read(b[:])
	return "tm-" + hex.EncodeToString(b[:])
}
