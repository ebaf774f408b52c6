package connectors

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// Composite values in the json format, as Flink's JsonToRowDataConverters
// and RowDataToJsonConverters read and write them: a ROW is an object
// whose members are matched to the fields by name (a missing one is NULL),
// an ARRAY is an array, a MAP is an object (its keys are the member names,
// read as the key type), a MULTISET an object from element to count. The
// recursion goes only as deep as the column's type.

// convertJSONComposite converts one JSON array or object to the composite
// type t, into c.bs (encoded, types/value.go).
func convertJSONComposite(raw json.RawMessage, t types.DataType, c *jsonCell) error {
	enc, err := jsonComposite(raw, t)
	if err != nil {
		return err
	}
	c.bs = enc
	return nil
}

func jsonComposite(raw json.RawMessage, t types.DataType) ([]byte, error) {
	switch t.Kind {
	case types.KindArray:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil || items == nil {
			return nil, errors.New("not a JSON array")
		}
		vals := make([]any, len(items))
		for i, it := range items {
			v, err := jsonElem(it, t.Elem())
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i+1, err)
			}
			vals[i] = v
		}
		return types.AppendComposite(nil, t, nil, vals), nil
	case types.KindRow:
		members, err := jsonMembers(raw)
		if err != nil {
			return nil, err
		}
		vals := make([]any, t.NumFields())
		for _, m := range members {
			i := t.FieldIndex(m.name)
			if i < 0 {
				continue
			}
			v, err := jsonElem(m.value, t.FieldAt(i).Type)
			if err != nil {
				return nil, fmt.Errorf("field '%s': %w", m.name, err)
			}
			vals[i] = v
		}
		return types.AppendComposite(nil, t, nil, vals), nil
	}
	// MAP and MULTISET.
	members, err := jsonMembers(raw)
	if err != nil {
		return nil, err
	}
	kt, vt := t.MapEntryTypes()
	var keys, vals []any
	for _, m := range members {
		kraw, _ := json.Marshal(m.name)
		k, err := jsonElem(kraw, kt)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", truncate(kraw), err)
		}
		v, err := jsonElem(m.value, vt)
		if err != nil {
			return nil, fmt.Errorf("value of key %s: %w", truncate(kraw), err)
		}
		if t.IsMultiset() && v == nil {
			return nil, errors.New("a MULTISET count is null")
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return types.AppendComposite(nil, t, keys, vals), nil
}

type jsonMember struct {
	name  string
	value json.RawMessage
}

// jsonMembers returns the members of a JSON object in document order (a
// repeated name keeps its last value, in its first place, as a map does).
func jsonMembers(raw json.RawMessage) ([]jsonMember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []jsonMember
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("not a JSON object")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if i, ok := at[name]; ok {
			out[i].value = v
			continue
		}
		at[name] = len(out)
		out = append(out, jsonMember{name: name, value: v})
	}
	return out, nil
}

// jsonElem converts one JSON value to t, in the Go form of types/value.go
// (nil for null).
func jsonElem(raw json.RawMessage, t types.DataType) (any, error) {
	var c jsonCell
	if t.IsComposite() {
		if string(bytes.TrimSpace(raw)) == "null" {
			return nil, nil
		}
		return jsonComposite(raw, t)
	}
	if err := convertJSON(raw, t, &c); err != nil {
		return nil, err
	}
	if c.null {
		return nil, nil
	}
	switch t.Kind {
	case types.KindBoolean:
		return c.b, nil
	case types.KindFloat, types.KindDouble:
		return c.f, nil
	case types.KindDecimal:
		return c.d, nil
	case types.KindChar, types.KindVarChar:
		return c.s, nil
	case types.KindBinary, types.KindVarBinary:
		return c.bs, nil
	}
	return c.i, nil
}

// appendJSONComposite writes an encoded composite value as JSON.
func appendJSONComposite(dst []byte, t types.DataType, enc []byte) []byte {
	keys, vals, err := types.DecodeComposite(t, enc)
	if err != nil {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case types.KindArray:
		dst = append(dst, '[')
		for i, v := range vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONElem(dst, t.Elem(), v)
		}
		return append(dst, ']')
	case types.KindRow:
		dst = append(dst, '{')
		for i, v := range vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, t.FieldAt(i).Name)
			dst = append(dst, ':')
			dst = appendJSONElem(dst, t.FieldAt(i).Type, v)
		}
		return append(dst, '}')
	}
	kt, vt := t.MapEntryTypes()
	dst = append(dst, '{')
	for i := range vals {
		if i > 0 {
			dst = append(dst, ',')
		}
		// NB: a member name is a string: a key of another type is written
		// as its text, as Flink's converter does.
		name := "null"
		if keys[i] != nil {
			name = jsonKeyText(kt, keys[i])
		}
		dst = appendJSONString(dst, name)
		dst = append(dst, ':')
		dst = appendJSONElem(dst, vt, vals[i])
	}
	return append(dst, '}')
}

// jsonKeyText is the member name of a MAP key.
func jsonKeyText(t types.DataType, v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if t.IsComposite() || t.IsBinary() {
		b := appendJSONElem(nil, t, v)
		if s, err := strconv.Unquote(string(b)); err == nil {
			return s
		}
		return string(b)
	}
	return types.FormatElem(t, v, time.UTC)
}

// appendJSONElem writes one element in its Go form as appendJSONValue
// writes the same value in a column.
func appendJSONElem(dst []byte, t types.DataType, v any) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x)
	case float64:
		if t.Kind == types.KindFloat {
			return appendJSONFloat(dst, x, types.FormatJavaFloat(float32(x)))
		}
		return appendJSONFloat(dst, x, types.FormatJavaDouble(x))
	case decimal128.Num:
		return append(dst, x.ToString(int32(t.Scale))...)
	case string:
		return appendJSONString(dst, x)
	case []byte:
		if t.IsComposite() {
			return appendJSONComposite(dst, t, x)
		}
		return appendJSONString(dst, base64.StdEncoding.EncodeToString(x))
	case int64:
		switch t.Kind {
		case types.KindDate:
			return appendJSONString(dst, types.FormatDate(int32(x)))
		case types.KindTime:
			return appendJSONString(dst, flinkTime(time.Unix(0, x*1e6).UTC()))
		case types.KindTimestamp, types.KindTimestampLTZ:
			tm := time.Unix(0, x).UTC()
			s := tm.Format("2006-01-02") + " " + flinkTime(tm)
			if t.Kind == types.KindTimestampLTZ {
				s += "Z"
			}
			return appendJSONString(dst, s)
		}
		return strconv.AppendInt(dst, x, 10)
	}
	return append(dst, "null"...)
}
