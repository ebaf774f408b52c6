package shuffle

import (
	"encoding/binary"
	"fmt"
)

// fbTable is a flatbuffers table inside b whose every read is bounds-checked.
// The Arrow IPC checks (ipccheck.go) walk a message from the network with it
// before arrow-go, which trusts every offset and length, reads the same
// bytes: a value it returns is the one arrow-go will read, and a read that
// would leave b is an error instead of a panic or a wild allocation.
//
// Slots are numbered as in the .fbs schema (the vtable entry of slot i is at
// byte 4+2i of the vtable).
//
// NB: positions are computed in int from offsets below 1<<32, never in the
// wrapping 32-bit arithmetic of the flatbuffers runtime, and must land
// inside b (whose length is far below 1<<31). So an offset cannot wrap round
// to point backwards: every table reached through an offset lies after the
// offset, and a walk over nested tables always ends.
type fbTable struct {
	b     []byte
	pos   int // start of the table: its signed offset to the vtable
	vt    int // start of the vtable
	vtLen int // size of the vtable in bytes
}

// fbRoot returns the root table of the flatbuffer b.
func fbRoot(b []byte) (fbTable, error) {
	if len(b) < 4 {
		return fbTable{}, fmt.Errorf("flatbuffer of %d bytes has no root offset", len(b))
	}
	return fbTableAt(b, int(binary.LittleEndian.Uint32(b)))
}

// fbTableAt returns the table at pos, checking that it and its vtable lie
// in b.
func fbTableAt(b []byte, pos int) (fbTable, error) {
	if pos < 0 || pos > len(b)-4 {
		return fbTable{}, fmt.Errorf("flatbuffer table at byte %d outside the %d-byte buffer", pos, len(b))
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	if vt < 0 || vt > len(b)-4 {
		return fbTable{}, fmt.Errorf("flatbuffer table at byte %d has its vtable at byte %d, outside the %d-byte buffer", pos, vt, len(b))
	}
	vtLen := int(binary.LittleEndian.Uint16(b[vt:]))
	if vtLen < 4 || vtLen%2 != 0 || vtLen > len(b)-vt {
		return fbTable{}, fmt.Errorf("flatbuffer table at byte %d has a %d-byte vtable at byte %d, in a %d-byte buffer", pos, vtLen, vt, len(b))
	}
	return fbTable{b: b, pos: pos, vt: vt, vtLen: vtLen}, nil
}

// field returns the position of slot's inline value of size bytes, or
// ok=false when the table leaves the slot out (its default applies).
func (t fbTable) field(slot, size int) (pos int, ok bool, err error) {
	e := 4 + 2*slot
	if e+2 > t.vtLen {
		return 0, false, nil
	}
	o := int(binary.LittleEndian.Uint16(t.b[t.vt+e:]))
	if o == 0 {
		return 0, false, nil
	}
	pos = t.pos + o
	if pos > len(t.b)-size {
		return 0, false, fmt.Errorf("flatbuffer field %d of the table at byte %d lies outside the %d-byte buffer", slot, t.pos, len(t.b))
	}
	return pos, true, nil
}

// uint reads slot as an unsigned little-endian integer of size 1, 2, 4 or
// 8 bytes; def when the slot is left out.
func (t fbTable) uint(slot, size int, def uint64) (uint64, error) {
	p, ok, err := t.field(slot, size)
	if !ok || err != nil {
		return def, err
	}
	switch size {
	case 1:
		return uint64(t.b[p]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(t.b[p:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(t.b[p:])), nil
	}
	return binary.LittleEndian.Uint64(t.b[p:]), nil
}

func (t fbTable) int16(slot int, def int16) (int16, error) {
	v, err := t.uint(slot, 2, uint64(uint16(def)))
	return int16(v), err
}

func (t fbTable) int32(slot int, def int32) (int32, error) {
	v, err := t.uint(slot, 4, uint64(uint32(def)))
	return int32(v), err
}

func (t fbTable) int64(slot int, def int64) (int64, error) {
	v, err := t.uint(slot, 8, uint64(def))
	return int64(v), err
}

func (t fbTable) uint8(slot int, def uint8) (uint8, error) {
	v, err := t.uint(slot, 1, uint64(def))
	return uint8(v), err
}

// ref follows slot's offset field and returns where it points, checking
// that at least min bytes follow there.
func (t fbTable) ref(slot, min int) (pos int, ok bool, err error) {
	p, ok, err := t.field(slot, 4)
	if !ok || err != nil {
		return 0, ok, err
	}
	return fbIndirect(t.b, p, min)
}

// fbIndirect follows the unsigned offset stored at p.
func fbIndirect(b []byte, p, min int) (int, bool, error) {
	off := int64(binary.LittleEndian.Uint32(b[p:]))
	if off > int64(len(b)-p-min) {
		return 0, false, fmt.Errorf("flatbuffer offset at byte %d points %d bytes on, outside the %d-byte buffer", p, off, len(b))
	}
	return p + int(off), true, nil
}

// table returns the table slot refers to, ok=false when it is left out.
func (t fbTable) table(slot int) (fbTable, bool, error) {
	p, ok, err := t.ref(slot, 4)
	if !ok || err != nil {
		return fbTable{}, ok, err
	}
	sub, err := fbTableAt(t.b, p)
	return sub, err == nil, err
}

// vector returns the start and length of slot's vector of elem-byte
// elements, checking that all of it lies in b. A left-out vector is empty.
func (t fbTable) vector(slot, elem int) (start, n int, err error) {
	p, ok, err := t.ref(slot, 4)
	if !ok || err != nil {
		return 0, 0, err
	}
	n64 := int64(binary.LittleEndian.Uint32(t.b[p:]))
	start = p + 4
	if n64 > int64(len(t.b)-start)/int64(elem) {
		return 0, 0, fmt.Errorf("flatbuffer vector at byte %d claims %d elements of %d bytes, more than the %d-byte buffer holds", p, n64, elem, len(t.b))
	}
	return start, int(n64), nil
}

// bytes returns slot's string or byte vector, nil when left out.
func (t fbTable) bytes(slot int) ([]byte, error) {
	start, n, err := t.vector(slot, 1)
	if err != nil || n == 0 {
		return nil, err
	}
	return t.b[start : start+n], nil
}

// elem returns table i of a vector of tables that starts at start.
func (t fbTable) elem(start, i int) (fbTable, error) {
	p, _, err := fbIndirect(t.b, start+4*i, 4)
	if err != nil {
		return fbTable{}, err
	}
	return fbTableAt(t.b, p)
}
