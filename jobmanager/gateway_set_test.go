package jobmanager_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestSetRefusesUnknownKeys: SET of a key Braid does not read fails naming
// the closest known key, a bad typed value fails naming the option, and
// known options are accepted and listed.
func TestSetRefusesUnknownKeys(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for sql, want := range map[string]string{
		"SET 'execution.checkpointing.intervall' = '10 s';": "line 1, column 5: unknown option 'execution.checkpointing.intervall' (did you mean 'execution.checkpointing.interval'?)",
		"SET 'execution.checkpointing.interval' = '10 x';":  "invalid value '10 x' for 'execution.checkpointing.interval'",
		"SET 'restart-strategy.type' = 'sometimes';":        "invalid value 'sometimes' for 'restart-strategy.type'",
	} {
		err := s.Execute(ctx, sql, false, newRows())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to contain %q", sql, err, want)
		}
	}
	run(t, s, "SET 'execution.checkpointing.interval' = '10 s'; SET 'restart-strategy.type' = 'fixed-delay';"+
		"SET 'sql-client.execution.result-mode' = 'tableau';")
	// A query plans with the resolved options.
	run(t, s, "SELECT 1;")
	if _, err := c.OpenSession(ctx, map[string]string{"paralelism.default": "2"}); err == nil ||
		!strings.Contains(err.Error(), "did you mean 'parallelism.default'?") {
		t.Errorf("OpenSession with a misspelt property: %v", err)
	}
}
