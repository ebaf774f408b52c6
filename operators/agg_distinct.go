package operators

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// distinctView is Flink's distinct view of an argument (for COUNT(DISTINCT
// a, b), a tuple of them) under one FILTER: per group, how many live rows
// hold each distinct non-NULL value.
// A value's contribution enters the view's aggregates when its count goes
// from 0 to 1 and leaves when it goes back to 0, so COUNT(DISTINCT x),
// SUM(DISTINCT x) and the others see each value once. Every aggregate of
// the same argument and filter shares the view.
//
// The counts live in the state backend, one ValueState entry per (group,
// value) keyed by the group's key then the value, so a group with a
// million distinct values costs a point read and write per row, never a
// rewrite of the whole set. A window aggregate also lists each (group,
// window)'s values in a MultisetState, so that firing the window can drop
// them.
type distinctView struct {
	args   []int // the argument columns: one, or COUNT(DISTINCT a, b)'s
	filter int
	enc    *types.RowEncoder // encoder of the argument columns
	counts *state.ValueState
	values *state.MultisetState // window aggregates only
	ttlMs  int64                // group aggregates: entries older than this are gone
	cols   []arrow.Array

	keyBuf, valBuf, cntBuf []byte
}

// buildViews gives each DISTINCT aggregate of calls its view, in order of
// first use: aggs[j].view is the index in the result.
func buildViews(calls []jobgraph.AggCall, aggs []*aggFunc, in types.Schema) []*distinctView {
	var views []*distinctView
	for j, c := range calls {
		if !c.Distinct || c.Arg < 0 {
			continue
		}
		filter := -1
		if c.Filtered {
			filter = c.Filter
		}
		args := append([]int{c.Arg}, c.More...)
		for i, v := range views {
			if slices.Equal(v.args, args) && v.filter == filter {
				aggs[j].view = i
			}
		}
		if aggs[j].view < 0 {
			aggs[j].view = len(views)
			var s types.Schema
			for _, a := range args {
				s = append(s, in[a])
			}
			views = append(views, &distinctView{args: args, filter: filter, enc: types.NewRowEncoder(s),
				cols: make([]arrow.Array, len(args))})
		}
	}
	return views
}

// openViews opens the views' state in be; window says whether the views
// also list their values.
func openViews(views []*distinctView, be state.Namespace, window bool, ttlMs int64) {
	for i, v := range views {
		v.counts = be.Value(fmt.Sprintf("distinct%d", i))
		v.ttlMs = ttlMs
		if window {
			v.values = be.Multiset(fmt.Sprintf("distinctvals%d", i))
		}
	}
}

// step applies row i (added, or with retract taken away) to the view of
// the group whose state key is key, and returns +1 when its value entered
// the view, -1 when it left, 0 otherwise (a NULL, a row the filter drops,
// a value already or still counted, a retraction of a value not counted).
// nowMs is the processing time with a TTL.
func (v *distinctView) step(cols []arrow.Array, i int, retract bool, kg int, key []byte, nowMs int64) (int, error) {
	for j, a := range v.args {
		if cols[a].IsNull(i) {
			return 0, nil
		}
		v.cols[j] = cols[a]
	}
	if !passesFilter(cols, v.filter, i) {
		return 0, nil
	}
	// NB: no argument is NULL, so the row's null bitmap is all zeros.
	v.valBuf = v.enc.AppendRow(v.valBuf[:0], v.cols, i)
	val := v.valBuf
	v.keyBuf = append(append(binary.AppendUvarint(v.keyBuf[:0], uint64(len(key))), key...), val...)
	stored, found, err := v.counts.Get(kg, v.keyBuf)
	if err != nil {
		return 0, err
	}
	var n int64
	if found {
		if n, err = v.decodeCount(stored, nowMs); err != nil {
			return 0, err
		}
	}
	switch {
	case retract && n == 0:
		return 0, nil
	case retract && n == 1:
		return -1, v.counts.Delete(kg, v.keyBuf)
	case retract:
		n--
	default:
		n++
	}
	v.cntBuf = v.cntBuf[:0]
	if v.ttlMs > 0 {
		v.cntBuf = binary.AppendUvarint(v.cntBuf, uint64(nowMs))
	}
	v.cntBuf = binary.AppendVarint(v.cntBuf, n)
	if err := v.counts.Put(kg, v.keyBuf, v.cntBuf); err != nil {
		return 0, err
	}
	if retract || n != 1 {
		return 0, nil
	}
	if v.values != nil {
		if err := v.values.Add(kg, key, val, 1); err != nil {
			return 0, err
		}
	}
	return 1, nil
}

// decodeCount reads a count entry; one written a TTL ago or more counts 0,
// as its group's state has expired with it.
func (v *distinctView) decodeCount(src []byte, nowMs int64) (int64, error) {
	if v.ttlMs > 0 {
		written, w := binary.Uvarint(src)
		if w <= 0 {
			return 0, errBadAggState
		}
		if nowMs-int64(written) >= v.ttlMs {
			return 0, nil
		}
		src = src[w:]
	}
	n, w := binary.Varint(src)
	if w <= 0 || w != len(src) {
		return 0, errBadAggState
	}
	return n, nil
}

// drop removes the values of a window aggregate's group (state key key)
// from the view.
func (v *distinctView) drop(kg int, key []byte) error {
	rows, err := v.values.Get(kg, key)
	if err != nil {
		return err
	}
	vals := make([][]byte, len(rows))
	for i, r := range rows {
		vals[i] = append([]byte(nil), r.Row...)
	}
	for _, val := range vals {
		v.keyBuf = append(append(binary.AppendUvarint(v.keyBuf[:0], uint64(len(key))), key...), val...)
		if err := v.counts.Delete(kg, v.keyBuf); err != nil {
			return err
		}
		if err := v.values.Add(kg, key, val, -1); err != nil {
			return err
		}
	}
	return nil
}
