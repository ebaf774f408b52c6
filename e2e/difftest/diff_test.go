package difftest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/localcluster"
)

var (
	flagCases    = flag.Int("difftest.cases", 240, "number of queries to run")
	flagSeed     = flag.Uint64("difftest.seed", 1, "seed of the first table set; table set i uses seed+i")
	flagPerSet   = flag.Int("difftest.queries", 12, "queries per table set")
	flagSessions = flag.Int("difftest.sessions", 2, "table sets run at once, each on its own session")
	flagFeatures = flag.String("difftest.features", "", "comma-separated +feature / -feature changes to the defaults (+all, -all)")
	flagShrink   = flag.Bool("difftest.shrink", true, "shrink a failing case before reporting it")
)

// TestDifferential generates table sets and queries, runs each query on an
// embedded local cluster and with the reference evaluator, and fails on
// every query whose final results differ, printing a shrunk reproducer.
func TestDifferential(t *testing.T) {
	fs, err := parseFeatures(*flagFeatures)
	if err != nil {
		t.Fatal(err)
	}
	cases := *flagCases
	if testing.Short() && !flagSet("difftest.cases") {
		cases = 48
	}
	sets := (cases + *flagPerSet - 1) / *flagPerSet
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(10+sets)*time.Minute)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: t.TempDir(), TaskManagers: 2, Slots: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var ran, failed atomic.Int64
	var dbs atomic.Int64
	newDB := func() string { return fmt.Sprintf("diff_%d", dbs.Add(1)) }
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range max(1, *flagSessions) {
		s, err := c.OpenSession(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.WithoutCancel(ctx))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				n := min(*flagPerSet, cases-i**flagPerSet)
				runSet(ctx, t, &engine{s: s}, newDB, *flagSeed+uint64(i), n, fs, &ran, &failed)
			}
		}()
	}
	for i := range sets {
		work <- i
	}
	close(work)
	wg.Wait()
	t.Logf("%d queries over %d table sets (seeds %d to %d) in %s; %d failed",
		ran.Load(), sets, *flagSeed, *flagSeed+uint64(sets)-1, time.Since(start).Round(time.Millisecond), failed.Load())
	if ran.Load() < int64(cases)/2 {
		t.Errorf("only %d of %d queries ran; the generator makes too many invalid ones", ran.Load(), cases)
	}
}

// runSet runs the n queries of table set seed.
func runSet(ctx context.Context, t *testing.T, e *engine, newDB func() string, seed uint64, n int, fs features, ran, failed *atomic.Int64) {
	cs := genCase(seed, fmt.Sprintf("s%d", seed), n, fs)
	par := 1 + int(seed%2)
	ch := &checker{e: e, parallelism: par, newDB: newDB}
	db := newDB()
	if err := e.load(ctx, db, cs.tables, par); err != nil {
		t.Errorf("seed %d: setup: %v", seed, err)
		return
	}
	defer e.drop(ctx, db)
	for qi, sql := range cs.queries {
		f, err := ch.check(ctx, cs.tables, db, sql)
		if ctx.Err() != nil {
			t.Errorf("seed %d: %v", seed, ctx.Err())
			return
		}
		if errors.Is(err, errTooBig) {
			continue
		}
		if err != nil {
			t.Errorf("seed %d query %d: the reference cannot evaluate a generated query: %v\n%s", seed, qi, err, sql)
			continue
		}
		ran.Add(1)
		if f == nil {
			continue
		}
		failed.Add(1)
		tables := cs.tables
		if *flagShrink {
			tables, f = ch.shrink(ctx, tables, f)
			// NB: the shrinker's databases are dropped from
			// default_database; come back to the set's own.
			if err := e.exec(ctx, "USE "+db); err != nil {
				t.Errorf("seed %d: %v", seed, err)
				return
			}
		}
		t.Errorf("seed %d query %d: %s", seed, qi, report(tables, f, par))
	}
}

// flagSet reports whether the named flag was given.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
