package connectors

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"

	"github.com/braidflow/braid/jobgraph"
)

// The Nexmark generator. Every column of an event is a pure function of
// its event id, except the timestamps, which also depend on the event's
// number within its split and the parallelism (see nexmarkGen.timestamp).
// Each event draws its random values from its own generator, seeded by
// its id, so its content is the same at any parallelism and after a
// restore.

// Constants of the reference generator.
const (
	nexmarkFirstID          = 1000  // the first person and auction id
	nexmarkHotRatio         = 100   // hot ids are multiples of it
	nexmarkActivePeople     = 1000  // recent people a random person is drawn from
	nexmarkInFlightAuctions = 100   // recent auctions a random auction is drawn from
	nexmarkIDLead           = 10    // ids past the last, which may not exist yet
	nexmarkChannels         = 10000 // cold channels, 'channel-0' .. 'channel-9999'
	nexmarkFirstCategory    = 10
	nexmarkCategories       = 5
	nexmarkAvgPerson        = 200 // target event sizes in bytes
	nexmarkAvgAuction       = 500
	nexmarkAvgBid           = 100
	// nexmarkMaxAvgSize is the largest target size, which scales the
	// event count of an unbounded table down as in the reference.
	nexmarkMaxAvgSize = nexmarkAvgAuction
)

var (
	nexmarkFirstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	nexmarkLastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	nexmarkCities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	nexmarkStates     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	nexmarkHotNames   = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// nexRand is a SplitMix64 generator: tiny, fast, and good enough for
// synthetic data. The zero value is usable; seed sets its state.
type nexRand struct{ s uint64 }

func (r *nexRand) seed(x uint64) { r.s = splitmix64(x) }

func (r *nexRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n) for n > 0 (Lemire's multiply-shift,
// whose bias is below 2^-40 for the bounds used here).
func (r *nexRand) intn(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// float returns a value in [0, 1).
func (r *nexRand) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// price is round(10^(6u) × 100) for u uniform in [0, 1): log-uniform
// from 100 to 1e8.
// NB: 10^(6u) is a table entry for u's top 10 bits times e^x for the
// rest (x < 0.0135) by its Taylor series to x^5, whose relative error,
// below 1e-14, leaves the rounded price exact but within 1e-6 of a tie;
// math.Pow took a quarter of the generator's time.
func (r *nexRand) price() int64 {
	v := r.next() >> 11 // 53 bits: u = v / 2^53
	hi := v >> (53 - nexPriceBits)
	x := float64(v&(1<<(53-nexPriceBits)-1)) * (6 * math.Ln10 / (1 << 53))
	e := 1 + x*(1+x*(1.0/2+x*(1.0/6+x*(1.0/24+x*(1.0/120)))))
	return int64(nexPriceTable[hi]*e + 0.5)
}

// nexPriceTable holds 100 × 10^(6k / 2^nexPriceBits).
const nexPriceBits = 10

var nexPriceTable = func() (t [1 << nexPriceBits]float64) {
	for k := range t {
		t[k] = 100 * math.Pow(10, 6*float64(k)/(1<<nexPriceBits))
	}
	return t
}()

// Characters of generated strings: a space (or, in urls, an underscore)
// with probability 1/13, else a lowercase letter. One value in [0, 338)
// picks both: below 26 the special character, else letter (v-26) mod 26.
const nexCharSpan = 13 * 26

// appendChars appends n characters to dst, the special one being sp.
// NB: three characters share one 64-bit draw, 21 bits each, scaled to
// [0, 338) by a multiply and shift (a bias below 2e-4).
func (r *nexRand) appendChars(dst []byte, n int, sp byte) []byte {
	for n > 0 {
		x := r.next()
		for j := 0; j < 3 && n > 0; j++ {
			v := (x & (1<<21 - 1)) * nexCharSpan >> 21
			x >>= 21
			if v < 26 {
				dst = append(dst, sp)
			} else {
				dst = append(dst, byte('a'+(v-26)%26))
			}
			n--
		}
	}
	return dst
}

// appendLetters appends n random lowercase letters.
// NB: four letters share one 64-bit draw, 16 bits each scaled to [0, 26)
// (a bias below 4e-4). Two multiplies scale them, two 16-bit chunks in
// the two 32-bit lanes of each (26 × 2^16 < 2^32, so lanes do not carry),
// and the letters are stored as one 32-bit word.
func (r *nexRand) appendLetters(dst []byte, n int) []byte {
	const lanes = 0x0000ffff0000ffff
	at := len(dst)
	dst = slices.Grow(dst, n+3)[:at+n+3]
	out := dst[at:]
	for i := 0; i < n; i += 4 {
		x := r.next()
		a := (x & lanes) * 26       // letters 0 and 2
		b := (x >> 16 & lanes) * 26 // letters 1 and 3
		w := uint32(a>>16&0x1f) | uint32(b>>16&0x1f)<<8 | uint32(a>>48&0x1f)<<16 | uint32(b>>48&0x1f)<<24
		binary.LittleEndian.PutUint32(out[i:], w+0x61616161) // + 'a' in each byte
	}
	return dst[:at+n]
}

// appendTrimmed appends the reference's random string: 3 + U[0, max-3)
// characters (spaces with probability 1/13), trimmed of spaces at both
// ends. It returns the string's length.
func (r *nexRand) appendTrimmed(dst []byte, max int) ([]byte, int) {
	at := len(dst)
	dst = r.appendChars(dst, 3+int(r.intn(int64(max-3))), ' ')
	s := dst[at:]
	lo, hi := 0, len(s)
	for lo < hi && s[lo] == ' ' {
		lo++
	}
	for hi > lo && s[hi-1] == ' ' {
		hi--
	}
	if lo > 0 {
		copy(s, s[lo:hi])
	}
	return dst[:at+hi-lo], hi - lo
}

// appendString appends appendTrimmed's string as an encoded VARCHAR. max
// is below 128, so the length takes one byte. It returns the string's
// length.
func (r *nexRand) appendString(dst []byte, max int) ([]byte, int) {
	at := len(dst)
	dst, n := r.appendTrimmed(append(dst, 0), max)
	dst[at] = byte(n)
	return dst, n
}

// appendExtra appends an encoded VARCHAR padding an event of size bytes
// towards target: with t = target - size and d = round(0.2 t), t - d +
// U[0, 2d) letters, none when t <= 0.
func (r *nexRand) appendExtra(dst []byte, size, target int) []byte {
	t := target - size
	if t <= 0 {
		return append(dst, 0)
	}
	d := int(math.Round(float64(t) * 0.2))
	n := t - d
	if d > 0 {
		n += int(r.intn(int64(2 * d)))
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	return r.appendLetters(dst, n)
}

// appendVarchar appends an encoded VARCHAR.
func appendVarchar(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendInt64(dst []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(v))
}

// nexmarkChannel is a hot bid channel with its url, encoded as the two
// consecutive VARCHAR fields of a bid ROW.
type nexmarkChannel struct {
	enc  []byte
	size int // the two strings' lengths
}

// nexmarkColdChannel is what a cold channel's url is built from: its
// three 5-character directories and, for most, the digits of its
// channel_id.
// NB: 27 bytes a channel keep the 10000 of them in a core's cache; the
// encoded strings took three times that, and a cache miss a bid.
type nexmarkColdChannel struct {
	dirs  [15]byte
	idLen uint8 // 0: no channel_id
	id    [11]byte
}

const (
	nexmarkURLPrefix = "https://www.nexmark.com/"
	nexmarkURLSuffix = "item.htm?query=1"
	nexmarkURLID     = "&channel_id="
	// nexmarkBaseURLLen is the length of a url without its channel_id.
	nexmarkBaseURLLen = len(nexmarkURLPrefix) + 18 + len(nexmarkURLSuffix)
)

var (
	nexmarkChannelsOnce sync.Once
	nexmarkHot          []nexmarkChannel     // the four hot channels
	nexmarkCold         []nexmarkColdChannel // 'channel-c' for c in [0, nexmarkChannels)
)

// nexmarkChannelTables builds the channel tables once per process. Each
// url comes from a generator seeded by its channel, so the tables are the
// same in every process.
func nexmarkChannelTables() ([]nexmarkChannel, []nexmarkColdChannel) {
	nexmarkChannelsOnce.Do(func() {
		dirs := func(r *nexRand) []byte { return r.appendChars(nil, 15, '_') }
		for i, name := range nexmarkHotNames {
			var r nexRand
			r.seed(uint64(math.MaxUint64 - uint64(i)))
			var ch nexmarkColdChannel
			copy(ch.dirs[:], dirs(&r))
			url := ch.appendURL(nil)
			enc := appendVarchar(nil, name)
			enc = appendVarchar(enc, string(url))
			nexmarkHot = append(nexmarkHot, nexmarkChannel{enc: enc, size: len(name) + len(url)})
		}
		nexmarkCold = make([]nexmarkColdChannel, nexmarkChannels)
		for c := range nexmarkCold {
			var r nexRand
			r.seed(uint64(c))
			ch := &nexmarkCold[c]
			copy(ch.dirs[:], dirs(&r))
			if r.intn(10) > 0 {
				// The absolute value of c's 32 bits reversed, as a signed
				// 32-bit number.
				id := int64(int32(bits.Reverse32(uint32(c))))
				if id < 0 {
					id = -id
				}
				ch.idLen = uint8(copy(ch.id[:], strconv.AppendInt(nil, id, 10)))
			}
		}
	})
	return nexmarkHot, nexmarkCold
}

// appendURL appends the channel's url.
func (ch *nexmarkColdChannel) appendURL(dst []byte) []byte {
	dst = append(dst, nexmarkURLPrefix...)
	dst = append(dst, ch.dirs[0:5]...)
	dst = append(dst, '/')
	dst = append(dst, ch.dirs[5:10]...)
	dst = append(dst, '/')
	dst = append(dst, ch.dirs[10:15]...)
	dst = append(dst, '/')
	dst = append(dst, nexmarkURLSuffix...)
	if ch.idLen > 0 {
		dst = append(dst, nexmarkURLID...)
		dst = append(dst, ch.id[:ch.idLen]...)
	}
	return dst
}

// appendColdChannel appends channel c and its url as two encoded VARCHARs
// and returns their lengths.
func appendColdChannel(dst []byte, c int, ch *nexmarkColdChannel) ([]byte, int) {
	var digits [8]byte
	d := strconv.AppendInt(digits[:0], int64(c), 10)
	dst = append(dst, byte(len("channel-")+len(d)))
	dst = append(dst, "channel-"...)
	dst = append(dst, d...)
	n := nexmarkBaseURLLen
	if ch.idLen > 0 {
		n += len(nexmarkURLID) + int(ch.idLen)
	}
	dst = append(dst, byte(n))
	return ch.appendURL(dst), len("channel-") + len(d) + n
}

// nexmarkGen holds what one split's events are computed from.
type nexmarkGen struct {
	pp, ap, total                    int64 // person and auction proportions, their sum with bids'
	hotAuction, hotSeller, hotBidder int64
	baseTime                         int64 // ms
	delayMicros                      float64
	// auctionEvents is the number of events over which the in-flight
	// auctions open (100 × total / auction proportion): an auction
	// expires within twice the event time they span.
	auctionEvents int64
	hot           []nexmarkChannel
	cold          []nexmarkColdChannel
	r             nexRand
}

func newNexmarkGen(spec *jobgraph.NexmarkSpec, baseTime int64, par int) *nexmarkGen {
	g := &nexmarkGen{
		pp: spec.PersonProportion, ap: spec.AuctionProportion,
		total:      spec.PersonProportion + spec.AuctionProportion + spec.BidProportion,
		hotAuction: spec.HotAuctionRatio, hotSeller: spec.HotSellerRatio, hotBidder: spec.HotBidderRatio,
		baseTime:    baseTime,
		delayMicros: 1e6 / spec.FirstEventRate * float64(par),
	}
	if g.ap > 0 {
		g.auctionEvents = nexmarkInFlightAuctions * g.total / g.ap
	}
	g.hot, g.cold = nexmarkChannelTables()
	return g
}

// nexmarkSplit is the event ids split i of par owns: ids first+1 ..
// first+count, the k-th (from 0) being event number k+1.
func nexmarkSplit(eventsNum, total int64, i, par int) (first, count int64) {
	n := eventsNum
	if n == 0 {
		// As in the reference: scaled down so that sizes do not overflow.
		n = math.MaxInt64 / (total * nexmarkMaxAvgSize)
	}
	per := n / int64(par)
	first = 1 + int64(i)*per
	count = per
	if i == par-1 {
		count = n - per*int64(par-1)
	}
	return first, count
}

// timestamp is the event time (ms) of event number n.
func (g *nexmarkGen) timestamp(n int64) int64 {
	return g.baseTime + int64(float64(n)*g.delayMicros)/1000
}

// nexPos is an event id as its epoch (id / total) and offset in it (id
// mod total). The generator walks ids in order, so it steps a position
// instead of dividing.
type nexPos struct{ epoch, off int64 }

func (g *nexmarkGen) pos(eid int64) nexPos { return nexPos{eid / g.total, eid % g.total} }

// step moves p to the next id.
func (g *nexmarkGen) step(p nexPos) nexPos {
	if p.off++; p.off == g.total {
		p.epoch, p.off = p.epoch+1, 0
	}
	return p
}

// eventType is 0 (person), 1 (auction) or 2 (bid).
func (g *nexmarkGen) eventType(p nexPos) int32 {
	switch {
	case p.off < g.pp:
		return 0
	case p.off < g.pp+g.ap:
		return 1
	}
	return 2
}

// lastPerson is the base-0 id of the last person at or before p.
func (g *nexmarkGen) lastPerson(p nexPos) int64 {
	off := p.off
	if off >= g.pp {
		off = g.pp - 1
	}
	return p.epoch*g.pp + off
}

// lastAuction is the base-0 id of the last auction at or before p.
func (g *nexmarkGen) lastAuction(p nexPos) int64 {
	epoch, off := p.epoch, p.off
	switch {
	case off < g.pp:
		epoch--
		off = g.ap - 1
	case off >= g.pp+g.ap:
		off = g.ap - 1
	default:
		off -= g.pp
	}
	return epoch*g.ap + off
}

// recentPerson is a random recent person (base 0), possibly one of the
// next few, given the last person.
func (g *nexmarkGen) recentPerson(last int64) int64 {
	n := last + 1
	a := min(n, nexmarkActivePeople)
	return n - a + g.r.intn(a+nexmarkIDLead)
}

// recentAuction is a random recent auction (base 0), possibly one of the
// next few, given the last auction.
func (g *nexmarkGen) recentAuction(last int64) int64 {
	lo := max(last-nexmarkInFlightAuctions, 0)
	return lo + g.r.intn(last-lo+1+nexmarkIDLead)
}

// appendPerson appends the encoded person ROW of the event at p, at time
// ts.
func (g *nexmarkGen) appendPerson(dst []byte, p nexPos, ts int64) []byte {
	r := &g.r
	dst = append(dst, 0) // no NULL field
	dst = appendInt64(dst, g.lastPerson(p)+nexmarkFirstID)
	size := 16 // id, dateTime
	first := nexmarkFirstNames[r.intn(int64(len(nexmarkFirstNames)))]
	last := nexmarkLastNames[r.intn(int64(len(nexmarkLastNames)))]
	dst = append(dst, byte(len(first)+1+len(last)))
	dst = append(dst, first...)
	dst = append(dst, ' ')
	dst = append(dst, last...)
	size += len(first) + 1 + len(last)
	// emailAddress: string(7) "@" string(5) ".com"
	at := len(dst)
	var a, b int
	dst, a = r.appendTrimmed(append(dst, 0), 7)
	dst, b = r.appendTrimmed(append(dst, '@'), 5)
	dst = append(dst, ".com"...)
	dst[at] = byte(a + 1 + b + 4)
	size += a + 1 + b + 4
	// creditCard: four zero-padded 4-digit numbers
	dst = append(dst, 19)
	for i := 0; i < 4; i++ {
		if i > 0 {
			dst = append(dst, ' ')
		}
		v := r.intn(10000)
		dst = append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	}
	size += 19
	city := nexmarkCities[r.intn(int64(len(nexmarkCities)))]
	dst = appendVarchar(dst, city)
	st := nexmarkStates[r.intn(int64(len(nexmarkStates)))]
	dst = appendVarchar(dst, st)
	size += len(city) + len(st)
	dst = appendInt64(dst, ts*1e6)
	return r.appendExtra(dst, size, nexmarkAvgPerson)
}

// appendAuction appends the encoded auction ROW of the event at p, number
// n, at time ts.
func (g *nexmarkGen) appendAuction(dst []byte, p nexPos, n, ts int64) []byte {
	r := &g.r
	dst = append(dst, 0, 0) // no NULL field
	dst = appendInt64(dst, g.lastAuction(p)+nexmarkFirstID)
	size := 56 // id, initialBid, reserve, dateTime, expires, seller, category
	var a, b int
	dst, a = r.appendString(dst, 20)
	dst, b = r.appendString(dst, 100)
	size += a + b
	initial := r.price()
	dst = appendInt64(dst, initial)
	dst = appendInt64(dst, initial+r.price())
	dst = appendInt64(dst, ts*1e6)
	horizon := g.timestamp(n+g.auctionEvents) - ts
	expires := ts + 1 + r.intn(max(2*horizon, 1))
	dst = appendInt64(dst, expires*1e6)
	seller := g.lastPerson(p)
	if r.intn(g.hotSeller) > 0 {
		seller = seller / nexmarkHotRatio * nexmarkHotRatio
	} else {
		seller = g.recentPerson(seller)
	}
	dst = appendInt64(dst, seller+nexmarkFirstID)
	dst = appendInt64(dst, nexmarkFirstCategory+r.intn(nexmarkCategories))
	return r.appendExtra(dst, size, nexmarkAvgAuction)
}

// appendBid appends the encoded bid ROW of the event at p, at time ts.
func (g *nexmarkGen) appendBid(dst []byte, p nexPos, ts int64) []byte {
	r := &g.r
	dst = append(dst, 0) // no NULL field
	auction, bidder := g.lastAuction(p), g.lastPerson(p)
	if r.intn(g.hotAuction) > 0 {
		auction = auction / nexmarkHotRatio * nexmarkHotRatio
	} else {
		auction = g.recentAuction(auction)
	}
	if r.intn(g.hotBidder) > 0 {
		bidder = bidder/nexmarkHotRatio*nexmarkHotRatio + 1
	} else {
		bidder = g.recentPerson(bidder)
	}
	dst = appendInt64(dst, auction+nexmarkFirstID)
	dst = appendInt64(dst, bidder+nexmarkFirstID)
	dst = appendInt64(dst, r.price())
	var size int
	if r.intn(2) > 0 {
		ch := &g.hot[r.intn(int64(len(g.hot)))]
		dst = append(dst, ch.enc...)
		size = ch.size
	} else {
		c := int(r.intn(nexmarkChannels))
		dst, size = appendColdChannel(dst, c, &g.cold[c])
	}
	dst = appendInt64(dst, ts*1e6)
	return r.appendExtra(dst, 32+size, nexmarkAvgBid)
}
