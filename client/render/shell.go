package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/chzyer/readline"
)

// Prompts of the interactive shell, as Flink's SQL client shows them.
const (
	Prompt         = "Flink SQL> "
	PromptContinue = "> "
)

// Shell is the interactive SQL prompt. It reads lines until one ends a
// statement with ';' (outside quotes and comments), runs the statement and
// renders its output as a tableau as it arrives.
//
// An interrupt while a statement runs cancels it and returns to the prompt;
// Ctrl-C at an empty prompt, Ctrl-D, "quit;" and "exit;" end the shell.
type Shell struct {
	Exec ExecFunc
	// Out and Err receive results and errors; nil means os.Stdout/os.Stderr.
	Out, Err io.Writer
	// In is read for input; nil means os.Stdin.
	In io.ReadCloser
	// HistoryFile keeps entered statements across runs; "" keeps none.
	HistoryFile string
	// Interrupts delivers the SIGINTs that arrive while a statement runs
	// (the terminal is not in raw mode then); nil means none.
	Interrupts <-chan os.Signal
	// Loc is the zone TIMESTAMP_LTZ values are shown in; nil means UTC.
	Loc *time.Location
}

// Run reads and executes statements until the user leaves or ctx ends.
func (sh *Shell) Run(ctx context.Context) error {
	out, errw := sh.Out, sh.Err
	if out == nil {
		out = os.Stdout
	}
	if errw == nil {
		errw = os.Stderr
	}
	cfg := &readline.Config{
		Prompt:                 Prompt,
		HistoryFile:            sh.HistoryFile,
		DisableAutoSaveHistory: true,
		InterruptPrompt:        "^C",
		Stdout:                 out,
		Stderr:                 errw,
	}
	if sh.In != nil {
		cfg.Stdin = sh.In
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return err
	}
	defer rl.Close()

	var buf []string
	for ctx.Err() == nil {
		if len(buf) == 0 {
			rl.SetPrompt(Prompt)
		} else {
			rl.SetPrompt(PromptContinue)
		}
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			if len(buf) == 0 && strings.TrimSpace(line) == "" {
				return nil
			}
			buf = buf[:0]
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		if len(buf) == 0 && strings.TrimSpace(line) == "" {
			continue
		}
		buf = append(buf, line)
		stmt := strings.Join(buf, "\n")
		if !StatementComplete(stmt) {
			continue
		}
		buf = buf[:0]
		if sh.HistoryFile != "" {
			rl.SaveHistory(stmt)
		}
		if isQuit(stmt) {
			return nil
		}
		sh.runOne(ctx, stmt, out, errw)
	}
	return nil
}

// runOne executes one statement; an interrupt cancels it.
func (sh *Shell) runOne(ctx context.Context, stmt string, out, errw io.Writer) {
	drain(sh.Interrupts) // a Ctrl-C typed before this statement is stale
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &Printer{Format: FormatTableau, Out: out, Loc: sh.Loc, Spaced: true}
	done := make(chan error, 1)
	go func() { done <- RunScript(qctx, sh.Exec, stmt, p) }()
	var err error
	select {
	case err = <-done:
	case <-sh.Interrupts:
		cancel()
		err = <-done
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(errw, ErrorLine(err))
		fmt.Fprintln(errw)
	}
}

func drain(c <-chan os.Signal) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// isQuit reports whether stmt is "quit;" or "exit;".
func isQuit(stmt string) bool {
	s := strings.TrimSpace(stmt)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	return strings.EqualFold(s, "quit") || strings.EqualFold(s, "exit")
}

// StatementComplete reports whether text ends with a statement terminator:
// its last significant character is a ';' that is not inside a string
// literal ('...'), a quoted identifier ("..." or `...`) or a comment
// (-- to end of line, /* ... */). A doubled quote inside a literal is an
// escaped quote. The ';'s inside EXECUTE STATEMENT SET BEGIN ... END (and
// EXPLAIN STATEMENT SET ...) separate its INSERTs: only the ';' after END
// ends such a statement.
func StatementComplete(text string) bool {
	const (
		normal = iota
		single
		double
		backtick
		lineComment
		blockComment
	)
	state, semi := normal, false
	// words are the upper-cased words of the statement being read, and
	// word the one under way.
	var words []string
	word := -1
	for i := 0; i < len(text); i++ {
		c := text[i]
		next := byte(0)
		if i+1 < len(text) {
			next = text[i+1]
		}
		if state == normal && isWordByte(c) {
			if word < 0 {
				word = i
			}
			semi = false
			continue
		}
		if word >= 0 {
			words = append(words, strings.ToUpper(text[word:i]))
			word = -1
		}
		switch state {
		case normal:
			switch {
			case c == ';':
				if statementSetOpen(words) {
					semi = false
					words = append(words, ";")
					continue
				}
				semi, words = true, words[:0]
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			case c == '-' && next == '-':
				state = lineComment
				i++
			case c == '/' && next == '*':
				state = blockComment
				i++
			case c == '\'':
				state, semi = single, false
			case c == '"':
				state, semi = double, false
			case c == '`':
				state, semi = backtick, false
			default:
				semi = false
			}
		case single, double, backtick:
			q := byte('\'')
			if state == double {
				q = '"'
			} else if state == backtick {
				q = '`'
			}
			if c == q {
				if next == q {
					i++
				} else {
					state = normal
				}
			}
		case lineComment:
			if c == '\n' {
				state = normal
			}
		case blockComment:
			if c == '*' && next == '/' {
				state = normal
				i++
			}
		}
	}
	return semi && (state == normal || state == lineComment)
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// statementSetOpen reports whether the words of a statement up to a ';'
// are those of a statement set that END has not closed yet: EXECUTE
// STATEMENT SET or EXPLAIN [details] [EXECUTE] STATEMENT SET, and a last
// word other than END.
func statementSetOpen(words []string) bool {
	if len(words) == 0 || words[len(words)-1] == "END" {
		return false
	}
	if words[0] != "EXECUTE" && words[0] != "EXPLAIN" {
		return false
	}
	for i := 1; i+1 < len(words) && i < 8; i++ {
		switch {
		case words[i] == "STATEMENT" && words[i+1] == "SET":
			return true
		case words[i] == "BEGIN" || words[i] == ";" || words[0] == "EXECUTE" && i > 1:
			return false
		}
	}
	return false
}
