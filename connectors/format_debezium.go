package connectors

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/braidflow/braid/types"
)

// Debezium's operation codes.
const (
	debeziumCreate = "c"
	debeziumRead   = "r" // a snapshot read
	debeziumUpdate = "u"
	debeziumDelete = "d"
	debeziumTrunc  = "t"
)

// debeziumDecoder reads Debezium JSON change events into a changelog, as
// Flink's 'debezium-json' format does: op "c" and "r" are an insert of
// "after" (+I), "u" an update from "before" to "after" (-U then +U), "d" a
// delete of "before" (-D). With schemaInclude the event is the "payload"
// of a {"schema": ..., "payload": ...} envelope. A record without a value
// and a truncate ("t") append nothing. The rows' fields convert as the
// json format's do.
type debeziumDecoder struct {
	*jsonDecoder
	schemaInclude bool
}

var _ rowDecoder = (*debeziumDecoder)(nil)

func newDebeziumDecoder(schema types.Schema, schemaInclude, ignoreErrors bool) *debeziumDecoder {
	return &debeziumDecoder{jsonDecoder: newJSONDecoder(schema, false, ignoreErrors), schemaInclude: schemaInclude}
}

type debeziumEvent struct {
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	Op      string          `json:"op"`
	Payload json.RawMessage `json:"payload"`
}

// Decode implements rowDecoder: it appends one or two rows.
func (d *debeziumDecoder) Decode(v []byte) (bool, error) {
	if v == nil {
		return false, nil
	}
	ok, err := d.decode(v)
	if err != nil {
		if d.ignoreErrors {
			return false, nil
		}
		//lint:ignore ST1005 Flink's message, verbatim
		return false, fmt.Errorf("Corrupt Debezium JSON message '%s': %w", truncate(v), err)
	}
	return ok, nil
}

func (d *debeziumDecoder) decode(v []byte) (bool, error) {
	var ev debeziumEvent
	if err := json.Unmarshal(v, &ev); err != nil {
		return false, err
	}
	if d.schemaInclude {
		if isJSONNull(ev.Payload) {
			return false, fmt.Errorf("no \"payload\" (is 'debezium-json.schema-include' right?)")
		}
		payload := ev.Payload
		ev = debeziumEvent{}
		if err := json.Unmarshal(payload, &ev); err != nil {
			return false, err
		}
	}
	switch ev.Op {
	case debeziumCreate, debeziumRead:
		return true, d.row(ev.After, types.Insert)
	case debeziumUpdate:
		if isJSONNull(ev.Before) {
			return false, beforeIsNull("UPDATE")
		}
		// NB: both rows or neither: the -U is appended only when the +U
		// is an object too.
		if !isJSONObject(ev.After) {
			return false, fmt.Errorf("the \"after\" field of an UPDATE message is not a JSON object")
		}
		if err := d.row(ev.Before, types.UpdateBefore); err != nil {
			return false, err
		}
		return true, d.row(ev.After, types.UpdateAfter)
	case debeziumDelete:
		if isJSONNull(ev.Before) {
			return false, beforeIsNull("DELETE")
		}
		return true, d.row(ev.Before, types.Delete)
	case debeziumTrunc:
		return false, nil
	}
	//lint:ignore ST1005 Flink's message, verbatim
	return false, fmt.Errorf("Unknown \"op\" value \"%s\". The Debezium JSON message is '%s'", ev.Op, truncate(v))
}

// row appends the row of obj with kind k.
func (d *debeziumDecoder) row(obj json.RawMessage, k types.RowKind) error {
	if isJSONNull(obj) {
		return fmt.Errorf("the row of a %s is null", k)
	}
	ok, err := d.jsonDecoder.Decode(obj)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the row of a %s is not a JSON object", k)
	}
	d.kinds = append(d.kinds, int8(k))
	return nil
}

func beforeIsNull(op string) error {
	//lint:ignore ST1005 Flink's message, verbatim
	return fmt.Errorf("The \"before\" field of %s message is null, if you are using Debezium Postgres Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level.", op)
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func isJSONNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// debeziumEncoder writes each row as a Debezium JSON change event, as
// Flink's 'debezium-json' format does: +I and +U as {"before":null,
// "after":<row>,"op":"c"}, -U and -D as {"before":<row>,"after":null,
// "op":"d"}.
type debeziumEncoder struct {
	row *jsonEncoder
}

var _ rowEncoder = (*debeziumEncoder)(nil)

func (e *debeziumEncoder) project(cols []int) rowEncoder {
	e.row.project(cols)
	return e
}

// AppendRow implements rowEncoder.
func (e *debeziumEncoder) AppendRow(dst []byte, b types.Batch, r int) []byte {
	switch types.RowKind(b.Kinds()[r]) {
	case types.Insert, types.UpdateAfter:
		dst = append(dst, `{"before":null,"after":`...)
		dst = e.row.AppendRow(dst, b, r)
		return append(dst, `,"op":"c"}`...)
	}
	dst = append(dst, `{"before":`...)
	dst = e.row.AppendRow(dst, b, r)
	return append(dst, `,"after":null,"op":"d"}`...)
}
