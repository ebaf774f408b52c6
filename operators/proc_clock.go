package operators

import "time"

// procClock is the processing-time clock of a window aggregate over a
// PROCTIME() attribute: rows go to the windows of the time they arrive,
// read once per batch from the context's clock (injectable in tests), and
// windows fire from OnProcessingTime.
type procClock struct {
	proctime bool
	now      func() time.Time
	nowMs    int64 // the clock at the batch being processed
}

// procTimeInterval is how often the runtime calls a processing-time window
// aggregate's OnProcessingTime.
const procTimeInterval = 50 * time.Millisecond

func (c *procClock) openClock(ctx *Context, proctime bool) {
	c.proctime, c.now = proctime, ctx.Now
	if c.now == nil {
		c.now = time.Now
	}
}

// tick reads the clock for the next batch.
func (c *procClock) tick() {
	if c.proctime {
		c.nowMs = c.now().UnixMilli()
	}
}

// ProcessingTimeInterval asks for processing-time calls only over
// processing time.
func (c *procClock) ProcessingTimeInterval() time.Duration {
	if c.proctime {
		return procTimeInterval
	}
	return 0
}
