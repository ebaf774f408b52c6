package difftest

import (
	"math/big"
	"strings"
	"testing"
)

// TestReferenceSemantics holds the reference evaluator to the Flink
// semantics it must follow (FLINK-SEMANTICS.md), on hand-written cases,
// so that a difference the differential test reports is the engine's.
func TestReferenceSemantics(t *testing.T) {
	d := func(s string) value { v, _ := new(big.Rat).SetString(s); return v }
	tables := []*tableSpec{{
		name: "t",
		cols: []column{{name: "i", t: tInt}, {name: "b", t: tBigInt}, {name: "d", t: tDec(10, 2)}, {name: "s", t: tStr}},
		rows: [][]value{
			{int64(1), int64(10), d("1.50"), "a"},
			{int64(2), int64(10), d("2.25"), "b"},
			{nil, nil, nil, nil},
			{int64(2), int64(-3), d("-1.00"), "b"},
		},
	}, {
		name: "u",
		cols: []column{{name: "i", t: tInt}},
		rows: [][]value{{int64(2)}, {nil}, {int64(2)}, {int64(7)}},
	}}
	cases := []struct {
		sql   string
		types string
		rows  string // sorted, rows separated by |
	}{
		// AVG of an integer truncates and keeps the type; SUM keeps INT.
		{"SELECT AVG(i), SUM(i), COUNT(i), COUNT(*) FROM t", "INT,INT,BIGINT,BIGINT", "1\t5\t3\t4"},
		// AVG(DECIMAL(10, 2)) is DECIMAL(38, 6); SUM is DECIMAL(38, 2).
		{"SELECT AVG(d), SUM(d) FROM t", "DECIMAL(38, 6),DECIMAL(38, 2)", "0.916667\t2.75"},
		// INT / INT is INT, truncated toward zero; % keeps the sign of the dividend.
		{"SELECT -7 / 2, 7 / 2, -7 % 3, 7 % -3 FROM t WHERE i = 1", "INT,INT,INT,INT", "-3\t3\t-1\t1"},
		// DECIMAL(10, 2) / INT is DECIMAL(p, max(6, 2 + 10 + 1)), rounded half up.
		{"SELECT d / 3, d * 2, d + 1 FROM t WHERE i = 1", "DECIMAL(21, 13),DECIMAL(21, 2),DECIMAL(13, 2)", "0.5000000000000\t3.00\t2.50"},
		// Three-valued logic: NULL IN (...) is NULL, x NOT IN (.., NULL) is never TRUE.
		{"SELECT i IN (1, 2), i NOT IN (3, CAST(NULL AS INT)), i IS NULL FROM t", "BOOLEAN,BOOLEAN,BOOLEAN",
			"NULL\tNULL\tTRUE|TRUE\tNULL\tFALSE|TRUE\tNULL\tFALSE|TRUE\tNULL\tFALSE"},
		{"SELECT i FROM t WHERE NOT (i = 1 OR s = 'x')", "INT", "2|2"},
		// CASE and COALESCE take the common type: INT and BIGINT make BIGINT.
		{"SELECT COALESCE(i, b), CASE WHEN i = 1 THEN d ELSE 0 END FROM t WHERE i = 1", "BIGINT,DECIMAL(12, 2)", "1\t1.50"},
		// Set operations: multisets, NULLs equal.
		{"SELECT i FROM t INTERSECT ALL SELECT i FROM u", "INT", "2|2|NULL"},
		{"SELECT i FROM t INTERSECT SELECT i FROM u", "INT", "2|NULL"},
		{"SELECT i FROM u EXCEPT ALL SELECT i FROM t", "INT", "7"},
		{"SELECT i FROM u UNION ALL SELECT i FROM u EXCEPT ALL SELECT i FROM t", "INT", "2|2|7|7|NULL"},
		{"SELECT i FROM u EXCEPT SELECT i FROM t", "INT", "7"},
		{"SELECT i FROM t UNION SELECT i FROM u", "INT", "1|2|7|NULL"},
		{"SELECT i FROM t UNION ALL SELECT b FROM t", "BIGINT", "-3|1|10|10|2|2|NULL|NULL"},
		// A global aggregate over no rows gives no row (streaming).
		{"SELECT COUNT(*) FROM t WHERE i > 100", "BIGINT", ""},
		// GROUP BY puts NULLs in one group; HAVING filters groups.
		{"SELECT i, COUNT(*) FROM t GROUP BY i HAVING COUNT(*) >= 1", "INT,BIGINT", "1\t1|2\t2|NULL\t1"},
		// Outer joins pad; an ON condition on the padded side does not drop the preserved row.
		{"SELECT t.i, u.i FROM t LEFT JOIN u ON t.i = u.i AND u.i > 5", "INT,INT", "1\tNULL|2\tNULL|2\tNULL|NULL\tNULL"},
		{"SELECT t.i, u.i FROM t FULL JOIN u ON t.i = u.i", "INT,INT",
			"1\tNULL|2\t2|2\t2|2\t2|2\t2|NULL\t7|NULL\tNULL|NULL\tNULL"},
		// Subqueries, DISTINCT and FILTER aggregates (generated when switched on).
		{"SELECT i FROM u WHERE i NOT IN (SELECT i FROM t)", "INT", ""},
		{"SELECT i FROM u WHERE i IN (SELECT i FROM t WHERE s = 'b')", "INT", "2|2"},
		{"SELECT u.i FROM u WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.i = u.i)", "INT", "7|NULL"},
		{"SELECT COUNT(DISTINCT b), SUM(DISTINCT b), COUNT(*) FILTER (WHERE i = 2) FROM t", "BIGINT,BIGINT,BIGINT", "2\t7\t2"},
	}
	for _, c := range cases {
		res, err := refResult(tables, c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		var ts []string
		for _, ty := range res.types {
			ts = append(ts, ty.sqlName())
		}
		if got := strings.Join(ts, ","); got != c.types {
			t.Errorf("%s: types %s, want %s", c.sql, got, c.types)
		}
		if got := strings.Join(res.rows, "|"); got != c.rows {
			t.Errorf("%s: rows %q, want %q", c.sql, got, c.rows)
		}
	}
}

// TestGeneratedQueriesEvaluate checks that the reference evaluates every
// query the generator makes with every feature on (the engine is not
// involved), so switching a feature on exercises the engine, not the
// test's gaps.
func TestGeneratedQueriesEvaluate(t *testing.T) {
	fs, err := parseFeatures("+all")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 15; seed++ {
		c := genCase(seed, "g", 10, fs)
		for _, q := range c.queries {
			if _, err := refResult(c.tables, q); err != nil && err != errTooBig {
				t.Errorf("seed %d: %v\n%s", seed, err, q)
			}
		}
	}
}
