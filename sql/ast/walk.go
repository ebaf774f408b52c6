package ast

import "reflect"

// Visitor's Visit is called for each node Walk reaches. If it returns a
// non-nil visitor w, Walk visits the node's children with w and then calls
// w.Visit(nil).
type Visitor interface {
	Visit(n Node) (w Visitor)
}

// Walk traverses the tree rooted at n in depth-first order, children in
// source order. Nil children are skipped.
func Walk(v Visitor, n Node) {
	if v = v.Visit(n); v == nil {
		return
	}
	walkChildren(v, n)
	v.Visit(nil)
}

type inspector func(Node) bool

func (f inspector) Visit(n Node) Visitor {
	if n != nil && f(n) {
		return f
	}
	return nil
}

// Inspect calls f for every node of the tree rooted at n, depth first; when
// f returns false the node's children are skipped.
func Inspect(n Node, f func(Node) bool) { Walk(inspector(f), n) }

func walkOpt(v Visitor, n Node) {
	// NB: a nil *T stored in a Node is not == nil; optional pointer
	// fields arrive here that way.
	if n != nil && !isNil(n) {
		Walk(v, n)
	}
}

func walkList[T Node](v Visitor, ns []T) {
	for _, n := range ns {
		walkOpt(v, n)
	}
}

func isNil(n Node) bool {
	rv := reflect.ValueOf(n)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

func walkChildren(v Visitor, n Node) {
	switch n := n.(type) {
	case *Ident, *Literal, *Option, *HintArg, *HintOption, *LikeOption,
		*BeginStatementSetStmt, *EndStmt, *ResetStmt, *StopJobStmt:
	case *ObjectName:
		walkList(v, n.Parts)
	case *Hint:
		walkOpt(v, n.Name)
		walkList(v, n.Args)
		walkList(v, n.Options)
	case *IntervalQualifier:
	case *IntervalLit:
		walkOpt(v, n.Qualifier)
	case *ColumnRef:
		walkList(v, n.Parts)
	case *Star:
		walkList(v, n.Qualifier)
	case *Unary:
		walkOpt(v, n.X)
	case *Binary:
		walkOpt(v, n.L)
		walkOpt(v, n.R)
	case *IsExpr:
		walkOpt(v, n.X)
	case *Between:
		walkOpt(v, n.X)
		walkOpt(v, n.Low)
		walkOpt(v, n.High)
	case *InExpr:
		walkOpt(v, n.X)
		walkList(v, n.List)
		walkOpt(v, n.Query)
	case *LikeExpr:
		walkOpt(v, n.X)
		walkOpt(v, n.Pattern)
		walkOpt(v, n.Escape)
	case *FuncCall:
		walkOpt(v, n.Name)
		walkList(v, n.Args)
		walkOpt(v, n.Filter)
		walkOpt(v, n.Over)
		walkOpt(v, n.OverName)
	case *NamedArg:
		walkOpt(v, n.Name)
		walkOpt(v, n.Value)
	case *TableArg:
		walkOpt(v, n.Name)
		walkList(v, n.PartitionBy)
	case *Descriptor:
		walkList(v, n.Columns)
	case *Cast:
		walkOpt(v, n.X)
		walkOpt(v, n.Type)
	case *Extract:
		walkOpt(v, n.X)
	case *TimestampDiff:
		walkOpt(v, n.A)
		walkOpt(v, n.B)
	case *TimestampAdd:
		walkOpt(v, n.N)
		walkOpt(v, n.T)
	case *Trim:
		walkOpt(v, n.Chars)
		walkOpt(v, n.X)
	case *When:
		walkOpt(v, n.Cond)
		walkOpt(v, n.Result)
	case *Case:
		walkOpt(v, n.Operand)
		walkList(v, n.Whens)
		walkOpt(v, n.Else)
	case *Subquery:
		walkOpt(v, n.Query)
	case *Exists:
		walkOpt(v, n.Query)
	case *RowCtor:
		walkList(v, n.Items)
	case *ArrayCtor:
		walkList(v, n.Items)
	case *MapCtor:
		walkList(v, n.Items)
	case *Index:
		walkOpt(v, n.X)
		walkOpt(v, n.Index)
	case *FieldAccess:
		walkOpt(v, n.X)
		walkOpt(v, n.Field)
	case *GroupingSets:
		for _, s := range n.Sets {
			walkList(v, s)
		}
	case *WindowSpec:
		walkOpt(v, n.Ref)
		walkList(v, n.PartitionBy)
		walkList(v, n.OrderBy)
		walkOpt(v, n.Frame)
	case *Frame:
		walkOpt(v, n.Start)
		walkOpt(v, n.End)
	case *FrameBound:
		walkOpt(v, n.Offset)
	case *Query:
		walkList(v, n.With)
		walkOpt(v, n.Body)
		walkList(v, n.OrderBy)
		walkOpt(v, n.Limit)
		walkOpt(v, n.Offset)
	case *CTE:
		walkOpt(v, n.Name)
		walkList(v, n.Columns)
		walkOpt(v, n.Query)
	case *Select:
		walkList(v, n.Hints)
		walkList(v, n.Items)
		walkOpt(v, n.From)
		walkOpt(v, n.Where)
		walkList(v, n.GroupBy)
		walkOpt(v, n.Having)
		walkList(v, n.Windows)
	case *SelectItem:
		walkOpt(v, n.Expr)
		walkOpt(v, n.Alias)
	case *NamedWindow:
		walkOpt(v, n.Name)
		walkOpt(v, n.Spec)
	case *OrderItem:
		walkOpt(v, n.Expr)
	case *SetOp:
		walkOpt(v, n.L)
		walkOpt(v, n.R)
	case *Values:
		walkList(v, n.Rows)
	case *TableAlias:
		walkOpt(v, n.Name)
		walkList(v, n.Columns)
	case *TableName:
		walkOpt(v, n.Name)
		walkList(v, n.Hints)
		walkOpt(v, n.SystemTime)
		walkOpt(v, n.Alias)
	case *DerivedTable:
		walkOpt(v, n.Query)
		walkOpt(v, n.Alias)
	case *TableFunc:
		walkOpt(v, n.Call)
		walkOpt(v, n.Alias)
	case *Unnest:
		walkList(v, n.Args)
		walkOpt(v, n.Alias)
	case *Join:
		walkOpt(v, n.L)
		walkOpt(v, n.R)
		walkOpt(v, n.On)
		walkList(v, n.Using)
	case *ParenTable:
		walkOpt(v, n.Table)
	case *Type:
		walkOpt(v, n.Elem)
		walkOpt(v, n.Key)
		walkOpt(v, n.Value)
		walkList(v, n.Fields)
		walkOpt(v, n.Interval)
	case *RowField:
		walkOpt(v, n.Name)
		walkOpt(v, n.Type)
	case *CreateTableStmt:
		walkOpt(v, n.Name)
		walkList(v, n.Columns)
		walkList(v, n.Watermarks)
		walkOpt(v, n.PrimaryKey)
		walkList(v, n.PartitionedBy)
		walkList(v, n.Options)
		walkOpt(v, n.Like)
		walkOpt(v, n.AsQuery)
	case *ColumnDef:
		walkOpt(v, n.Name)
		walkOpt(v, n.Type)
		walkOpt(v, n.Expr)
	case *PrimaryKey:
		walkOpt(v, n.Name)
		walkList(v, n.Columns)
	case *Watermark:
		walkOpt(v, n.Column)
		walkOpt(v, n.Expr)
	case *LikeClause:
		walkOpt(v, n.Source)
		walkList(v, n.Options)
	case *DropTableStmt:
		walkOpt(v, n.Name)
	case *CreateViewStmt:
		walkOpt(v, n.Name)
		walkList(v, n.Columns)
		walkOpt(v, n.Query)
	case *DropViewStmt:
		walkOpt(v, n.Name)
	case *CreateDatabaseStmt:
		walkOpt(v, n.Name)
		walkList(v, n.Options)
	case *DropDatabaseStmt:
		walkOpt(v, n.Name)
	case *UseStmt:
		walkOpt(v, n.Name)
	case *ShowStmt:
		walkOpt(v, n.Name)
	case *DescribeStmt:
		walkOpt(v, n.Name)
	case *SetStmt:
		walkOpt(v, n.Option)
	case *InsertStmt:
		walkOpt(v, n.Table)
		walkList(v, n.Hints)
		walkList(v, n.Columns)
		walkOpt(v, n.Query)
	case *QueryStmt:
		walkOpt(v, n.Query)
	case *ExplainStmt:
		walkOpt(v, n.Stmt)
	case *StatementSetStmt:
		walkList(v, n.Inserts)
	case *ExecuteStmt:
		walkOpt(v, n.Stmt)
	default:
		panic("ast.Walk: unexpected node type")
	}
}
