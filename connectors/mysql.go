package connectors

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// Connector names of MySQL tables: 'mysql' takes the host, port and names
// as separate options (as Flink CDC's MySQL connector), 'jdbc' a JDBC url
// (as Flink's JDBC connector; only jdbc:mysql: and jdbc:mariadb: urls).
const (
	ConnectorMySQL = "mysql"
	ConnectorJDBC  = "jdbc"
)

// lookupOptionNames are the lookup options both MySQL connectors accept,
// named as in Flink 1.16+ (LookupOptions, JdbcConnectorOptions).
var lookupOptionNames = []string{
	"lookup.cache", "lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
	"lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key", "lookup.max-retries",
}

var mysqlOptionNames = append([]string{"connector", "hostname", "port", "username", "password", "database-name", "table-name"}, lookupOptionNames...)

var jdbcOptionNames = append([]string{"connector", "url", "table-name", "username", "password", "driver"}, lookupOptionNames...)

// defaultLookupMaxRetries is Flink's 'lookup.max-retries' default.
const defaultLookupMaxRetries = 3

// mysqlTable is a MySQL table's resolved options.
type mysqlTable struct {
	table      jobgraph.MySQLTable
	cache      jobgraph.LookupCache
	maxRetries int
}

// mysqlTableFor checks the options of a 'mysql' or 'jdbc' table and
// resolves them, without contacting the database.
func mysqlTableFor(t *catalog.Table) (mysqlTable, error) {
	name, conn := tableName(t), t.Connector()
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	allowed := mysqlOptionNames
	if conn == ConnectorJDBC {
		allowed = jdbcOptionNames
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case contains(allowed, k):
		case strings.HasPrefix(k, "lookup.cache.") || k == "lookup.cache.max-rows":
			return mysqlTable{}, bad(k, "is not supported: use 'lookup.cache' = 'PARTIAL' with the 'lookup.partial-cache.*' options (Flink 1.16+)")
		case strings.HasPrefix(k, "scan.") || strings.HasPrefix(k, "sink."):
			return mysqlTable{}, bad(k, "is not supported yet")
		default:
			return mysqlTable{}, fmt.Errorf("unsupported option '%s' for connector '%s' (table %s; supported: %s)",
				k, conn, name, strings.Join(allowed, ", "))
		}
	}
	get := func(k string) string { return strings.TrimSpace(t.Options[k]) }
	var mt mysqlTable
	tb := &mt.table
	if conn == ConnectorJDBC {
		if err := parseJDBCURL(get("url"), tb); err != nil {
			return mysqlTable{}, bad("url", "%v", err)
		}
		if d := get("driver"); d != "" && d != "com.mysql.cj.jdbc.Driver" && d != "com.mysql.jdbc.Driver" && d != "org.mariadb.jdbc.Driver" {
			return mysqlTable{}, bad("driver", "names %s; Braid has its own MySQL driver and accepts only com.mysql.cj.jdbc.Driver, com.mysql.jdbc.Driver or org.mariadb.jdbc.Driver", d)
		}
	} else {
		tb.Host = get("hostname")
		if tb.Host == "" {
			return mysqlTable{}, bad("hostname", "is required")
		}
		tb.Port = 3306
		if p := get("port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n <= 0 || n > 65535 {
				return mysqlTable{}, bad("port", "must be a port number, got '%s'", p)
			}
			tb.Port = n
		}
		tb.Database = get("database-name")
		if tb.Database == "" {
			return mysqlTable{}, bad("database-name", "is required")
		}
	}
	tb.Table = get("table-name")
	if tb.Table == "" {
		return mysqlTable{}, bad("table-name", "is required")
	}
	if conn == ConnectorJDBC {
		// NB: Flink's JDBC table-name may be qualified, db.table.
		if db, tbl, ok := strings.Cut(tb.Table, "."); ok {
			tb.Database, tb.Table = db, tbl
		}
		if tb.Database == "" {
			return mysqlTable{}, bad("url", "must name a database, as in jdbc:mysql://host:3306/mydb")
		}
	}
	tb.User, tb.Password = t.Options["username"], t.Options["password"]
	if conn == ConnectorMySQL && tb.User == "" {
		return mysqlTable{}, bad("username", "is required")
	}
	if conn == ConnectorJDBC && (tb.User == "") != (tb.Password == "") {
		return mysqlTable{}, fmt.Errorf("table %s: either all or none of the options 'username' and 'password' must be set", name)
	}
	for _, c := range t.Columns {
		switch {
		case c.Metadata != "":
			return mysqlTable{}, fmt.Errorf("table %s: metadata column %s is not supported yet by connector '%s'", name, c.Name, conn)
		case c.Computed():
			return mysqlTable{}, fmt.Errorf("table %s: computed column %s is not supported yet on a %s lookup table", name, c.Name, conn)
		case !mysqlTypeSupported(c.Type):
			return mysqlTable{}, fmt.Errorf("table %s: column %s of type %s is not supported yet by connector '%s'", name, c.Name, c.Type, conn)
		}
		tb.Columns = append(tb.Columns, c.Name)
	}
	if t.Watermark != nil {
		return mysqlTable{}, fmt.Errorf("table %s: a WATERMARK on a %s table is not supported yet", name, conn)
	}
	var err error
	if mt.cache, err = lookupCacheFor(t, bad); err != nil {
		return mysqlTable{}, err
	}
	mt.maxRetries = defaultLookupMaxRetries
	if v := get("lookup.max-retries"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return mysqlTable{}, bad("lookup.max-retries", "must be a non-negative integer, got '%s'", v)
		}
		mt.maxRetries = n
	}
	return mt, nil
}

// lookupCacheFor reads 'lookup.cache' and the 'lookup.partial-cache.*'
// options, with Flink's checks.
func lookupCacheFor(t *catalog.Table, bad func(k, format string, args ...any) error) (jobgraph.LookupCache, error) {
	get := func(k string) string { return strings.TrimSpace(t.Options[k]) }
	var c jobgraph.LookupCache
	partial := []string{"lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
		"lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key"}
	switch mode := strings.ToUpper(get("lookup.cache")); mode {
	case "", "NONE":
		for _, k := range partial {
			if get(k) != "" {
				return c, bad(k, "needs 'lookup.cache' = 'PARTIAL'")
			}
		}
		return c, nil
	case "PARTIAL":
	case "FULL":
		return c, bad("lookup.cache", "'FULL' is not supported yet; use 'PARTIAL'")
	default:
		return c, bad("lookup.cache", "must be NONE or PARTIAL, got '%s'", get("lookup.cache"))
	}
	c.Enabled, c.CacheMissingKey = true, true
	if v := get("lookup.partial-cache.max-rows"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return c, bad("lookup.partial-cache.max-rows", "must be a positive integer, got '%s'", v)
		}
		c.MaxRows = n
	}
	for _, d := range []struct {
		key string
		dst *int64
	}{{"lookup.partial-cache.expire-after-write", &c.ExpireAfterWriteMs}, {"lookup.partial-cache.expire-after-access", &c.ExpireAfterAccessMs}} {
		v := get(d.key)
		if v == "" {
			continue
		}
		dur, err := types.ParseDuration(v)
		if err != nil {
			return c, bad(d.key, "%v", err)
		}
		if dur < time.Millisecond {
			return c, bad(d.key, "must be at least 1 ms, got '%s'", v)
		}
		*d.dst = dur.Milliseconds()
	}
	if v := get("lookup.partial-cache.cache-missing-key"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, bad("lookup.partial-cache.cache-missing-key", "must be true or false, got '%s'", v)
		}
		c.CacheMissingKey = b
	}
	if c.MaxRows == 0 && c.ExpireAfterWriteMs == 0 && c.ExpireAfterAccessMs == 0 {
		//lint:ignore ST1005 Flink's message, verbatim
		return c, fmt.Errorf("Missing 'lookup.partial-cache.expire-after-access', 'lookup.partial-cache.expire-after-write' or 'lookup.partial-cache.max-rows' in the configuration. The cache will not have evictions under this configuration and could lead to potential memory issues as the cache size may grow indefinitely.")
	}
	return c, nil
}

// parseJDBCURL reads jdbc:mysql://host[:port][/database][?params] (or
// jdbc:mariadb:) into tb.
func parseJDBCURL(raw string, tb *jobgraph.MySQLTable) error {
	if raw == "" {
		return fmt.Errorf("is required")
	}
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return fmt.Errorf("must be a JDBC url starting with jdbc:mysql://, got '%s'", raw)
	}
	u, err := url.Parse(rest)
	if err != nil {
		return fmt.Errorf("'%s' is not a valid url: %v", raw, err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return fmt.Errorf("'%s': only MySQL urls (jdbc:mysql://...) are supported yet", raw)
	}
	if u.Hostname() == "" || strings.Contains(u.Host, ",") {
		return fmt.Errorf("'%s' must name one host, as in jdbc:mysql://host:3306/mydb", raw)
	}
	tb.Host, tb.Port = u.Hostname(), 3306
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("'%s' has a bad port", raw)
		}
		tb.Port = n
	}
	tb.Database = strings.Trim(u.Path, "/")
	return nil
}

// mysqlTypeSupported reports whether a column of type t can be read from
// MySQL and used as a lookup key.
func mysqlTypeSupported(t types.DataType) bool {
	switch t.Kind {
	case types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindFloat, types.KindDouble, types.KindDecimal, types.KindChar, types.KindVarChar,
		types.KindBinary, types.KindVarBinary, types.KindDate, types.KindTimestamp:
		return true
	}
	return false
}

// mysqlAddr is the table's host:port, as the allowlist checks it.
func mysqlAddr(tb jobgraph.MySQLTable) string {
	return net.JoinHostPort(tb.Host, strconv.Itoa(tb.Port))
}

// LookupJoinTable returns the connection, cache and retry settings of a
// lookup table, checked as at CREATE TABLE; a table of another connector
// cannot be looked up.
func (r *Resolver) LookupJoinTable(t *catalog.Table) (jobgraph.MySQLTable, jobgraph.LookupCache, int, error) {
	if err := r.ValidateTable(t); err != nil {
		return jobgraph.MySQLTable{}, jobgraph.LookupCache{}, 0, err
	}
	switch t.Connector() {
	case ConnectorMySQL, ConnectorJDBC:
		mt, err := mysqlTableFor(t)
		return mt.table, mt.cache, mt.maxRetries, err
	}
	name := t.Connector()
	if name == "" {
		name = "managed"
	}
	return jobgraph.MySQLTable{}, jobgraph.LookupCache{}, 0, fmt.Errorf("a %s table cannot be a lookup table (lookup joins read 'mysql' and 'jdbc' tables)", name)
}
