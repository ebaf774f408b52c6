package shuffle

import (
	"strings"
	"testing"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// TestControlEventRoundTrip: every control event crosses the wire as it
// was sent, and values no sender writes are refused.
func TestControlEventRoundTrip(t *testing.T) {
	for _, ev := range []Event{
		{Kind: EventEndOfInput}, {Kind: EventWatermark, Value: -5}, {Kind: EventBarrier, Value: 3},
		{Kind: EventEndOfData}, {Kind: EventStop}, {Kind: EventIdle, Value: 1}, {Kind: EventIdle, Value: 0},
	} {
		got, err := eventFromProto(eventToProto(ev))
		if err != nil || got != ev {
			t.Errorf("%v: back as %v, %v", ev, got, err)
		}
	}
	for _, c := range []struct {
		e    *braidv1.ControlEvent
		want string
	}{
		{&braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_IDLE, Value: 2}, "idleness 2"},
		{&braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_BARRIER, Value: 0}, "checkpoint 0"},
		{&braidv1.ControlEvent{Kind: 99}, "unknown control event"},
	} {
		if _, err := eventFromProto(c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.e, err, c.want)
		}
	}
}
