package jobmanager

import (
	"fmt"
	"time"
)

// Defaults of Limits. The session options are Flink SQL Gateway's
// (sql-gateway.session.*), with a smaller cap on their number; the slot
// request timeout is Flink's slot.request.timeout; the planner timeout is
// Braid's own.
const (
	DefaultSessionMaxNum        = 1000
	DefaultSessionIdleTimeout   = 10 * time.Minute
	DefaultSessionCheckInterval = time.Minute
	DefaultSessionsPerClient    = 100
	DefaultSessionMaxOptions    = 256
	DefaultSessionMaxBytes      = 64 << 10
	DefaultSessionMaxTemporary  = 1000
	DefaultPlannerTimeout       = time.Minute
	DefaultSlotRequestTimeout   = 5 * time.Minute
)

// Limits bound what clients may make the job manager hold. The zero value
// of each field selects its default; none can be switched off.
type Limits struct {
	// SessionMaxNum caps the open SQL sessions of the whole cluster
	// (sql-gateway.session.max-num); OpenSession beyond it fails with
	// ResourceExhausted.
	SessionMaxNum int
	// SessionIdleTimeout closes a session that ran no statement for this
	// long (sql-gateway.session.idle-timeout); a session whose statement
	// still runs is not idle.
	SessionIdleTimeout time.Duration
	// SessionCheckInterval is how often idle sessions are looked for
	// (sql-gateway.session.check-interval).
	SessionCheckInterval time.Duration
	// SessionsPerClient caps the open sessions of one client (see
	// sessionClient).
	SessionsPerClient int
	// SessionMaxOptions caps the options one session holds (SET and
	// OpenSession's properties), and SessionMaxBytes the bytes of their
	// keys and values.
	SessionMaxOptions int
	SessionMaxBytes   int
	// SessionMaxTemporary caps the temporary tables and views one session
	// holds.
	SessionMaxTemporary int
	// PlannerTimeout bounds planning one statement
	// (braid.planner.timeout).
	PlannerTimeout time.Duration
	// SlotRequestTimeout is how long a job waits in the queue for slots
	// before it fails (slot.request.timeout); a session may set its own.
	SlotRequestTimeout time.Duration
}

func (l *Limits) setDefaults() error {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"session max-num", &l.SessionMaxNum, DefaultSessionMaxNum},
		{"sessions per client", &l.SessionsPerClient, DefaultSessionsPerClient},
		{"session max options", &l.SessionMaxOptions, DefaultSessionMaxOptions},
		{"session max bytes", &l.SessionMaxBytes, DefaultSessionMaxBytes},
		{"session max temporary", &l.SessionMaxTemporary, DefaultSessionMaxTemporary},
	} {
		if *f.v < 0 {
			return fmt.Errorf("jobmanager: %s is %d; it must be positive (0 for the default)", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"session idle timeout", &l.SessionIdleTimeout, DefaultSessionIdleTimeout},
		{"session check interval", &l.SessionCheckInterval, DefaultSessionCheckInterval},
		{"planner timeout", &l.PlannerTimeout, DefaultPlannerTimeout},
		{"slot request timeout", &l.SlotRequestTimeout, DefaultSlotRequestTimeout},
	} {
		if *f.v < 0 {
			return fmt.Errorf("jobmanager: %s is %s; it must be positive (0 for the default)", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return nil
}
