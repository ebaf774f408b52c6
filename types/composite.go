package types

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Composite types: ARRAY<t>, MAP<k, v>, MULTISET<t> and ROW<name t, ...>.
//
// The element, key, value and field types live in a nested node that is
// interned by the type's text (element nullability and field names
// included), so two DataTypes are == exactly when they are the same SQL
// type. A composite value is held in one Arrow Binary cell in the encoding
// that value.go describes.

// nested is the structure of a composite type. It is never modified after
// interning.
type nested struct {
	elem   DataType // ARRAY and MULTISET element; MAP key
	value  DataType // MAP value
	fields []Field  // ROW fields
	depth  int      // nesting levels, this one included
}

// MaxTypeDepth bounds the nesting of composite types, as the SQL parser
// bounds the nesting of written types.
const MaxTypeDepth = 200

// maxInterned bounds the number of distinct composite types a process
// holds: types also arrive from the network (braid.type metadata).
const maxInterned = 1 << 16

var intern struct {
	sync.Mutex
	m map[string]*nested
}

func internNested(kind Kind, n nested) (DataType, error) {
	t := DataType{Kind: kind, nested: &n}
	key := t.nestedString()
	intern.Lock()
	defer intern.Unlock()
	if p, ok := intern.m[key]; ok {
		return DataType{Kind: kind, nested: p}, nil
	}
	if intern.m == nil {
		intern.m = map[string]*nested{}
	}
	if len(intern.m) >= maxInterned {
		return DataType{}, fmt.Errorf("types: more than %d distinct composite types", maxInterned)
	}
	intern.m[key] = t.nested
	return t, nil
}

func depthOf(ts ...DataType) int {
	d := 0
	for _, t := range ts {
		if t.nested != nil && t.nested.depth > d {
			d = t.nested.depth
		}
	}
	return d + 1
}

func mustNested(t DataType, err error) DataType {
	if err != nil {
		panic(err)
	}
	return t
}

// NewArray returns ARRAY<elem> (nullable), or an error past MaxTypeDepth.
func NewArray(elem DataType) (DataType, error) {
	d := depthOf(elem)
	if d > MaxTypeDepth {
		return DataType{}, errTooDeep
	}
	return internNested(KindArray, nested{elem: elem, depth: d})
}

// NewMultiset returns MULTISET<elem> (nullable).
func NewMultiset(elem DataType) (DataType, error) {
	d := depthOf(elem)
	if d > MaxTypeDepth {
		return DataType{}, errTooDeep
	}
	return internNested(KindMultiset, nested{elem: elem, depth: d})
}

// NewMap returns MAP<key, value> (nullable).
func NewMap(key, value DataType) (DataType, error) {
	d := depthOf(key, value)
	if d > MaxTypeDepth {
		return DataType{}, errTooDeep
	}
	return internNested(KindMap, nested{elem: key, value: value, depth: d})
}

// NewRow returns ROW<fields> (nullable). The fields are copied.
func NewRow(fields []Field) (DataType, error) {
	ts := make([]DataType, len(fields))
	for i, f := range fields {
		ts[i] = f.Type
	}
	d := depthOf(ts...)
	if d > MaxTypeDepth {
		return DataType{}, errTooDeep
	}
	return internNested(KindRow, nested{fields: append([]Field(nil), fields...), depth: d})
}

var errTooDeep = fmt.Errorf("types: composite type nested more than %d levels", MaxTypeDepth)

// Array, Multiset, Map and Row are NewArray, ... for types known to be
// valid (tests, fixed library signatures); they panic on error.
func Array(elem DataType) DataType     { return mustNested(NewArray(elem)) }
func Multiset(elem DataType) DataType  { return mustNested(NewMultiset(elem)) }
func Map(key, value DataType) DataType { return mustNested(NewMap(key, value)) }
func Row(fields ...Field) DataType     { return mustNested(NewRow(fields)) }
func (t DataType) IsComposite() bool   { return t.nested != nil }
func (t DataType) Elem() DataType      { return t.nested.elem }
func (t DataType) MapKey() DataType    { return t.nested.elem }
func (t DataType) MapValue() DataType  { return t.nested.value }
func (t DataType) NumFields() int      { return len(t.nested.fields) }
func (t DataType) FieldAt(i int) Field { return t.nested.fields[i] }
func (t DataType) isKind(k Kind) bool  { return t.Kind == k && t.nested != nil }
func (t DataType) IsArray() bool       { return t.isKind(KindArray) }
func (t DataType) IsMap() bool         { return t.isKind(KindMap) }
func (t DataType) IsMultiset() bool    { return t.isKind(KindMultiset) }
func (t DataType) IsRow() bool         { return t.isKind(KindRow) }

// FieldIndex returns the index of ROW field name (case-sensitive), or -1.
func (t DataType) FieldIndex(name string) int {
	for i, f := range t.nested.fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// MapEntryTypes returns the key and value types of a MAP, or of a
// MULTISET seen as the map from element to its count (INT NOT NULL), as
// Flink holds it.
func (t DataType) MapEntryTypes() (k, v DataType) {
	if t.Kind == KindMultiset {
		return t.nested.elem, Int.WithNullable(false)
	}
	return t.nested.elem, t.nested.value
}

// nestedString prints a composite type as Flink does: ARRAY<INT>,
// MAP<STRING, INT NOT NULL>, MULTISET<STRING>, ROW<`id` BIGINT, `name`
// STRING>.
func (t DataType) nestedString() string {
	var sb strings.Builder
	t.writeNested(&sb)
	return sb.String()
}

func (t DataType) writeNested(sb *strings.Builder) {
	switch t.Kind {
	case KindArray:
		sb.WriteString("ARRAY<")
		sb.WriteString(t.nested.elem.String())
	case KindMultiset:
		sb.WriteString("MULTISET<")
		sb.WriteString(t.nested.elem.String())
	case KindMap:
		sb.WriteString("MAP<")
		sb.WriteString(t.nested.elem.String())
		sb.WriteString(", ")
		sb.WriteString(t.nested.value.String())
	case KindRow:
		sb.WriteString("ROW<")
		for i, f := range t.nested.fields {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(QuoteIdent(f.Name))
			sb.WriteByte(' ')
			sb.WriteString(f.Type.String())
		}
	}
	sb.WriteByte('>')
}

// QuoteIdent back-quotes a name, doubling back quotes inside it.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func isNestedTypeString(s string) bool {
	u := strings.ToUpper(strings.TrimSpace(s))
	for _, p := range []string{"ARRAY<", "MAP<", "MULTISET<", "ROW<"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// parseNestedType reads a composite type as String prints it.
func parseNestedType(s string) (DataType, error) {
	p := &typeText{s: s}
	t, err := p.typ(0)
	if err != nil {
		return DataType{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return DataType{}, fmt.Errorf("types: bad type %q", clipType(s))
	}
	return t, nil
}

func clipType(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// typeText is a cursor over a type's text.
type typeText struct {
	s string
	i int
}

func (p *typeText) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeText) eat(lit string) bool {
	p.space()
	if len(p.s)-p.i >= len(lit) && strings.EqualFold(p.s[p.i:p.i+len(lit)], lit) {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *typeText) bad() error { return fmt.Errorf("types: bad type %q", clipType(p.s)) }

// typ reads one type, composite or not, with its NOT NULL suffix.
func (p *typeText) typ(depth int) (DataType, error) {
	if depth > MaxTypeDepth {
		return DataType{}, errTooDeep
	}
	var t DataType
	var err error
	switch {
	case p.eat("ARRAY<"):
		var e DataType
		if e, err = p.elem(depth); err == nil {
			t, err = NewArray(e)
		}
	case p.eat("MULTISET<"):
		var e DataType
		if e, err = p.elem(depth); err == nil {
			t, err = NewMultiset(e)
		}
	case p.eat("MAP<"):
		var k, v DataType
		if k, err = p.typ(depth + 1); err != nil {
			return t, err
		}
		if !p.eat(",") {
			return t, p.bad()
		}
		if v, err = p.typ(depth + 1); err != nil {
			return t, err
		}
		if !p.eat(">") {
			return t, p.bad()
		}
		t, err = NewMap(k, v)
	case p.eat("ROW<"):
		var fields []Field
		for !p.eat(">") {
			if len(fields) > 0 && !p.eat(",") {
				return t, p.bad()
			}
			name, ok := p.ident()
			if !ok {
				return t, p.bad()
			}
			ft, err := p.typ(depth + 1)
			if err != nil {
				return t, err
			}
			fields = append(fields, Field{Name: name, Type: ft})
		}
		t, err = NewRow(fields)
	default:
		return p.scalar()
	}
	if err != nil {
		return t, err
	}
	if p.eat("NOT NULL") {
		t.NotNull = true
	}
	return t, nil
}

// elem reads the element type of ARRAY< or MULTISET< and the closing >.
func (p *typeText) elem(depth int) (DataType, error) {
	e, err := p.typ(depth + 1)
	if err != nil {
		return e, err
	}
	if !p.eat(">") {
		return e, p.bad()
	}
	return e, nil
}

// ident reads a back-quoted name.
func (p *typeText) ident() (string, bool) {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '`' {
		return "", false
	}
	var sb strings.Builder
	for j := p.i + 1; j < len(p.s); j++ {
		if p.s[j] != '`' {
			sb.WriteByte(p.s[j])
			continue
		}
		if j+1 < len(p.s) && p.s[j+1] == '`' {
			sb.WriteByte('`')
			j++
			continue
		}
		p.i = j + 1
		return sb.String(), true
	}
	return "", false
}

// scalar reads a non-composite type up to the ',' or '>' that ends it
// (parentheses, as in DECIMAL(10, 2), nest).
func (p *typeText) scalar() (DataType, error) {
	p.space()
	start, parens := p.i, 0
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if c == '(' {
			parens++
		} else if c == ')' {
			parens--
		} else if parens == 0 && (c == ',' || c == '>') {
			break
		}
	}
	text := p.s[start:p.i]
	if isNestedTypeString(text) || strings.TrimSpace(text) == "" {
		return DataType{}, p.bad()
	}
	return ParseType(text)
}

// typeJSON is the JSON form of a DataType: its fields, and for a
// composite type its text in Nested.
type typeJSON struct {
	Kind      Kind
	Length    int
	Precision int
	Scale     int
	NotNull   bool
	Nested    string `json:",omitempty"`
}

// MarshalJSON writes t with its composite structure as type text.
func (t DataType) MarshalJSON() ([]byte, error) {
	j := typeJSON{Kind: t.Kind, Length: t.Length, Precision: t.Precision, Scale: t.Scale, NotNull: t.NotNull}
	if t.nested != nil {
		j.Nested = t.nestedString()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *DataType) UnmarshalJSON(b []byte) error {
	var j typeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Nested != "" {
		nt, err := parseNestedType(j.Nested)
		if err != nil {
			return err
		}
		if nt.Kind != j.Kind {
			return fmt.Errorf("types: composite type %q is not of kind %d", clipType(j.Nested), j.Kind)
		}
		nt.NotNull = j.NotNull
		*t = nt
		return nil
	}
	if j.Kind >= KindArray && j.Kind <= KindRow {
		return fmt.Errorf("types: composite kind %d without its structure", j.Kind)
	}
	*t = DataType{Kind: j.Kind, Length: j.Length, Precision: j.Precision, Scale: j.Scale, NotNull: j.NotNull}
	return nil
}
