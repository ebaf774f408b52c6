package ast

func (n *CreateTableStmt) format(p *printer) {
	p.str("CREATE ")
	if n.Temporary {
		p.str("TEMPORARY ")
	}
	p.str("TABLE ")
	if n.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	n.Name.format(p)
	if len(n.Columns) > 0 || len(n.Watermarks) > 0 || n.PrimaryKey != nil {
		p.str(" (")
		sep := ""
		for _, c := range n.Columns {
			p.str(sep)
			c.format(p)
			sep = ", "
		}
		for _, w := range n.Watermarks {
			p.str(sep)
			w.format(p)
			sep = ", "
		}
		if n.PrimaryKey != nil {
			p.str(sep)
			n.PrimaryKey.format(p)
		}
		p.str(")")
	}
	comment(p, n.Comment)
	if len(n.PartitionedBy) > 0 {
		p.str(" PARTITIONED BY (")
		list(p, n.PartitionedBy)
		p.str(")")
	}
	with(p, n.Options)
	if n.Like != nil {
		p.str(" LIKE ")
		n.Like.format(p)
	}
	if n.AsQuery != nil {
		p.str(" AS ")
		n.AsQuery.format(p)
	}
}

func comment(p *printer, c string) {
	if c != "" {
		p.str(" COMMENT ")
		p.str(QuoteString(c))
	}
}

func with(p *printer, opts []*Option) {
	if len(opts) > 0 {
		p.str(" WITH (")
		list(p, opts)
		p.str(")")
	}
}

func (n *ColumnDef) format(p *printer) {
	n.Name.format(p)
	if n.Expr != nil {
		p.str(" AS ")
		n.Expr.format(p)
	} else if n.Type != nil {
		p.str(" ")
		n.Type.format(p)
	}
	if n.Metadata {
		p.str(" METADATA")
		if n.MetadataKey != "" {
			p.str(" FROM ")
			p.str(QuoteString(n.MetadataKey))
		}
		if n.Virtual {
			p.str(" VIRTUAL")
		}
	}
	if n.PrimaryKey {
		p.str(" PRIMARY KEY")
		if n.NotEnforced {
			p.str(" NOT ENFORCED")
		}
	}
	comment(p, n.Comment)
}

func (n *PrimaryKey) format(p *printer) {
	if n.Name != nil {
		p.str("CONSTRAINT ")
		n.Name.format(p)
		p.str(" ")
	}
	p.str("PRIMARY KEY (")
	list(p, n.Columns)
	p.str(")")
	if n.NotEnforced {
		p.str(" NOT ENFORCED")
	}
}

func (n *Watermark) format(p *printer) {
	p.str("WATERMARK FOR ")
	n.Column.format(p)
	p.str(" AS ")
	n.Expr.format(p)
}

func (n *LikeClause) format(p *printer) {
	n.Source.format(p)
	if len(n.Options) > 0 {
		p.str(" (")
		for i, o := range n.Options {
			if i > 0 {
				p.str(" ")
			}
			o.format(p)
		}
		p.str(")")
	}
}

func (n *LikeOption) format(p *printer) {
	p.str(n.Mode)
	p.str(" ")
	p.str(n.What)
}

func dropPrefix(p *printer, what string, temporary, ifExists bool) {
	p.str("DROP ")
	if temporary {
		p.str("TEMPORARY ")
	}
	p.str(what)
	if ifExists {
		p.str(" IF EXISTS")
	}
	p.str(" ")
}

func (n *DropTableStmt) format(p *printer) {
	dropPrefix(p, "TABLE", n.Temporary, n.IfExists)
	n.Name.format(p)
}

func (n *AlterTableStmt) format(p *printer) {
	p.str("ALTER TABLE ")
	if n.IfExists {
		p.str("IF EXISTS ")
	}
	n.Name.format(p)
	switch {
	case n.RenameTo != nil:
		p.str(" RENAME TO ")
		n.RenameTo.format(p)
	case len(n.Reset) > 0:
		p.str(" RESET (")
		for i, o := range n.Reset {
			if i > 0 {
				p.str(", ")
			}
			p.str(QuoteString(o.Key))
		}
		p.str(")")
	default:
		p.str(" SET (")
		list(p, n.Set)
		p.str(")")
	}
}

func (n *CreateViewStmt) format(p *printer) {
	p.str("CREATE ")
	if n.Temporary {
		p.str("TEMPORARY ")
	}
	p.str("VIEW ")
	if n.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	n.Name.format(p)
	if len(n.Columns) > 0 {
		p.str(" (")
		list(p, n.Columns)
		p.str(")")
	}
	comment(p, n.Comment)
	p.str(" AS ")
	n.Query.format(p)
}

func (n *DropViewStmt) format(p *printer) {
	dropPrefix(p, "VIEW", n.Temporary, n.IfExists)
	n.Name.format(p)
}

func (n *CreateDatabaseStmt) format(p *printer) {
	p.str("CREATE DATABASE ")
	if n.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	n.Name.format(p)
	comment(p, n.Comment)
	with(p, n.Options)
}

func (n *DropDatabaseStmt) format(p *printer) {
	dropPrefix(p, "DATABASE", false, n.IfExists)
	n.Name.format(p)
	if n.Behavior != "" {
		p.str(" ")
		p.str(n.Behavior)
	}
}

func (n *UseStmt) format(p *printer) {
	p.str("USE ")
	if n.Catalog {
		p.str("CATALOG ")
	}
	n.Name.format(p)
}

func (n *ShowStmt) format(p *printer) {
	p.str("SHOW ")
	p.str(n.What)
	if n.Name != nil {
		p.str(" ")
		n.Name.format(p)
	}
}

func (n *DescribeStmt) format(p *printer) {
	p.str("DESCRIBE ")
	n.Name.format(p)
}

func (n *SetStmt) format(p *printer) {
	p.str("SET")
	if n.Option != nil {
		p.str(" ")
		n.Option.format(p)
	}
}

func (n *StopJobStmt) format(p *printer) {
	p.str("STOP JOB ")
	p.str(QuoteString(n.JobID))
	if n.WithSavepoint {
		p.str(" WITH SAVEPOINT")
	}
	if n.WithDrain {
		p.str(" WITH DRAIN")
	}
}

func (n *ResetStmt) format(p *printer) {
	p.str("RESET")
	if n.Key != "" {
		p.str(" ")
		p.str(QuoteString(n.Key))
	}
}

func (n *InsertStmt) format(p *printer) {
	if n.Overwrite {
		p.str("INSERT OVERWRITE ")
	} else {
		p.str("INSERT INTO ")
	}
	n.Table.format(p)
	if len(n.Hints) > 0 {
		p.str(" ")
		hints(p, n.Hints)
	}
	if len(n.Columns) > 0 {
		p.str(" (")
		list(p, n.Columns)
		p.str(")")
	}
	p.str(" ")
	n.Query.format(p)
}

func (n *QueryStmt) format(p *printer) { n.Query.format(p) }

func (n *ExplainStmt) format(p *printer) {
	p.str("EXPLAIN")
	for i, d := range n.Details {
		if i > 0 {
			p.str(",")
		}
		p.str(" ")
		p.str(d)
	}
	if n.PlanFor {
		p.str(" PLAN FOR")
	}
	p.str(" ")
	n.Stmt.format(p)
}

func (n *BeginStatementSetStmt) format(p *printer) { p.str("BEGIN STATEMENT SET") }

func (n *EndStmt) format(p *printer) { p.str("END") }

func (n *StatementSetStmt) format(p *printer) {
	p.str("EXECUTE STATEMENT SET BEGIN ")
	for _, s := range n.Inserts {
		s.format(p)
		p.str("; ")
	}
	p.str("END")
}

func (n *ExecuteStmt) format(p *printer) {
	p.str("EXECUTE ")
	n.Stmt.format(p)
}
