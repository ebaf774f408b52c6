// Package render prints what a Braid session produces: status lines, query
// results as a Flink-style tableau, as a materialized TSV or as the raw
// changelog, and job listings. It also holds the interactive SQL shell and
// the script runner the braid command uses.
package render

import (
	"fmt"
	"io"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// Result renders one query result. Batch is called for each batch as it
// arrives (the batch stays owned by the caller); then End when the result
// is complete, or Cancelled when the user stopped it. Each returns the first
// write error.
type Result interface {
	Batch(b types.Batch) error
	End() error
	Cancelled() error
}

// Format names how results are shown.
type Format string

const (
	FormatTableau   Format = "tableau"
	FormatTSV       Format = "tsv"
	FormatChangelog Format = "changelog"
)

// ParseFormat checks a format name given on the command line.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTableau, FormatTSV, FormatChangelog:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want tableau, tsv or changelog)", s)
}

// NewResult starts a result in format f on w; the tableau and changelog
// formats print their header at once.
func NewResult(f Format, w io.Writer, cols []client.ResultColumn, loc *time.Location) (Result, error) {
	switch f {
	case FormatTableau:
		return NewTableau(w, cols, loc, 0), nil
	case FormatTSV:
		return NewTSV(w, cols, loc), nil
	case FormatChangelog:
		return NewChangelog(w, cols, loc), nil
	}
	return nil, fmt.Errorf("unknown format %q", f)
}
