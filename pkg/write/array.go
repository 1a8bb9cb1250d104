package write

// Arrays and torch storages of the pk-canon/2 view (docs/canonical-form-2.md
// §2), written in one canonical form chosen by the output protocol
// (docs/pk-canon.md, "Arrays"):
//
//   - protocols 2-4, and object arrays at every protocol: numpy's own
//     protocol 2-4 form, numpy.core.multiarray._reconstruct(numpy.ndarray,
//     (0,), b'b') REDUCE, then BUILD (1, shape, dtype, is_fortran, data),
//     data the element bytes (a list of the items for objects);
//   - protocol 5, other arrays: numpy's own protocol 5 form,
//     numpy.core.numeric._frombuffer(buf, dtype, shape, order) REDUCE, buf
//     the element bytes in-band as BYTEARRAY8 (or the out-of-band buffer the
//     input had: NEXT_BUFFER);
//   - the dtype: numpy.dtype(typestr, False, True) REDUCE, BUILD (version,
//     byteorder, subarray, names, fields, elsize, alignment, flags[,
//     metadata]) as numpy 1.24's dtype.__reduce__ gives it, made from the
//     canonical descr alone (whichever numpy wrote the input);
//   - a torch storage pickled by pickle.dump: torch.storage._load_from_bytes(b)
//     REDUCE, b the legacy torch.save file of that one storage, written
//     canonically (storage key "0").
//
// The element bytes are written afresh for every array, never shared through
// the memo: numpy's __setstate__ keeps a reference to a bytes object and the
// array stays writable, so two arrays sharing one bytes object would share
// memory. The dtype and the globals are shared by value.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// numpy's names, as numpy 1 writes them (numpy 2 loads them too).
const (
	npMultiarray = "numpy.core.multiarray"
	npNumeric    = "numpy.core.numeric"
)

// dtypeSpec is a canonical descr (docs/canonical-form-2.md §2.1) parsed.
type dtypeSpec struct {
	descr string
	bo    byte   // '<', '>', '|'
	kind  byte   // numpy's kind letter ('f', 'i', 'U', 'V', ...)
	num   int64  // the type string's digits (characters for U)
	unit  string // datetimes: "ns", "25s", "" (generic)
	size  int64  // bytes per element
	// structured
	fields  []dtypeField
	aligned bool
	// subarray
	base  *dtypeSpec
	shape []int64
}

type dtypeField struct {
	name, title string
	titled      bool
	d           *dtypeSpec
	off         int64
}

// parseDescr parses a canonical descr; depth bounds nesting.
func parseDescr(s string) (*dtypeSpec, error) {
	d, rest, err := parseDescrAt(s, 0)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("dtype descr %q: trailing %q", s, rest)
	}
	return d, nil
}

func parseDescrAt(s string, depth int) (*dtypeSpec, string, error) {
	bad := func() (*dtypeSpec, string, error) {
		return nil, "", fmt.Errorf("dtype descr %q cannot be written back", s)
	}
	if depth > 40 || s == "" {
		return bad()
	}
	start := s
	switch s[0] {
	case '(':
		base, rest, err := parseDescrAt(s[1:], depth+1)
		if err != nil || !strings.HasPrefix(rest, ")[") {
			return bad()
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return bad()
		}
		var shape []int64
		if dims := rest[2:end]; dims != "" {
			for _, x := range strings.Split(dims, ",") {
				v, err := strconv.ParseInt(x, 10, 64)
				if err != nil || v < 0 {
					return bad()
				}
				shape = append(shape, v)
			}
		}
		n, ok := canonNBytes(shape, base.size)
		if !ok {
			return bad()
		}
		rest = rest[end+1:]
		return &dtypeSpec{descr: start[:len(start)-len(rest)], bo: '|', kind: 'V', num: n, size: n, base: base, shape: shape}, rest, nil
	case '{':
		d := &dtypeSpec{bo: '|', kind: 'V'}
		rest := s[1:]
		for !strings.HasPrefix(rest, "}") {
			if len(d.fields) > 0 {
				if !strings.HasPrefix(rest, ",") {
					return bad()
				}
				rest = rest[1:]
			}
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return bad()
			}
			name, _ := strconv.Unquote(q)
			rest = rest[len(q):]
			if !strings.HasPrefix(rest, ":") {
				return bad()
			}
			fd, r2, err := parseDescrAt(rest[1:], depth+1)
			if err != nil || !strings.HasPrefix(r2, "@") {
				return bad()
			}
			rest = r2[1:]
			i := 0
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			off, err := strconv.ParseInt(rest[:i], 10, 64)
			if err != nil {
				return bad()
			}
			rest = rest[i:]
			f := dtypeField{name: name, d: fd, off: off}
			if strings.HasPrefix(rest, "#") {
				q, err := strconv.QuotedPrefix(rest[1:])
				if err != nil {
					return bad()
				}
				f.title, _ = strconv.Unquote(q)
				f.titled = true
				rest = rest[1+len(q):]
			}
			d.fields = append(d.fields, f)
		}
		rest = rest[1:]
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		size, err := strconv.ParseInt(rest[:i], 10, 64)
		if err != nil {
			return bad()
		}
		rest = rest[i:]
		if strings.HasPrefix(rest, "a") {
			d.aligned = true
			rest = rest[1:]
		}
		d.size, d.num = size, size
		d.descr = start[:len(start)-len(rest)]
		return d, rest, nil
	case '<', '>', '|':
		if len(s) < 3 {
			return bad()
		}
		d := &dtypeSpec{bo: s[0], kind: s[1]}
		if d.kind < 'A' || d.kind > 'z' {
			return bad()
		}
		i := 2
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		num, err := strconv.ParseInt(s[2:i], 10, 64)
		if err != nil || num < 0 {
			return bad()
		}
		d.num, d.size = num, num
		if d.kind == 'U' {
			d.size = 4 * num
		}
		rest := s[i:]
		if d.kind == 'M' || d.kind == 'm' {
			if strings.HasPrefix(rest, "[") {
				end := strings.IndexByte(rest, ']')
				if end < 0 {
					return bad()
				}
				d.unit = rest[1:end]
				rest = rest[end+1:]
			}
		}
		d.descr = s[:len(s)-len(rest)]
		return d, rest, nil
	}
	return bad()
}

func canonNBytes(shape []int64, item int64) (int64, bool) {
	n := item
	for _, d := range shape {
		if d != 0 && n > (1<<62)/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// numpy's dtype flags (ndarraytypes.h).
const (
	npItemRefcount = 0x01
	npListPickle   = 0x02
	npNeedsInit    = 0x08
	npNeedsPyAPI   = 0x10
	npFromFields   = npNeedsInit | npListPickle | npItemRefcount | npNeedsPyAPI
	npAlignedStrct = 0x80
	npObjectFlags  = 0x3f
)

// flags are the dtype's flags as numpy computes them.
func (d *dtypeSpec) flags() int64 {
	switch {
	case d.base != nil:
		return d.base.flags()
	case d.fields != nil || d.kind == 'V' && d.descr[0] == '{':
		f := int64(npNeedsPyAPI)
		for _, x := range d.fields {
			f |= x.d.flags() & npFromFields
		}
		if d.aligned {
			f |= npAlignedStrct
		}
		return f
	case d.kind == 'O':
		return npObjectFlags
	case d.kind == 'U':
		return npNeedsInit
	}
	return 0
}

// alignment is the dtype's alignment as numpy computes it.
func (d *dtypeSpec) alignment() int64 {
	switch {
	case d.base != nil:
		return d.base.alignment()
	case d.descr[0] == '{':
		if !d.aligned {
			return 1
		}
		a := int64(1)
		for _, x := range d.fields {
			a = max(a, x.d.alignment())
		}
		return a
	}
	switch d.kind {
	case 'S', 'V', 'b':
		return 1
	case 'U':
		return 4
	case 'c':
		return max(d.size/2, 1)
	case 'O':
		return 8
	}
	return max(d.size, 1)
}

// flexible kinds carry their element size (and alignment) in the state.
func (d *dtypeSpec) flexible() bool {
	return d.base != nil || d.descr[0] == '{' || d.kind == 'S' || d.kind == 'U' || d.kind == 'V'
}

// dtype pushes the numpy.dtype of d, shared by value (a dtype is
// immutable; numpy shares its builtin ones).
func (e *emitter) dtype(n canon.Ref, d *dtypeSpec) error {
	k := e.keys.intern(vkey{'D', d.descr})
	if idx, ok := e.memo.get(k); ok {
		return e.fetch(n, k, int(idx))
	}
	e.out.boundary()
	if err := e.global(n, "numpy", "dtype", false); err != nil {
		return err
	}
	typestr := string(d.kind) + strconv.FormatInt(d.num, 10)
	if d.kind == 'M' || d.kind == 'm' {
		typestr = string(d.kind) + "8"
	}
	if err := e.str(n, typestr); err != nil {
		return err
	}
	e.op(pickle.NEWFALSE)
	e.op(pickle.NEWTRUE)
	e.op(pickle.TUPLE3)
	e.op(pickle.REDUCE)
	// the state
	e.op(pickle.MARK)
	version := int64(3)
	if d.kind == 'M' || d.kind == 'm' {
		version = 4
	}
	e.smallInt(version)
	if err := e.str(n, string(d.bo)); err != nil {
		return err
	}
	if d.base != nil {
		if err := e.dtype(n, d.base); err != nil {
			return err
		}
		if err := e.intTuple(d.shape); err != nil {
			return err
		}
		e.op(pickle.TUPLE2)
	} else {
		e.op(pickle.NONE)
	}
	if d.descr[0] == '{' {
		if len(d.fields) > 3 {
			e.op(pickle.MARK)
		}
		for _, f := range d.fields {
			if err := e.str(n, f.name); err != nil {
				return err
			}
		}
		closeTuple(e, len(d.fields))
		// fields: name -> (dtype, offset[, title]); a title is a key too
		type ent struct {
			key string
			f   dtypeField
		}
		var ents []ent
		for _, f := range d.fields {
			ents = append(ents, ent{f.name, f})
			if f.titled {
				ents = append(ents, ent{f.title, f})
			}
		}
		e.op(pickle.EMPTY_DICT)
		if err := e.batches(len(ents), pickle.SETITEM, pickle.SETITEMS, func(i int) error {
			f := ents[i].f
			if err := e.str(n, ents[i].key); err != nil {
				return err
			}
			if err := e.dtype(n, f.d); err != nil {
				return err
			}
			e.smallInt(f.off)
			if f.titled {
				if err := e.str(n, f.title); err != nil {
					return err
				}
				e.op(pickle.TUPLE3)
			} else {
				e.op(pickle.TUPLE2)
			}
			return nil
		}); err != nil {
			return err
		}
	} else {
		e.op(pickle.NONE)
		e.op(pickle.NONE)
	}
	if d.flexible() {
		e.smallInt(d.size)
		e.smallInt(d.alignment())
	} else {
		e.smallInt(-1)
		e.smallInt(-1)
	}
	// flags: a C char in numpy's state (0x90 is written -112)
	e.smallInt(int64(int8(uint8(d.flags()))))
	if version == 4 {
		// (metadata, (unit, num, den, events))
		e.op(pickle.EMPTY_DICT)
		e.op(pickle.MARK)
		unit, num := d.unit, int64(1)
		if unit == "" {
			unit = "generic"
		} else {
			i := 0
			for i < len(unit) && unit[i] >= '0' && unit[i] <= '9' {
				i++
			}
			if i > 0 {
				num, _ = strconv.ParseInt(unit[:i], 10, 64)
				unit = unit[i:]
			}
		}
		if err := e.bytes(n, unit); err != nil {
			return err
		}
		e.smallInt(num)
		e.smallInt(1)
		e.smallInt(1)
		e.op(pickle.TUPLE)
		e.op(pickle.TUPLE2)
	}
	e.op(pickle.TUPLE)
	e.op(pickle.BUILD)
	return e.built(k)
}

// smallInt writes an int64.
func (e *emitter) smallInt(i int64) {
	if !e.int32(i) {
		var b [10]byte
		b[0] = byte(pickle.LONG1)
		b[1] = 8
		binary.LittleEndian.PutUint64(b[2:], uint64(i))
		e.out.write(b[:]...)
	}
}

// closeTuple closes a tuple of n items (after a MARK when n > 3).
func closeTuple(e *emitter, n int) {
	switch n {
	case 0:
		e.op(pickle.EMPTY_TUPLE)
	case 1:
		e.op(pickle.TUPLE1)
	case 2:
		e.op(pickle.TUPLE2)
	case 3:
		e.op(pickle.TUPLE3)
	default:
		e.op(pickle.TUPLE)
	}
}

// intTuple writes a tuple of ints (a shape).
func (e *emitter) intTuple(xs []int64) error {
	if len(xs) == 0 {
		e.op(pickle.EMPTY_TUPLE)
		return nil
	}
	if len(xs) > 3 {
		e.op(pickle.MARK)
	}
	for _, x := range xs {
		e.smallInt(x)
	}
	closeTuple(e, len(xs))
	return nil
}

// arrayNode writes an array node of the view (KindArray), its key k.
func (e *emitter) arrayNode(n canon.Ref, k key) error {
	a := n.Array()
	if a == nil {
		if f := n.Foreign(); !f.IsNil() {
			return e.foreignArray(n, k, f)
		}
		return refuse(n, "internal: an array node without its array")
	}
	d, err := parseDescr(a.Descr)
	if err != nil {
		return refuse(n, "%v", err)
	}
	if d.size != a.Item {
		return refuse(n, "dtype %s: element size %d, the array says %d", a.Descr, d.size, a.Item)
	}
	data := n.ArrayData()
	oob := a.Buffer != pickle.NoID
	if oob && e.proto < 5 {
		return refuse(n, "an array in an out-of-band buffer (NEXT_BUFFER) needs protocol 5")
	}
	if e.proto >= 5 && !a.Object() {
		return e.frombuffer(n, k, a, d, data)
	}
	// _reconstruct(ndarray, (0,), b'b'), memoized, then its BUILD
	if err := e.global(n, npMultiarray, "_reconstruct", false); err != nil {
		return err
	}
	if err := e.global(n, "numpy", "ndarray", false); err != nil {
		return err
	}
	e.smallInt(0)
	e.op(pickle.TUPLE1)
	if err := e.bytes(n, "b"); err != nil {
		return err
	}
	e.op(pickle.TUPLE3)
	e.op(pickle.REDUCE)
	if err := e.built(k); err != nil {
		return err
	}
	e.op(pickle.MARK)
	e.smallInt(1)
	if err := e.intTuple(a.Shape); err != nil {
		return err
	}
	if err := e.dtype(n, d); err != nil {
		return err
	}
	if a.Order == 'F' {
		e.op(pickle.NEWTRUE)
	} else {
		e.op(pickle.NEWFALSE)
	}
	if a.Object() {
		if data.IsNil() {
			return refuse(n, "internal: an object array without its items")
		}
		items := data.Items()
		e.out.boundary()
		e.op(pickle.EMPTY_LIST)
		if err := e.batches(len(items), pickle.APPEND, pickle.APPENDS, func(i int) error { return e.emit(items[i]) }); err != nil {
			return err
		}
	} else {
		b, err := e.elements(n, a, data)
		if err != nil {
			return err
		}
		if err := e.bytes(n, b); err != nil {
			return err
		}
	}
	e.op(pickle.TUPLE)
	e.op(pickle.BUILD)
	return nil
}

// frombuffer writes numpy's protocol 5 form of a non-object array.
func (e *emitter) frombuffer(n canon.Ref, k key, a *canon.Array, d *dtypeSpec, data canon.Ref) error {
	if err := e.global(n, npNumeric, "_frombuffer", false); err != nil {
		return err
	}
	e.op(pickle.MARK)
	if a.Buffer != pickle.NoID {
		if data.IsNil() {
			return refuse(n, "internal: an out-of-band array without its buffer")
		}
		if err := e.emit(data); err != nil {
			return err
		}
	} else {
		b, err := e.elements(n, a, data)
		if err != nil {
			return err
		}
		e.payload(n, pickle.BYTEARRAY8, 8, b)
	}
	if err := e.dtype(n, d); err != nil {
		return err
	}
	if err := e.intTuple(a.Shape); err != nil {
		return err
	}
	if err := e.str(n, string(a.Order)); err != nil {
		return err
	}
	e.op(pickle.TUPLE)
	e.op(pickle.REDUCE)
	return e.built(k)
}

// elements returns the element bytes of a non-object array: its data node's,
// or its raw part's (joblib).
func (e *emitter) elements(n canon.Ref, a *canon.Array, data canon.Ref) (string, error) {
	if a.Raw != nil {
		if e.raw == nil {
			return "", refuse(n, "internal: array bytes in a raw part pk canon was not given")
		}
		b, err := e.raw(a.Raw)
		if err != nil {
			return "", refuse(n, "array bytes: %v", err)
		}
		if int64(len(b)) != a.Raw.Len {
			return "", refuse(n, "array bytes: %d read, %d expected", len(b), a.Raw.Len)
		}
		return string(b), nil
	}
	if data.IsNil() {
		return "", refuse(n, "internal: an array without its data")
	}
	if err := e.checkPayload(data); err != nil {
		return "", err
	}
	return data.Str(), nil
}

// foreignArray writes a joblib object array: the array its nested pickle
// makes (f, a node of that pickle's view), as if it were written in this
// stream. Pure values are shared by value with this stream, as they would
// be in a pickle of the same objects; objects with an identity cannot be
// (joblib loads the nested pickle apart).
func (e *emitter) foreignArray(n canon.Ref, k key, f canon.Ref) error {
	if f.Kind() != canon.KindArray || f.Array() == nil || !f.Array().Object() {
		return refuse(n, "internal: a joblib object array whose nested pickle is not an object array")
	}
	if e.sh.gkeys == nil {
		e.sh.gkeys = map[gkey]key{}
	}
	if e.sh.globOK == nil {
		e.sh.globOK = map[[2]string]bool{}
	}
	sh := &shared{keys: &keyCache{vals: e.keys.vals}, gkeys: e.sh.gkeys, globOK: e.sh.globOK}
	sub := newEmitter(f.View(), e.proto, sh, e.out)
	sub.memo.byVal = e.memo.byVal
	sub.depth = e.depth
	sub.nbuf = e.nbuf
	sub.getattrForm = e.getattrForm
	err := sub.emit(f)
	if sub.dec != nil {
		sub.dec.stopAhead()
	}
	e.keys.vals, e.memo.byVal = sub.keys.vals, sub.memo.byVal
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			r.off = n.Offset()
		}
		return err
	}
	if len(sub.pending) > 0 {
		return refuse(n, "a joblib object array whose items wait for each other: pk canon does not write it")
	}
	return e.built(k)
}

// storageNode writes a torch storage of the view (KindStorage) that a
// pickler wrote: torch.storage._load_from_bytes(b) REDUCE, b the legacy
// torch.save file of that storage alone, written canonically (key "0").
// Storages of torch.save files are written by the torch writers (torch.go)
// from the pk-canon/1 view.
func (e *emitter) storageNode(n canon.Ref, k key) error {
	st := n.Storage()
	if st == nil {
		return refuse(n, "internal: a storage node without its storage")
	}
	if st.From == pickle.NoID {
		if e.torch != nil {
			return e.persistentStorage(n, k, st)
		}
		return refuse(n, "a torch.save storage outside a torch.save file: pk canon does not write it")
	}
	src := n.Under(st.From)
	if src.IsNil() || src.Kind() != pickle.KindBytes || src.Len() != int64(len(src.Str())) {
		return refuse(n, "internal: the nested torch.save bytes of a storage are not in memory")
	}
	b := src.Str()
	off, ln := st.Raw.Offset, st.Raw.Len
	if off < 0 || off+ln > int64(len(b)) {
		return refuse(n, "internal: a storage's bytes outside its nested torch.save file")
	}
	mod, name, ok := strings.Cut(st.Type, ".")
	if i := strings.LastIndexByte(st.Type, '.'); ok && i > 0 {
		mod, name = st.Type[:i], st.Type[i+1:]
	} else {
		return refuse(n, "torch storage type %q cannot be written as a global", st.Type)
	}
	if strings.ContainsAny(st.Type+st.Location, "\n") {
		return refuse(n, "torch storage type %q or location %q cannot be written", st.Type, st.Location)
	}
	nested := legacyStorageFile(mod, name, st.Location, st.Numel, b[off:off+ln])
	if err := e.global(n, "torch.storage", "_load_from_bytes", false); err != nil {
		return err
	}
	if err := e.bytes(n, nested); err != nil {
		return err
	}
	e.op(pickle.TUPLE1)
	e.op(pickle.REDUCE)
	return e.built(k)
}

// legacyHead is the start of every legacy torch.save file torch 1.x and 2.x
// write on a little-endian machine: the magic number, the protocol version
// 1001 and the system information, as torch pickles them (protocol 2).
const legacyHead = "\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19." + "\x80\x02M\xe9\x03." +
	"\x80\x02}q\x00(X\x10\x00\x00\x00protocol_versionq\x01M\xe9\x03X\r\x00\x00\x00little_endianq\x02\x88" +
	"X\n\x00\x00\x00type_sizesq\x03}q\x04(X\x05\x00\x00\x00shortq\x05K\x02X\x03\x00\x00\x00intq\x06K\x04" +
	"X\x04\x00\x00\x00longq\x07K\x04uu."

// legacyStorageFile is the legacy torch.save file of one storage, as
// torch.storage._load_from_bytes reads it: the head, the persistent id
// ('storage', mod.name, '0', location, numel, None), the key list ['0'],
// then the storage record (its element count, 8 bytes, and its bytes).
func legacyStorageFile(mod, name, location string, numel int64, data string) string {
	var b strings.Builder
	b.Grow(len(legacyHead) + 100 + len(data))
	b.WriteString(legacyHead)
	uni := func(s string) {
		var h [5]byte
		h[0] = byte(pickle.BINUNICODE)
		binary.LittleEndian.PutUint32(h[1:], uint32(len(s)))
		b.Write(h[:])
		b.WriteString(s)
	}
	b.WriteString("\x80\x02(")
	uni("storage")
	b.WriteString("c" + mod + "\n" + name + "\n")
	uni("0")
	uni(location)
	var ib [10]byte
	switch {
	case numel >= 0 && numel < 256:
		b.Write([]byte{byte(pickle.BININT1), byte(numel)})
	case numel >= 0 && numel < 65536:
		b.Write([]byte{byte(pickle.BININT2), byte(numel), byte(numel >> 8)})
	case numel >= 0 && numel < 1<<31:
		ib[0] = byte(pickle.BININT)
		binary.LittleEndian.PutUint32(ib[1:], uint32(numel))
		b.Write(ib[:5])
	default:
		ib[0], ib[1] = byte(pickle.LONG1), 8
		binary.LittleEndian.PutUint64(ib[2:], uint64(numel))
		b.Write(ib[:])
	}
	b.WriteString("NtQ.")
	b.WriteString("\x80\x02]")
	uni("0")
	b.WriteString("a.")
	var cnt [8]byte
	binary.LittleEndian.PutUint64(cnt[:], uint64(numel))
	b.Write(cnt[:])
	b.WriteString(data)
	return b.String()
}

// rawReader returns a function reading the bytes of a raw part of the input
// at path (data: its bytes when kept, stdin): in place when it can be
// re-read, else from the decompressed input, read once.
func rawReader(path string, data []byte) func(*input.Raw) ([]byte, error) {
	var whole []byte
	return func(raw *input.Raw) ([]byte, error) {
		if rc, err := raw.Open(); err == nil {
			defer rc.Close()
			return io.ReadAll(rc)
		}
		if whole == nil {
			var buf bytes.Buffer
			if err := copyDecompressed(path, data, 0, math.MaxInt64, &buf); err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			whole = buf.Bytes()
		}
		if raw.Offset < 0 || raw.Offset+raw.Len > int64(len(whole)) {
			return nil, errors.New("array bytes past the end of the input")
		}
		return whole[raw.Offset : raw.Offset+raw.Len], nil
	}
}
