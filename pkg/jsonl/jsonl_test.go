package jsonl

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

func TestValues(t *testing.T) {
	bi, _ := new(big.Int).SetString("-1267650600228229401496703205377", 10)
	for _, c := range []struct{ got, want string }{
		{string(AppendFloat(nil, 1)), `1.0`},
		{string(AppendFloat(nil, math.Copysign(0, -1))), `-0.0`},
		{string(AppendFloat(nil, 0.1)), `0.1`},
		{string(AppendFloat(nil, 1e16)), `1e+16`},
		{string(AppendFloat(nil, math.NaN())), `{"float":"nan"}`},
		{string(AppendFloat(nil, math.Inf(-1))), `{"float":"-inf"}`},
		{string(AppendBigInt(nil, bi)), `-1267650600228229401496703205377`},
		{string(AppendString(nil, "a\"\\\n\x01é\u2028")), `"a\"\\\n\u0001é\u2028"`},
		{string(AppendString(nil, "\xed\xa0\x80x")), `"\ud800x"`},
		{string(AppendString(nil, "\xff")), `"\ufffd"`},
		{string(AppendBytes(nil, "bytes", "ab", 2)), `{"bytes":"6162"}`},
		{string(AppendBytes(nil, "bytearray", "ab", 10)), `{"bytearray":"6162","len":10,"shortened":true}`},
		{string(AppendShortStr(nil, "ab\xc3", 10)), `{"str":"ab","len":10,"shortened":true}`},
		{string(AppendBigInt(nil, new(big.Int).Lsh(big.NewInt(-3), 20000))), `{"int_hex":"-c` + strings.Repeat("0", 63) + `","bits":20002,"shortened":true}`},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
		if !json.Valid([]byte(c.got)) {
			t.Errorf("%s is not JSON", c.got)
		}
	}
}

func TestErrorRecord(t *testing.T) {
	pe := &pickle.Error{File: "f", Offset: 7, Reason: "bad"}
	r := ErrorRecord("f", &input.NotPickleError{File: "f", Err: pe})
	b, _ := json.Marshal(r)
	if string(b) != `{"file":"f","error":"`+r.Error+`","offset":7}` {
		t.Errorf("got %s", b)
	}
	b, _ = json.Marshal(ErrorRecord("f", errors.New("is a directory")))
	if string(b) != `{"file":"f","error":"is a directory","offset":null}` {
		t.Errorf("got %s", b)
	}
}
