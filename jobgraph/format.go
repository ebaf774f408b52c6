package jobgraph

import (
	"errors"
	"fmt"
)

// Format names of FormatSpec.Name.
const (
	FormatJSON = "json"
	FormatCSV  = "csv"
	FormatRaw  = "raw"
	// FormatDebeziumJSON is a changelog format: sources of it emit
	// updates and deletes, and sinks of it take them.
	FormatDebeziumJSON = "debezium-json"
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

	// CSV holds the csv format's options when Name is FormatCSV.
	CSV *CSVFormat `json:"csv,omitempty"`
	// LittleEndian is the raw format's 'raw.endianness' = 'little-endian'.
	LittleEndian bool `json:"little_endian,omitempty"`
	// SchemaInclude is 'debezium-json.schema-include': each event is the
	// "payload" of a schema envelope.
	SchemaInclude bool `json:"schema_include,omitempty"`
	// ISOTimestamps is '<format>.timestamp-format.standard' = 'ISO-8601':
	// TIMESTAMPs are written with a 'T' (both forms are read).
	ISOTimestamps bool `json:"iso_timestamps,omitempty"`
}

// CSVFormat is the options of the csv format, defaults applied.
type CSVFormat struct {
	// FieldDelimiter is 'csv.field-delimiter' (default ',').
	FieldDelimiter rune `json:"field_delimiter"`
	// Quote is 'csv.quote-character' (default '"'); 0 with
	// 'csv.disable-quote-character'.
	Quote rune `json:"quote,omitempty"`
	// AllowComments is 'csv.allow-comments': lines starting with '#' are
	// skipped.
	AllowComments bool `json:"allow_comments,omitempty"`
	// ArrayElementDelimiter is 'csv.array-element-delimiter' (default ";").
	ArrayElementDelimiter string `json:"array_element_delimiter"`
	// Escape is 'csv.escape-character'; 0 when not set.
	Escape rune `json:"escape,omitempty"`
	// NullLiteral is 'csv.null-literal'; HasNullLiteral says it is set.
	NullLiteral    string `json:"null_literal,omitempty"`
	HasNullLiteral bool   `json:"has_null_literal,omitempty"`
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
		if f.CSV != nil {
			return errors.New("json format with csv options")
		}
		return nil
	case FormatDebeziumJSON:
		if f.CSV != nil || f.FailOnMissingField {
			return errors.New("debezium-json format with another format's options")
		}
		return nil
	case FormatRaw:
		if f.CSV != nil || f.FailOnMissingField || f.IgnoreParseErrors {
			return errors.New("raw format with another format's options")
		}
		return nil
	case FormatCSV:
		if f.CSV == nil || f.CSV.FieldDelimiter == 0 {
			return errors.New("csv format without a field delimiter")
		}
		if f.FailOnMissingField {
			return errors.New("csv format with fail-on-missing-field")
		}
		return nil
	}
	return fmt.Errorf("unknown format %q", f.Name)
}

// Changelog reports whether f's values carry updates and deletes.
func (f *FormatSpec) Changelog() bool { return f.Name == FormatDebeziumJSON }
