package connectors

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// nexmarkBase is the base time of the tests: 2024-01-01 00:00:00 UTC.
const nexmarkBase = 1704067200000

func nexmarkTable(opts map[string]string) *catalog.Table {
	t := &catalog.Table{Database: "db", Name: "nx", Options: map[string]string{"connector": "nexmark", "base-time": "2024-01-01 00:00:00"}}
	for k, v := range opts {
		t.Options[k] = v
	}
	for _, c := range nexmarkSchema {
		t.Columns = append(t.Columns, catalog.Column{Name: c.Name, Type: c.Type})
	}
	return t
}

// nexEvent is one decoded event.
type nexEvent struct {
	num  int64 // event number within its split
	eid  int64
	kind int32
	f    []any // the non-NULL ROW's fields
}

// field returns the named field of the event's ROW.
func (e nexEvent) field(name string) any {
	t := nexmarkSchema[e.kind+1].Type
	return e.f[t.FieldIndex(name)]
}

// runNexmark runs subtask sub of par of table tb to its end and decodes
// its events.
func runNexmark(t *testing.T, tb *catalog.Table, sub, par int) []nexEvent {
	t.Helper()
	spec, err := NexmarkSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	src, err := operators.NewSource(&spec)
	if err != nil {
		t.Fatal(err)
	}
	out := &batchCollector{}
	defer out.release()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := runSource(t, ctx, src, &operators.Context{Subtask: sub, Parallelism: par}, out); err != nil {
		t.Fatal(err)
	}
	first, _ := nexmarkSplit(spec.EventsNum, spec.PersonProportion+spec.AuctionProportion+spec.BidProportion, sub, par)
	return decodeNexmark(t, out.batches, first, 0)
}

// decodeNexmark decodes batches whose first event is number k0+1 of a
// split whose first id is first+1, checking that exactly one ROW is set.
func decodeNexmark(t *testing.T, bs []types.Batch, first, k0 int64) []nexEvent {
	t.Helper()
	var evs []nexEvent
	for _, b := range bs {
		et := b.Column(0).(*array.Int32)
		for i := range b.NumRows() {
			k0++
			e := nexEvent{num: k0, eid: first + k0, kind: et.Value(i)}
			for c := 1; c <= 3; c++ {
				col := b.Column(c).(*array.Binary)
				if col.IsNull(i) != (int32(c-1) != e.kind) {
					t.Fatalf("event %d of type %d: ROW column %d null=%v", e.eid, e.kind, c, col.IsNull(i))
				}
				if col.IsNull(i) {
					continue
				}
				_, vals, err := types.DecodeComposite(nexmarkSchema[c].Type, col.Value(i))
				if err != nil {
					t.Fatalf("event %d: %v", e.eid, err)
				}
				e.f = vals
			}
			evs = append(evs, e)
		}
	}
	return evs
}

func TestNexmarkFirstEventsAndProportions(t *testing.T) {
	evs := runNexmark(t, nexmarkTable(map[string]string{"events.num": "1000"}), 0, 1)
	if len(evs) != 1000 {
		t.Fatalf("%d events, want 1000", len(evs))
	}
	// The first event has id 2: an auction, the second of epoch 0 (id
	// 1001; id 1, auction 1000, never occurs).
	if e := evs[0]; e.eid != 2 || e.kind != 1 || e.field("id") != int64(1001) {
		t.Fatalf("first event: id %d type %d auction id %v; want id 2, an auction with id 1001", e.eid, e.kind, e.f)
	}
	// Event 3 is auction 1002, 4 a bid, 50 the second person (epoch 1),
	// 51..53 auctions 1003..1005 (epoch 1's auctions are 3, 4, 5).
	want := map[int64][2]int64{2: {1, 1001}, 3: {1, 1002}, 4: {2, 0}, 50: {0, 1001}, 51: {1, 1003}, 52: {1, 1004}, 53: {1, 1005}, 100: {0, 1002}}
	for _, e := range evs {
		if w, ok := want[e.eid]; ok {
			if int64(e.kind) != w[0] || e.kind != 2 && e.field("id") != w[1] {
				t.Errorf("event %d: type %d id %v, want type %d id %d", e.eid, e.kind, e.field("id"), w[0], w[1])
			}
		}
	}
	// Every run of 50 consecutive ids holds 1 person, 3 auctions, 46 bids.
	for start := 0; start+50 <= len(evs); start += 17 {
		var n [3]int
		for _, e := range evs[start : start+50] {
			n[e.kind]++
		}
		if n != [3]int{1, 3, 46} {
			t.Fatalf("events %d..%d: %v people, auctions, bids; want [1 3 46]", evs[start].eid, evs[start+49].eid, n)
		}
	}
	// Person ids are epoch + 1000.
	for _, e := range evs {
		if e.kind == 0 && e.field("id") != e.eid/50+1000 {
			t.Errorf("person event %d has id %v, want %d", e.eid, e.field("id"), e.eid/50+1000)
		}
	}
}

func TestNexmarkLastIDs(t *testing.T) {
	spec, err := NexmarkSpecFor(nexmarkTable(nil))
	if err != nil {
		t.Fatal(err)
	}
	g := newNexmarkGen(&spec, 0, 1)
	cases := []struct{ eid, person, auction int64 }{
		{2, 0, 1}, {3, 0, 2}, {4, 0, 2}, {49, 0, 2}, {50, 1, 2}, {51, 1, 3}, {53, 1, 5}, {54, 1, 5}, {100, 2, 5}, {5003, 100, 302},
	}
	for _, c := range cases {
		if p, a := g.lastPerson(g.pos(c.eid)), g.lastAuction(g.pos(c.eid)); p != c.person || a != c.auction {
			t.Errorf("event %d: last person %d auction %d, want %d %d", c.eid, p, a, c.person, c.auction)
		}
	}
}

func TestNexmarkHotKeysAndValues(t *testing.T) {
	evs := runNexmark(t, nexmarkTable(map[string]string{"events.num": "200000"}), 0, 1)
	spec, _ := NexmarkSpecFor(nexmarkTable(nil))
	g := newNexmarkGen(&spec, 0, 1)
	var bids, hotAuction, hotBidder, auctions, hotSeller, cheap, hotChannel int
	minPrice, maxPrice := int64(math.MaxInt64), int64(0)
	prices := func(p int64) {
		minPrice, maxPrice = min(minPrice, p), max(maxPrice, p)
		if p < 100000 { // u < 0.5
			cheap++
		}
	}
	var sizes [3]float64
	var counts [3]int
	hotNames := map[string]bool{"Google": true, "Facebook": true, "Baidu": true, "Apple": true}
	for _, e := range evs {
		counts[e.kind]++
		sizes[e.kind] += float64(nexmarkSize(e))
		switch e.kind {
		case 1:
			auctions++
			if e.field("seller").(int64) == g.lastPerson(g.pos(e.eid))/100*100+1000 {
				hotSeller++
			}
			if c := e.field("category").(int64); c < 10 || c > 14 {
				t.Fatalf("auction %d: category %d", e.eid, c)
			}
			ib, res := e.field("initialBid").(int64), e.field("reserve").(int64)
			prices(ib)
			if res-ib < 100 || res-ib > 1e8 {
				t.Fatalf("auction %d: reserve %d - initialBid %d is not a price", e.eid, res, ib)
			}
			dt, ex := e.field("dateTime").(int64), e.field("expires").(int64)
			// h = ts(n+1666) - ts(n) = 166 or 167 ms at 10000 events/s.
			if ex <= dt || ex > dt+2*167*1e6 {
				t.Fatalf("auction %d: expires %d ms after it opens", e.eid, (ex-dt)/1e6)
			}
		case 2:
			bids++
			if e.field("auction").(int64) == g.lastAuction(g.pos(e.eid))/100*100+1000 {
				hotAuction++
			}
			if e.field("bidder").(int64) == g.lastPerson(g.pos(e.eid))/100*100+1+1000 {
				hotBidder++
			}
			prices(e.field("price").(int64))
			if hotNames[e.field("channel").(string)] {
				hotChannel++
			}
		}
	}
	frac := func(n, of int) float64 { return float64(n) / float64(of) }
	// The hot key's share, plus the small chance that a random recent key
	// is the hot one.
	for _, c := range []struct {
		what   string
		got    float64
		lo, hi float64
	}{
		{"hot auction share of bids", frac(hotAuction, bids), 0.49, 0.53},
		{"hot bidder share of bids", frac(hotBidder, bids), 0.74, 0.77},
		{"hot seller share of auctions", frac(hotSeller, auctions), 0.73, 0.78},
		{"hot channel share of bids", frac(hotChannel, bids), 0.49, 0.51},
		{"share of prices below 1e5", frac(cheap, bids+auctions), 0.49, 0.51},
		{"average person size", sizes[0] / float64(counts[0]), 195, 205},
		{"average auction size", sizes[1] / float64(counts[1]), 490, 510},
	} {
		if !(c.got >= c.lo && c.got <= c.hi) {
			t.Errorf("%s: %.4f, want %v..%v", c.what, c.got, c.lo, c.hi)
		}
	}
	if minPrice < 100 || maxPrice > 1e8 || minPrice > 110 || maxPrice < 9e7 {
		t.Errorf("prices range over %d..%d, want about 100..1e8", minPrice, maxPrice)
	}
}

// nexmarkSize is an event's size as the generator counts it to pad
// 'extra': 8 bytes per number or timestamp, plus its strings.
func nexmarkSize(e nexEvent) int {
	n := 0
	for _, v := range e.f {
		switch v := v.(type) {
		case int64:
			n += 8
		case string:
			n += len(v)
		}
	}
	return n
}

var (
	nexWord  = regexp.MustCompile(`^([a-z][a-z ]*[a-z]|[a-z])?$`)
	nexEmail = regexp.MustCompile(`^([a-z][a-z ]*[a-z]|[a-z])?@([a-z][a-z ]*[a-z]|[a-z])?\.com$`)
	nexCard  = regexp.MustCompile(`^\d{4} \d{4} \d{4} \d{4}$`)
	nexURL   = regexp.MustCompile(`^https://www\.nexmark\.com/[a-z_]{5}/[a-z_]{5}/[a-z_]{5}/item\.htm\?query=1(&channel_id=\d+)?$`)
	nexExtra = regexp.MustCompile(`^[a-z]*$`)
)

func TestNexmarkStrings(t *testing.T) {
	evs := runNexmark(t, nexmarkTable(map[string]string{"events.num": "50000"}), 0, 1)
	in := func(s string, list []string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	str := func(e nexEvent, name string) string { return e.field(name).(string) }
	check := func(e nexEvent, name string, re *regexp.Regexp, maxLen int) {
		if s := str(e, name); !re.MatchString(s) || len(s) > maxLen {
			t.Fatalf("event %d: %s %q does not fit %v (at most %d bytes)", e.eid, name, s, re, maxLen)
		}
	}
	channelURL := map[string]string{}
	var letters [26]int
	var withID, cold int
	for _, e := range evs {
		switch e.kind {
		case 0:
			first, last, _ := strings.Cut(str(e, "name"), " ")
			if !in(first, nexmarkFirstNames) || !in(last, nexmarkLastNames) {
				t.Fatalf("person %d: name %q", e.eid, str(e, "name"))
			}
			check(e, "emailAddress", nexEmail, 6+1+4+4)
			check(e, "creditCard", nexCard, 19)
			if !in(str(e, "city"), nexmarkCities) || !in(str(e, "state"), nexmarkStates) {
				t.Fatalf("person %d: city %q state %q", e.eid, str(e, "city"), str(e, "state"))
			}
			check(e, "extra", nexExtra, 240) // at most 1.2 × (200 - size)
		case 1:
			check(e, "itemName", nexWord, 19)
			check(e, "description", nexWord, 99)
			check(e, "extra", nexExtra, 600)
			for _, c := range str(e, "extra") {
				letters[c-'a']++
			}
		case 2:
			check(e, "url", nexURL, 100)
			ch, url := str(e, "channel"), str(e, "url")
			if prev, ok := channelURL[ch]; ok && prev != url {
				t.Fatalf("channel %s has urls %q and %q", ch, prev, url)
			}
			channelURL[ch] = url
			if strings.HasPrefix(ch, "channel-") {
				cold++
				if strings.Contains(url, "&channel_id=") {
					withID++
				}
			} else if strings.Contains(url, "&channel_id=") {
				t.Fatalf("hot channel %s has url %q", ch, url)
			}
			// A bid that is padded is within 20% of 100 bytes.
			if s := nexmarkSize(e); len(str(e, "extra")) > 0 && (s < 80 || s > 120) {
				t.Fatalf("bid %d: %d bytes with its padding", e.eid, s)
			}
		}
	}
	total := 0
	for _, n := range letters {
		total += n
	}
	for i, n := range letters {
		if f := float64(n) * 26 / float64(total); f < 0.97 || f > 1.03 {
			t.Errorf("letter %c is %.3f times as frequent in auctions' extra as uniform", 'a'+i, f)
		}
	}
	if f := float64(withID) / float64(cold); f < 0.87 || f > 0.93 {
		t.Errorf("%.3f of cold channels' urls have a channel_id, want about 0.9", f)
	}
	// channel_id is the absolute value of c's bits reversed.
	_, coldTable := nexmarkChannelTables()
	for c, want := range map[int]string{2: "&channel_id=1073741824", 3: "&channel_id=1073741824"} {
		url := string(coldTable[c].appendURL(nil))
		if strings.Contains(url, "&channel_id=") && !strings.Contains(url, want) {
			t.Errorf("channel-%d: url %q, want it to end with %s", c, url, want)
		}
	}
}

func TestNexmarkTimestamps(t *testing.T) {
	for _, par := range []int{1, 4} {
		tb := nexmarkTable(map[string]string{"events.num": "4000"})
		for sub := range par {
			evs := runNexmark(t, tb, sub, par)
			if len(evs) != 4000/par {
				t.Fatalf("P=%d split %d: %d events, want %d", par, sub, len(evs), 4000/par)
			}
			if first := int64(1 + sub*(4000/par)); evs[0].eid != first+1 {
				t.Fatalf("P=%d split %d: first event id %d, want %d", par, sub, evs[0].eid, first+1)
			}
			for _, e := range evs {
				// 10000 events/s: 100 µs apart, times P per split.
				want := nexmarkBase + e.num*100*int64(par)/1000
				if got := e.field("dateTime").(int64) / 1e6; got != want {
					t.Fatalf("P=%d split %d event %d (number %d): dateTime %d, want %d", par, sub, e.eid, e.num, got, want)
				}
			}
		}
	}
	// 3 events per second: (n × 333333.33 µs) truncated, then to ms.
	evs := runNexmark(t, nexmarkTable(map[string]string{"events.num": "7", "first-event.rate": "3"}), 0, 1)
	var got []int64
	for _, e := range evs {
		got = append(got, e.field("dateTime").(int64)/1e6-nexmarkBase)
	}
	if want := []int64{333, 666, 1000, 1333, 1666, 2000, 2333}; !reflect.DeepEqual(got, want) {
		t.Errorf("timestamps at 3 events/s: %v, want %v", got, want)
	}
}

// withoutTimes is an event's content without its timestamps (dateTime,
// and an auction's expires, which is drawn relative to it).
func withoutTimes(e nexEvent) string {
	t := nexmarkSchema[e.kind+1].Type
	f := append([]any(nil), e.f...)
	f[t.FieldIndex("dateTime")] = nil
	if e.kind == 1 {
		f[t.FieldIndex("expires")] = nil
	}
	return fmt.Sprint(e.kind, f)
}

func TestNexmarkSameContentAtAnyParallelism(t *testing.T) {
	tb := nexmarkTable(map[string]string{"events.num": "5000"})
	one := map[int64]string{}
	for _, e := range runNexmark(t, tb, 0, 1) {
		one[e.eid] = withoutTimes(e)
	}
	seen := 0
	for sub := range 4 {
		for _, e := range runNexmark(t, tb, sub, 4) {
			seen++
			if want, ok := one[e.eid]; !ok || want != withoutTimes(e) {
				t.Fatalf("event %d at P=4: %s; at P=1: %s", e.eid, withoutTimes(e), want)
			}
		}
	}
	if seen != len(one) {
		t.Fatalf("P=4 emits %d events, P=1 %d", seen, len(one))
	}
}

// snapshotAt snapshots src after its n-th batch and then stops it.
type snapshotAt struct {
	batchCollector
	src  *NexmarkSource
	n    int
	snap []byte
}

func (c *snapshotAt) Emit(b types.Batch) error {
	if err := c.batchCollector.Emit(b); err != nil {
		return err
	}
	if len(c.batches) == c.n {
		var err error
		if c.snap, err = c.src.SnapshotState(1); err != nil {
			return err
		}
		return errStopped
	}
	return nil
}

func TestNexmarkRestoreContinues(t *testing.T) {
	tb := nexmarkTable(map[string]string{"events.num": "30000"})
	const par, sub = 2, 1
	want := runNexmark(t, tb, sub, par)

	spec, err := NexmarkSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := nexmarkSplit(spec.EventsNum, 50, sub, par)
	src, _ := NewNexmarkSource(spec)
	c := &snapshotAt{src: src, n: 2}
	defer c.release()
	octx := &operators.Context{Subtask: sub, Parallelism: par, SourceBatchRows: 1000}
	if err := runSource(t, context.Background(), src, octx, c); !errors.Is(err, errStopped) {
		t.Fatalf("run: %v", err)
	}
	got := decodeNexmark(t, c.batches, first, 0)

	// A restore planned later (another base time) continues the
	// checkpointed timeline.
	spec.BaseTime += 12345
	src2, _ := NewNexmarkSource(spec)
	rest := &batchCollector{}
	defer rest.release()
	octx = &operators.Context{Subtask: sub, Parallelism: par, Restore: operators.Restore{ID: 1, State: [][]byte{c.snap}}}
	if err := runSource(t, context.Background(), src2, octx, rest); err != nil {
		t.Fatal(err)
	}
	got = append(got, decodeNexmark(t, rest.batches, first, 2000)...)
	if len(got) != len(want) {
		t.Fatalf("%d events after the restore, want %d", len(got), len(want))
	}
	for i := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("event %d differs after the restore:\n got %v\nwant %v", i, got[i], want[i])
		}
	}

	// At another parallelism the splits differ: refused.
	src3, _ := NewNexmarkSource(spec)
	octx = &operators.Context{Subtask: 0, Parallelism: 3, Restore: operators.Restore{ID: 1, State: [][]byte{c.snap}, Rescaled: true}}
	err = src3.Open(octx)
	if err == nil || !strings.Contains(err.Error(), "cannot be restored at another parallelism (2 -> 3)") {
		t.Fatalf("rescaled restore: %v", err)
	}
	// A position from a newer build, or one past the split's end.
	for state, want := range map[string]string{
		`{"v":99,"events":3}`:                                "checkpointed source position has version 99",
		`{"v":1,"subtask":1,"parallelism":2,"events":15001}`: "checkpointed position 15001 is past this subtask's 15000 events",
		`{"v":1,"subtask":0,"parallelism":2,"events":5}`:     "checkpoint 1 holds no position for subtask 1",
	} {
		src, _ := NewNexmarkSource(spec)
		err := src.Open(&operators.Context{Subtask: sub, Parallelism: par, Restore: operators.Restore{ID: 1, State: [][]byte{[]byte(state)}}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("restore from %s: %v, want %q", state, err, want)
		}
	}
}

func TestNexmarkUnbounded(t *testing.T) {
	spec, err := NexmarkSpecFor(nexmarkTable(nil))
	if err != nil {
		t.Fatal(err)
	}
	if spec.EventsNum != 0 {
		t.Fatalf("events.num defaults to %d", spec.EventsNum)
	}
	// As the reference: MaxInt64 / (50 × 500) events in all.
	first, count := nexmarkSplit(0, 50, 1, 2)
	if total := int64(math.MaxInt64 / 25000); first != 1+total/2 || count != total-total/2 {
		t.Fatalf("unbounded split 1 of 2: first %d count %d", first, count)
	}
	src, _ := NewNexmarkSource(spec)
	out := newCollector(nexmarkSchema)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runSource(t, ctx, src, &operators.Context{Parallelism: 1, SourceBatchRows: 100}, out) }()
	out.waitRows(t, 1000)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("unbounded run ended with %v", err)
	}
}

func TestNexmarkSpecErrors(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"events.num": "-1"}, "option 'events.num' must be a whole number >= 0, got '-1'"},
		{map[string]string{"first-event.rate": "NaN"}, "option 'first-event.rate' must be a positive number of events per second, got 'NaN'"},
		{map[string]string{"next-event.rate": "0"}, "option 'next-event.rate' must be a positive number"},
		{map[string]string{"bid.proportion": "-3"}, "option 'bid.proportion' must be a whole number >= 0, got '-3'"},
		{map[string]string{"person.proportion": "0", "auction.proportion": "0", "bid.proportion": "0"}, "are all 0; at least one must be positive"},
		{map[string]string{"bid.hot-ratio.auctions": "0"}, "option 'bid.hot-ratio.auctions' must be a whole number >= 1, got '0'"},
		{map[string]string{"auction.hot-ratio.sellers": "1.5"}, "option 'auction.hot-ratio.sellers' must be a whole number >= 1"},
		{map[string]string{"base-time": "yesterday"}, "option 'base-time' must be milliseconds since 1970-01-01 UTC or a UTC timestamp"},
		{map[string]string{"base-time": "1969-12-31 23:00:00"}, "option 'base-time' must be from 1970-01-01 to 2200-01-01 UTC, got '1969-12-31 23:00:00'"},
		{map[string]string{"base-time": "9223372036854775807"}, "option 'base-time' must be from 1970-01-01 to 2200-01-01 UTC"},
		{map[string]string{"rows-per-second": "5"}, "unsupported option 'rows-per-second' for connector 'nexmark' (supported: connector, events.num,"},
	} {
		_, err := NexmarkSpecFor(nexmarkTable(c.opts))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.opts, err, c.want)
		}
	}
	tb := nexmarkTable(nil)
	tb.Columns[2].Name = "auctions"
	_, err := NexmarkSpecFor(tb)
	if want := "column 3 of a 'nexmark' table must be `auction` ROW<"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("renamed column: %v", err)
	}
	tb = nexmarkTable(nil)
	bid := nexmarkSchema[3].Type
	fields := make([]types.Field, bid.NumFields())
	for i := range fields {
		fields[i] = bid.FieldAt(i)
	}
	fields[2].Type = types.Double // price
	tb.Columns[3].Type = types.Row(fields...)
	if _, err := NexmarkSpecFor(tb); err == nil || !strings.Contains(err.Error(), "`price` DOUBLE") {
		t.Errorf("DOUBLE price: %v", err)
	}
	tb = nexmarkTable(nil)
	tb.Columns = tb.Columns[:3]
	if _, err := NexmarkSpecFor(tb); err == nil || !strings.Contains(err.Error(), "this table has 3 (event_type, person, auction)") {
		t.Errorf("3 columns: %v", err)
	}
	// Declared lengths and precisions other than the DDL's are accepted.
	tb = nexmarkTable(map[string]string{"base-time": "1704067200000"})
	tb.Columns[0].Type = types.Int.WithNullable(false)
	spec, err := NexmarkSpecFor(tb)
	if err != nil || spec.BaseTime != nexmarkBase {
		t.Errorf("base time in ms: %v, %d", err, spec.BaseTime)
	}
	// Through the resolver: planned as a source, refused as a sink.
	var r Resolver
	if s, _, err := r.SourceSpec(nexmarkTable(nil), false); err != nil || s.Kind() != jobgraph.KindNexmark {
		t.Errorf("source spec: %v", err)
	}
	if _, err := r.SinkSpec(nexmarkTable(nil)); err == nil || !strings.Contains(err.Error(), "can only be used as a source") {
		t.Errorf("sink spec: %v", err)
	}
}

// BenchmarkNexmarkGenerator measures one core generating the default
// mix of events into 4096-row batches. events/cpu-s divides by the
// process's CPU time (garbage collection on other threads included),
// which a machine shared with other work distorts less than wall time.
func BenchmarkNexmarkGenerator(b *testing.B) {
	spec, err := NexmarkSpecFor(nexmarkTable(nil))
	if err != nil {
		b.Fatal(err)
	}
	src, _ := NewNexmarkSource(spec)
	if err := src.Open(&operators.Context{Parallelism: 1}); err != nil {
		b.Fatal(err)
	}
	const n = 4096
	var bytes int64
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt := src.generate(int64(i)*n, n)
		for c := 1; c <= 3; c++ {
			bytes += int64(len(bt.Column(c).(*array.Binary).ValueBytes()))
		}
		bt.Release()
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.N)*n/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
	b.ReportMetric(float64(bytes)/float64(b.N*n), "bytes/event")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestNexmarkPriceMatchesPow(t *testing.T) {
	var r, ref nexRand
	r.seed(1)
	ref.seed(1)
	off := 0
	for range 1000000 {
		got := r.price()
		u := ref.float()
		want := math.Round(math.Pow(10, 6*u) * 100)
		if d := float64(got) - want; d != 0 {
			// Only a value within rounding noise of a tie may differ.
			if math.Abs(d) > 1 || math.Abs(math.Pow(10, 6*u)*100-math.Floor(math.Pow(10, 6*u)*100)-0.5) > 1e-5 {
				t.Fatalf("u=%v: price %d, want %v", u, got, want)
			}
			off++
		}
	}
	if off > 10 {
		t.Errorf("%d of 1000000 prices differ from math.Pow's", off)
	}
}

// TestNexmarkUIDIgnoresBaseTime checks that planning a nexmark query
// again (another base time, another pace) keeps the source's uid, so a
// savepoint restores into it.
func TestNexmarkUIDIgnoresBaseTime(t *testing.T) {
	uid := func(opts map[string]string) string {
		spec, err := NexmarkSpecFor(nexmarkTable(opts))
		if err != nil {
			t.Fatal(err)
		}
		g := &jobgraph.Graph{Vertices: []*jobgraph.Vertex{{ID: 0, Parallelism: 1, Chain: []*jobgraph.Operator{{Name: "Source: nx", Spec: &spec}}}}}
		if err := jobgraph.AssignUIDs(g); err != nil {
			t.Fatal(err)
		}
		return g.Vertices[0].Chain[0].UID
	}
	a := uid(map[string]string{"base-time": "1000"})
	if b := uid(map[string]string{"base-time": "2000", "events.num": "7", "first-event.rate": "5"}); a != b {
		t.Errorf("uids %s and %s differ with the base time", a, b)
	}
	if b := uid(map[string]string{"base-time": "1000", "bid.proportion": "40"}); a == b {
		t.Errorf("uid %s is the same with other proportions", a)
	}
}

// TestNexmarkOtherProportions checks event types and ids with
// proportions other than the defaults: 2 people, 5 auctions and 13 bids
// in every 20 ids, from a split that starts mid-epoch.
func TestNexmarkOtherProportions(t *testing.T) {
	tb := nexmarkTable(map[string]string{"events.num": "3000", "person.proportion": "2", "auction.proportion": "5", "bid.proportion": "13"})
	evs := runNexmark(t, tb, 1, 3) // ids 1002..2001
	if evs[0].eid != 1002 {
		t.Fatalf("first id %d", evs[0].eid)
	}
	var n [3]int
	lastPerson, lastAuction := int64(-1), int64(-1)
	for _, e := range evs {
		n[e.kind]++
		r := e.eid % 20
		want := int32(2)
		if r < 2 {
			want = 0
		} else if r < 7 {
			want = 1
		}
		if e.kind != want {
			t.Fatalf("event %d: type %d, want %d", e.eid, e.kind, want)
		}
		switch e.kind {
		case 0:
			// Ids count on from the previous person's.
			id := e.field("id").(int64)
			if want := e.eid/20*2 + r + 1000; id != want || lastPerson >= 0 && id != lastPerson+1 {
				t.Fatalf("person %d: id %d, want %d after %d", e.eid, id, want, lastPerson)
			}
			lastPerson = id
		case 1:
			id := e.field("id").(int64)
			if want := e.eid/20*5 + r - 2 + 1000; id != want || lastAuction >= 0 && id != lastAuction+1 {
				t.Fatalf("auction %d: id %d, want %d after %d", e.eid, id, want, lastAuction)
			}
			lastAuction = id
		}
	}
	if n != [3]int{100, 250, 650} {
		t.Errorf("%v people, auctions, bids; want [100 250 650]", n)
	}
}
