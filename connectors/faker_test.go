package connectors

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/brianvoe/gofakeit/v7"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// fakerNow is the clock of these tests.
var fakerNow = time.Date(2024, 5, 17, 12, 30, 0, 0, time.UTC)

func fakerTable(opts map[string]string, cols ...types.Field) *catalog.Table {
	t := &catalog.Table{Database: "db", Name: "fk", Options: map[string]string{"connector": "faker"}}
	for k, v := range opts {
		t.Options[k] = v
	}
	for _, c := range cols {
		t.Columns = append(t.Columns, catalog.Column{Name: c.Name, Type: c.Type})
	}
	return t
}

// sample compiles expr and makes n values of it, converted to typ.
func sample(t *testing.T, expr string, typ types.DataType, n int) []any {
	t.Helper()
	e, err := compileFakerExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	pcg := rand.NewPCG(1, 2)
	c := &fakerCtx{rng: rand.New(pcg), f: gofakeit.NewFaker(pcg, false), now: fakerNow}
	out := make([]any, n)
	for i := range out {
		v, err := fakerConvert(e.eval(c), typ)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		out[i] = v
	}
	return out
}

func TestFakerExpressionSyntax(t *testing.T) {
	for _, tc := range []struct {
		expr string
		re   string // every value matches
	}{
		{"-", `^-$`},
		{"plain text", `^plain text$`},
		{"#{Name.firstName} #{Name.lastName}", `^\S+ \S+$`},
		{"#{name.first_name}", `^\S+$`},
		{"#{NAME.FIRSTNAME}", `^\S+$`},
		{"id-#{number.numberBetween '1','5'}!", `^id-[1-4]!$`},
		{"#{number.numberBetween '1','5'} and #{number.numberBetween '7','8'}", `^[1-4] and 7$`},
		{"#{regexify '(1|2|3|4|5){1}'}", `^[1-5]$`},
		{"#{regexify '(Deja\\ Brew|Lawn\\ \\&\\ Order){1}'}", `^(Deja Brew|Lawn & Order)$`},
		{"#{regexify '(America\\/Los_Angeles|Europe\\/Rome){1}'}", `^(America/Los_Angeles|Europe/Rome)$`},
		{"#{options.option 'it''s','b'}", `^(it's|b)$`},
		{"#{Options.option 'RECEIVED','SHIPPED','CANCELLED')}", `^(RECEIVED|SHIPPED|CANCELLED)$`},
		{"#{options.option 'a}','b'}", `^(a\}|b)$`},
		{"#{options.option '#{number.numberBetween ''1'',''3''}','x'}", `^(1|2|x)$`},
		{"#{}x", `^x$`},
		{"no closing #{ brace", `^no closing #\{ brace$`},
		{"#{Internet.uuid}", `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
		{"#{Internet.UUID}", `^[0-9a-f-]{36}$`},
		{"#{number.digits '3'}", `^[0-9]{3}$`},
		{"#{bool.bool}", `^(true|false)$`},
		{"#{numerify 'ab-##'}", `^ab-[0-9]{2}$`},
		{"#{Internet.publicIpV4Address}", `^\d+\.\d+\.\d+\.\d+$`},
		{"#{Internet.emailAddress}", `^\S+@\S+$`},
		{"#{Lorem.sentence}", `^[A-Z][a-z]*( [a-z]+){2,7}\.$`},
		{"#{date.past '15','SECONDS'}", `^2024-05-17 12:29:[4-5]\d(\.\d+)?$`},
		{"#{date.past '15','SECONDS','yyyy-MM-dd'}", `^2024-05-17$`},
		{"#{date.future '15','5','SECONDS','HH:mm:ss.SSS'}", `^12:30:(0[5-9]|1[0-4])\.\d{3}$`},
		{"#{date.past '3','DAYS','dd/MM/yy ''at'' h a'}", `^1[4-7]/05/24 at \d{1,2} (AM|PM)$`},
	} {
		for _, v := range sample(t, tc.expr, types.String, 200) {
			if !regexp.MustCompile(tc.re).MatchString(v.(string)) {
				t.Errorf("%s made %q, want %s", tc.expr, v, tc.re)
				break
			}
		}
	}
}

func TestFakerExpressionErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"#{Nme.firstName}", "unknown provider 'Nme' (did you mean Name"},
		{"ab #{Name.firstNam}", "unknown method 'firstNam' of provider 'Name' (did you mean firstName"},
		{"#{Name.firstNam}", "at column 8"},
		{"#{superhero.nam}", "(did you mean name"},
		{"#{regexfy 'a'}", "unknown directive 'regexfy'"},
		{"#{number.numberBetween '1'}", "Number.numberBetween: takes 2 arguments, got 1 (usage: #{Number.numberBetween 'min','max'}) at column 3"},
		{"#{number.numberBetween 'a','5'}", "min must be a whole number, got 'a'"},
		{"#{Number.randomDouble '2','1.5','10'}", "min must be a whole number, got '1.5'"},
		{"#{date.past '15','seconds'}", "unknown TimeUnit 'seconds' (did you mean SECONDS? TimeUnit names are upper case)"},
		{"#{date.past '15','15','SECONDS'}", "must be more than 1 ms"},
		{"#{date.past '1','MILLISECONDS'}", "must be more than 1 ms"},
		{"#{date.between '2020-01-02','2020-01-01'}", "Invalid date range"},
		{"#{date.between '2020/01/02','2020-01-03'}", "is not a date"},
		{"#{regexify '(a'}", "bad regular expression '(a'"},
		{"#{date.past '15','SECONDS','yyyy-MM-dd z'}", "date pattern letter 'z' in 'yyyy-MM-dd z' is not supported yet"},
		{"#{options.option}", "needs at least one option"},
		{"#{name.firstName 'x'}", "takes no arguments, got 1"},
		{"#{options.option 'a} x", "'#{' is never closed by '}' at column 1"},
		{"x #{options.option 'a}", "'#{' is never closed by '}' at column 3"},
	} {
		_, err := compileFakerExpr(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.expr, err, tc.want)
		}
	}
}

// TestFakerCookbookExpressions compiles every expression of the Flink SQL
// cookbook (ververica/flink-sql-cookbook, the SQL quotes undone) and
// converts its values to the type of the cookbook's column.
func TestFakerCookbookExpressions(t *testing.T) {
	ts, str, integer, dbl := types.Timestamp(3), types.String, types.Int, types.Double
	for _, tc := range []struct {
		expr string
		typ  types.DataType
	}{
		{"#{date.past '15','5','SECONDS'}", ts},
		{"#{date.past '15','SECONDS'}", ts},
		{"#{date.past '10','5','SECONDS'}", ts},
		{"#{date.past '30','SECONDS'}", ts},
		{"#{date.past '5','SECONDS'}", ts},
		{"#{date.past '45','10','SECONDS'}", ts},
		{"#{date.past '10','0','SECONDS'}", ts},
		{"#{date.past '30','DAYS'}", ts},
		{"#{date.future '365','DAYS'}", ts},
		{"#{date.future '15','DAYS'}", ts},
		{"#{Internet.publicIpV4Address}", str},
		{"#{Internet.userAgentAny}", str},
		{"#{Internet.uuid}", str},
		{"#{Internet.UUID}", str},
		{"#{regexify '(HTTP/1\\.1|HTTP/2|/HTTP/1\\.0){1}'}", str},
		{"#{regexify '(GET|POST|PUT|PATCH){1}'}", str},
		{"#{regexify '(200|201|204|400|401|403|301){1}'}", integer},
		{"#{regexify '(/search\\.html|/login\\.html|/prod\\.html|cart\\.html|/order\\.html){1}'}", str},
		{"#{regexify '(GET|POST|PUT|PATCH){1}'} #{regexify '(/search\\.html|/login\\.html|/prod\\.html|cart\\.html|/order\\.html){1}'} #{regexify '(HTTP/1\\.1|HTTP/2|/HTTP/1\\.0){1}'}", str},
		{"#{regexify '(basic|premium|platinum){1}'}", str},
		{"#{regexify '(1|2|3|4|5){1}'}", integer},
		{"#{regexify '(open_push_message|discard_push_message|open_app|display_overview|change_settings)'}", str},
		{"#{regexify '(morsapaes|knauf|sjwiesman){1}'}", str},
		{"#{regexify '(bahn\\.de|station|retailer|app|lidl|hotline|joyn){1}'}", str},
		{"#{regexify '(Parseltongue|Rune|Gobbledegook|Mermish|Troll|English)'}", str},
		{"#{regexify '(OK|KO|WARNING){1}'}", str},
		{"#{regexify '(Newmouth|Newburgh|Portport|Southfort|Springfield){1}'}", str},
		{"#{regexify '(New York|Illinois|California|Washington){1}'}", str},
		{"#{regexify '(EUR|USD|CNY)'}", str},
		{"#{regexify '(Deja\\ Brew|Jurassic\\ Pork|Lawn\\ \\&\\ Order|Pita\\ Pan|Bread\\ Pitt|Indiana\\ Jeans|Thai\\ Tanic){1}'}", str},
		{"#{regexify '(Copenhagen|Berlin|Chicago|Portland|Seattle|New York){1}'}", str},
		{"#{regexify '(Chicago|Munich|Berlin|Portland|Hangzhou|Seatle|Beijing|New York){1}'}", str},
		{"#{regexify '(America\\/Los_Angeles|Europe\\/Rome|Europe\\/London|Australia\\/Sydney){1}'}", str},
		{"#{regexify '(Alice|Bob|Carol|Alex|Joe|James|Jane|Jack)'}", str},
		{"#{number.numberBetween '100','10000000'}", integer},
		{"#{number.numberBetween '0','1000'}", integer},
		{"#{number.numberBetween '1','50'}", integer},
		{"#{number.numberBetween '0','7'}", integer},
		{"#{number.numberBetween '0','10000000'}", integer},
		{"#{number.numberBetween '1609060234','1639300234'}", types.BigInt},
		{"#{number.numberBetween '1576141834','1607764234'}", types.BigInt},
		{"#{number.numberBetween '1','100'}", integer},
		{"#{number.numberBetween '0','50'}", integer},
		{"#{number.numberBetween '0','42'}", integer},
		{"#{Number.randomDouble '2','1','150'}", dbl},
		{"#{number.randomDouble '2','10','20'}", dbl},
		{"#{Number.randomDouble '4','0','10'}", dbl},
		{"#{Number.randomDouble '2','10','1000'}", types.Decimal(10, 2)},
		{"#{harry_potter.spell}", str},
		{"#{harry_potter.spells}", str},
		{"#{harry_potter.character}", str},
		{"#{harry_potter.characters}", str},
		{"#{dr_who.the_doctors}", str},
		{"#{Name.lastName}", str},
		{"#{Name.firstName}", str},
		{"#{Name.firstName} #{Name.lastName}", str},
		{"#{Name.full_name}", str},
		{"#{Currency.code}", str},
		{"#{Address.fullAddress}", str},
		{"#{Address.city}", str},
		{"#{superhero.name}", str},
		{"#{Space.star}", str},
		{"#{Space.nasaSpaceCraft}", str},
		{"#{RickAndMorty.location}", str},
		{"#{RickAndMorty.character}", str},
		{"#{HitchhikersGuideToTheGalaxy.starship}", str},
		{"#{HitchhikersGuideToTheGalaxy.location}", str},
		{"#{HitchhikersGuideToTheGalaxy.character}", str},
		{"#{Commerce.productName}", str},
		{"-", str},
	} {
		for _, v := range sample(t, tc.expr, tc.typ, 50) {
			if v == nil {
				t.Errorf("%s made NULL", tc.expr)
			}
			if s, ok := v.(string); ok && (s == "" || strings.Contains(s, "#{")) {
				t.Errorf("%s made %q", tc.expr, s)
			}
		}
	}
}

// TestFakerCoveredExpressions runs the expressions the connector promises
// beyond the cookbook's.
func TestFakerCoveredExpressions(t *testing.T) {
	for _, e := range []string{
		"#{name.lastName}", "#{Address.country}", "#{Address.streetAddress}", "#{Commerce.price}",
		"#{Lorem.sentence}", "#{Company.name}", "#{Internet.emailAddress}", "#{PhoneNumber.cellPhone}",
		"#{superhero.power}", "#{harry_potter.location}", "#{harry_potter.house}", "#{date.birthday}",
		"#{date.between '2020-01-01','2020-02-01 12:00:00'}", "#{number.randomNumber}", "#{Lorem.paragraph '2'}",
	} {
		for _, v := range sample(t, e, types.String, 20) {
			if v.(string) == "" {
				t.Errorf("%s made an empty string", e)
			}
		}
	}
}

func TestFakerNumbers(t *testing.T) {
	// numberBetween: [min, max), bounds swapped when reversed, min when equal.
	for _, tc := range []struct {
		expr   string
		lo, hi int64
	}{
		{"#{number.numberBetween '1','5'}", 1, 4},
		{"#{number.numberBetween '5','1'}", 1, 4},
		{"#{number.numberBetween '3','3'}", 3, 3},
		{"#{number.numberBetween '-2','1'}", -2, 0},
		{"#{number.randomDigit}", 0, 9},
		{"#{number.randomDigitNotZero}", 1, 9},
		{"#{number.numberBetween '9223372036854775806','9223372036854775807'}", math.MaxInt64 - 1, math.MaxInt64 - 1},
	} {
		seen := map[int64]bool{}
		for _, v := range sample(t, tc.expr, types.BigInt, 2000) {
			x := v.(int64)
			if x < tc.lo || x > tc.hi {
				t.Fatalf("%s made %d, outside [%d, %d]", tc.expr, x, tc.lo, tc.hi)
			}
			seen[x] = true
		}
		if int64(len(seen)) != tc.hi-tc.lo+1 {
			t.Errorf("%s made %d distinct values, want every one of [%d, %d]", tc.expr, len(seen), tc.lo, tc.hi)
		}
	}
	// randomDouble: in [min, max] after rounding, at most that many decimals.
	for _, v := range sample(t, "#{Number.randomDouble '4','0','10'}", types.String, 2000) {
		s := v.(string)
		x, err := strconv.ParseFloat(s, 64)
		_, frac, _ := strings.Cut(s, ".")
		if err != nil || x < 0 || x > 10 || len(frac) > 4 || frac == "" {
			t.Fatalf("randomDouble made %q", s)
		}
	}
	for _, v := range sample(t, "#{regexify '((((((((a)*)*)*)*)*)*)*)*'}", types.String, 5) {
		if len(v.(string)) > regexMaxBytes+1 {
			t.Fatalf("nested repetitions made %d bytes", len(v.(string)))
		}
	}
	if got := javaDoubleString(1e7); got != "1.0E7" {
		t.Errorf("1e7 is %s", got)
	}
	if got := javaDoubleString(100); got != "100.0" {
		t.Errorf("100 is %s", got)
	}
	if got := roundHalfDown(2.5); got != 2 {
		t.Errorf("half down of 2.5 is %v", got)
	}
	for _, v := range sample(t, "#{number.digits '5'}", types.String, 100) {
		if !regexp.MustCompile(`^\d{5}$`).MatchString(v.(string)) {
			t.Fatalf("digits made %q", v)
		}
	}
}

func TestFakerDates(t *testing.T) {
	now := fakerNow.UnixMilli()
	ns := func(ms int64) int64 { return ms * int64(time.Millisecond) }
	for _, tc := range []struct {
		expr   string
		lo, hi int64 // ms
	}{
		// Data Faker's DateAndTime: the 2-argument forms start 1 ms from now.
		{"#{date.past '15','SECONDS'}", now - 15000, now - 2},
		{"#{date.past '15','5','SECONDS'}", now - 15000 + 1, now - 5000 - 1},
		{"#{date.past '10','0','SECONDS'}", now - 10000 + 1, now - 1},
		{"#{date.past '2','MINUTES'}", now - 120000, now - 2},
		{"#{date.past '1','HOURS'}", now - 3600000, now - 2},
		{"#{date.past '3','DAYS'}", now - 3*86400000, now - 2},
		{"#{date.past '500','TimeUnit.MILLISECONDS'}", now - 500, now - 2},
		{"#{date.future '15','SECONDS'}", now + 2, now + 15000},
		{"#{date.future '15','5','SECONDS'}", now + 5000 + 1, now + 15000 - 1},
		{"#{date.future '365','DAYS'}", now + 2, now + 365*86400000},
		{"#{date.between '2020-01-01','2020-01-02'}", 1577836800000, 1577923200000 - 1},
	} {
		for _, v := range sample(t, tc.expr, types.Timestamp(3), 2000) {
			x := v.(int64)
			if x < ns(tc.lo) || x > ns(tc.hi) {
				t.Fatalf("%s made %s, outside [%s, %s]", tc.expr, javaTimestampString(x/1e6), javaTimestampString(tc.lo), javaTimestampString(tc.hi))
			}
		}
	}
	for _, v := range sample(t, "#{date.birthday '1','2'}", types.Date, 200) {
		d := v.(int64)
		lo, hi := time.Date(2022, 5, 17, 0, 0, 0, 0, time.UTC).Unix()/86400, time.Date(2023, 5, 17, 0, 0, 0, 0, time.UTC).Unix()/86400
		if d < lo || d >= hi {
			t.Fatalf("birthday made day %d, outside [%d, %d)", d, lo, hi)
		}
	}
	for _, v := range sample(t, "#{time.future '15','5','SECONDS'}", types.Time(0), 200) {
		ms := v.(int64)
		base := int64(12*3600+30*60) * 1000
		if ms < base+5000 || ms >= base+15000 {
			t.Fatalf("time.future made %d ms of the day", ms)
		}
	}
}

func TestFakerConvert(t *testing.T) {
	conv := func(s string, typ types.DataType) (any, error) { return fakerConvert(fakerOut{s: s}, typ) }
	for _, tc := range []struct {
		in   string
		typ  types.DataType
		want any
	}{
		{"42", types.Int, int64(42)},
		{"+42", types.BigInt, int64(42)},
		{"-7", types.TinyInt, int64(-7)},
		{"1.5", types.Double, 1.5},
		{" 2.5d ", types.Double, 2.5},
		{"1e3", types.Float, 1000.0},
		{"TRUE", types.Boolean, true},
		{"yes", types.Boolean, false},
		{"123.455", types.Decimal(5, 2), decimal128.FromI64(12346)},
		{"-123.455", types.Decimal(5, 2), decimal128.FromI64(-12346)},
		{"1234.5", types.Decimal(5, 2), nil}, // overflow: NULL, as DecimalData.fromBigDecimal
		{"2020-01-02 03:04:05", types.Timestamp(3), time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()},
		{"2020-01-02 03:04:05.123456", types.Timestamp(3), time.Date(2020, 1, 2, 3, 4, 5, 123000000, time.UTC).UnixNano()},
		{"2020-01-02 03:04:05.123456", types.TimestampLTZ(6), time.Date(2020, 1, 2, 3, 4, 5, 123456000, time.UTC).UnixNano()},
		{"2020-01-02 03:04:05.5", types.Date, int64(18263)},
		{"3723000000000", types.Time(0), int64(3723000)},
		{"abc", types.String, "abc"},
	} {
		got, err := conv(tc.in, tc.typ)
		if err != nil || got != tc.want {
			t.Errorf("%q as %v: %v, %v; want %v", tc.in, tc.typ, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		typ  types.DataType
		want string
	}{
		{"abc", types.Int, `cannot read 'abc' as INT (For input string: "abc")`},
		{"128", types.TinyInt, `For input string: "128"`},
		{"1.5", types.BigInt, `For input string: "1.5"`},
		{"1/2", types.Decimal(5, 2), `cannot read '1/2'`},
		{"2020-01-02T03:04:05", types.Timestamp(3), "flink-faker reads 'yyyy-MM-dd HH:mm:ss[.fffffffff]'"},
		{"2020-01-02 03:04:05", types.Time(0), "a TIME column takes a nanosecond of the day"},
	} {
		if _, err := conv(tc.in, tc.typ); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q as %v: %v, want %q", tc.in, tc.typ, err, tc.want)
		}
	}
	if got := javaTimestampString(time.Date(2020, 1, 2, 3, 4, 5, 120e6, time.UTC).UnixMilli()); got != "2020-01-02 03:04:05.12" {
		t.Errorf("timestamp text %s", got)
	}
	if got := javaTimestampString(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()); got != "2020-01-02 03:04:05.0" {
		t.Errorf("timestamp text %s", got)
	}
}

// runFaker runs every subtask of a faker table with seed 7, no rate limit
// and the test clock, and returns each subtask's batches.
func runFaker(t *testing.T, tb *catalog.Table, par int) []*batchCollector {
	t.Helper()
	spec, err := FakerSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	spec.Seed = 7
	out := make([]*batchCollector, par)
	for sub := range par {
		src := newTestFaker(t, spec)
		out[sub] = &batchCollector{}
		t.Cleanup(out[sub].release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = runSource(t, ctx, src, &operators.Context{Subtask: sub, Parallelism: par}, out[sub])
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func newTestFaker(t testing.TB, spec jobgraph.FakerSpec) *FakerSource {
	t.Helper()
	src, err := NewFakerSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The clock starts at fakerNow and moves only when the source sleeps.
	now := fakerNow
	src.sleep = func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil }
	src.now = func() time.Time { return now }
	return src
}

func TestFakerSourceRowsAndNulls(t *testing.T) {
	tb := fakerTable(map[string]string{
		"number-of-rows":            "10001",
		"rows-per-second":           "100000",
		"fields.id.expression":      "#{number.numberBetween '0','1000'}",
		"fields.id.null-rate":       "0.3",
		"fields.name.expression":    "#{Name.firstName}",
		"fields.name.null-rate":     "0.0",
		"fields.never.expression":   "x",
		"fields.never.null-rate":    "1",
		"fields.ts.expression":      "#{date.past '15','5','SECONDS'}",
		"fields.price.expression":   "#{Number.randomDouble '2','1','150'}",
		"fields.decimal.expression": "#{Number.randomDouble '2','1','150'}",
		"fields.decimal.length":     "1",
		"fields.flag.expression":    "#{bool.bool}",
		"fields.agent.expression":   "#{regexify '(1|2|3|4|5){1}'}",
		"fields.ltz.expression":     "#{date.future '1','HOURS'}",
		"fields.day.expression":     "#{date.past '3','DAYS'}",
	},
		types.Field{Name: "id", Type: types.Int}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "never", Type: types.String}, types.Field{Name: "ts", Type: types.Timestamp(3)},
		types.Field{Name: "price", Type: types.Double}, types.Field{Name: "decimal", Type: types.Decimal(5, 2)},
		types.Field{Name: "flag", Type: types.Boolean}, types.Field{Name: "agent", Type: types.TinyInt},
		types.Field{Name: "ltz", Type: types.TimestampLTZ(3)}, types.Field{Name: "day", Type: types.Date})
	out := runFaker(t, tb, 2)
	rows, idNulls := 0, 0
	for sub, c := range out {
		n := 0
		for _, b := range c.batches {
			n += b.NumRows()
			ids := b.Column(0).(*array.Int32)
			for i := range b.NumRows() {
				if ids.IsNull(i) {
					idNulls++
				} else if v := ids.Value(i); v < 0 || v >= 1000 {
					t.Fatalf("id %d", v)
				}
				if b.Column(1).IsNull(i) || b.Column(1).(*array.String).Value(i) == "" {
					t.Fatal("name is NULL or empty")
				}
				if !b.Column(2).IsNull(i) {
					t.Fatal("null-rate 1 made a value")
				}
				ts := b.Column(3).(*array.Timestamp).Value(i)
				if ms := int64(ts) / 1e6; ms < fakerNow.UnixMilli()-15000 || ms > fakerNow.UnixMilli()-5000+1000 { // the clock moves 0.1 s
					t.Fatalf("ts %d", ms)
				}
				if p := b.Column(4).(*array.Float64).Value(i); p < 1 || p > 150 {
					t.Fatalf("price %v", p)
				}
				if a := b.Column(7).(*array.Int8).Value(i); a < 1 || a > 5 {
					t.Fatalf("agent %d", a)
				}
			}
		}
		if want := 5001 - sub; n != want {
			t.Errorf("subtask %d made %d rows, want %d", sub, n, want)
		}
		rows += n
	}
	if rows != 10001 {
		t.Fatalf("%d rows", rows)
	}
	if r := float64(idNulls) / float64(rows); r < 0.27 || r > 0.33 {
		t.Errorf("null-rate 0.3 made %.3f NULLs", r)
	}
}

// TestFakerSubtasksIndependent: the same seed makes the same rows; two
// subtasks make different ones.
func TestFakerSubtasksIndependent(t *testing.T) {
	tb := fakerTable(map[string]string{"number-of-rows": "200", "fields.id.expression": "#{number.numberBetween '0','1000000000'}"},
		types.Field{Name: "id", Type: types.BigInt})
	a, b := runFaker(t, tb, 2), runFaker(t, tb, 2)
	vals := func(c *batchCollector) []int64 { v, _ := int64s(c.batches, 0); return v }
	if fmt.Sprint(vals(a[0])) != fmt.Sprint(vals(b[0])) {
		t.Error("the same seed made different rows")
	}
	if fmt.Sprint(vals(a[0])) == fmt.Sprint(vals(a[1])) {
		t.Error("subtasks 0 and 1 made the same rows")
	}
}

func TestFakerComposite(t *testing.T) {
	row := types.Row(types.Field{Name: "house", Type: types.String}, types.Field{Name: "points", Type: types.Int})
	cols := []types.Field{
		{Name: "m", Type: types.Map(types.String, types.Int)},
		{Name: "spells", Type: types.Multiset(types.String)},
		{Name: "locs", Type: types.Array(types.String)},
		{Name: "hp", Type: row},
	}
	tb := fakerTable(map[string]string{
		"number-of-rows":              "50",
		"fields.m.key.expression":     "#{harry_potter.character}",
		"fields.m.value.expression":   "#{number.numberBetween '10','100'}",
		"fields.m.length":             "2",
		"fields.spells.expression":    "#{options.option 'a','b'}",
		"fields.spells.length":        "5",
		"fields.locs.expression":      "#{harry_potter.location}",
		"fields.locs.length":          "3",
		"fields.hp.house.expression":  "#{harry_potter.house}",
		"fields.hp.points.expression": "#{number.numberBetween '10','100'}",
	}, cols...)
	out := runFaker(t, tb, 1)
	for _, b := range out[0].batches {
		for i := range b.NumRows() {
			dec := func(j int) ([]any, []any) {
				keys, vals, err := types.DecodeComposite(cols[j].Type, b.Column(j).(*array.Binary).Value(i))
				if err != nil {
					t.Fatal(err)
				}
				return keys, vals
			}
			if keys, vals := dec(0); len(keys) < 1 || len(keys) > 2 || vals[0].(int64) < 10 || vals[0].(int64) >= 100 {
				t.Fatalf("map %v %v", keys, vals)
			}
			keys, counts := dec(1)
			total := int64(0)
			for _, c := range counts {
				total += c.(int64)
			}
			if total != 5 || len(keys) > 2 {
				t.Fatalf("multiset %v %v", keys, counts)
			}
			if _, vals := dec(2); len(vals) != 3 {
				t.Fatalf("array %v", vals)
			}
			if _, vals := dec(3); len(vals) != 2 || vals[0].(string) == "" {
				t.Fatalf("row %v", vals)
			}
		}
	}
}

func TestFakerSpecErrors(t *testing.T) {
	str := types.Field{Name: "s", Type: types.String}
	for _, tc := range []struct {
		opts map[string]string
		cols []types.Field
		want string
	}{
		{map[string]string{}, []types.Field{str},
			"table db.fk: Every column needs a corresponding expression. No expression found for s. (set option 'fields.s.expression')"},
		{map[string]string{"fields.s.expression": "#{Name.frstName}"}, []types.Field{str},
			`table db.fk: option 'fields.s.expression': invalid expression for column "s": unknown method 'frstName' of provider 'Name' (did you mean firstName, lastName?) at column 8 in '#{Name.frstName}'`},
		{map[string]string{"fields.s.expression": "#{harry_poter.spell}"}, []types.Field{str},
			"unknown provider 'harry_poter' (did you mean HarryPotter?)"},
		{map[string]string{"fields.s.expression": "x", "fields.s.null-rate": "1.5"}, []types.Field{str},
			"table db.fk: option 'fields.s.null-rate' must be a number from 0 to 1"},
		{map[string]string{"fields.s.expression": "x", "fields.s.length": "3"}, []types.Field{str},
			"option 'fields.s.length' applies to ARRAY, MAP and MULTISET columns (Collection length may not be set for s with type STRING)"},
		{map[string]string{"fields.a.expression": "x", "fields.a.length": "0"}, []types.Field{{Name: "a", Type: types.Array(types.String)}},
			"option 'fields.a.length' must be from 1 to 1048576 (Collection length needs to be positive), got '0'"},
		{map[string]string{"fields.s.expression": "x", "fields.s.kind": "random"}, []types.Field{str},
			"table db.fk: unsupported option 'fields.s.kind' for connector 'faker'"},
		{map[string]string{"fields.s.expression": "x", "rows-per-second": "0"}, []types.Field{str},
			"option 'rows-per-second' must be a whole number > 0, got '0'"},
		{map[string]string{"fields.s.expression": "x", "number-of-rows": "-2"}, []types.Field{str},
			"option 'number-of-rows' must be a whole number >= 0 (or -1, unbounded), got '-2'"},
		{map[string]string{"fields.i.expression": "#{Name.firstName}"}, []types.Field{{Name: "i", Type: types.Int}},
			`table db.fk: column i: cannot read '`},
		{map[string]string{"fields.b.expression": "x"}, []types.Field{{Name: "b", Type: types.Bytes}},
			"column b is BYTES: the faker connector makes"},
		{map[string]string{"fields.m.key.expression": "x"}, []types.Field{{Name: "m", Type: types.Map(types.String, types.String)}},
			"No expression found for m. (set option 'fields.m.value.expression')"},
	} {
		_, err := FakerSpecFor(fakerTable(tc.opts, tc.cols...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
	// Through the resolver, as CREATE TABLE checks it.
	r := &Resolver{}
	err := r.ValidateTable(fakerTable(map[string]string{"fields.s.expression": "#{Nme.firstName}"}, str))
	if err == nil || !strings.Contains(err.Error(), "unknown provider 'Nme'") {
		t.Errorf("resolver: %v", err)
	}
	spec, _, err := r.SourceSpec(fakerTable(map[string]string{"fields.s.expression": "#{Name.firstName}", "number-of-rows": "-1"}, str), false)
	if err != nil || spec.(*jobgraph.FakerSpec).NumberOfRows != 0 || spec.(*jobgraph.FakerSpec).RowsPerSecond != 10000 {
		t.Errorf("source spec %+v, %v", spec, err)
	}
}

func TestFakerSourceRestore(t *testing.T) {
	tb := fakerTable(map[string]string{
		"rows-per-second": "1000", "number-of-rows": "1001", // batches of 50 rows per subtask
		"fields.id.expression": "#{number.numberBetween '0','1000000'}", "fields.id.null-rate": "0.2",
		"fields.s.expression": "#{Name.full_name}",
	}, types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "s", Type: types.String})
	spec, err := FakerSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	const par = 2
	for sub := range par {
		before, snap := stopAt(t, newTestFaker(t, spec), spec.Schema, &operators.Context{Subtask: sub, Parallelism: par}, 3)
		if len(before) != 150 {
			t.Fatalf("subtask %d: %d rows before the snapshot, want 150", sub, len(before))
		}
		after := runToEnd(t, newTestFaker(t, spec), spec.Schema, &operators.Context{Subtask: sub, Parallelism: par, Restore: operators.Restore{ID: 1, State: [][]byte{snap}}})
		var pos fakerPosition
		if err := decodePosition("faker", snap, &pos, &pos.V); err != nil || pos.Rows != 150 || pos.Seed == 0 {
			t.Fatalf("snapshot %s: %v", snap, err)
		}
		seeded := spec
		seeded.Seed = pos.Seed
		whole := runToEnd(t, newTestFaker(t, seeded), spec.Schema, &operators.Context{Subtask: sub, Parallelism: par})
		if len(whole) != 501-sub {
			t.Fatalf("subtask %d made %d rows", sub, len(whole))
		}
		checkRows(t, fmt.Sprintf("subtask %d: before + after restore", sub), append(before, after...), whole)
	}
	_, snap := stopAt(t, newTestFaker(t, spec), spec.Schema, &operators.Context{Subtask: 0, Parallelism: 2}, 1)
	err = newTestFaker(t, spec).Open(&operators.Context{Subtask: 0, Parallelism: 3, Restore: operators.Restore{ID: 1, State: [][]byte{snap, snap}, Rescaled: true}})
	if err == nil || !strings.Contains(err.Error(), "faker table db.fk cannot be restored at another parallelism (2 -> 3)") {
		t.Errorf("rescaled restore: %v", err)
	}
}

// TestFakerRuntimeConversionError: a value the column's type cannot read
// fails the job, naming the table, column and value.
func TestFakerRuntimeConversionError(t *testing.T) {
	spec := jobgraph.FakerSpec{Schema: types.Schema{{Name: "i", Type: types.Int}}, Table: "db.fk", NumberOfRows: 10,
		Fields: []jobgraph.FakerField{{Expressions: []string{"#{options.option 'x'}"}, Length: 1}}}
	err := runSource(t, context.Background(), newTestFaker(t, spec), &operators.Context{Parallelism: 1}, &batchCollector{})
	if err == nil || !strings.Contains(err.Error(), `faker table db.fk: column i: cannot read 'x' as INT (For input string: "x")`) {
		t.Errorf("got %v", err)
	}
}

// BenchmarkFaker makes a typical 5-column table: a number, a name, a
// regexify choice, a timestamp and a double.
func BenchmarkFaker(b *testing.B) {
	tb := fakerTable(map[string]string{
		"number-of-rows":          strconv.Itoa(b.N),
		"fields.id.expression":    "#{number.numberBetween '0','1000000'}",
		"fields.name.expression":  "#{Name.firstName} #{Name.lastName}",
		"fields.code.expression":  "#{regexify '(200|201|204|400|401|403|301){1}'}",
		"fields.ts.expression":    "#{date.past '15','5','SECONDS'}",
		"fields.price.expression": "#{Number.randomDouble '2','1','150'}",
	}, types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "code", Type: types.Int}, types.Field{Name: "ts", Type: types.Timestamp(3)},
		types.Field{Name: "price", Type: types.Double})
	spec, err := FakerSpecFor(tb)
	if err != nil {
		b.Fatal(err)
	}
	spec.RowsPerSecond = 1e12
	src := newTestFaker(b, spec)
	if err := src.Open(&operators.Context{Parallelism: 1}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := src.Run(context.Background(), discard{}); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestFakerBatchBytes: long values make smaller batches.
func TestFakerBatchBytes(t *testing.T) {
	tb := fakerTable(map[string]string{"number-of-rows": "600", "rows-per-second": "1000000",
		"fields.s.expression": "#{number.digits '100000'}"}, types.Field{Name: "s", Type: types.String})
	out := runFaker(t, tb, 1)
	rows := 0
	for i, b := range out[0].batches {
		rows += b.NumRows()
		if i > 0 && b.NumRows() > datagenBatchBytes/100000 {
			t.Fatalf("batch %d has %d rows of 100000 bytes", i, b.NumRows())
		}
	}
	if rows != 600 || len(out[0].batches) < 4 {
		t.Fatalf("%d rows in %d batches", rows, len(out[0].batches))
	}
}

// FuzzFakerExpr: any text compiles or fails with an error, and a compiled
// expression makes values without panicking.
func FuzzFakerExpr(f *testing.F) {
	for _, s := range []string{"#{Name.firstName} #{Name.lastName}", "#{number.numberBetween '1','5'}",
		"#{regexify '(a|b){1,3}[x-z]*'}", "#{options.option 'a''b','#{bool.bool}'}", "#{date.past '15','5','SECONDS','yyyy'}",
		"#{", "}", "#{}", "#{a.b 'x}", "''#{x'}'}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := compileFakerExpr(s)
		if err != nil {
			return
		}
		pcg := rand.NewPCG(1, 2)
		c := &fakerCtx{rng: rand.New(pcg), f: gofakeit.NewFaker(pcg, false), now: fakerNow}
		for range 3 {
			o := e.eval(c)
			for _, typ := range []types.DataType{types.String, types.Int, types.Decimal(10, 2), types.Timestamp(3), types.Date, types.Time(0), types.Boolean, types.Double} {
				_, _ = fakerConvert(o, typ)
			}
		}
	})
}
