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
//
// NB: Walk keeps its own stack of pending nodes rather than recursing, so
// it needs no goroutine stack however deep the tree (a chain a OR b OR ...
// is one level per operator).
func Walk(v Visitor, n Node) {
	// pending is a node to visit with v or, if post, the v.Visit(nil) due
	// once a node's children are done.
	type pending struct {
		v    Visitor
		n    Node
		post bool
	}
	stack := []pending{{v: v, n: n}}
	var kids []Node
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if top.post {
			top.v.Visit(nil)
			continue
		}
		w := top.v.Visit(top.n)
		if w == nil {
			continue
		}
		stack = append(stack, pending{v: w, post: true})
		kids = appendChildren(kids[:0], top.n)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, pending{v: w, n: kids[i]})
		}
	}
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

func appendOpt(kids []Node, n Node) []Node {
	// NB: a nil *T stored in a Node is not == nil; optional pointer
	// fields arrive here that way.
	if n != nil && !isNil(n) {
		kids = append(kids, n)
	}
	return kids
}

func appendList[T Node](kids []Node, ns []T) []Node {
	for _, n := range ns {
		kids = appendOpt(kids, n)
	}
	return kids
}

func isNil(n Node) bool {
	rv := reflect.ValueOf(n)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// appendChildren appends n's non-nil children to kids, in source order.
func appendChildren(kids []Node, n Node) []Node {
	switch n := n.(type) {
	case *Ident, *Literal, *Option, *HintArg, *HintOption, *LikeOption,
		*BeginStatementSetStmt, *EndStmt, *ResetStmt, *StopJobStmt:
	case *ObjectName:
		kids = appendList(kids, n.Parts)
	case *Hint:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Args)
		kids = appendList(kids, n.Options)
	case *IntervalQualifier:
	case *IntervalLit:
		kids = appendOpt(kids, n.Qualifier)
	case *ColumnRef:
		kids = appendList(kids, n.Parts)
	case *Star:
		kids = appendList(kids, n.Qualifier)
	case *Unary:
		kids = appendOpt(kids, n.X)
	case *Binary:
		kids = appendOpt(kids, n.L)
		kids = appendOpt(kids, n.R)
	case *IsExpr:
		kids = appendOpt(kids, n.X)
	case *Between:
		kids = appendOpt(kids, n.X)
		kids = appendOpt(kids, n.Low)
		kids = appendOpt(kids, n.High)
	case *InExpr:
		kids = appendOpt(kids, n.X)
		kids = appendList(kids, n.List)
		kids = appendOpt(kids, n.Query)
	case *LikeExpr:
		kids = appendOpt(kids, n.X)
		kids = appendOpt(kids, n.Pattern)
		kids = appendOpt(kids, n.Escape)
	case *FuncCall:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Args)
		kids = appendOpt(kids, n.Filter)
		kids = appendOpt(kids, n.Over)
		kids = appendOpt(kids, n.OverName)
		if j := n.JSON; j != nil {
			kids = appendOpt(kids, j.Returning)
			for _, b := range []*JSONBehavior{j.OnEmpty, j.OnError} {
				if b != nil {
					kids = appendOpt(kids, b.Default)
				}
			}
		}
	case *NamedArg:
		kids = appendOpt(kids, n.Name)
		kids = appendOpt(kids, n.Value)
	case *TableArg:
		kids = appendOpt(kids, n.Name)
		kids = appendOpt(kids, n.Query)
		kids = appendList(kids, n.PartitionBy)
	case *Descriptor:
		kids = appendList(kids, n.Columns)
	case *Cast:
		kids = appendOpt(kids, n.X)
		kids = appendOpt(kids, n.Type)
	case *Extract:
		kids = appendOpt(kids, n.X)
	case *FloorCeil:
		kids = appendOpt(kids, n.X)
	case *TimestampDiff:
		kids = appendOpt(kids, n.A)
		kids = appendOpt(kids, n.B)
	case *TimestampAdd:
		kids = appendOpt(kids, n.N)
		kids = appendOpt(kids, n.T)
	case *Trim:
		kids = appendOpt(kids, n.Chars)
		kids = appendOpt(kids, n.X)
	case *When:
		kids = appendOpt(kids, n.Cond)
		kids = appendOpt(kids, n.Result)
	case *Case:
		kids = appendOpt(kids, n.Operand)
		kids = appendList(kids, n.Whens)
		kids = appendOpt(kids, n.Else)
	case *Subquery:
		kids = appendOpt(kids, n.Query)
	case *Exists:
		kids = appendOpt(kids, n.Query)
	case *RowCtor:
		kids = appendList(kids, n.Items)
	case *ArrayCtor:
		kids = appendList(kids, n.Items)
	case *MapCtor:
		kids = appendList(kids, n.Items)
	case *Index:
		kids = appendOpt(kids, n.X)
		kids = appendOpt(kids, n.Index)
	case *FieldAccess:
		kids = appendOpt(kids, n.X)
		kids = appendOpt(kids, n.Field)
	case *GroupingSets:
		for _, s := range n.Sets {
			kids = appendList(kids, s)
		}
	case *WindowSpec:
		kids = appendOpt(kids, n.Ref)
		kids = appendList(kids, n.PartitionBy)
		kids = appendList(kids, n.OrderBy)
		kids = appendOpt(kids, n.Frame)
	case *Frame:
		kids = appendOpt(kids, n.Start)
		kids = appendOpt(kids, n.End)
	case *FrameBound:
		kids = appendOpt(kids, n.Offset)
	case *Query:
		kids = appendList(kids, n.With)
		kids = appendOpt(kids, n.Body)
		kids = appendList(kids, n.OrderBy)
		kids = appendOpt(kids, n.Limit)
		kids = appendOpt(kids, n.Offset)
	case *CTE:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Columns)
		kids = appendOpt(kids, n.Query)
	case *Select:
		kids = appendList(kids, n.Hints)
		kids = appendList(kids, n.Items)
		kids = appendOpt(kids, n.From)
		kids = appendOpt(kids, n.Where)
		kids = appendList(kids, n.GroupBy)
		kids = appendOpt(kids, n.Having)
		kids = appendList(kids, n.Windows)
	case *SelectItem:
		kids = appendOpt(kids, n.Expr)
		kids = appendOpt(kids, n.Alias)
	case *NamedWindow:
		kids = appendOpt(kids, n.Name)
		kids = appendOpt(kids, n.Spec)
	case *OrderItem:
		kids = appendOpt(kids, n.Expr)
	case *SetOp:
		kids = appendOpt(kids, n.L)
		kids = appendOpt(kids, n.R)
	case *Values:
		kids = appendList(kids, n.Rows)
	case *TableAlias:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Columns)
	case *TableName:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Hints)
		kids = appendOpt(kids, n.SystemTime)
		kids = appendOpt(kids, n.Alias)
	case *DerivedTable:
		kids = appendOpt(kids, n.Query)
		kids = appendOpt(kids, n.Alias)
	case *TableFunc:
		kids = appendOpt(kids, n.Call)
		kids = appendOpt(kids, n.Alias)
	case *Unnest:
		kids = appendList(kids, n.Args)
		kids = appendOpt(kids, n.Alias)
	case *Join:
		kids = appendOpt(kids, n.L)
		kids = appendOpt(kids, n.R)
		kids = appendOpt(kids, n.On)
		kids = appendList(kids, n.Using)
	case *ParenTable:
		kids = appendOpt(kids, n.Table)
	case *Type:
		kids = appendOpt(kids, n.Elem)
		kids = appendOpt(kids, n.Key)
		kids = appendOpt(kids, n.Value)
		kids = appendList(kids, n.Fields)
		kids = appendOpt(kids, n.Interval)
	case *RowField:
		kids = appendOpt(kids, n.Name)
		kids = appendOpt(kids, n.Type)
	case *CreateTableStmt:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Columns)
		kids = appendList(kids, n.Watermarks)
		kids = appendOpt(kids, n.PrimaryKey)
		kids = appendList(kids, n.PartitionedBy)
		kids = appendList(kids, n.Options)
		kids = appendOpt(kids, n.Like)
		kids = appendOpt(kids, n.AsQuery)
	case *ColumnDef:
		kids = appendOpt(kids, n.Name)
		kids = appendOpt(kids, n.Type)
		kids = appendOpt(kids, n.Expr)
	case *PrimaryKey:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Columns)
	case *Watermark:
		kids = appendOpt(kids, n.Column)
		kids = appendOpt(kids, n.Expr)
	case *LikeClause:
		kids = appendOpt(kids, n.Source)
		kids = appendList(kids, n.Options)
	case *DropTableStmt:
		kids = appendOpt(kids, n.Name)
	case *AlterTableStmt:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Set)
		kids = appendList(kids, n.Reset)
		kids = appendOpt(kids, n.RenameTo)
	case *CreateViewStmt:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Columns)
		kids = appendOpt(kids, n.Query)
	case *DropViewStmt:
		kids = appendOpt(kids, n.Name)
	case *CreateDatabaseStmt:
		kids = appendOpt(kids, n.Name)
		kids = appendList(kids, n.Options)
	case *DropDatabaseStmt:
		kids = appendOpt(kids, n.Name)
	case *UseStmt:
		kids = appendOpt(kids, n.Name)
	case *ShowStmt:
		kids = appendOpt(kids, n.Name)
	case *DescribeStmt:
		kids = appendOpt(kids, n.Name)
	case *SetStmt:
		kids = appendOpt(kids, n.Option)
	case *InsertStmt:
		kids = appendOpt(kids, n.Table)
		kids = appendList(kids, n.Hints)
		kids = appendList(kids, n.Columns)
		kids = appendOpt(kids, n.Query)
	case *QueryStmt:
		kids = appendOpt(kids, n.Query)
	case *ExplainStmt:
		kids = appendOpt(kids, n.Stmt)
	case *StatementSetStmt:
		kids = appendList(kids, n.Inserts)
	case *ExecuteStmt:
		kids = appendOpt(kids, n.Stmt)
	default:
		panic("ast.Walk: unexpected node type")
	}
	return kids
}
