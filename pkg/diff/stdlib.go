package diff

import (
	"fmt"
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// stdlibRepr renders a call that makes a datetime, date, time, timedelta,
// timezone or Decimal object as Python's repr shows the object:
// datetime.datetime(2020, 1, 2, 0, 0). The first three pickle as their
// class and their state's bytes (a tzinfo after them), a timedelta as
// its days, seconds and microseconds, a timezone as its offset and name,
// a Decimal as its str. ok is false for any
// other node, and for a state Python would refuse (its length, a month
// 13): the call is then shown as any other.
func stdlibRepr(n *canon.Node) (string, bool) {
	if n.Kind() != pickle.KindCall {
		return "", false
	}
	// (the callable's own name first, read in place: a node for it and
	// its qualified name made for every call compared cost 0.15 s of a
	// million nested calls)
	r := n.Ref().Func()
	if r.IsNil() || r.Kind() != pickle.KindGlobal {
		return "", false
	}
	switch r.Name() {
	case "datetime", "date", "time", "timedelta", "timezone", "Decimal":
	default:
		return "", false
	}
	f := n.Func()
	if f == nil || f.Kind() != pickle.KindGlobal {
		return "", false
	}
	name := f.Value()
	switch name {
	case "datetime.datetime", "datetime.date", "datetime.time", "datetime.timedelta", "datetime.timezone", "decimal.Decimal":
	default:
		return "", false
	}
	// (the name first: Ops makes a node an operation, a million for an
	// object built a million times; HasOps counts none)
	args := n.Args()
	if n.Kwargs() != nil || n.Ref().HasOps() || args == nil || args.Kind() != pickle.KindTuple {
		return "", false
	}
	items := args.Items()
	switch name {
	case "decimal.Decimal":
		// Decimal(str): repr Decimal('1.10') (decimal.Decimal pickles
		// the str of its value)
		if len(items) != 1 || items[0].Kind() != pickle.KindStr || int64(len(items[0].Str())) != items[0].Len() {
			return "", false
		}
		return "Decimal(" + leafValue(items[0]) + ")", true
	case "datetime.timedelta":
		return timedeltaRepr(items)
	case "datetime.timezone":
		// timezone(offset[, name]): repr as Python's
		if len(items) == 0 || len(items) > 2 {
			return "", false
		}
		off, ok := stdlibRepr(items[0])
		if !ok || !strings.HasPrefix(off, "datetime.timedelta(") {
			return "", false
		}
		if len(items) == 1 {
			if off == "datetime.timedelta(0)" {
				return "datetime.timezone.utc", true
			}
			return "datetime.timezone(" + off + ")", true
		}
		if items[1].Kind() != pickle.KindStr {
			return "", false
		}
		return "datetime.timezone(" + off + ", " + leafValue(items[1]) + ")", true
	}
	if len(items) == 0 || len(items) > 2 || items[0].Kind() != pickle.KindBytes {
		return "", false
	}
	s := items[0].Str()
	if int64(len(s)) != items[0].Len() {
		return "", false
	}
	var fields []int // what repr prints, trailing zeros of the time dropped
	fold := false
	switch {
	case name == "datetime.date" && len(s) == 4 && len(items) == 1:
		fields = []int{int(s[0])<<8 | int(s[1]), int(s[2]), int(s[3])}
	case name == "datetime.datetime" && len(s) == 10:
		fold = s[2]&0x80 != 0
		fields = []int{int(s[0])<<8 | int(s[1]), int(s[2] & 0x7f), int(s[3]), int(s[4]), int(s[5]), int(s[6]), int(s[7])<<16 | int(s[8])<<8 | int(s[9])}
	case name == "datetime.time" && len(s) == 6:
		fold = s[0]&0x80 != 0
		fields = []int{int(s[0] & 0x7f), int(s[1]), int(s[2]), int(s[3])<<16 | int(s[4])<<8 | int(s[5])}
	default:
		return "", false
	}
	if !validTime(name, fields) {
		return "", false
	}
	if name != "datetime.date" {
		for k := 0; k < 2 && fields[len(fields)-1] == 0; k++ {
			fields = fields[:len(fields)-1]
		}
	}
	parts := make([]string, len(fields))
	for i, v := range fields {
		parts[i] = fmt.Sprint(v)
	}
	if len(items) == 2 && items[1].Kind() != pickle.KindNone {
		parts = append(parts, "tzinfo="+leafValue(items[1]))
	}
	if fold {
		parts = append(parts, "fold=1")
	}
	return name + "(" + strings.Join(parts, ", ") + ")", true
}

// validTime reports whether the fields of a date, datetime or time state
// (year, month, day, then hour, minute, second, microsecond) are in the
// ranges Python accepts.
func validTime(name string, f []int) bool {
	t := f
	if name != "datetime.time" {
		y, m, d := f[0], f[1], f[2]
		if y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
			return false
		}
		t = f[3:]
	}
	return len(t) == 0 || t[0] < 24 && t[1] < 60 && t[2] < 60 && t[3] < 1000000
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// timedeltaRepr renders timedelta(days, seconds, microseconds) as Python's
// repr does: datetime.timedelta(days=1, seconds=5), datetime.timedelta(0).
func timedeltaRepr(items []*canon.Node) (string, bool) {
	if len(items) != 3 {
		return "", false
	}
	var parts []string
	for i, unit := range []string{"days", "seconds", "microseconds"} {
		x := items[i]
		if x.Kind() != pickle.KindInt || x.IsBig() {
			return "", false
		}
		v := x.Int().Int64()
		if (i == 1 && (v < 0 || v >= 86400)) || (i == 2 && (v < 0 || v >= 1000000)) || (i == 0 && (v < -999999999 || v > 999999999)) {
			return "", false
		}
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", unit, v))
		}
	}
	if len(parts) == 0 {
		return "datetime.timedelta(0)", true
	}
	return "datetime.timedelta(" + strings.Join(parts, ", ") + ")", true
}
