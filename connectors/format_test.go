package connectors

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// TestFormatOldSpec: a kafka source spec stored before formats existed has
// no format and reads json with its own json options.
func TestFormatOldSpec(t *testing.T) {
	var s jobgraph.KafkaSourceSpec
	if err := json.Unmarshal([]byte(`{"topic":"t","brokers":["h:1"],"schema":[],"startup_mode":"earliest-offset","ignore_parse_errors":true}`), &s); err != nil {
		t.Fatal(err)
	}
	if f := s.ValueFormat(); f.Name != jobgraph.FormatJSON || !f.IgnoreParseErrors || f.FailOnMissingField {
		t.Errorf("old source spec format = %+v", f)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("old source spec: %v", err)
	}
	var k jobgraph.KafkaSinkSpec
	if err := json.Unmarshal([]byte(`{"topic":"t","brokers":["h:1"],"schema":[]}`), &k); err != nil {
		t.Fatal(err)
	}
	if f := k.ValueFormat(); f.Name != jobgraph.FormatJSON {
		t.Errorf("old sink spec format = %+v", f)
	}
	bad := jobgraph.KafkaSinkSpec{Topic: "t", Brokers: []string{"h:1"}, Format: &jobgraph.FormatSpec{Name: "xml"}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `unknown format "xml"`) {
		t.Errorf("unknown format: %v", err)
	}
}

// TestFormatOptions: formatFor reads 'format' or 'value.format' and the
// chosen format's options under either spelling, and refuses options of
// other formats and unknown ones.
func TestFormatOptions(t *testing.T) {
	schema := types.Schema{{Name: "a", Type: types.Int}}
	for _, tc := range []struct {
		opts map[string]string
		want string // error, or the format as %+v
	}{
		{map[string]string{"format": "json"}, "{Name:json IgnoreParseErrors:false FailOnMissingField:false}"},
		{map[string]string{"value.format": "json", "value.json.ignore-parse-errors": "true"}, "{Name:json IgnoreParseErrors:true FailOnMissingField:false}"},
		{map[string]string{"format": "json", "json.fail-on-missing-field": "true"}, "{Name:json IgnoreParseErrors:false FailOnMissingField:true}"},
		{map[string]string{"format": "json", "value.format": "json"}, "{Name:json IgnoreParseErrors:false FailOnMissingField:false}"},
		{map[string]string{}, "table db.k: option 'format' is required"},
		{map[string]string{"format": "json", "value.format": "csv"}, "option 'value.format' is 'csv' but 'format' is 'json'"},
		{map[string]string{"format": "xml"}, "option 'format' 'xml' is not supported"},
		{map[string]string{"format": "json", "json.colour": "red"}, "option 'json.colour' is not an option of the 'json' format"},
		{map[string]string{"format": "json", "json.ignore-parse-errors": "1"}, "table db.k: option 'json.ignore-parse-errors' must be 'true' or 'false', got '1'"},
	} {
		tbl := &catalog.Table{Database: "db", Name: "k", Options: tc.opts}
		f, err := formatFor(tbl, "value.", schema)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = fmtSpec(f)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%v: got %s, want %s", tc.opts, got, tc.want)
		}
	}
}

// fmtSpec prints the options every format has.
func fmtSpec(f jobgraph.FormatSpec) string {
	return fmt.Sprintf("{Name:%s IgnoreParseErrors:%t FailOnMissingField:%t}", f.Name, f.IgnoreParseErrors, f.FailOnMissingField)
}
