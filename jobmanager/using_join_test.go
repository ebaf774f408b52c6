package jobmanager_test

import (
	"strings"
	"testing"
)

// TestUsingJoins checks JOIN ... USING and NATURAL JOIN end to end: a small
// case by hand, then each join kind against the ON join it stands for.
func TestUsingJoins(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, "SET 'parallelism.default' = '4';"+
		"CREATE TABLE l (k INT, g STRING, v INT); CREATE TABLE r (k INT, g STRING, w INT);"+
		"INSERT INTO l VALUES (1, 'a', 10), (2, 'a', 20), (2, 'b', 21), (CAST(NULL AS INT), 'a', 30), (4, 'c', 40);"+
		"INSERT INTO r VALUES (1, 'a', 100), (2, 'b', 200), (2, 'b', 201), (CAST(NULL AS INT), 'a', 300), (5, 'c', 500);")

	got := materializeRows(t, run(t, s, "SELECT * FROM l FULL JOIN r USING (k);").rows)
	equal(t, "FULL JOIN USING (k)", got, []string{
		"[1, a, 10, a, 100]",
		"[2, a, 20, b, 200]", "[2, a, 20, b, 201]", "[2, b, 21, b, 200]", "[2, b, 21, b, 201]",
		"[4, c, 40, NULL, NULL]", "[5, NULL, NULL, c, 500]",
		"[NULL, NULL, NULL, a, 300]", "[NULL, a, 30, NULL, NULL]",
	})
	got = materializeRows(t, run(t, s, "SELECT * FROM l NATURAL JOIN r;").rows)
	equal(t, "NATURAL JOIN", got, []string{"[1, a, 10, 100]", "[2, b, 21, 200]", "[2, b, 21, 201]"})

	for _, tc := range []struct{ using, on string }{
		{"SELECT * FROM l JOIN r USING (k)", "SELECT l.k, l.g, l.v, r.g, r.w FROM l JOIN r ON l.k = r.k"},
		{"SELECT * FROM l LEFT JOIN r USING (k, g)", "SELECT l.k, l.g, l.v, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.g = r.g"},
		{"SELECT * FROM l NATURAL RIGHT JOIN r", "SELECT r.k, r.g, l.v, r.w FROM l RIGHT JOIN r ON l.k = r.k AND l.g = r.g"},
		{"SELECT k, g, l.k, r.k, v + w FROM l NATURAL FULL JOIN r WHERE k > 1 OR k IS NULL",
			"SELECT COALESCE(l.k, r.k), COALESCE(l.g, r.g), l.k, r.k, v + w FROM l FULL JOIN r ON l.k = r.k AND l.g = r.g " +
				"WHERE COALESCE(l.k, r.k) > 1 OR COALESCE(l.k, r.k) IS NULL"},
	} {
		got := materializeRows(t, run(t, s, tc.using+";").rows)
		want := materializeRows(t, run(t, s, tc.on+";").rows)
		if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s\ngot  %v\nwant %v (%s)", tc.using, got, want, tc.on)
		}
	}
}
