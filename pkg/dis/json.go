package dis

import (
	"fmt"
	"strconv"

	"github.com/pk-tools/pk/pkg/pickle"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// jsonLine writes {"stream":i,"pos":offset,"op":"NAME","arg":<typed>} with
// the typed argument encoding of the pickletools oracle files
// (testdata/README.md): null, {"int":"<decimal>"}, {"bool":b},
// {"float":"<16 hex digits of the IEEE bits>"}, {"str":"<hex of UTF-8,
// surrogatepass>"}, {"bytes":"<hex>"}, {"bytearray":"<hex>"}. Python 2
// STRING/BINSTRING/SHORT_BINSTRING give their raw bytes. A shortened
// payload adds "len" (the full length) and "shortened":true, and its hex
// holds only the first bytes. MEMOIZE lines add "memo":<index stored>.
func (d *disassembler) jsonLine(o *pickle.Op, info *pickle.OpInfo, memoIdx int64, memoize bool) {
	b := d.out
	b = append(b, `{"stream":`...)
	b = strconv.AppendInt(b, int64(d.stream), 10)
	b = append(b, `,"pos":`...)
	b = strconv.AppendInt(b, o.Offset, 10)
	b = append(b, `,"op":"`...)
	b = append(b, info.Name...)
	b = append(b, `","arg":`...)
	b = appendJSONArg(b, o)
	if memoize {
		b = append(b, `,"memo":`...)
		b = strconv.AppendInt(b, memoIdx, 10)
	}
	d.out = append(b, '}', '\n')
}

func appendHex(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, hexDigits[s[i]>>4], hexDigits[s[i]&15])
	}
	return b
}

func appendTyped(b []byte, tag string, s string, bl *pickle.Blob) []byte {
	b = append(b, `{"`...)
	b = append(b, tag...)
	b = append(b, `":"`...)
	if bl != nil {
		b = appendHex(b, bl.Prefix)
		b = append(b, `","len":`...)
		b = strconv.AppendInt(b, bl.Len, 10)
		return append(b, `,"shortened":true}`...)
	}
	b = appendHex(b, s)
	return append(b, `"}`...)
}

func appendJSONArg(b []byte, o *pickle.Op) []byte {
	switch o.Info().Arg {
	case pickle.ArgNone:
		return append(b, "null"...)
	case pickle.ArgFloatNL, pickle.ArgFloat8:
		b = append(b, `{"float":"`...)
		u := uint64(o.Int)
		for sh := 60; sh >= 0; sh -= 4 {
			b = append(b, hexDigits[u>>uint(sh)&15])
		}
		return append(b, `"}`...)
	case pickle.ArgStringNL, pickle.ArgString1, pickle.ArgString4,
		pickle.ArgBytes1, pickle.ArgBytes4, pickle.ArgBytes8:
		return appendTyped(b, "bytes", o.Str, o.Blob)
	case pickle.ArgBytearray8:
		return appendTyped(b, "bytearray", o.Str, o.Blob)
	case pickle.ArgUnicodeNL, pickle.ArgUnicode1, pickle.ArgUnicode4, pickle.ArgUnicode8, pickle.ArgStringNLNoEsc:
		return appendTyped(b, "str", o.Str, o.Blob)
	case pickle.ArgStringNLPair:
		b = append(b, `{"str":"`...)
		b = appendHex(b, o.Str)
		b = append(b, '2', '0')
		b = appendHex(b, o.Name)
		return append(b, `"}`...)
	}
	if o.IsBool {
		if o.Int != 0 {
			return append(b, `{"bool":true}`...)
		}
		return append(b, `{"bool":false}`...)
	}
	b = append(b, `{"int":"`...)
	if o.Big != nil {
		b = o.Big.Append(b, 10)
	} else {
		b = strconv.AppendInt(b, o.Int, 10)
	}
	return append(b, `"}`...)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c < 0x20 || c >= 0x80:
			// keep the line ASCII and valid whatever the bytes are
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
