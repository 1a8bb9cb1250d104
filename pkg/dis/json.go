package dis

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// jsonHead starts a record of dis --json (docs/json.md,
// docs/schema/dis.schema.json): {"file":NAME[,"part":I], then the caller's
// fields.
func (d *disassembler) jsonHead(b []byte) []byte {
	b = append(b, `{"file":`...)
	b = jsonl.AppendString(b, d.rd.Name())
	if d.opt.Part != nil {
		b = append(b, `,"part":`...)
		b = strconv.AppendInt(b, int64(*d.opt.Part), 10)
	}
	return b
}

// jsonLine writes {"file":F,"stream":i,"offset":n,"op":"NAME","arg":V}
// with V the argument encoded as pkg/jsonl encodes values: null, true or
// false, a number (ints of any size, finite floats), a JSON string (str),
// {"bytes":"<hex>"} (also Python 2 STRING/BINSTRING/SHORT_BINSTRING, whose
// raw bytes are given), {"bytearray":"<hex>"}; a shortened payload adds
// "len" (the full length) and "shortened":true. MEMOIZE lines add
// "memo":<index stored>.
func (d *disassembler) jsonLine(o *pickle.Op, info *pickle.OpInfo, memoIdx int64, memoize bool) {
	b := d.jsonHead(d.out)
	b = append(b, `,"stream":`...)
	b = strconv.AppendInt(b, int64(d.stream), 10)
	b = append(b, `,"offset":`...)
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

func appendTyped(b []byte, tag string, s string, bl *pickle.Blob) []byte {
	if tag == "str" {
		if bl != nil {
			return jsonl.AppendShortStr(b, bl.Prefix, bl.Len)
		}
		return jsonl.AppendString(b, s)
	}
	if bl != nil {
		return jsonl.AppendBytes(b, tag, bl.Prefix, bl.Len)
	}
	return jsonl.AppendBytes(b, tag, s, int64(len(s)))
}

func appendJSONArg(b []byte, o *pickle.Op) []byte {
	switch o.Info().Arg {
	case pickle.ArgNone:
		return append(b, "null"...)
	case pickle.ArgFloatNL, pickle.ArgFloat8:
		return jsonl.AppendFloat(b, math.Float64frombits(uint64(o.Int)))
	case pickle.ArgStringNL, pickle.ArgString1, pickle.ArgString4,
		pickle.ArgBytes1, pickle.ArgBytes4, pickle.ArgBytes8:
		return appendTyped(b, "bytes", o.Str, o.Blob)
	case pickle.ArgBytearray8:
		return appendTyped(b, "bytearray", o.Str, o.Blob)
	case pickle.ArgUnicodeNL, pickle.ArgUnicode1, pickle.ArgUnicode4, pickle.ArgUnicode8, pickle.ArgStringNLNoEsc:
		return appendTyped(b, "str", o.Str, o.Blob)
	case pickle.ArgStringNLPair:
		return jsonl.AppendString(b, o.Str+" "+o.Name)
	}
	if o.IsBool {
		return jsonl.AppendBool(b, o.Int != 0)
	}
	if o.Big != nil {
		return jsonl.AppendBigInt(b, o.Big)
	}
	return jsonl.AppendInt(b, o.Int)
}
