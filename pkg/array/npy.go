package array

import (
	"math"
	"strconv"
	"strings"
)

// NpyDescr reads a .npy header's type string ("<f8", "|b1", "<U5",
// "<M8[ns]") into the canonical descr and item size; structured descrs
// (lists) are not read.
func NpyDescr(s string) (Descr, bool) {
	var no Descr
	if len(s) < 2 {
		return no, false
	}
	bo := s[:1]
	if bo != "<" && bo != ">" && bo != "|" {
		return no, false
	}
	rest := s[1:]
	unit := ""
	if j := strings.IndexByte(rest, '['); j >= 0 {
		unit, rest = rest[j:], rest[:j]
		if !strings.HasSuffix(unit, "]") || len(unit) < 3 {
			return no, false
		}
	}
	if len(rest) < 2 || rest[0] < 'A' || rest[0] > 'z' {
		return no, false
	}
	kind := rest[:1]
	num, err := strconv.ParseInt(rest[1:], 10, 32)
	if err != nil || num < 0 || kind == "O" || kind == "V" && unit != "" {
		return no, false
	}
	if (unit != "") != (kind == "M" || kind == "m") {
		return no, false
	}
	size := num
	if kind == "U" {
		size *= 4
	}
	if unit == "[generic]" {
		unit = ""
	}
	return Descr{Descr: bo + kind + strconv.FormatInt(num, 10) + unit, Size: size}, true
}

// NpyFields reads a .npy header's structured descr, a list of (name,
// descr[, shape]) fields laid out one after the other (numpy writes the
// padding of other layouts as fields named ”), into the canonical descr of
// §2.1: the same as the pickled packed dtype.
func NpyFields(v any, depth int) (Descr, bool) {
	var no Descr
	fields, ok := v.([]any)
	if !ok || depth > MaxDtypeDepth || len(fields) == 0 {
		return no, false
	}
	var b strings.Builder
	b.WriteString("{")
	off := int64(0)
	n := 0
	for _, f := range fields {
		t, ok := f.([]any)
		if !ok || len(t) < 2 || len(t) > 3 {
			return no, false
		}
		name, ok := t[0].(string)
		if !ok {
			return no, false // (title, name) pairs: not read
		}
		var sub Descr
		switch x := t[1].(type) {
		case string:
			sub, ok = NpyDescr(x)
		case []any:
			sub, ok = NpyFields(x, depth+1)
		default:
			ok = false
		}
		if !ok {
			return no, false
		}
		size := sub.Size
		if len(t) == 3 {
			var shape []int64
			switch s := t[2].(type) {
			case int64:
				shape = []int64{s}
			case []any:
				for _, d := range s {
					k, ok := d.(int64)
					if !ok || k < 0 {
						return no, false
					}
					shape = append(shape, k)
				}
			default:
				return no, false
			}
			total, ok := NBytes(shape, sub.Size)
			if !ok {
				return no, false
			}
			sub.Descr, size = "("+sub.Descr+")"+DescrShape(shape), total
		}
		if name == "" && strings.HasPrefix(sub.Descr, "|V") && len(t) == 2 {
			off += size // padding
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		b.WriteString(strconv.Quote(name))
		b.WriteString(":")
		b.WriteString(sub.Descr)
		b.WriteString("@")
		b.WriteString(strconv.FormatInt(off, 10))
		off += size
		if off > math.MaxInt32 {
			return no, false
		}
	}
	b.WriteString("}")
	b.WriteString(strconv.FormatInt(off, 10))
	return Descr{Descr: b.String(), Size: off}, true
}
