package planner

import (
	"strings"
	"testing"
)

// pinnedPlans are queries whose operator uids are pinned: the uids are
// hashed from the operator specs' JSON, expressions included, so a change
// to how a spec or an expression encodes shows here. Such a change breaks
// restoring savepoints taken by the previous version; make it on purpose
// and say so in the release notes, then update the uids.
var pinnedPlans = []struct {
	script string
	uids   string // in plan order, space separated
}{
	{uidTables + `INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src WHERE v > 0 AND s <> '<a&b>' GROUP BY k;`, "bf96781e5b237364 f8c9267ed38bf30b f9d33e8aaddef39c a948901fe59258e8 c0da018132133c85"},
	{uidTables + `INSERT INTO dst SELECT k, CAST(v AS BIGINT) * 2, CASE WHEN s LIKE 'x%' THEN 1.5e0 ELSE NULL END FROM src WHERE s IS NOT NULL;`, "bf96781e5b237364 b2ddac83d5393554 061e409167a40195"},
	// A long chain: 300 levels of nesting in the JSON.
	{uidTables + `INSERT INTO dst SELECT k, ` + strings.Repeat("v + ", 300) + `1, 0 FROM src;`, "bf96781e5b237364 e1985a50f41ce8d6 1f696589997d72a3"},
	{uidTables + `INSERT INTO dst VALUES (1, 2, 3), (-4, NULL, 9223372036854775807);`, "efb8f7995e40f5ff ac1e4f4bd485524e"},
	{uidTables + `CREATE TABLE ev (id BIGINT, name STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
CREATE TABLE out1 (id BIGINT, name STRING, d DECIMAL(10, 2));
INSERT INTO out1 SELECT id, UPPER(CONCAT(name, 'é` + "\u2028" + `', CAST(X'00ff' IS NULL AS STRING))), 12.34 FROM ev WHERE id + 1 > 10;`, "9d9b4268f286f708 70c2862409847ee3 6219e9f97d92304d d0589523a9f6c1e4"},
}

// TestOperatorUIDsPinnedPlans checks the uids of pinnedPlans.
func TestOperatorUIDsPinnedPlans(t *testing.T) {
	for i, p := range pinnedPlans {
		uids, _ := planUIDs(t, p.script, 2)
		if got := strings.Join(uids, " "); got != p.uids {
			t.Errorf("plan %d: uids\n%s\nwant\n%s", i, got, p.uids)
		}
	}
}
