package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/braidflow/braid/operators"
)

// Source positions: what a source's SnapshotState returns and its Open
// gets back in Context.Restore. Each is a small JSON object with a version
// field "v"; a position of an unknown version is refused, so a checkpoint
// taken by a newer Braid fails loudly rather than being misread.

// positionVersion is the version every source writes today.
const positionVersion = 1

// idleEvery is how long a source may wait without emitting before it
// calls operators.Idle, so that checkpoint barriers are not delayed.
const idleEvery = 50 * time.Millisecond

// encodePosition marshals a source's position: a struct with a version
// field V tagged "v".
func encodePosition(v any) ([]byte, error) {
	return json.Marshal(v)
}

// decodePosition unmarshals one position of source kind into v and checks
// its version. version points into v.
func decodePosition(kind string, b []byte, v any, version *int) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: cannot read the checkpointed source position: %w", kind, err)
	}
	if *version != positionVersion {
		return fmt.Errorf("%s: checkpointed source position has version %d; this build reads version %d", kind, *version, positionVersion)
	}
	return nil
}

// logPosition is the position of a source that reads a Kafka topic: the
// next offset to read of each partition it owns. Offsets are keyed by
// partition number in decimal (JSON object keys are strings).
type logPosition struct {
	V       int             `json:"v"`
	Topic   string          `json:"topic"`
	Offsets map[int32]int64 `json:"offsets"`
	// Ends is a bounded read's end offset of each owned partition, as
	// listed when the read first started: a restored bounded read stops
	// where the original one would have, not at what the topic holds by
	// then.
	Ends map[int32]int64 `json:"ends,omitempty"`
}

// restoredOffsets returns the checkpointed next offset of each partition of
// topic that subtask sub of par owns (p % par == sub), and a bounded read's
// end offsets of those partitions. At the checkpoint's parallelism r.State
// holds this subtask's position only; rescaled, it holds every old
// subtask's, and their union is filtered by ownership. Offsets of another
// topic (the table's topic was changed) are ignored. A fresh start returns
// nil maps.
func restoredOffsets(kind, topic string, r operators.Restore, sub, par int) (offsets, ends map[int32]int64, err error) {
	if r.ID == 0 {
		return nil, nil, nil
	}
	offsets, ends = map[int32]int64{}, map[int32]int64{}
	for _, b := range r.State {
		if len(b) == 0 {
			continue
		}
		var pos logPosition
		if err := decodePosition(kind, b, &pos, &pos.V); err != nil {
			return nil, nil, err
		}
		if pos.Topic != topic {
			continue
		}
		if err := mergeOwned(kind, r.ID, topic, offsets, pos.Offsets, sub, par); err != nil {
			return nil, nil, err
		}
		if err := mergeOwned(kind, r.ID, topic, ends, pos.Ends, sub, par); err != nil {
			return nil, nil, err
		}
	}
	return offsets, ends, nil
}

// mergeOwned adds to out the offsets of from whose partitions subtask sub
// of par owns; two different offsets of one partition are an error.
func mergeOwned(kind string, id int64, topic string, out, from map[int32]int64, sub, par int) error {
	for p, o := range from {
		if int(p)%par != sub {
			continue
		}
		if prev, dup := out[p]; dup && prev != o {
			return fmt.Errorf("%s: checkpoint %d holds two positions for topic %q partition %d (%d and %d)", kind, id, topic, p, prev, o)
		}
		out[p] = o
	}
	return nil
}

// idleUntilDone waits for ctx to end, calling operators.Idle every
// idleEvery, and returns ctx's error (or Idle's).
func idleUntilDone(ctx context.Context, out operators.Collector) error {
	t := time.NewTicker(idleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := operators.Idle(out); err != nil {
				return err
			}
		}
	}
}
