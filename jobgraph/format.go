package jobgraph

import "fmt"

// Format names of FormatSpec.Name.
const (
	FormatJSON = "json"
)

// FormatSpec is the checked format of a Kafka record value (or key): its
// name and that format's options, resolved once when the table's options
// are read. Fields that do not belong to Name are zero.
type FormatSpec struct {
	// Name is one of the Format constants.
	Name string `json:"name"`
	// IgnoreParseErrors is '<format>.ignore-parse-errors'.
	IgnoreParseErrors bool `json:"ignore_parse_errors,omitempty"`
	// FailOnMissingField is 'json.fail-on-missing-field'.
	FailOnMissingField bool `json:"fail_on_missing_field,omitempty"`
}

// ValueFormat returns the format of the record values. A spec written
// before formats existed has no Format: its values are json, with the json
// options it carries itself.
func (s *KafkaSourceSpec) ValueFormat() FormatSpec {
	if s.Format != nil {
		return *s.Format
	}
	return FormatSpec{Name: FormatJSON, FailOnMissingField: s.FailOnMissingField, IgnoreParseErrors: s.IgnoreParseErrors}
}

// ValueFormat returns the format of the record values: json when the spec
// names none (one written before formats existed).
func (s *KafkaSinkSpec) ValueFormat() FormatSpec {
	if s.Format != nil {
		return *s.Format
	}
	return FormatSpec{Name: FormatJSON}
}

// Validate checks that f names a known format with its options.
func (f *FormatSpec) Validate() error {
	switch f.Name {
	case FormatJSON:
		return nil
	}
	return fmt.Errorf("unknown format %q", f.Name)
}
