package jobmanager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/braidflow/braid/checkpoint"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// A job's graph is recorded in its etcd record, compressed, unless it is
// too large for etcd compressed (over metastore.MaxInlineGraphBytes, as
// the graph of an INSERT of thousands of literal rows is): then it is
// written to a file in the job's checkpoint storage, which standby job
// managers reach too, and the record holds a metastore.GraphRef to it.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordJob writes rec with put, first with its graph inline and, when
// that is too large, again with the graph in a file of storageURI. put is
// PutJobAs or SetJobGraphAs. The error of a record that cannot be stored
// at all names the limit, for the user.
func (jm *JobManager) recordJob(ctx context.Context, rec *metastore.JobRecord, storageURI string, put func(*metastore.JobRecord) error) error {
	err := put(rec)
	var big *metastore.RecordTooLargeError
	if errors.As(err, &big) && big.What == metastore.PartGraph {
		ref, ferr := writeGraphFile(ctx, storageURI, rec.Graph)
		if ferr != nil {
			return fmt.Errorf("job %s: keep its graph of %d bytes (compressed) in checkpoint storage: %w", rec.ID, big.Size, ferr)
		}
		inline := rec.Graph
		rec.Graph, rec.GraphRef = nil, ref
		err = put(rec)
		rec.Graph = inline
		if errors.As(err, &big) || errors.Is(err, metastore.ErrFenced) {
			// NB: nothing was written: the file is referenced by nobody.
			_ = deleteGraphFile(ctx, ref)
		}
	}
	if errors.As(err, &big) {
		return status.Errorf(codes.ResourceExhausted, "job %s cannot be recorded: its %s is %d bytes, over the limit of %d bytes (etcd holds job records small); use fewer subtasks or split the statement", rec.ID, big.What, big.Size, big.Limit)
	}
	return err
}

// graphFileKey names a graph file by its content, so rewriting the same
// graph (a rescale back) reuses the file.
func graphFileKey(z []byte) string {
	return fmt.Sprintf("job-graph-%08x.zst", crc32.Checksum(z, castagnoli))
}

// writeGraphFile writes graph, compressed, to checkpoint storage at uri
// and returns its reference.
func writeGraphFile(ctx context.Context, uri string, graph []byte) (*metastore.GraphRef, error) {
	st, err := checkpoint.OpenStorage(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	z := metastore.CompressGraph(graph)
	key := graphFileKey(z)
	size, crc, err := st.Put(ctx, key, bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return &metastore.GraphRef{URI: st.Resolve(key), Size: size, CRC32C: crc}, nil
}

// readGraphFile reads the graph ref names and checks its size and
// checksum.
func readGraphFile(ctx context.Context, ref *metastore.GraphRef) ([]byte, error) {
	base, key, err := checkpoint.Split(ref.URI)
	if err != nil {
		return nil, err
	}
	st, err := checkpoint.OpenStorage(ctx, base)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	r, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	z, err := io.ReadAll(io.LimitReader(r, ref.Size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(z)) != ref.Size || crc32.Checksum(z, castagnoli) != ref.CRC32C {
		return nil, fmt.Errorf("job graph file %s: %d bytes, want %d with checksum %08x: damaged", ref.URI, len(z), ref.Size, ref.CRC32C)
	}
	return metastore.DecompressGraph(z)
}

// deleteGraphFile deletes the file ref names; a missing file is not an
// error.
func deleteGraphFile(ctx context.Context, ref *metastore.GraphRef) error {
	base, key, err := checkpoint.Split(ref.URI)
	if err != nil {
		return err
	}
	st, err := checkpoint.OpenStorage(ctx, base)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Delete(ctx, key)
}

// loadGraph returns rec's graph, from its record or its file.
func loadGraph(ctx context.Context, rec *metastore.JobRecord) (*braidv1.JobGraph, error) {
	b := rec.Graph
	if rec.GraphRef != nil {
		var err error
		if b, err = readGraphFile(ctx, rec.GraphRef); err != nil {
			return nil, err
		}
	}
	var pg braidv1.JobGraph
	if err := proto.Unmarshal(b, &pg); err != nil {
		return nil, err
	}
	return &pg, nil
}

// loadGraphRetrying is loadGraph that tries a graph file twice more, a
// second apart, while checkpoint storage fails (an S3 outage should not
// fail a job a job manager resumes); ctx bounds the waits.
func loadGraphRetrying(ctx context.Context, rec *metastore.JobRecord) (*braidv1.JobGraph, error) {
	for try := 0; ; try++ {
		pg, err := loadGraph(ctx, rec)
		var se *checkpoint.StorageError
		if err == nil || try == 2 || !errors.As(err, &se) || errors.Is(err, fs.ErrNotExist) {
			return pg, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
	}
}
