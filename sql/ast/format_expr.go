package ast

import "strings"

func (n *Ident) format(p *printer) {
	if n.Quoted || NeedsQuotes(n.Name) {
		p.str(QuoteIdent(n.Name))
		return
	}
	p.str(n.Name)
}

func (n *ObjectName) format(p *printer) { dotted(p, n.Parts) }

func dotted(p *printer, parts []*Ident) {
	for i, id := range parts {
		if i > 0 {
			p.str(".")
		}
		id.format(p)
	}
}

func (n *Option) format(p *printer) {
	p.str(QuoteString(n.Key))
	p.str(" = ")
	p.str(QuoteString(n.Value))
}

func (n *Hint) format(p *printer) {
	n.Name.format(p)
	switch {
	case len(n.Options) > 0:
		p.str("(")
		list(p, n.Options)
		p.str(")")
	case len(n.Args) > 0:
		p.str("(")
		list(p, n.Args)
		p.str(")")
	}
}

func (n *HintArg) format(p *printer) {
	if n.Literal {
		p.str(QuoteString(n.Value))
		return
	}
	(&Ident{Name: n.Value}).format(p)
}

func (n *HintOption) format(p *printer) {
	if n.KeyIdent {
		(&Ident{Name: n.Key}).format(p)
	} else {
		p.str(QuoteString(n.Key))
	}
	p.str(" = ")
	p.str(QuoteString(n.Value))
}

func hints(p *printer, hs []*Hint) {
	p.str("/*+ ")
	list(p, hs)
	p.str(" */")
}

func (n *Literal) format(p *printer) {
	switch n.Kind {
	case LitNumber, LitBool:
		p.str(n.Value)
	case LitString:
		p.str(QuoteString(n.Value))
	case LitBinary:
		p.str("X'" + n.Value + "'")
	case LitNull:
		p.str("NULL")
	case LitUnknown:
		p.str("UNKNOWN")
	case LitDate:
		p.str("DATE " + QuoteString(n.Value))
	case LitTime:
		p.str("TIME " + QuoteString(n.Value))
	case LitTimestamp:
		p.str("TIMESTAMP " + QuoteString(n.Value))
	}
}

func intArgs(p *printer, args []int) {
	if args == nil {
		return
	}
	p.str("(")
	for i, a := range args {
		if i > 0 {
			p.str(", ")
		}
		p.str(itoa(a))
	}
	p.str(")")
}

func (n *IntervalQualifier) format(p *printer) {
	p.str(string(n.Start))
	intArgs(p, n.StartArgs)
	if n.End != "" {
		p.str(" TO ")
		p.str(string(n.End))
		intArgs(p, n.EndArgs)
	}
}

func (n *IntervalLit) format(p *printer) {
	p.str("INTERVAL ")
	if n.Negative {
		p.str("-")
	}
	if n.Numeric {
		p.str(n.Value)
	} else {
		p.str(QuoteString(n.Value))
	}
	p.str(" ")
	n.Qualifier.format(p)
}

func (n *ColumnRef) format(p *printer) { dotted(p, n.Parts) }

func (n *Star) format(p *printer) {
	for _, q := range n.Qualifier {
		q.format(p)
		p.str(".")
	}
	p.str("*")
}

func (n *Unary) format(p *printer) {
	if n.Op == OpNot {
		p.str("NOT ")
		p.sub(n.X, precNot)
		return
	}
	p.str(string(n.Op))
	if _, ok := n.X.(*Unary); ok {
		// NB: "- -x" must not print as "--x", a comment.
		p.str("(")
		n.X.format(p)
		p.str(")")
		return
	}
	p.sub(n.X, precUnary)
}

func (n *Binary) format(p *printer) {
	prec := binaryPrec(n.Op)
	p.sub(n.L, prec)
	p.str(" ")
	p.str(string(n.Op))
	p.str(" ")
	p.sub(n.R, prec+1)
}

func not(p *printer, b bool) {
	if b {
		p.str(" NOT")
	}
}

func (n *IsExpr) format(p *printer) {
	p.sub(n.X, precCmp)
	p.str(" IS")
	not(p, n.Not)
	p.str(" ")
	p.str(n.What)
}

func (n *Between) format(p *printer) {
	p.sub(n.X, precCmp)
	not(p, n.Not)
	p.str(" BETWEEN ")
	if n.Mode != "" {
		p.str(n.Mode)
		p.str(" ")
	}
	p.sub(n.Low, precConcat)
	p.str(" AND ")
	p.sub(n.High, precConcat)
}

func (n *InExpr) format(p *printer) {
	p.sub(n.X, precCmp)
	not(p, n.Not)
	p.str(" IN (")
	if n.Query != nil {
		n.Query.format(p)
	} else {
		list(p, n.List)
	}
	p.str(")")
}

func (n *LikeExpr) format(p *printer) {
	p.sub(n.X, precCmp)
	not(p, n.Not)
	if n.Similar {
		p.str(" SIMILAR TO ")
	} else {
		p.str(" LIKE ")
	}
	p.sub(n.Pattern, precConcat)
	if n.Escape != nil {
		p.str(" ESCAPE ")
		p.sub(n.Escape, precConcat)
	}
}

func (n *FuncCall) format(p *printer) {
	for i, id := range n.Name.Parts {
		if i > 0 {
			p.str(".")
		}
		if id.Quoted {
			p.str(QuoteIdent(id.Name))
		} else {
			p.str(id.Name)
		}
	}
	if n.NoParens {
		return
	}
	p.str("(")
	switch {
	case n.Star:
		p.str("*")
	case n.overlay():
		words := []string{"", " PLACING ", " FROM ", " FOR "}
		for i, x := range n.Args {
			p.str(words[i])
			x.format(p)
		}
	case n.jsonObject():
		for i := 0; i+1 < len(n.Args); i += 2 {
			if i > 0 {
				p.str(", ")
			}
			p.str("KEY ")
			n.Args[i].format(p)
			p.str(" VALUE ")
			n.Args[i+1].format(p)
		}
		n.JSON.format(p, len(n.Args) > 0)
	case n.positionIn():
		p.sub(n.Args[0], precConcat)
		p.str(" IN ")
		// NB: the parser reads what follows IN as a whole expression, so
		// it needs no parentheses; adding them would nest the printed SQL
		// deeper than the parsed SQL (see parser.MaxNestingDepth).
		n.Args[1].format(p)
	default:
		if n.Distinct {
			p.str("DISTINCT ")
		}
		list(p, n.Args)
		n.JSON.format(p, len(n.Args) > 0)
	}
	p.str(")")
	if n.Filter != nil {
		p.str(" FILTER (WHERE ")
		n.Filter.format(p)
		p.str(")")
	}
	switch {
	case n.OverName != nil:
		p.str(" OVER ")
		n.OverName.format(p)
	case n.Over != nil:
		p.str(" OVER (")
		n.Over.format(p)
		p.str(")")
	}
}

// format prints the clauses of a SQL/JSON call after its arguments, in the
// order the parser reads them; space says whether arguments precede them.
func (j *JSONClauses) format(p *printer, space bool) {
	if j == nil {
		return
	}
	sep := func() {
		if space {
			p.str(" ")
		}
		space = true
	}
	if j.Returning != nil {
		sep()
		p.str("RETURNING ")
		j.Returning.format(p)
	}
	if j.Wrapper != "" {
		sep()
		p.str(j.Wrapper + " WRAPPER")
	}
	for _, b := range []struct {
		b  *JSONBehavior
		on string
	}{{j.OnEmpty, " ON EMPTY"}, {j.OnError, " ON ERROR"}} {
		if b.b == nil {
			continue
		}
		sep()
		p.str(b.b.Kind)
		if b.b.Default != nil {
			p.str(" ")
			b.b.Default.format(p)
		}
		p.str(b.on)
	}
	if j.OnNull != "" {
		sep()
		p.str(j.OnNull + " ON NULL")
	}
}

// positionIn reports whether the call prints as POSITION(a IN b): only
// when that form parses back to the same call, which has no FILTER or OVER
// and no named argument, and whose name is the unquoted keyword.
// overlay reports whether n is an OVERLAY call, which the parser reads
// from OVERLAY(s PLACING r FROM start [FOR len]) and prints back that way.
func (n *FuncCall) overlay() bool {
	return len(n.Name.Parts) == 1 && !n.Name.Parts[0].Quoted && strings.EqualFold(n.Name.Parts[0].Name, "OVERLAY") &&
		(len(n.Args) == 3 || len(n.Args) == 4) && !n.Distinct && !n.Star && n.Filter == nil && n.Over == nil && n.OverName == nil
}

// jsonObject reports whether n is a JSON_OBJECT call, which the parser
// reads from KEY k VALUE v pairs and prints back that way.
func (n *FuncCall) jsonObject() bool {
	return len(n.Name.Parts) == 1 && !n.Name.Parts[0].Quoted && strings.EqualFold(n.Name.Parts[0].Name, "JSON_OBJECT") &&
		len(n.Args)%2 == 0 && !n.Distinct && !n.Star && n.Filter == nil && n.Over == nil && n.OverName == nil
}

func (n *FuncCall) positionIn() bool {
	if len(n.Args) != 2 || len(n.Name.Parts) != 1 || n.Distinct ||
		n.Filter != nil || n.Over != nil || n.OverName != nil {
		return false
	}
	name := n.Name.Parts[0]
	if name.Quoted || !strings.EqualFold(name.Name, "POSITION") {
		return false
	}
	_, named := n.Args[1].(*NamedArg)
	return !named
}

func (n *NamedArg) format(p *printer) {
	n.Name.format(p)
	p.str(" => ")
	n.Value.format(p)
}

func (n *TableArg) format(p *printer) {
	if n.Query != nil {
		p.str("(")
		n.Query.format(p)
		p.str(")")
	} else {
		p.str("TABLE ")
		n.Name.format(p)
	}
	switch {
	case len(n.PartitionBy) == 1:
		p.str(" PARTITION BY ")
		list(p, n.PartitionBy)
	case len(n.PartitionBy) > 1:
		// NB: without parentheses the columns after the first would read
		// as further arguments.
		p.str(" PARTITION BY (")
		list(p, n.PartitionBy)
		p.str(")")
	}
}

func (n *Descriptor) format(p *printer) {
	p.str("DESCRIPTOR(")
	list(p, n.Columns)
	p.str(")")
}

func (n *Cast) format(p *printer) {
	if n.Try {
		p.str("TRY_CAST(")
	} else {
		p.str("CAST(")
	}
	n.X.format(p)
	p.str(" AS ")
	n.Type.format(p)
	p.str(")")
}

func (n *Extract) format(p *printer) {
	p.str("EXTRACT(")
	p.str(string(n.Unit))
	p.str(" FROM ")
	n.X.format(p)
	p.str(")")
}

func (n *FloorCeil) format(p *printer) {
	if n.Ceil {
		p.str("CEIL(")
	} else {
		p.str("FLOOR(")
	}
	n.X.format(p)
	p.str(" TO ")
	p.str(string(n.Unit))
	p.str(")")
}

func (n *TimestampDiff) format(p *printer) {
	p.str("TIMESTAMPDIFF(")
	p.str(string(n.Unit))
	p.str(", ")
	n.A.format(p)
	p.str(", ")
	n.B.format(p)
	p.str(")")
}

func (n *TimestampAdd) format(p *printer) {
	p.str("TIMESTAMPADD(")
	p.str(string(n.Unit))
	p.str(", ")
	n.N.format(p)
	p.str(", ")
	n.T.format(p)
	p.str(")")
}

func (n *Trim) format(p *printer) {
	p.str("TRIM(")
	if n.Mode != "" || n.Chars != nil {
		if n.Mode != "" {
			p.str(n.Mode)
			p.str(" ")
		}
		if n.Chars != nil {
			// NB: the parser reads the characters as a whole expression, up
			// to FROM; parentheses would only nest the printed SQL deeper.
			n.Chars.format(p)
			p.str(" ")
		}
		p.str("FROM ")
	}
	n.X.format(p)
	p.str(")")
}

func (n *When) format(p *printer) {
	p.str("WHEN ")
	n.Cond.format(p)
	p.str(" THEN ")
	n.Result.format(p)
}

func (n *Case) format(p *printer) {
	p.str("CASE")
	if n.Operand != nil {
		p.str(" ")
		n.Operand.format(p)
	}
	for _, w := range n.Whens {
		p.str(" ")
		w.format(p)
	}
	if n.Else != nil {
		p.str(" ELSE ")
		n.Else.format(p)
	}
	p.str(" END")
}

func (n *Subquery) format(p *printer) {
	p.str("(")
	n.Query.format(p)
	p.str(")")
}

func (n *Exists) format(p *printer) {
	p.str("EXISTS (")
	n.Query.format(p)
	p.str(")")
}

func (n *RowCtor) format(p *printer) {
	if n.Implicit && len(n.Items) > 1 {
		p.str("(")
	} else {
		p.str("ROW(")
	}
	list(p, n.Items)
	p.str(")")
}

func (n *ArrayCtor) format(p *printer) {
	p.str("ARRAY[")
	list(p, n.Items)
	p.str("]")
}

func (n *MapCtor) format(p *printer) {
	p.str("MAP[")
	list(p, n.Items)
	p.str("]")
}

func (n *Index) format(p *printer) {
	p.sub(n.X, precPostfix)
	p.str("[")
	n.Index.format(p)
	p.str("]")
}

func (n *FieldAccess) format(p *printer) {
	switch x := n.X.(type) {
	case *ColumnRef:
		// NB: a.b would read back as one name.
		p.str("(")
		x.format(p)
		p.str(")")
	case *Literal:
		// NB: 0.b would read back as a bad number, so a number is set
		// apart by a space. Parentheses would do too, but they would nest
		// the printed SQL one level deeper than 'x'.b or 1.5.b as parsed.
		x.format(p)
		if x.Kind == LitNumber {
			p.str(" ")
		}
	default:
		p.sub(n.X, precPostfix)
	}
	p.str(".")
	n.Field.format(p)
}

func (n *GroupingSets) format(p *printer) {
	p.str(n.Kind)
	p.str(" (")
	for i, set := range n.Sets {
		if i > 0 {
			p.str(", ")
		}
		if len(set) == 1 {
			set[0].format(p)
			continue
		}
		p.str("(")
		list(p, set)
		p.str(")")
	}
	p.str(")")
}

func (n *WindowSpec) format(p *printer) {
	sep := ""
	if n.Ref != nil {
		n.Ref.format(p)
		sep = " "
	}
	if len(n.PartitionBy) > 0 {
		p.str(sep + "PARTITION BY ")
		list(p, n.PartitionBy)
		sep = " "
	}
	if len(n.OrderBy) > 0 {
		p.str(sep + "ORDER BY ")
		list(p, n.OrderBy)
		sep = " "
	}
	if n.Frame != nil {
		p.str(sep)
		n.Frame.format(p)
	}
}

func (n *Frame) format(p *printer) {
	if n.Rows {
		p.str("ROWS ")
	} else {
		p.str("RANGE ")
	}
	if n.End == nil {
		n.Start.format(p)
		return
	}
	p.str("BETWEEN ")
	n.Start.format(p)
	p.str(" AND ")
	n.End.format(p)
}

func (n *FrameBound) format(p *printer) {
	if n.Offset != nil {
		p.sub(n.Offset, precConcat)
		p.str(" ")
	}
	p.str(n.Kind)
}
