package metastore

import (
	"fmt"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// Limits on what a job record holds in etcd, which refuses requests over
// 1.5 MiB by default and holds every revision of a value until compaction.
const (
	// MaxInlineGraphBytes bounds a job graph kept in its record, after
	// compression. A larger graph must be kept elsewhere, with a GraphRef
	// in the record (the job manager keeps it in the job's checkpoint
	// storage).
	MaxInlineGraphBytes = 256 << 10
	// MaxJobRecordBytes bounds the encoded spec of a job record, with its
	// compressed graph, placements and SQL text.
	MaxJobRecordBytes = 1 << 20
	// MaxSQLBytes is how much of a job's SQL text its record keeps; longer
	// text is cut (see JobRecord.SQL).
	MaxSQLBytes = 64 << 10
	// maxGraphBytes bounds a decompressed graph or placement list, so a
	// damaged value cannot exhaust memory.
	maxGraphBytes = 256 << 20
)

// GraphRef locates a job graph that is kept outside etcd: a file of the
// zstd-compressed, proto-encoded braidv1.JobGraph, written by the job
// manager in the job's checkpoint storage.
type GraphRef struct {
	// URI is the file's checkpoint storage URI, base#key (see
	// checkpoint.Storage.Resolve).
	URI string `json:"uri"`
	// Size and CRC32C (Castagnoli) are the file's, checked when it is read.
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

// The parts of a job record a RecordTooLargeError names.
const (
	PartGraph  = "job graph"
	PartRecord = "job record"
)

// RecordTooLargeError is returned by PutJobAs and SetJobGraphAs when part
// of a job record is over its limit; nothing was written.
type RecordTooLargeError struct {
	JobID string
	// What is PartGraph (the compressed graph, over MaxInlineGraphBytes:
	// keep it elsewhere and pass a GraphRef) or PartRecord (the whole
	// spec, over MaxJobRecordBytes).
	What        string
	Size, Limit int
}

func (e *RecordTooLargeError) Error() string {
	return fmt.Sprintf("job %s: the %s is %d bytes, over the limit of %d bytes that etcd may hold", e.JobID, e.What, e.Size, e.Limit)
}

// NB: one encoder and decoder for the process; EncodeAll and DecodeAll are
// safe for concurrent use.
var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxGraphBytes), zstd.WithDecoderMaxWindow(maxGraphBytes))
)

// CompressGraph returns b compressed with zstd, the encoding of graphs
// and placements in job records and of the files GraphRef names.
func CompressGraph(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return zenc.EncodeAll(b, nil)
}

// DecompressGraph inverts CompressGraph. It refuses output over 256 MiB.
func DecompressGraph(z []byte) ([]byte, error) {
	if len(z) == 0 {
		return nil, nil
	}
	b, err := zdec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("metastore: decompress: %w", err)
	}
	return b, nil
}

// cutSQL returns sql cut to at most MaxSQLBytes, at a character boundary,
// ending with a note that it was cut; sql itself when it fits. It is
// idempotent: a cut text fits.
func cutSQL(sql string) string {
	if len(sql) <= MaxSQLBytes {
		return sql
	}
	note := fmt.Sprintf("\n-- [cut: the statement has %d bytes; the job record keeps the first ones]", len(sql))
	n := MaxSQLBytes - len(note)
	for n > 0 && !utf8.RuneStart(sql[n]) {
		n--
	}
	return sql[:n] + note
}
