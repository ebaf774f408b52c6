package connectors

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/braidflow/braid/types"
)

// encodeBatch writes b as one Arrow IPC stream (the schema message, one
// record batch, end of stream) under schema, which must have b's column types.
// The bytes are freshly allocated: a produced record keeps them until acked.
// sizeHint pre-sizes the buffer (the previous message's size works well).
func encodeBatch(schema *arrow.Schema, b types.Batch, sizeHint int) ([]byte, error) {
	rec := b.Rec
	if rec.Schema() != schema {
		// Relabel the columns with the table's names and type metadata; the
		// arrays themselves are shared, not copied.
		rec = array.NewRecordBatch(schema, b.Rec.Columns(), b.Rec.NumRows())
		defer rec.Release()
	}
	buf := bytes.NewBuffer(make([]byte, 0, sizeHint))
	w := ipc.NewWriter(buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeBatch reads one IPC stream written by encodeBatch and checks that its
// columns have the types of want. The caller owns the returned batch.
func decodeBatch(v []byte, want *arrow.Schema) (types.Batch, error) {
	r, err := ipc.NewReader(bytes.NewReader(v))
	if err != nil {
		return types.Batch{}, err
	}
	defer r.Release()
	if !r.Next() {
		if err := r.Err(); err != nil {
			return types.Batch{}, err
		}
		return types.Batch{}, fmt.Errorf("IPC stream holds no record batch")
	}
	rec := r.RecordBatch()
	if err := checkColumns(rec.Schema(), want); err != nil {
		return types.Batch{}, err
	}
	if err := checkCompositeColumns(rec, want); err != nil {
		return types.Batch{}, err
	}
	rec.Retain()
	return types.Batch{Rec: rec}, nil
}

// checkColumns reports whether got has the column count and types of want.
func checkColumns(got, want *arrow.Schema) error {
	if got.NumFields() != want.NumFields() {
		return fmt.Errorf("batch has %d columns, table has %d", got.NumFields()-1, want.NumFields()-1)
	}
	for i := 0; i < want.NumFields(); i++ {
		g, w := got.Field(i), want.Field(i)
		if !arrow.TypeEqual(g.Type, w.Type) {
			return fmt.Errorf("column %d (%s) is %s, table has %s", i+1, w.Name, g.Type, w.Type)
		}
	}
	return nil
}

// checkCompositeColumns checks every value of the composite columns of rec
// (ARRAY, MAP, MULTISET, ROW: encoded in Binary cells) against the type in
// want's braid.type metadata, so a corrupt log record fails here rather
// than in an expression.
func checkCompositeColumns(rec arrow.RecordBatch, want *arrow.Schema) error {
	for i := 0; i < want.NumFields()-1; i++ {
		ts, ok := want.Field(i).Metadata.GetValue("braid.type")
		if !ok || !strings.ContainsRune(ts, '<') {
			continue
		}
		t, err := types.ParseType(ts)
		if err != nil || !t.IsComposite() {
			continue
		}
		col, ok := rec.Column(i).(*array.Binary)
		if !ok {
			continue
		}
		for r := 0; r < col.Len(); r++ {
			if col.IsNull(r) {
				continue
			}
			if err := types.ValidateComposite(t, col.Value(r)); err != nil {
				return fmt.Errorf("column %d (%s), row %d: %w", i+1, want.Field(i).Name, r, err)
			}
		}
	}
	return nil
}
