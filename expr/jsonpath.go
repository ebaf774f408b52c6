package expr

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The JSON paths of JSON_EXISTS, JSON_VALUE and JSON_QUERY, as Flink
// evaluates them: SqlJsonUtils takes an optional leading "lax" or "strict"
// word (STRICT when there is none) and hands the rest to Jayway JsonPath,
// lax mode with Option.SUPPRESS_EXCEPTIONS. This file ports the part of
// Jayway's PathCompiler and path tokens that Braid runs: the root ($ or @),
// properties (.name, ['name'], ['a','b']), wildcards (.* and [*]), indexes
// ([n], [-n], [n,m]) and slices ([a:b], [a:], [:b]). Deep scan (..),
// filters ([?(...)]) and functions (.length()) are refused.

// jsonProviderName is how Jayway names its JSON provider in messages, as
// Flink shades it.
const jsonProviderName = "org.apache.flink.shaded.com.jayway.jsonpath.spi.json.JacksonJsonProvider"

type jpKind uint8

const (
	jpProperty jpKind = iota
	jpWildcard
	jpIndex
	jpSlice
)

// A jpToken is one step of a path.
type jpToken struct {
	kind    jpKind
	props   []string // jpProperty
	delim   byte     // the quote jpProperty prints its names with
	indexes []int    // jpIndex
	// jpSlice: [from:to], either absent (hasFrom, hasTo)
	from, to       int
	hasFrom, hasTo bool
}

// A jsonPath is a compiled path spec.
type jsonPath struct {
	spec   string // as written, mode word included, for messages
	strict bool
	root   byte // '$' or '@'
	tokens []jpToken
	// err is why the spec does not compile: the error the ON ERROR clause
	// handles (Flink reads the path only once the document parsed).
	err error
	// unsupported is set when the path uses what Braid does not run.
	unsupported error
	// def[i]: token i is definite; upDef[i]: tokens 0..i-1 are.
	def, upDef []bool
}

var (
	// errJSONInvalidPath stands for Jayway's InvalidPathException while
	// compiling; Flink replaces its message by illegalJsonPathSpec.
	errJSONInvalidPath = errors.New("invalid JSON path")
	errJSONNullDoc     = errors.New("json object can not be null")
)

// jsonPathMode splits Flink's ^\s*(strict|lax)\s+(.+)$ off spec.
func jsonPathMode(spec string) (strict bool, rest string) {
	isSpace := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	i := 0
	for i < len(spec) && isSpace(spec[i]) {
		i++
	}
	for _, w := range []string{"strict", "lax"} {
		if len(spec)-i < len(w) || !strings.EqualFold(spec[i:i+len(w)], w) {
			continue
		}
		j := i + len(w)
		k := j
		for k < len(spec) && isSpace(spec[k]) {
			k++
		}
		switch {
		case k == j:
			return true, spec
		case k < len(spec):
			return w == "strict", spec[k:]
		case k-j >= 2:
			// \s+ gives its last character back to .+
			return w == "strict", spec[k-1:]
		}
		return true, spec
	}
	return true, spec
}

// compileJSONPath compiles spec. Errors are in the result: a path that
// does not compile fails each row as Flink's does (ON ERROR applies).
func compileJSONPath(spec string) *jsonPath {
	strict, rest := jsonPathMode(spec)
	jp := &jsonPath{spec: spec, strict: strict, root: '$'}
	if rest == "" {
		jp.err = errors.New("path can not be null or empty")
		return jp
	}
	c := &jpCompiler{jp: jp}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(jpInvalid); !ok {
					panic(r)
				}
				jp.err = errJSONInvalidPath
			}
		}()
		c.compile(rest)
	}()
	if jp.err == nil && c.unsupported != "" {
		jp.unsupported = fmt.Errorf("JSON path '%s' uses %s, and that is not supported yet", spec, c.unsupported)
	}
	jp.settle()
	if jp.err == errJSONInvalidPath {
		//lint:ignore ST1005 Flink's message, verbatim
		jp.err = fmt.Errorf("Illegal jsonpath spec ''%s'', format of the spec should be: ''<lax|strict> $'{'expr'}'''", spec)
	}
	return jp
}

// jpInvalid is the panic that stands for an exception while compiling.
type jpInvalid struct{}

func jpFail() { panic(jpInvalid{}) }

// jpCompiler is Jayway's PathCompiler over a CharacterIndex: s with a
// position and an inclusive end.
type jpCompiler struct {
	jp          *jsonPath
	s           []rune
	pos, end    int
	unsupported string
}

func (c *jpCompiler) at(i int) rune {
	if i < 0 || i >= len(c.s) {
		jpFail() // Java's StringIndexOutOfBoundsException
	}
	return c.s[i]
}
func (c *jpCompiler) cur() rune             { return c.at(c.pos) }
func (c *jpCompiler) curIs(r rune) bool     { return c.at(c.pos) == r }
func (c *jpCompiler) inBounds(i int) bool   { return i >= 0 && i <= c.end }
func (c *jpCompiler) tail() bool            { return c.pos >= c.end }
func (c *jpCompiler) nextIs(r rune) bool    { return c.inBounds(c.pos+1) && c.s[c.pos+1] == r }
func (c *jpCompiler) sub(i, j int) string   { return string(c.s[i:j]) }
func (c *jpCompiler) more() bool            { return c.inBounds(c.pos + 1) }
func (c *jpCompiler) add(t jpToken)         { c.jp.tokens = append(c.jp.tokens, t) }
func (c *jpCompiler) refuse(what string)    { c.unsupported = what; panic(jpStop{}) }
func (c *jpCompiler) nextSignificant() rune { return c.nextSignificantFrom(c.pos) }

// jpStop ends compiling at a construct Braid refuses.
type jpStop struct{}

func (c *jpCompiler) nextSignificantFrom(start int) rune {
	i := start + 1
	for c.inBounds(i) && c.s[i] == ' ' {
		i++
	}
	if c.inBounds(i) {
		return c.s[i]
	}
	return ' '
}

func (c *jpCompiler) nextSignificantIs(start int, r rune) bool {
	i := start + 1
	for c.inBounds(i) && c.s[i] == ' ' {
		i++
	}
	return c.inBounds(i) && c.s[i] == r
}

func (c *jpCompiler) indexOfNextSignificant(start int, r rune) int {
	i := start + 1
	for c.inBounds(i) && c.s[i] == ' ' {
		i++
	}
	if c.at(i) == r {
		return i
	}
	return -1
}

func (c *jpCompiler) reset(p string) {
	c.s, c.pos, c.end = []rune(p), 0, len([]rune(p))-1
	// CharacterIndex.trim: blanks (spaces only) off both ends, keeping one
	// character.
	for c.inBounds(c.pos) && c.pos < c.end && c.s[c.pos] == ' ' {
		c.pos++
	}
	for c.inBounds(c.pos) && c.pos < c.end && c.s[c.end] == ' ' {
		c.end--
	}
}

func (c *jpCompiler) compile(p string) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(jpStop); !ok {
				panic(r)
			}
		}
	}()
	c.reset(p)
	// NB: Jayway looks at the first character of the untrimmed path.
	if first := c.at(0); first != '$' && first != '@' {
		c.reset("$." + p)
	}
	if c.at(c.end) == '.' {
		jpFail() // "Path must not end with a '.' or '..'"
	}
	for c.inBounds(c.pos) {
		if r := c.s[c.pos]; r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			break
		}
		c.pos++
	}
	if r := c.cur(); r != '$' && r != '@' {
		jpFail()
	}
	c.jp.root = byte(c.cur())
	if c.tail() {
		return
	}
	c.pos++
	if r := c.cur(); r != '.' && r != '[' {
		jpFail()
	}
	c.next()
}

// next is readNextToken; it returns once the path is read.
func (c *jpCompiler) next() {
	switch c.cur() {
	case '[':
		if !c.bracketProperty() && !c.array() && !c.wildcard() {
			if c.nextSignificant() == '?' {
				i := c.indexOfNextSignificant(c.pos, '?')
				if c.nextSignificantIs(i, '(') {
					c.refuse("a filter [?(...)]")
				}
			}
			jpFail()
		}
	case '.':
		if c.curIs('.') && c.nextIs('.') {
			c.refuse("a deep scan (..)")
		}
		if !c.more() {
			jpFail()
		}
		c.pos++
		if c.curIs('.') {
			jpFail()
		}
		c.next()
	case '*':
		if !c.wildcard() {
			jpFail()
		}
	default:
		if !c.property() {
			jpFail()
		}
	}
}

func (c *jpCompiler) then() bool {
	if !c.tail() {
		c.next()
	}
	return true
}

func (c *jpCompiler) property() bool {
	if r := c.cur(); r == '[' || r == '*' || r == '.' || r == ' ' {
		return false
	}
	start, end := c.pos, 0
	for i := start; c.inBounds(i); i++ {
		r := c.s[i]
		if r == ' ' {
			jpFail()
		}
		if r == '.' || r == '[' {
			end = i
			break
		}
		if r == '(' {
			c.refuse("a function")
		}
	}
	if end == 0 {
		end = c.end + 1
	}
	c.pos = end
	c.add(jpToken{kind: jpProperty, props: []string{c.sub(start, end)}, delim: '\''})
	return c.then()
}

func (c *jpCompiler) bracketProperty() bool {
	if !c.curIs('[') {
		return false
	}
	delim := c.nextSignificant()
	if delim != '\'' && delim != '"' {
		return false
	}
	var props []string
	start, end := c.pos+1, 0
	inProp, inEscape, lastComma := false, false, false
	for i := start; c.inBounds(i); i++ {
		r := c.s[i]
		switch {
		case inEscape:
			inEscape = false
		case r == '\\':
			inEscape = true
		case r == ']' && !inProp:
			if lastComma {
				jpFail()
			}
			i = c.end + 1 // break
		case r == delim:
			if inProp {
				if n := c.nextSignificantFrom(i); n != ']' && n != ',' {
					jpFail()
				}
				end = i
				props = append(props, jpUnescape(c.sub(start, end)))
				inProp = false
			} else {
				start, inProp, lastComma = i+1, true, false
			}
		case r == ',' && !inProp:
			if lastComma {
				jpFail()
			}
			lastComma = true
		}
	}
	if inProp {
		jpFail()
	}
	close := c.indexOfNextSignificant(end, ']')
	if close == -1 || len(props) == 0 {
		jpFail()
	}
	c.pos = close + 1
	c.add(jpToken{kind: jpProperty, props: props, delim: byte(delim)})
	return c.then()
}

// jpUnescape is Jayway's Utils.unescape.
func jpUnescape(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '\\' || i+1 == len(rs) {
			b.WriteRune(rs[i])
			continue
		}
		i++
		switch rs[i] {
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'b':
			b.WriteByte('\b')
		case 'u':
			if i+5 > len(rs) {
				jpFail()
			}
			v, err := strconv.ParseUint(string(rs[i+1:i+5]), 16, 16)
			if err != nil {
				jpFail()
			}
			b.WriteRune(rune(v))
			i += 4
		default:
			b.WriteRune(rs[i])
		}
	}
	return b.String()
}

func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }

func (c *jpCompiler) array() bool {
	if !c.curIs('[') {
		return false
	}
	if n := c.nextSignificant(); !isASCIIDigit(n) && n != '-' && n != ':' {
		return false
	}
	begin := c.pos + 1
	end := -1
	for i := begin; c.inBounds(i); i++ {
		if c.s[i] == ']' {
			end = i
			break
		}
	}
	if end == -1 {
		return false
	}
	e := strings.TrimFunc(c.sub(begin, end), func(r rune) bool { return r <= ' ' })
	if e == "*" {
		return false
	}
	for _, r := range e {
		if !isASCIIDigit(r) && r != ',' && r != '-' && r != ':' && r != ' ' {
			return false
		}
	}
	if strings.Contains(e, ":") {
		c.add(jpSliceOf(e))
	} else {
		t := jpToken{kind: jpIndex}
		for _, part := range strings.Split(e, ",") {
			n, err := strconv.ParseInt(strings.Trim(part, " "), 10, 32)
			if err != nil || strings.HasPrefix(strings.Trim(part, " "), "+") {
				jpFail()
			}
			t.indexes = append(t.indexes, int(n))
		}
		c.add(t)
	}
	c.pos = end + 1
	return c.then()
}

// jpSliceOf is ArraySliceOperation.parse, with Java's String.split, which
// drops trailing empty strings.
func jpSliceOf(e string) jpToken {
	for _, r := range e {
		if !isASCIIDigit(r) && r != '-' && r != ':' {
			jpFail()
		}
	}
	parts := strings.Split(e, ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	read := func(i int) (int, bool) {
		if i >= len(parts) || parts[i] == "" {
			return 0, false
		}
		n, err := strconv.ParseInt(parts[i], 10, 32)
		if err != nil {
			jpFail()
		}
		return int(n), true
	}
	t := jpToken{kind: jpSlice}
	t.from, t.hasFrom = read(0)
	t.to, t.hasTo = read(1)
	if !t.hasFrom && !t.hasTo {
		jpFail()
	}
	return t
}

func (c *jpCompiler) wildcard() bool {
	inBracket := c.curIs('[')
	if inBracket && !c.nextSignificantIs(c.pos, '*') {
		return false
	}
	if !c.curIs('*') && !c.inBounds(c.pos+1) {
		return false
	}
	if inBracket {
		w := c.indexOfNextSignificant(c.pos, '*')
		if !c.nextSignificantIs(w, ']') {
			jpFail()
		}
		c.pos = c.indexOfNextSignificant(w, ']') + 1
	} else {
		c.pos++
	}
	c.add(jpToken{kind: jpWildcard})
	return c.then()
}

// definite reports whether token i selects at most one value.
func (jp *jsonPath) definite(i int) bool { return jp.def[i] }

// upstreamDefinite reports whether every token before i is definite.
func (jp *jsonPath) upstreamDefinite(i int) bool { return jp.upDef[i] }

func (jp *jsonPath) isDefinite() bool { return jp.upDef[len(jp.tokens)] }

// settle computes which tokens are definite, as PathToken.isTokenDefinite
// and isUpstreamDefinite do.
func (jp *jsonPath) settle() {
	jp.def = make([]bool, len(jp.tokens))
	jp.upDef = make([]bool, len(jp.tokens)+1)
	jp.upDef[0] = true
	for i, t := range jp.tokens {
		switch t.kind {
		case jpProperty:
			jp.def[i] = len(t.props) == 1 || i == len(jp.tokens)-1
		case jpIndex:
			jp.def[i] = len(t.indexes) == 1
		}
		jp.upDef[i+1] = jp.upDef[i] && jp.def[i]
	}
}

func (t jpToken) fragment() string {
	switch t.kind {
	case jpProperty:
		q := string(t.delim)
		return "[" + q + strings.Join(t.props, q+","+q) + q + "]"
	case jpWildcard:
		return "[*]"
	case jpIndex:
		parts := make([]string, len(t.indexes))
		for i, n := range t.indexes {
			parts[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var b strings.Builder
	b.WriteByte('[')
	if t.hasFrom {
		b.WriteString(strconv.Itoa(t.from))
	}
	b.WriteByte(':')
	if t.hasTo {
		b.WriteString(strconv.Itoa(t.to))
	}
	b.WriteByte(']')
	return b.String()
}

// from is the path's text from token i on (PathToken.toString).
func (jp *jsonPath) from(i int) string {
	var b strings.Builder
	for _, t := range jp.tokens[i:] {
		b.WriteString(t.fragment())
	}
	return b.String()
}

func (jp *jsonPath) String() string { return string(jp.root) + jp.from(0) }

// jpNotFound is Jayway's PathNotFoundException.
type jpNotFound struct{ msg string }

func (e *jpNotFound) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &jpNotFound{msg: fmt.Sprintf(format, args...)}
}

// jpEval is one evaluation of a path on a document.
type jpEval struct {
	jp      *jsonPath
	strict  bool // false: SUPPRESS_EXCEPTIONS
	results []*jnode
}

func (ev *jpEval) leaf(i int) bool { return i == len(ev.jp.tokens)-1 }

func (ev *jpEval) eval(i int, path string, model *jnode) error {
	t := &ev.jp.tokens[i]
	switch t.kind {
	case jpProperty:
		if model.kind != jObject {
			if !ev.jp.upstreamDefinite(i) || !ev.strict {
				return nil
			}
			return notFound("Expected to find an object with property %s in path %s but found '%s'. "+
				"This is not a json object according to the JsonProvider: '%s'.",
				t.fragment(), path, model.javaClass(), jsonProviderName)
		}
		if len(t.props) == 1 || ev.leaf(i) {
			return ev.property(i, path, model, t.props)
		}
		for _, p := range t.props {
			if err := ev.property(i, path, model, []string{p}); err != nil {
				return err
			}
		}
		return nil
	case jpWildcard:
		switch model.kind {
		case jObject:
			for _, k := range model.keys {
				if err := ev.property(i, path, model, []string{k}); err != nil {
					return err
				}
			}
		case jArray:
			for j := range model.elems {
				// NB: Jayway drops a PathNotFoundException per element here.
				if err := ev.index(i, path, model, j); err != nil {
					var nf *jpNotFound
					if !errors.As(err, &nf) {
						return err
					}
				}
			}
		}
		return nil
	}
	if model.kind != jArray {
		if !ev.jp.upstreamDefinite(i) || !ev.strict {
			return nil
		}
		if model.kind == jNull {
			return notFound("The path %s is null", path)
		}
		return notFound("Filter: %s can only be applied to arrays. Current context is: %s", ev.jp.from(i), model.javaString())
	}
	n := len(model.elems)
	idx := t.indexes
	if t.kind == jpSlice {
		idx = sliceIndexes(t, n)
	}
	for _, j := range idx {
		if err := ev.index(i, path, model, j); err != nil {
			return err
		}
	}
	return nil
}

// sliceIndexes are the indexes ArraySliceToken visits on an array of n.
func sliceIndexes(t *jpToken, n int) []int {
	var from, to int
	switch {
	case t.hasFrom && !t.hasTo:
		from, to = t.from, n
		if from < 0 {
			from = n + from
		}
		from = max(0, from)
	case t.hasFrom:
		from, to = t.from, min(n, t.to)
	default:
		to = t.to
		if to < 0 {
			to = n + to
		}
		to = min(n, to)
	}
	if n == 0 || from >= to {
		return nil
	}
	out := make([]int, 0, to-from)
	for j := from; j < to; j++ {
		out = append(out, j)
	}
	return out
}

func (ev *jpEval) index(i int, path string, model *jnode, j int) error {
	eff := j
	if j < 0 {
		eff = len(model.elems) + j
	}
	if eff < 0 || eff >= len(model.elems) {
		return nil // IndexOutOfBoundsException, ignored
	}
	v := &model.elems[eff]
	if ev.leaf(i) {
		ev.results = append(ev.results, v)
		return nil
	}
	return ev.eval(i+1, path+"["+strconv.Itoa(j)+"]", v)
}

// property is PathToken.handleObjectProperty on object model.
func (ev *jpEval) property(i int, path string, model *jnode, props []string) error {
	if len(props) > 1 {
		merged := jnode{kind: jObject}
		for _, p := range props {
			if v := model.member(p); v != nil {
				merged.set(p, *v)
			}
		}
		ev.results = append(ev.results, &merged)
		return nil
	}
	evalPath := path + "['" + props[0] + "']"
	v := model.member(props[0])
	if v == nil {
		if ev.leaf(i) || !(ev.jp.upstreamDefinite(i) && ev.jp.definite(i)) || !ev.strict {
			return nil
		}
		return notFound("Missing property in path %s", evalPath)
	}
	if ev.leaf(i) {
		ev.results = append(ev.results, v)
		return nil
	}
	return ev.eval(i+1, evalPath, v)
}

// read is JsonPath.read on doc: the value of a definite path (nil for
// JSON null or, in lax mode, nothing), or the list of what an indefinite
// path selects.
func (jp *jsonPath) read(doc *jnode, strict bool) (*jnode, error) {
	ev := &jpEval{jp: jp, strict: strict}
	if len(jp.tokens) == 0 {
		ev.results = []*jnode{doc}
	} else if err := ev.eval(0, string(jp.root), doc); err != nil {
		return nil, err
	}
	if !jp.isDefinite() {
		list := &jnode{kind: jArray, elems: make([]jnode, len(ev.results))}
		for i, r := range ev.results {
			list.elems[i] = *r
		}
		return list, nil
	}
	if len(ev.results) == 0 {
		if strict {
			return nil, notFound("No results for path: %s", jp)
		}
		return nil, nil
	}
	v := ev.results[len(ev.results)-1]
	if v.kind == jNull {
		return nil, nil
	}
	return v, nil
}

// jsonPathResult is Flink's JsonPathContext: the value a path selects
// (nil for Java's null), or the error that the ON ERROR clause handles.
type jsonPathResult struct {
	strict bool
	val    *jnode
	err    error
}

// jsonEvalPath is SqlJsonUtils.jsonApiCommonSyntax on a document that
// parsed into doc, or failed with docErr.
func jsonEvalPath(doc *jnode, docErr error, jp *jsonPath) jsonPathResult {
	r := jsonPathResult{strict: jp.strict}
	switch {
	case docErr != nil && jp.strict:
		r.err = docErr
		return r
	case docErr != nil:
		return r
	case doc.kind == jNull:
		r.err = errJSONNullDoc
		return r
	case jp.err != nil:
		r.err = jp.err
		return r
	}
	r.val, r.err = jp.read(doc, jp.strict)
	if r.err == nil && r.strict && r.val == nil {
		//lint:ignore ST1005 Flink's message, verbatim
		r.err = errors.New("Strict jsonpath mode requires a non empty returned value, but is null")
	}
	return r
}

// member returns the value of object member name, or nil.
func (n *jnode) member(name string) *jnode {
	for i, k := range n.keys {
		if k == name {
			return &n.elems[i]
		}
	}
	return nil
}

// set puts a member as a Java LinkedHashMap does: a key already there
// keeps its place and takes the new value.
func (n *jnode) set(k string, v jnode) {
	for i, old := range n.keys {
		if old == k {
			n.elems[i] = v
			return
		}
	}
	n.keys = append(n.keys, k)
	n.elems = append(n.elems, v)
}

// javaClass is the class of the Java object Jackson reads n into.
func (n *jnode) javaClass() string {
	switch n.kind {
	case jNull:
		return "null"
	case jBool:
		return "java.lang.Boolean"
	case jString:
		return "java.lang.String"
	case jArray:
		return "java.util.ArrayList"
	case jObject:
		return "java.util.LinkedHashMap"
	}
	if n.float {
		return "java.math.BigDecimal"
	}
	if v, err := strconv.ParseInt(n.text, 10, 64); err == nil {
		if v == int64(int32(v)) {
			return "java.lang.Integer"
		}
		return "java.lang.Long"
	}
	return "java.math.BigInteger"
}

// javaString is the Java toString of that object, which Flink's messages
// show.
func (n *jnode) javaString() string {
	var b strings.Builder
	n.appendJava(&b)
	return b.String()
}

func (n *jnode) appendJava(b *strings.Builder) {
	switch n.kind {
	case jArray:
		b.WriteByte('[')
		for i := range n.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			n.elems[i].appendJava(b)
		}
		b.WriteByte(']')
	case jObject:
		b.WriteByte('{')
		for i := range n.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n.keys[i])
			b.WriteByte('=')
			n.elems[i].appendJava(b)
		}
		b.WriteByte('}')
	case jNull:
		b.WriteString("null")
	default:
		b.WriteString(n.text)
	}
}

// parseBigDecimal reads text as Java's new BigDecimal(String): its
// unscaled value and scale.
func parseBigDecimal(text string) (*big.Int, int64, bool) {
	s := text
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return nil, 0, false
		}
		exp = e
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := intPart + frac
	if digits == "" {
		return nil, 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, 0, false
		}
	}
	u, _ := new(big.Int).SetString(digits, 10)
	if neg {
		u.Neg(u)
	}
	return u, int64(len(frac)) - exp, true
}

// bigDecimalString is BigDecimal.toString of new BigDecimal(text).
func bigDecimalString(text string) (string, error) {
	u, scale, ok := parseBigDecimal(text)
	if !ok || scale > 1<<31-1 || scale < -(1<<31) {
		return "", fmt.Errorf("malformed numeric value '%s'", text)
	}
	return bigDecimalText(u, scale), nil
}

// bigDecimalText is BigDecimal.toString of unscaled value u and scale.
func bigDecimalText(u *big.Int, scale int64) string {
	coeff := new(big.Int).Abs(u).String()
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
	}
	adjusted := -scale + int64(len(coeff)-1)
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			return sign + coeff
		case int64(len(coeff)) > scale:
			return sign + coeff[:int64(len(coeff))-scale] + "." + coeff[int64(len(coeff))-scale:]
		}
		return sign + "0." + strings.Repeat("0", int(scale-int64(len(coeff)))) + coeff
	}
	out := sign + coeff[:1]
	if len(coeff) > 1 {
		out += "." + coeff[1:]
	}
	out += "E"
	if adjusted >= 0 {
		out += "+"
	}
	return out + strconv.FormatInt(adjusted, 10)
}

// javaLess orders strings as Java's String.compareTo does, by UTF-16
// code units: the order of a TreeMap of keys. It differs from Go's byte
// order only between a character outside the BMP (a surrogate pair) and
// one from U+E000 to U+FFFF.
func javaLess(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			sa, sb := ra >= 0x10000, rb >= 0x10000
			switch {
			case sa && !sb && rb >= 0xE000:
				return true
			case sb && !sa && ra >= 0xE000:
				return false
			}
			return ra < rb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}
