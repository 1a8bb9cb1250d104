package array

import "github.com/pk-tools/pk/pkg/pickle"

// StoreGraph is a plain pickle.Store as the recognizer reads it: nothing
// is replaced or folded, a global names itself ("std:numpy.dtype"), and
// protocol 0-2's _codecs.encode(s, 'latin1') (how those protocols write
// bytes) is of kind bytes, though its payload is the str's: Header.Data is
// unchecked, and pkg/trace reads headers only.
type StoreGraph struct{ S *pickle.Store }

func (g StoreGraph) Res(n pickle.ID) pickle.ID      { return n }
func (g StoreGraph) Op(n pickle.ID) pickle.Opcode   { return g.S.Op(n) }
func (g StoreGraph) Func(n pickle.ID) pickle.ID     { return g.S.Func(n) }
func (g StoreGraph) Args(n pickle.ID) pickle.ID     { return g.S.Args(n) }
func (g StoreGraph) Kwargs(n pickle.ID) pickle.ID   { return g.S.Kwargs(n) }
func (g StoreGraph) Folded(n pickle.ID) bool        { return false }
func (g StoreGraph) Special(n pickle.ID) byte       { return 0 }
func (g StoreGraph) Muts(n pickle.ID) []pickle.SMut { return g.S.Muts(n) }
func (g StoreGraph) NMuts(n pickle.ID) int          { return g.S.NMuts(n) }
func (g StoreGraph) Items(n pickle.ID) []pickle.ID  { return g.S.Items(n) }
func (g StoreGraph) NItems(n pickle.ID) int         { return g.S.NItems(n) }
func (g StoreGraph) Blob(n pickle.ID) *pickle.Blob  { return g.S.Blob(n) }
func (g StoreGraph) PayloadLen(n pickle.ID) int64   { return g.S.PayloadLen(n) }

// Text is a node's text; of protocol 0-2's _codecs.encode(s, 'latin1')
// (Kind bytes), its bytes: s's characters, each one byte ("" when one is
// not latin-1, which encoding would refuse). A datetime dtype's unit is
// such bytes (b'D').
func (g StoreGraph) Text(n pickle.ID) string {
	if n >= 0 && g.S.Kind(n) == pickle.KindCall && g.Kind(n) == pickle.KindBytes {
		a, _ := g.Tuple(g.S.Args(n))
		s, _ := g.Str(a[0])
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xff {
				return ""
			}
			b = append(b, byte(r))
		}
		return string(b)
	}
	return g.S.Str(n)
}

func (g StoreGraph) Kind(n pickle.ID) pickle.Kind {
	k := g.S.Kind(n)
	if k == pickle.KindCall && g.S.NMuts(n) == 0 && g.Callable(g.S.Func(n)) == "std:_codecs.encode" {
		if a, ok := g.Tuple(g.S.Args(n)); ok && len(a) == 2 {
			if _, ok := g.Str(a[0]); ok {
				if e, ok := g.Str(a[1]); ok && e == "latin1" {
					return pickle.KindBytes
				}
			}
		}
	}
	return k
}

func (g StoreGraph) ok(n pickle.ID, k pickle.Kind) bool {
	return n >= 0 && g.S.Kind(n) == k && g.S.NMuts(n) == 0
}

func (g StoreGraph) Callable(fn pickle.ID) string {
	if mod, name, ok := g.Global(fn); ok {
		return "std:" + mod + "." + name
	}
	return ""
}

func (g StoreGraph) Tuple(n pickle.ID) ([]pickle.ID, bool) {
	if !g.ok(n, pickle.KindTuple) {
		return nil, false
	}
	return g.S.Items(n), true
}

func (g StoreGraph) Str(n pickle.ID) (string, bool) {
	if !g.ok(n, pickle.KindStr) || g.S.Blob(n) != nil {
		return "", false
	}
	return g.S.Str(n), true
}

func (g StoreGraph) Small(n pickle.ID) (int64, bool) {
	if n < 0 || g.S.NMuts(n) > 0 || (g.S.Kind(n) != pickle.KindInt && g.S.Kind(n) != pickle.KindBool) || g.S.IsBig(n) {
		return 0, false
	}
	return g.S.Int(n), true
}

func (g StoreGraph) Global(n pickle.ID) (string, string, bool) {
	if !g.ok(n, pickle.KindGlobal) || g.S.Has(n, pickle.FlagDynamic|pickle.FlagDotted) {
		return "", "", false
	}
	return g.S.Str(n), g.S.Name(n), true
}

func (g StoreGraph) IsNone(n pickle.ID) bool { return n >= 0 && g.S.Kind(n) == pickle.KindNone }

// numpyNames are numpy's names of its type strings without byte order.
var numpyNames = map[string]string{
	"f2": "float16", "f4": "float32", "f8": "float64", "f16": "float128", "c8": "complex64", "c16": "complex128", "c32": "complex256",
	"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
	"b1": "bool", "O8": "object", "O4": "object",
}

// Name is how numpy names a descr in a label: float64, bool, int32,
// datetime64[ns]; a big-endian, str, bytes or structured descr as written
// (">f4", "<U5", "|S3").
func Name(descr string) string {
	if len(descr) < 2 || descr[0] == '>' {
		return descr
	}
	if n, ok := numpyNames[descr[1:]]; ok {
		return n
	}
	for _, k := range []string{"M8", "m8"} {
		if len(descr) > 3 && descr[1:3] == k {
			w := "datetime64"
			if k == "m8" {
				w = "timedelta64"
			}
			return w + descr[3:]
		}
	}
	return descr
}
