package expr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzExprJSON decodes arbitrary bytes as an Expr. What decodes must be
// valid JSON, decode the same through encoding/json, and re-encode to bytes
// that decode and encode again to themselves; a small tree must also
// encode as the old recursive encoder wrote it and decode as it read it.
// Seeds are in testdata/fuzz/FuzzExprJSON.
func FuzzExprJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Expr
		if err := e.UnmarshalJSON(data); err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("decoded invalid JSON %q", data)
		}
		var viaJSON Expr
		if err := json.Unmarshal(data, &viaJSON); err != nil {
			// encoding/json refuses documents nested over 10,000 deep.
			if !deeperThan(&e, 4000) {
				t.Fatalf("encoding/json: %v", err)
			}
		} else if !sameExpr(&e, &viaJSON) {
			t.Fatalf("encoding/json decoded %#v, UnmarshalJSON %#v", &viaJSON, &e)
		}
		enc, err := json.Marshal(&e)
		if err != nil {
			t.Fatalf("re-encoding %#v: %v", &e, err)
		}
		var back Expr
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("decoding the re-encoding %s: %v", enc, err)
		}
		again, err := json.Marshal(&back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, again) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, again)
		}
		if len(enc) > 1<<16 || deeperThan(&back, 100) {
			return // the legacy coder is quadratic
		}
		legacyEnc, err := json.Marshal(toLegacy(&back))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, legacyEnc) {
			t.Fatalf("encoding differs from the old one:\n got %s\nwant %s", enc, legacyEnc)
		}
		var legacy legacyExpr
		if err := json.Unmarshal(enc, &legacy); err != nil {
			t.Fatalf("the old decoder fails on %s: %v", enc, err)
		}
		if !sameExpr(fromLegacy(&legacy), &back) {
			t.Fatalf("the old decoder reads %s otherwise", enc)
		}
	})
}
