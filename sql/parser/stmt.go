package parser

import (
	"github.com/braidflow/braid/sql/ast"
)

// statement parses one statement without its terminating ';'.
func (p *parser) statement() ast.Statement {
	start := p.tok()
	s := p.statementBody()
	base := stmtBase(s)
	base.Pos = start.pos
	base.Span = ast.Span{Start: start.pos.Offset, End: p.lastEnd()}
	return s
}

func stmtBase(s ast.Statement) *ast.StmtBase {
	switch s := s.(type) {
	case *ast.CreateTableStmt:
		return &s.StmtBase
	case *ast.DropTableStmt:
		return &s.StmtBase
	case *ast.CreateViewStmt:
		return &s.StmtBase
	case *ast.DropViewStmt:
		return &s.StmtBase
	case *ast.CreateDatabaseStmt:
		return &s.StmtBase
	case *ast.DropDatabaseStmt:
		return &s.StmtBase
	case *ast.UseStmt:
		return &s.StmtBase
	case *ast.ShowStmt:
		return &s.StmtBase
	case *ast.DescribeStmt:
		return &s.StmtBase
	case *ast.SetStmt:
		return &s.StmtBase
	case *ast.ResetStmt:
		return &s.StmtBase
	case *ast.StopJobStmt:
		return &s.StmtBase
	case *ast.InsertStmt:
		return &s.StmtBase
	case *ast.QueryStmt:
		return &s.StmtBase
	case *ast.ExplainStmt:
		return &s.StmtBase
	case *ast.BeginStatementSetStmt:
		return &s.StmtBase
	case *ast.EndStmt:
		return &s.StmtBase
	case *ast.StatementSetStmt:
		return &s.StmtBase
	case *ast.ExecuteStmt:
		return &s.StmtBase
	case *ast.AlterTableStmt:
		return &s.StmtBase
	}
	panic("parser: statement without StmtBase")
}

func (p *parser) statementBody() ast.Statement {
	switch {
	case p.acceptKw("CREATE"):
		return p.create()
	case p.acceptKw("DROP"):
		return p.drop()
	case p.isKw("INSERT"):
		return p.insert()
	case p.isKw("SELECT"), p.isKw("WITH"), p.isKw("VALUES"), p.isOp("("):
		return &ast.QueryStmt{Query: p.query()}
	case p.acceptKw("USE"):
		s := &ast.UseStmt{}
		if p.peekKw("CATALOG") && p.peek(1).kind != tokEOF && !(p.peek(1).kind == tokOp) {
			p.i++
			s.Catalog = true
		}
		s.Name = p.objectName()
		return s
	case p.acceptKw("SHOW"):
		return p.show()
	case p.acceptKw("DESCRIBE"), p.acceptKw("DESC"):
		return &ast.DescribeStmt{Name: p.objectName()}
	case p.acceptKw("SET"):
		s := &ast.SetStmt{}
		if p.isStr() {
			s.Option = p.option()
		}
		return s
	case p.acceptKw("RESET"):
		s := &ast.ResetStmt{}
		if p.isStr() {
			s.Key = p.str()
		}
		return s
	case p.acceptKw("EXPLAIN"):
		return p.explain()
	case p.acceptKw("STOP"):
		p.expectKw("JOB")
		s := &ast.StopJobStmt{JobID: p.str()}
		s.WithSavepoint = p.acceptKw("WITH SAVEPOINT")
		s.WithDrain = p.acceptKw("WITH DRAIN")
		return s
	case p.acceptKw("BEGIN"):
		p.expectKw("STATEMENT")
		p.expectKw("SET")
		return &ast.BeginStatementSetStmt{}
	case p.acceptKw("END"):
		return &ast.EndStmt{}
	case p.acceptKw("EXECUTE"):
		return p.execute()
	case p.peekKw("ALTER TABLE"):
		return p.alterTable()
	case p.peekKw("ALTER"), p.peekKw("TRUNCATE"), p.peekKw("DELETE"), p.peekKw("UPDATE"), p.peekKw("ANALYZE"), p.peekKw("LOAD"), p.peekKw("UNLOAD"):
		p.errorAt(p.pos(), p.tok().upper+" statements are not supported yet")
	}
	p.unexpected()
	return nil
}

func (p *parser) create() ast.Statement {
	temporary := p.acceptKw("TEMPORARY")
	switch {
	case p.acceptKw("TABLE"):
		return p.createTable(temporary)
	case p.acceptKw("VIEW"):
		s := &ast.CreateViewStmt{Temporary: temporary}
		s.IfNotExists = p.acceptKw("IF NOT EXISTS")
		s.Name = p.objectName()
		if p.peekOp("(") {
			s.Columns = p.identList()
		}
		if p.acceptKw("COMMENT") {
			s.Comment = p.str()
		}
		p.expectKw("AS")
		s.Query = p.query()
		return s
	case !temporary && p.acceptKw("DATABASE"):
		s := &ast.CreateDatabaseStmt{}
		s.IfNotExists = p.acceptKw("IF NOT EXISTS")
		s.Name = p.objectName()
		if p.acceptKw("COMMENT") {
			s.Comment = p.str()
		}
		if p.acceptKw("WITH") {
			s.Options = p.options()
		}
		return s
	case p.peekKw("FUNCTION"), p.peekKw("CATALOG"), p.peekKw("SYSTEM"):
		p.errorAt(p.pos(), "CREATE "+p.tok().upper+" is not supported yet")
	}
	p.unexpected()
	return nil
}

func (p *parser) drop() ast.Statement {
	temporary := p.acceptKw("TEMPORARY")
	switch {
	case p.acceptKw("TABLE"):
		s := &ast.DropTableStmt{Temporary: temporary}
		s.IfExists = p.acceptKw("IF EXISTS")
		s.Name = p.objectName()
		return s
	case p.acceptKw("VIEW"):
		s := &ast.DropViewStmt{Temporary: temporary}
		s.IfExists = p.acceptKw("IF EXISTS")
		s.Name = p.objectName()
		return s
	case !temporary && p.acceptKw("DATABASE"):
		s := &ast.DropDatabaseStmt{}
		s.IfExists = p.acceptKw("IF EXISTS")
		s.Name = p.objectName()
		switch {
		case p.acceptKw("RESTRICT"):
			s.Behavior = "RESTRICT"
		case p.acceptKw("CASCADE"):
			s.Behavior = "CASCADE"
		}
		return s
	}
	p.unexpected()
	return nil
}

// alterTable parses ALTER TABLE [IF EXISTS] name SET (options) | RESET
// (keys) | RENAME TO name.
func (p *parser) alterTable() ast.Statement {
	p.expectKw("ALTER TABLE")
	s := &ast.AlterTableStmt{}
	s.IfExists = p.acceptKw("IF EXISTS")
	s.Name = p.objectName()
	switch {
	case p.acceptKw("SET"):
		s.Set = p.options()
		if len(s.Set) == 0 {
			p.errorAt(s.Name.Pos, "ALTER TABLE SET needs at least one option")
		}
	case p.acceptKw("RESET"):
		p.expectOp("(")
		for {
			s.Reset = append(s.Reset, &ast.Option{Pos: p.pos(), Key: p.str()})
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	case p.acceptKw("RENAME TO"):
		s.RenameTo = p.objectName()
	case p.peekKw("ADD"), p.peekKw("MODIFY"), p.peekKw("DROP"), p.peekKw("RENAME"):
		p.errorAt(p.pos(), "ALTER TABLE ... "+p.tok().upper+" is not supported yet")
	default:
		p.unexpected()
	}
	return s
}

// option parses 'key' = 'value'.
func (p *parser) option() *ast.Option {
	o := &ast.Option{Pos: p.pos()}
	o.Key = p.str()
	p.expectOp("=")
	o.Value = p.str()
	return o
}

// options parses ( 'k' = 'v', ... ).
func (p *parser) options() []*ast.Option {
	p.expectOp("(")
	var opts []*ast.Option
	if p.acceptOp(")") {
		return opts
	}
	for {
		opts = append(opts, p.option())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return opts
}

func (p *parser) createTable(temporary bool) ast.Statement {
	s := &ast.CreateTableStmt{Temporary: temporary}
	s.IfNotExists = p.acceptKw("IF NOT EXISTS")
	s.Name = p.objectName()
	if p.acceptOp("(") {
		for {
			p.tableElement(s)
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	}
	if p.acceptKw("COMMENT") {
		s.Comment = p.str()
	}
	if p.acceptKw("PARTITIONED BY") {
		s.PartitionedBy = p.identList()
	}
	if p.acceptKw("WITH") {
		s.Options = p.options()
	}
	if p.isKw("LIKE") {
		s.Like = &ast.LikeClause{Pos: p.pos()}
		p.i++
		s.Like.Source = p.objectName()
		if p.acceptOp("(") {
			for {
				o := &ast.LikeOption{Pos: p.pos()}
				switch {
				case p.acceptKw("INCLUDING"):
					o.Mode = "INCLUDING"
				case p.acceptKw("EXCLUDING"):
					o.Mode = "EXCLUDING"
				case p.acceptKw("OVERWRITING"):
					o.Mode = "OVERWRITING"
				default:
					p.unexpected()
				}
				for _, w := range []string{"ALL", "CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS"} {
					if p.acceptKw(w) {
						o.What = w
						break
					}
				}
				if o.What == "" {
					p.unexpected()
				}
				s.Like.Options = append(s.Like.Options, o)
				if p.acceptOp(")") {
					break
				}
			}
		}
	}
	if p.acceptKw("AS") {
		s.AsQuery = p.query()
	}
	return s
}

func (p *parser) tableElement(s *ast.CreateTableStmt) {
	pos := p.pos()
	switch {
	case p.peekKw("WATERMARK FOR"):
		p.i += 2
		w := &ast.Watermark{Pos: pos, Column: p.ident()}
		p.expectKw("AS")
		w.Expr = p.expr()
		s.Watermarks = append(s.Watermarks, w)
		return
	case p.peekKw("PRIMARY KEY"), p.peekKw("CONSTRAINT") && isIdentTok(p.peek(1)):
		pk := &ast.PrimaryKey{Pos: pos}
		if p.acceptKw("CONSTRAINT") {
			pk.Name = p.ident()
		}
		p.expectKw("PRIMARY KEY")
		pk.Columns = p.identList()
		pk.NotEnforced = p.acceptKw("NOT ENFORCED")
		if s.PrimaryKey != nil || hasColumnKey(s) {
			p.errorAt(pos, "duplicate primary key")
		}
		s.PrimaryKey = pk
		return
	}
	c := &ast.ColumnDef{Pos: pos, Name: p.ident()}
	if p.acceptKw("AS") {
		c.Expr = p.expr()
	} else {
		c.Type = p.typ()
		if p.acceptKw("METADATA") {
			c.Metadata = true
			if p.acceptKw("FROM") {
				c.MetadataKey = p.str()
			}
			c.Virtual = p.acceptKw("VIRTUAL")
		}
		if p.isKw("PRIMARY KEY") {
			if s.PrimaryKey != nil || hasColumnKey(s) {
				p.errorAt(p.pos(), "duplicate primary key")
			}
			p.i += 2
			c.PrimaryKey = true
			c.NotEnforced = p.acceptKw("NOT ENFORCED")
		}
	}
	if p.acceptKw("COMMENT") {
		c.Comment = p.str()
	}
	s.Columns = append(s.Columns, c)
}

func hasColumnKey(s *ast.CreateTableStmt) bool {
	for _, c := range s.Columns {
		if c.PrimaryKey {
			return true
		}
	}
	return false
}

func (p *parser) insert() ast.Statement {
	s := &ast.InsertStmt{}
	p.expectKw("INSERT")
	switch {
	case p.acceptKw("INTO"):
	case p.acceptKw("OVERWRITE"):
		s.Overwrite = true
	default:
		p.unexpected()
	}
	s.Table = p.objectName()
	s.Hints = p.hints()
	if p.peekOp("(") && isIdentTok(p.peek(1)) {
		s.Columns = p.identList()
	}
	s.Query = p.query()
	return s
}

func (p *parser) show() ast.Statement {
	s := &ast.ShowStmt{}
	for _, w := range []string{"DATABASES", "TABLES", "VIEWS", "CATALOGS", "FUNCTIONS", "JOBS", "CURRENT DATABASE", "CURRENT CATALOG"} {
		if p.acceptKw(w) {
			s.What = w
			return s
		}
	}
	for _, w := range []string{"CREATE TABLE", "CREATE VIEW"} {
		if p.acceptKw(w) {
			s.What = w
			s.Name = p.objectName()
			return s
		}
	}
	p.unexpected()
	return nil
}

var explainDetails = []string{"ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE"}

func (p *parser) explain() ast.Statement {
	s := &ast.ExplainStmt{}
	if p.acceptKw("PLAN FOR") {
		s.PlanFor = true
	} else {
	details:
		for {
			for _, d := range explainDetails {
				if p.acceptKw(d) {
					s.Details = append(s.Details, d)
					if p.acceptOp(",") {
						continue details
					}
					break details
				}
			}
			break
		}
	}
	switch {
	case p.isKw("INSERT"):
		s.Stmt = p.statement()
	case p.isKw("SELECT"), p.isKw("WITH"), p.isKw("VALUES"), p.isOp("("):
		s.Stmt = p.statement()
	case p.isKw("EXECUTE"), p.isKw("CREATE"):
		s.Stmt = p.statement()
	case p.peekKw("STATEMENT"):
		s.Stmt = p.statementAt(p.statementSet)
	default:
		p.unexpected()
	}
	return s
}

func (p *parser) execute() ast.Statement {
	if p.peekKw("STATEMENT") {
		return p.statementSet()
	}
	switch {
	case p.isKw("INSERT"), p.isKw("SELECT"), p.isKw("WITH"), p.isKw("VALUES"), p.isOp("("):
		return &ast.ExecuteStmt{Stmt: p.statement()}
	}
	p.unexpected()
	return nil
}

// statementSet parses STATEMENT SET BEGIN insert; ...; END, after
// EXECUTE or EXPLAIN.
func (p *parser) statementSet() ast.Statement {
	p.expectKw("STATEMENT SET")
	p.expectKw("BEGIN")
	s := &ast.StatementSetStmt{}
	for {
		ins := p.statementAt(p.insert).(*ast.InsertStmt)
		s.Inserts = append(s.Inserts, ins)
		p.expectOp(";")
		if p.acceptKw("END") {
			return s
		}
	}
}

// statementAt runs parse and fills in the statement's position and span.
func (p *parser) statementAt(parse func() ast.Statement) ast.Statement {
	start := p.tok()
	s := parse()
	base := stmtBase(s)
	base.Pos = start.pos
	base.Span = ast.Span{Start: start.pos.Offset, End: p.lastEnd()}
	return s
}
