package render

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
)

func TestShellRunsStatementsUntilQuit(t *testing.T) {
	in := "\nSELECT 'a;\n' ,\n 1;\nSET 'x' = 'y';  -- note\nquit;\nSELECT 'never';\n"
	var got []string
	exec := func(ctx context.Context, script string, h client.Handler) error {
		got = append(got, script)
		h.Status(0, "ok "+script[:3], "")
		return nil
	}
	var out, errw bytes.Buffer
	sh := &Shell{Exec: exec, In: io.NopCloser(strings.NewReader(in)), Out: &out, Err: &errw}
	if err := sh.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT 'a;\n' ,\n 1;", "SET 'x' = 'y';  -- note"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("statements = %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "[INFO] ok SEL\n\n") || !strings.Contains(out.String(), "[INFO] ok SET\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestShellReadsStatementSets: an EXECUTE STATEMENT SET goes to the
// gateway whole, up to its END; the client form's statements one by one.
func TestShellReadsStatementSets(t *testing.T) {
	in := "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;\nBEGIN STATEMENT SET;\nINSERT INTO a SELECT 3;\nEND;\n"
	var got []string
	exec := func(ctx context.Context, script string, h client.Handler) error {
		got = append(got, script)
		return nil
	}
	var out, errw bytes.Buffer
	sh := &Shell{Exec: exec, In: io.NopCloser(strings.NewReader(in)), Out: &out, Err: &errw}
	if err := sh.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;", "BEGIN STATEMENT SET;", "INSERT INTO a SELECT 3;", "END;"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("statements = %q, want %q", got, want)
	}
}

func TestShellInterruptCancelsStatement(t *testing.T) {
	sig := make(chan os.Signal, 1)
	started := make(chan struct{})
	exec := func(ctx context.Context, script string, h client.Handler) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}
	pr, pw := io.Pipe()
	var out, errw bytes.Buffer
	sh := &Shell{Exec: exec, In: pr, Out: &out, Err: &errw, Interrupts: sig}
	done := make(chan error, 1)
	go func() { done <- sh.Run(context.Background()) }()
	io.WriteString(pw, "SELECT * FROM forever;\n")
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("statement never started")
	}
	sig <- syscall.SIGINT
	io.WriteString(pw, "exit;\n")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shell did not return to the prompt after the interrupt")
	}
	pw.Close()
	if errw.Len() != 0 {
		t.Errorf("a cancelled statement printed an error: %q", errw.String())
	}
}
