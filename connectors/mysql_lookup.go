package connectors

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindJoinLookup, func(spec jobgraph.Spec) (operators.Operator, error) {
		s, err := operators.SpecAs[*jobgraph.LookupJoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return operators.NewLookupJoin(*s, NewMySQLLookup(s.Table, s.LookupSchema, s.LookupKeys))
	})
}

// mysqlBatchKeys is how many keys one batched query reads: the IN list of
// its prepared statement (shorter lists repeat their first key).
const mysqlBatchKeys = 64

// MySQLLookup reads the rows of a MySQL table by key with prepared
// statements: SELECT <columns> FROM db.table WHERE key = ?. Integer, boolean
// and date keys of several probe rows are read in one statement
// (key IN (?, ...)); keys of other types one at a time, because MySQL's
// comparison (collations that ignore case and trailing spaces, rounding of
// fractions) decides what a key matches and only MySQL can say which key a
// row answered.
type MySQLLookup struct {
	table  jobgraph.MySQLTable
	schema types.Schema
	keys   []int // lookup key columns in schema
	batch  bool

	db     *sql.DB
	single *sql.Stmt
	multi  *sql.Stmt
	mem    memory.Allocator
}

var _ operators.LookupTable = (*MySQLLookup)(nil)

// NewMySQLLookup returns an unopened lookup of table, whose columns are
// schema, by the key columns keys.
func NewMySQLLookup(table jobgraph.MySQLTable, schema types.Schema, keys []int) *MySQLLookup {
	l := &MySQLLookup{table: table, schema: schema, keys: keys, batch: true}
	for _, k := range keys {
		switch schema[k].Type.Kind {
		case types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt, types.KindDate:
		default:
			l.batch = false
		}
	}
	return l
}

// MySQLDSN is the go-sql-driver data source name of table's database:
// times in UTC, DATE and DATETIME values as time.Time.
func MySQLDSN(table jobgraph.MySQLTable) string {
	c := mysqldriver.NewConfig()
	c.Net, c.Addr, c.User, c.Passwd, c.DBName = "tcp", mysqlAddr(table), table.User, table.Password, table.Database
	c.ParseTime, c.Loc = true, time.UTC
	c.Timeout, c.ReadTimeout, c.WriteTimeout = 10*time.Second, time.Minute, time.Minute
	return c.FormatDSN()
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Open connects and prepares the statements.
func (l *MySQLLookup) Open(ctx *operators.Context) error {
	db, err := sql.Open("mysql", MySQLDSN(l.table))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(2)
	l.db, l.mem = db, memory.DefaultAllocator
	cols := make([]string, len(l.table.Columns))
	for i, c := range l.table.Columns {
		cols[i] = quoteIdent(c)
	}
	from := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(l.table.Database) + "." + quoteIdent(l.table.Table) + " WHERE "
	var eq []string
	for _, k := range l.keys {
		eq = append(eq, cols[k]+" = ?")
	}
	pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if l.single, err = db.PrepareContext(pctx, from+strings.Join(eq, " AND ")); err != nil {
		return types.WithClass(fmt.Errorf("mysql table %s.%s at %s: %w", l.table.Database, l.table.Table, mysqlAddr(l.table), err), types.ClassExternal)
	}
	if l.batch && len(l.keys) == 1 {
		in := strings.TrimSuffix(strings.Repeat("?, ", mysqlBatchKeys), ", ")
		if l.multi, err = db.PrepareContext(pctx, from+cols[l.keys[0]]+" IN ("+in+")"); err != nil {
			return types.WithClass(fmt.Errorf("mysql table %s.%s: %w", l.table.Database, l.table.Table, err), types.ClassExternal)
		}
	} else if l.batch {
		ors := make([]string, mysqlBatchKeys)
		for i := range ors {
			ors[i] = "(" + strings.Join(eq, " AND ") + ")"
		}
		if l.multi, err = db.PrepareContext(pctx, from+strings.Join(ors, " OR ")); err != nil {
			return types.WithClass(fmt.Errorf("mysql table %s.%s: %w", l.table.Database, l.table.Table, err), types.ClassExternal)
		}
	}
	return nil
}

// Lookup reads the rows of keys.
func (l *MySQLLookup) Lookup(ctx context.Context, keys [][]any) ([]arrow.Array, []int, error) {
	r := newMySQLRows(l.mem, l.schema)
	defer r.release()
	if l.batch {
		index := make(map[string]int, len(keys))
		for i, k := range keys {
			index[keyString(k)] = i
		}
		args := make([]any, 0, mysqlBatchKeys*len(l.keys))
		for start := 0; start < len(keys); start += mysqlBatchKeys {
			args = args[:0]
			for i := start; i < start+mysqlBatchKeys; i++ {
				k := keys[min(i, len(keys)-1)]
				args = append(args, k...)
			}
			if err := l.query(ctx, l.multi, args, r, func(key []any) int {
				if i, ok := index[keyString(key)]; ok {
					return i
				}
				return -1
			}); err != nil {
				return nil, nil, err
			}
		}
	} else {
		for i, k := range keys {
			if err := l.query(ctx, l.single, k, r, func([]any) int { return i }); err != nil {
				return nil, nil, err
			}
		}
	}
	return r.finish()
}

// query runs stmt and appends its rows to r, each matched to the key
// keyOf names from its key column values (-1: a row of no key asked).
func (l *MySQLLookup) query(ctx context.Context, stmt *sql.Stmt, args []any, r *mysqlRows, keyOf func([]any) int) error {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	key := make([]any, len(l.keys))
	for rows.Next() {
		if err := rows.Scan(r.dest...); err != nil {
			return err
		}
		for i, k := range l.keys {
			key[i] = r.value(k)
		}
		m := keyOf(key)
		if m < 0 {
			continue
		}
		if err := r.appendRow(m); err != nil {
			return fmt.Errorf("mysql table %s.%s: %w", l.table.Database, l.table.Table, err)
		}
	}
	return rows.Err()
}

// keyString identifies a key of integer, boolean or date values.
func keyString(k []any) string {
	var sb strings.Builder
	for _, v := range k {
		if t, ok := v.(time.Time); ok {
			v = t.UTC().Format("2006-01-02")
		}
		fmt.Fprintf(&sb, "%T:%v|", v, v)
	}
	return sb.String()
}

// Close closes the statements and the connections. It is safe after a
// failed Open.
func (l *MySQLLookup) Close() error {
	for _, s := range []*sql.Stmt{l.single, l.multi} {
		if s != nil {
			_ = s.Close()
		}
	}
	if l.db == nil {
		return nil
	}
	return l.db.Close()
}

// mysqlRows builds the Arrow columns of scanned rows.
type mysqlRows struct {
	schema   types.Schema
	builders []array.Builder
	dest     []any
	match    []int
}

func newMySQLRows(mem memory.Allocator, s types.Schema) *mysqlRows {
	r := &mysqlRows{schema: s}
	for _, f := range s {
		r.builders = append(r.builders, array.NewBuilder(mem, f.Type.ArrowType()))
		var d any
		switch f.Type.Kind {
		case types.KindBoolean:
			d = new(sql.NullBool)
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			d = new(sql.NullInt64)
		case types.KindFloat, types.KindDouble:
			d = new(sql.NullFloat64)
		case types.KindDate, types.KindTimestamp:
			d = new(sql.NullTime)
		case types.KindBinary, types.KindVarBinary:
			d = new([]byte)
		default: // CHAR, VARCHAR, DECIMAL
			d = new(sql.NullString)
		}
		r.dest = append(r.dest, d)
	}
	return r
}

// value is column c of the scanned row as a key value (int64, bool or a
// time.Time; nil for NULL).
func (r *mysqlRows) value(c int) any {
	switch d := r.dest[c].(type) {
	case *sql.NullBool:
		if d.Valid {
			return d.Bool
		}
	case *sql.NullInt64:
		if d.Valid {
			return d.Int64
		}
	case *sql.NullTime:
		if d.Valid {
			return d.Time
		}
	}
	return nil
}

// appendRow appends the scanned row, matched to key m.
func (r *mysqlRows) appendRow(m int) error {
	for c, f := range r.schema {
		b := r.builders[c]
		switch d := r.dest[c].(type) {
		case *sql.NullBool:
			if !d.Valid {
				b.AppendNull()
				continue
			}
			b.(*array.BooleanBuilder).Append(d.Bool)
		case *sql.NullInt64:
			if !d.Valid {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int8Builder:
				bb.Append(int8(d.Int64))
			case *array.Int16Builder:
				bb.Append(int16(d.Int64))
			case *array.Int32Builder:
				bb.Append(int32(d.Int64))
			case *array.Int64Builder:
				bb.Append(d.Int64)
			}
		case *sql.NullFloat64:
			if !d.Valid {
				b.AppendNull()
				continue
			}
			if bb, ok := b.(*array.Float32Builder); ok {
				bb.Append(float32(d.Float64))
			} else {
				b.(*array.Float64Builder).Append(d.Float64)
			}
		case *sql.NullTime:
			if !d.Valid {
				b.AppendNull()
				continue
			}
			// NB: the driver reads DATETIME as UTC wall-clock time, which
			// is what a TIMESTAMP (without zone) holds.
			if bb, ok := b.(*array.Date32Builder); ok {
				y, mo, day := d.Time.Date()
				bb.Append(arrow.Date32(time.Date(y, mo, day, 0, 0, 0, 0, time.UTC).Unix() / 86400))
			} else {
				b.(*array.TimestampBuilder).Append(arrow.Timestamp(d.Time.UnixNano()))
			}
		case *[]byte:
			if *d == nil {
				b.AppendNull()
				continue
			}
			b.(*array.BinaryBuilder).Append(*d)
		case *sql.NullString:
			if !d.Valid {
				b.AppendNull()
				continue
			}
			if f.Type.Kind == types.KindDecimal {
				n, err := decimal128.FromString(d.String, int32(f.Type.Precision), int32(f.Type.Scale))
				if err != nil {
					return fmt.Errorf("column %s: %q is not a %s: %v", f.Name, d.String, f.Type, err)
				}
				b.(*array.Decimal128Builder).Append(n)
				continue
			}
			b.(*array.StringBuilder).Append(d.String)
		}
	}
	r.match = append(r.match, m)
	return nil
}

// finish returns the built columns (the caller releases them) and matches.
func (r *mysqlRows) finish() ([]arrow.Array, []int, error) {
	cols := make([]arrow.Array, len(r.builders))
	for i, b := range r.builders {
		cols[i] = b.NewArray()
	}
	return cols, r.match, nil
}

func (r *mysqlRows) release() {
	for _, b := range r.builders {
		b.Release()
	}
}
