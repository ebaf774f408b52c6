package connectors

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// ConnectorNexmark generates the Nexmark benchmark's events.
const ConnectorNexmark = "nexmark"

func init() {
	operators.RegisterSource(jobgraph.KindNexmark, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.NexmarkSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewNexmarkSource(*s)
	})
}

// The options of a 'nexmark' table, spelled as the reference connector
// spells them, in the order errors list them.
var nexmarkOptionNames = []string{
	"connector", "events.num", "first-event.rate", "next-event.rate",
	"person.proportion", "auction.proportion", "bid.proportion",
	"bid.hot-ratio.auctions", "auction.hot-ratio.sellers", "bid.hot-ratio.bidders",
	"base-time",
}

// nexmarkSchema is the columns a 'nexmark' table declares, in order.
var nexmarkSchema = types.Schema{
	{Name: "event_type", Type: types.Int},
	{Name: "person", Type: types.Row(
		types.Field{Name: "id", Type: types.BigInt},
		types.Field{Name: "name", Type: types.String},
		types.Field{Name: "emailAddress", Type: types.String},
		types.Field{Name: "creditCard", Type: types.String},
		types.Field{Name: "city", Type: types.String},
		types.Field{Name: "state", Type: types.String},
		types.Field{Name: "dateTime", Type: types.Timestamp(3)},
		types.Field{Name: "extra", Type: types.String},
	)},
	{Name: "auction", Type: types.Row(
		types.Field{Name: "id", Type: types.BigInt},
		types.Field{Name: "itemName", Type: types.String},
		types.Field{Name: "description", Type: types.String},
		types.Field{Name: "initialBid", Type: types.BigInt},
		types.Field{Name: "reserve", Type: types.BigInt},
		types.Field{Name: "dateTime", Type: types.Timestamp(3)},
		types.Field{Name: "expires", Type: types.Timestamp(3)},
		types.Field{Name: "seller", Type: types.BigInt},
		types.Field{Name: "category", Type: types.BigInt},
		types.Field{Name: "extra", Type: types.String},
	)},
	{Name: "bid", Type: types.Row(
		types.Field{Name: "auction", Type: types.BigInt},
		types.Field{Name: "bidder", Type: types.BigInt},
		types.Field{Name: "price", Type: types.BigInt},
		types.Field{Name: "channel", Type: types.String},
		types.Field{Name: "url", Type: types.String},
		types.Field{Name: "dateTime", Type: types.Timestamp(3)},
		types.Field{Name: "extra", Type: types.String},
	)},
}

// NexmarkSpecFor reads the options of a 'nexmark' table (see
// docs/connectors.md) and checks that its physical columns are the
// connector's: event_type INT, then the person, auction and bid ROW
// columns with their fields, names and kinds as the benchmark's DDL
// declares them (any VARCHAR length and TIMESTAMP precision). Without
// 'base-time' the base time is now: the time the job is planned. Errors
// name the table and the option or column.
func NexmarkSpecFor(t *catalog.Table) (jobgraph.NexmarkSpec, error) {
	name := tableName(t)
	spec := jobgraph.NexmarkSpec{
		Schema: t.PhysicalSchema(), Table: name,
		FirstEventRate: 10000, NextEventRate: 10000,
		PersonProportion: 1, AuctionProportion: 3, BidProportion: 46,
		HotAuctionRatio: 2, HotSellerRatio: 4, HotBidderRatio: 4,
		BaseTime: time.Now().UnixMilli(),
	}
	if err := checkNexmarkSchema(spec.Schema); err != nil {
		return spec, fmt.Errorf("table %s: %w", name, err)
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	whole := func(k, v string, least int64, into *int64) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < least {
			return bad(k, "must be a whole number >= %d, got '%s'", least, v)
		}
		*into = n
		return nil
	}
	for _, k := range keys {
		v := strings.TrimSpace(t.Options[k])
		var err error
		switch k {
		case "connector":
		case "events.num":
			err = whole(k, v, 0, &spec.EventsNum)
		case "first-event.rate", "next-event.rate":
			r, perr := strconv.ParseFloat(v, 64)
			// NB: written so that NaN fails too.
			if perr != nil || !(r > 0) || math.IsInf(r, 0) {
				err = bad(k, "must be a positive number of events per second, got '%s'", v)
			} else if k == "first-event.rate" {
				spec.FirstEventRate = r
			} else {
				spec.NextEventRate = r
			}
		case "person.proportion":
			err = whole(k, v, 0, &spec.PersonProportion)
		case "auction.proportion":
			err = whole(k, v, 0, &spec.AuctionProportion)
		case "bid.proportion":
			err = whole(k, v, 0, &spec.BidProportion)
		case "bid.hot-ratio.auctions":
			err = whole(k, v, 1, &spec.HotAuctionRatio)
		case "auction.hot-ratio.sellers":
			err = whole(k, v, 1, &spec.HotSellerRatio)
		case "bid.hot-ratio.bidders":
			err = whole(k, v, 1, &spec.HotBidderRatio)
		case "base-time":
			spec.BaseTime, err = parseNexmarkBaseTime(v)
			if err != nil {
				err = bad(k, "%v", err)
			}
		default:
			err = fmt.Errorf("table %s: unsupported option '%s' for connector 'nexmark' (supported: %s)",
				name, k, strings.Join(nexmarkOptionNames, ", "))
		}
		if err != nil {
			return spec, err
		}
	}
	total := spec.PersonProportion + spec.AuctionProportion + spec.BidProportion
	if total <= 0 {
		return spec, fmt.Errorf("table %s: options 'person.proportion', 'auction.proportion' and 'bid.proportion' are all 0; at least one must be positive", name)
	}
	// NB: a sum past 2^31 would overflow the id arithmetic long before.
	if total > math.MaxInt32 {
		return spec, fmt.Errorf("table %s: options 'person.proportion', 'auction.proportion' and 'bid.proportion' sum to %d, more than %d", name, total, math.MaxInt32)
	}
	return spec, nil
}

// nexmarkMaxBaseTime is 2200-01-01 00:00:00 UTC in ms: timestamps are
// held in nanoseconds, which end in 2262.
const nexmarkMaxBaseTime = 7258118400000

// parseNexmarkBaseTime reads 'base-time': milliseconds since the epoch, or
// a UTC timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]', from 1970 to 2200.
func parseNexmarkBaseTime(v string) (int64, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		found := false
		for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
			if ts, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
				ms, found = ts.UnixMilli(), true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("must be milliseconds since 1970-01-01 UTC or a UTC timestamp such as '2024-01-01 00:00:00', got '%s'", v)
		}
	}
	if ms < 0 || ms >= nexmarkMaxBaseTime {
		return 0, fmt.Errorf("must be from 1970-01-01 to 2200-01-01 UTC, got '%s'", v)
	}
	return ms, nil
}

// checkNexmarkSchema checks that a table's physical columns are the
// connector's.
func checkNexmarkSchema(got types.Schema) error {
	want := nexmarkSchema
	if len(got) != len(want) {
		return fmt.Errorf("a 'nexmark' table has the physical columns %s, in this order; this table has %d (%s)",
			describeNexmarkColumns(want), len(got), strings.Join(got.Names(), ", "))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || !nexmarkTypeFits(g.Type, w.Type) {
			return fmt.Errorf("column %d of a 'nexmark' table must be %s %v, got %s %v",
				i+1, types.QuoteIdent(w.Name), w.Type, types.QuoteIdent(g.Name), g.Type)
		}
	}
	return nil
}

func describeNexmarkColumns(s types.Schema) string {
	parts := make([]string, len(s))
	for i, f := range s {
		parts[i] = f.Name
		if f.Type.IsRow() {
			parts[i] += " ROW<...>"
		} else {
			parts[i] += " " + f.Type.String()
		}
	}
	return strings.Join(parts, ", ")
}

// nexmarkTypeFits reports whether a declared type holds what the
// generator writes for want: the same kind (nullable or not), any VARCHAR
// length and TIMESTAMP precision, and for a ROW the same field names in
// order with fitting types.
func nexmarkTypeFits(got, want types.DataType) bool {
	if got.Kind != want.Kind {
		return false
	}
	if !want.IsRow() {
		return true
	}
	if !got.IsRow() || got.NumFields() != want.NumFields() {
		return false
	}
	for i := 0; i < want.NumFields(); i++ {
		g, w := got.FieldAt(i), want.FieldAt(i)
		if g.Name != w.Name || !nexmarkTypeFits(g.Type, w.Type) {
			return false
		}
	}
	return true
}
