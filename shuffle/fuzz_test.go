package shuffle

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/types"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the seed corpus in testdata/fuzz/FuzzDecodeFrame")

// seedPrefix marks the corpus files TestFuzzSeedCorpus writes; the files
// go test -fuzz adds for a failure are named by hash and kept as they are.
const seedPrefix = "seed-"

// fuzzSeeds are the seed payloads of FuzzDecodeFrame: real encodings of
// small batches of every type, and the crafted payloads.
func fuzzSeeds(t testing.TB) map[string][]byte {
	t.Helper()
	seeds := map[string][]byte{}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []types.Schema{allTypesSchema, testSchema} {
		b1, b2 := makeRandomBatch(rng, s, 5), makeRandomBatch(rng, s, 0)
		for i, p := range encodePayloads(t, false, b1, b2) {
			seeds[fmt.Sprintf("real-%d-columns-payload-%d", len(s), i)] = p
		}
		seeds[fmt.Sprintf("real-%d-columns-coalesced", len(s))] = encodePayloads(t, true, b1, b2)[0]
		b1.Release()
		b2.Release()
	}
	for _, c := range craftedPayloads(t) {
		seeds["crafted-"+strings.NewReplacer(" ", "-", "^", "").Replace(c.name)] = c.payload
	}
	return seeds
}

// TestFuzzSeedCorpus keeps testdata/fuzz/FuzzDecodeFrame in step with
// fuzzSeeds; -rewrite regenerates it.
func TestFuzzSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeFrame")
	seeds := fuzzSeeds(t)
	if *rewrite {
		old, _ := filepath.Glob(filepath.Join(dir, seedPrefix+"*"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, p := range seeds {
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(p)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, seedPrefix+name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, seedPrefix+"*"))
	if len(files) != len(seeds) {
		t.Fatalf("%s has %d seeds, fuzzSeeds %d: run go test ./shuffle -run TestFuzzSeedCorpus -rewrite", dir, len(files), len(seeds))
	}
	for name, p := range seeds {
		body, err := os.ReadFile(filepath.Join(dir, seedPrefix+name))
		if err != nil || !bytes.Equal(body, []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(p))+")\n")) {
			t.Fatalf("seed %s is stale (%v): run go test ./shuffle -run TestFuzzSeedCorpus -rewrite", name, err)
		}
	}
}

// FuzzDecodeFrame feeds arbitrary bytes as the arrow_ipc payload of a
// DataMessage through the server's decoder, both as a stream's first
// payload and as a later one after a real schema. Decoding must fail with a
// *badStreamError from the checks (not from arrow-go, nor a recovered
// panic) or yield batches that are whole: valid offsets, valid row kinds,
// every value readable, no more rows than bytes.
func FuzzDecodeFrame(f *testing.F) {
	for _, p := range fuzzSeeds(f) {
		f.Add(p)
	}
	b := makeBatch(0, 3, 3, true)
	primer := encodePayloads(f, false, b)[0]
	b.Release()
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, primed := range []bool{false, true} {
			var d decoder
			if primed {
				if err := d.feed(primer, func(b types.Batch) error { b.Release(); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			rows := 0
			err := d.feed(p, func(b types.Batch) error {
				defer b.Release()
				rows += b.NumRows()
				return checkWhole(b)
			})
			d.release()
			var bad *badStreamError
			var unchecked *uncheckedError
			switch {
			case errors.As(err, &unchecked):
				t.Fatalf("primed=%v: the checks let through what decoding then refused: %v\n%s", primed, err, unchecked.stack)
			case err != nil && !errors.As(err, &bad):
				t.Fatalf("primed=%v: %v", primed, err)
			}
			if rows > len(p) {
				t.Fatalf("primed=%v: %d rows out of %d bytes", primed, rows, len(p))
			}
		}
	})
}

// checkWhole reads every value of b.
func checkWhole(b types.Batch) error {
	for i := 0; i < int(b.Rec.NumCols()); i++ {
		col := b.Rec.Column(i)
		if err := validateOffsets(col); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
		for r := 0; r < col.Len(); r++ {
			_ = col.ValueStr(r)
		}
		if col.NullN() != col.Len()-countValid(col) {
			return fmt.Errorf("column %d: %d nulls counted, %d reported", i, col.Len()-countValid(col), col.NullN())
		}
	}
	for r, k := range b.Kinds() {
		if k < int8(types.Insert) || k > int8(types.Delete) {
			return fmt.Errorf("row %d: kind %d", r, k)
		}
	}
	return nil
}

// validateOffsets checks the offsets of a STRING or BYTES column.
//
// NB: not that STRING values are UTF-8 (String.ValidateFull does): Braid's
// builders and its local exchange do not check it, so the remote exchange
// does not refuse it either.
func validateOffsets(col arrow.Array) error {
	switch c := col.(type) {
	case *array.String:
		d := c.Data()
		bin := array.NewBinaryData(array.NewData(arrow.BinaryTypes.Binary, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset()))
		defer bin.Release()
		return bin.ValidateFull()
	case *array.Binary:
		return c.ValidateFull()
	}
	return nil
}

func countValid(a arrow.Array) int {
	if _, ok := a.(*array.Null); ok {
		return 0
	}
	n := 0
	for r := 0; r < a.Len(); r++ {
		if a.IsValid(r) {
			n++
		}
	}
	return n
}
