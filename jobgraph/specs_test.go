package jobgraph

import (
	"testing"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// TestEncodeSpecDeepExpression checks that a calc over a 20,000-term
// chain 1+1+...+1 encodes (EncodeSpec panicked past 5,000 terms, after a
// minute), decodes back, and is canonicalized for its uid.
func TestEncodeSpecDeepExpression(t *testing.T) {
	one := expr.Literal(int64(1), types.Int.WithNullable(false))
	e := one
	for range 20_000 - 1 {
		var err error
		if e, err = expr.ResolveCall("+", []*expr.Expr{e, one}); err != nil {
			t.Fatal(err)
		}
	}
	spec := &CalcSpec{Projections: []*expr.Expr{e}, OutputSchema: types.Schema{{Name: "x", Type: e.Type}}}
	config, err := encodeSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := decodeSpec(KindCalc, config)
	if err != nil {
		t.Fatal(err)
	}
	back := decoded.(*CalcSpec)
	n := 0
	for x := back.Projections[0]; x.Op == expr.OpCall; x = x.Args[0] {
		n++
	}
	if n != 20_000-1 {
		t.Errorf("decoded a chain of %d calls, want %d", n, 20_000-1)
	}
	// The uid hashes the spec's canonical form, not the fallback of a
	// config encoding/json cannot read.
	if string(structuralSpec(config)) == string(config) {
		t.Error("structuralSpec could not canonicalize the spec")
	}
}
