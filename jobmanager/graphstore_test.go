package jobmanager

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// TestRecordJobKeepsLargeGraphInAFile: a graph refused inline is written
// to checkpoint storage and recorded by reference, and loadGraph reads it
// back; a record still refused then fails with a user error naming the
// limit, and leaves no file behind.
func TestRecordJobKeepsLargeGraphInAFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	jm := &JobManager{}
	graph, err := proto.Marshal(&braidv1.JobGraph{JobId: "j", Name: strings.Repeat("n", 1000)})
	if err != nil {
		t.Fatal(err)
	}
	var stored []*metastore.JobRecord
	put := func(tooLarge string) func(*metastore.JobRecord) error {
		return func(rec *metastore.JobRecord) error {
			if rec.GraphRef == nil {
				return &metastore.RecordTooLargeError{JobID: rec.ID, What: metastore.PartGraph, Size: 300 << 10, Limit: metastore.MaxInlineGraphBytes}
			}
			if tooLarge != "" {
				return &metastore.RecordTooLargeError{JobID: rec.ID, What: tooLarge, Size: 2 << 20, Limit: metastore.MaxJobRecordBytes}
			}
			c := *rec
			stored = append(stored, &c)
			return nil
		}
	}
	if err := jm.recordJob(ctx, &metastore.JobRecord{ID: "j", Graph: graph}, dir, put("")); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 || stored[0].GraphRef == nil || stored[0].Graph != nil {
		t.Fatalf("stored %+v", stored)
	}
	pg, err := loadGraph(ctx, stored[0])
	if err != nil || pg.JobId != "j" || len(pg.Name) != 1000 {
		t.Fatalf("graph read back: %v, %v", pg, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "job-graph-*.zst"))
	if len(files) != 1 {
		t.Fatalf("graph files %v", files)
	}
	// A damaged file is refused.
	if err := os.WriteFile(files[0], []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGraph(ctx, stored[0]); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged graph file: %v", err)
	}
	os.Remove(files[0])

	err = jm.recordJob(ctx, &metastore.JobRecord{ID: "j", Graph: graph}, dir, put(metastore.PartRecord))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Fatalf("record over the limit: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "job-graph-*.zst")); len(files) != 0 {
		t.Fatalf("graph file of a refused record left behind: %v", files)
	}
}
