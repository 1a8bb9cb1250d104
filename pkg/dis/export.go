package dis

import (
	"math/big"

	"github.com/pk-tools/pk/pkg/pickle"
)

// ArgRepr returns the argument of o as pickletools prints it ("" for none).
func ArgRepr(o *pickle.Op) string { return string(appendArgRepr(nil, o)) }

// StrRepr returns Python's repr of a str held as UTF-8 (surrogates kept).
func StrRepr(s string) string { return string(appendStrRepr(nil, s)) }

// BytesRepr returns Python's repr of a bytes value.
func BytesRepr(s string) string { return string(appendBytesRepr(nil, s)) }

// FloatRepr returns Python's repr of a float.
func FloatRepr(f float64) string { return string(appendFloatRepr(nil, f)) }

// BigRepr returns the decimal form of a big int (as Python prints it).
func BigRepr(v *big.Int) string { return string(appendBig(nil, v)) }
