package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestBarrierAligner runs testdata/aligner.txt: "new channels=N [at-least-once]"
// starts an aligner; "barrier ch=C id=I", "end ch=C" and "abort id=I" feed
// it and print the actions.
func TestBarrierAligner(t *testing.T) {
	var a *BarrierAligner
	datadriven.RunTest(t, "testdata/aligner.txt", func(t *testing.T, d *datadriven.TestData) string {
		var ch int
		var id int64
		if d.HasArg("ch") {
			d.ScanArgs(t, "ch", &ch)
		}
		if d.HasArg("id") {
			d.ScanArgs(t, "id", &id)
		}
		var acts []AlignAction
		switch d.Cmd {
		case "new":
			var n int
			d.ScanArgs(t, "channels", &n)
			a = NewBarrierAligner(n, !d.HasArg("at-least-once"))
			return "ok\n"
		case "barrier":
			acts = a.Barrier(ch, id)
		case "end":
			acts = a.ChannelEnded(ch)
		case "abort":
			acts = a.Abort(id)
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var b strings.Builder
		for _, act := range acts {
			fmt.Fprintln(&b, act)
		}
		fmt.Fprintf(&b, "aligning %d\n", a.Aligning())
		return b.String()
	})
}
