package ast

func (n *Query) format(p *printer) {
	if len(n.With) > 0 {
		p.str("WITH ")
		list(p, n.With)
		p.str(" ")
	}
	queryBody(p, n.Body, 0)
	if len(n.OrderBy) > 0 {
		p.str(" ORDER BY ")
		list(p, n.OrderBy)
	}
	if n.Limit != nil {
		p.str(" LIMIT ")
		n.Limit.format(p)
	}
	if n.Offset != nil {
		p.str(" OFFSET ")
		n.Offset.format(p)
	}
}

func setPrec(q QueryExpr) int {
	switch q := q.(type) {
	case *SetOp:
		if q.Op == Intersect {
			return 2
		}
		return 1
	case *Query:
		return 0
	}
	return 3
}

// queryBody prints q, parenthesized when its precedence is below min.
func queryBody(p *printer, q QueryExpr, min int) {
	if setPrec(q) < min || setPrec(q) == 0 {
		p.str("(")
		q.format(p)
		p.str(")")
		return
	}
	q.format(p)
}

func (n *CTE) format(p *printer) {
	n.Name.format(p)
	if len(n.Columns) > 0 {
		p.str(" (")
		list(p, n.Columns)
		p.str(")")
	}
	p.str(" AS (")
	n.Query.format(p)
	p.str(")")
}

func (n *Select) format(p *printer) {
	p.str("SELECT ")
	if len(n.Hints) > 0 {
		hints(p, n.Hints)
		p.str(" ")
	}
	if n.Distinct {
		p.str("DISTINCT ")
	} else if n.All {
		p.str("ALL ")
	}
	list(p, n.Items)
	if n.From != nil {
		p.str(" FROM ")
		n.From.format(p)
	}
	if n.Where != nil {
		p.str(" WHERE ")
		n.Where.format(p)
	}
	if len(n.GroupBy) > 0 {
		p.str(" GROUP BY ")
		list(p, n.GroupBy)
	}
	if n.Having != nil {
		p.str(" HAVING ")
		n.Having.format(p)
	}
	if len(n.Windows) > 0 {
		p.str(" WINDOW ")
		list(p, n.Windows)
	}
}

func (n *SelectItem) format(p *printer) {
	n.Expr.format(p)
	if n.Alias != nil {
		p.str(" AS ")
		n.Alias.format(p)
	}
}

func (n *NamedWindow) format(p *printer) {
	n.Name.format(p)
	p.str(" AS (")
	n.Spec.format(p)
	p.str(")")
}

func (n *OrderItem) format(p *printer) {
	n.Expr.format(p)
	if n.Desc {
		p.str(" DESC")
	} else if n.Asc {
		p.str(" ASC")
	}
	if n.Nulls != "" {
		p.str(" NULLS ")
		p.str(n.Nulls)
	}
}

func (n *SetOp) format(p *printer) {
	prec := setPrec(n)
	queryBody(p, n.L, prec)
	p.str(" ")
	p.str(string(n.Op))
	if n.All {
		p.str(" ALL")
	} else if n.Distinct {
		p.str(" DISTINCT")
	}
	p.str(" ")
	queryBody(p, n.R, prec+1)
}

func (n *Values) format(p *printer) {
	p.str("VALUES ")
	for i, r := range n.Rows {
		if i > 0 {
			p.str(", ")
		}
		if rc, ok := r.(*RowCtor); ok && rc.Implicit {
			p.str("(")
			list(p, rc.Items)
			p.str(")")
			continue
		}
		r.format(p)
	}
}

func (n *TableAlias) format(p *printer) {
	n.Name.format(p)
	if len(n.Columns) > 0 {
		p.str(" (")
		list(p, n.Columns)
		p.str(")")
	}
}

func alias(p *printer, a *TableAlias) {
	if a != nil {
		p.str(" AS ")
		a.format(p)
	}
}

func (n *TableName) format(p *printer) {
	n.Name.format(p)
	if len(n.Hints) > 0 {
		p.str(" ")
		hints(p, n.Hints)
	}
	if n.SystemTime != nil {
		p.str(" FOR SYSTEM_TIME AS OF ")
		n.SystemTime.format(p)
	}
	alias(p, n.Alias)
}

func (n *DerivedTable) format(p *printer) {
	if n.Lateral {
		p.str("LATERAL ")
	}
	p.str("(")
	n.Query.format(p)
	p.str(")")
	alias(p, n.Alias)
}

func (n *TableFunc) format(p *printer) {
	if n.Lateral {
		p.str("LATERAL ")
	}
	p.str("TABLE(")
	n.Call.format(p)
	p.str(")")
	alias(p, n.Alias)
}

func (n *Unnest) format(p *printer) {
	p.str("UNNEST(")
	list(p, n.Args)
	p.str(")")
	if n.WithOrdinality {
		p.str(" WITH ORDINALITY")
	}
	alias(p, n.Alias)
}

func (n *Join) format(p *printer) {
	n.L.format(p)
	if n.Kind == CommaJoin {
		p.str(", ")
	} else {
		p.str(" ")
		if n.Natural {
			p.str("NATURAL ")
		}
		p.str(string(n.Kind))
		p.str(" ")
	}
	if _, ok := n.R.(*Join); ok {
		p.str("(")
		n.R.format(p)
		p.str(")")
	} else {
		n.R.format(p)
	}
	if n.On != nil {
		p.str(" ON ")
		n.On.format(p)
	}
	if len(n.Using) > 0 {
		p.str(" USING (")
		list(p, n.Using)
		p.str(")")
	}
}

func (n *ParenTable) format(p *printer) {
	p.str("(")
	n.Table.format(p)
	p.str(")")
}

func (n *Type) format(p *printer) {
	switch {
	case n.Postfix && n.Elem != nil:
		n.Elem.format(p)
		p.str(" ")
		p.str(n.name())
	case n.Elem != nil:
		p.str(n.name() + "<")
		n.Elem.format(p)
		p.str(">")
	case n.Key != nil && n.Value != nil:
		p.str(n.name() + "<")
		n.Key.format(p)
		p.str(", ")
		n.Value.format(p)
		p.str(">")
	case n.Name == "ROW":
		if n.Parens {
			p.str(n.name() + "(")
		} else {
			p.str(n.name() + "<")
		}
		list(p, n.Fields)
		if n.Parens {
			p.str(")")
		} else {
			p.str(">")
		}
	case n.Interval != nil:
		p.str(n.name() + " ")
		n.Interval.format(p)
	default:
		p.str(n.name())
		intArgs(p, n.Args)
		if n.TimeZone != "" {
			p.str(" ")
			p.str(n.TimeZone)
		}
	}
	switch n.Null {
	case NotNull:
		p.str(" NOT NULL")
	case Null:
		p.str(" NULL")
	}
}

// name is the type's name as it prints: back-quoted if it was.
func (n *Type) name() string {
	if n.Quoted {
		return QuoteIdent(n.Name)
	}
	return n.Name
}

func (n *RowField) format(p *printer) {
	n.Name.format(p)
	p.str(" ")
	n.Type.format(p)
	if n.Comment != "" {
		p.str(" ")
		p.str(QuoteString(n.Comment))
	}
}
