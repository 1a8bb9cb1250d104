package array

// pandas' datetimes and timedeltas as pandas shows one: str(Timestamp)
// and str(Timedelta) of pandas 1.5 ("2021-01-01 00:00:00+00:00",
// "0 days 02:00:00", "NaT" for the int64 minimum), read from the int64
// count of a unit (a DatetimeArray's or TimedeltaArray's datetime64 or
// timedelta64 ndarray).

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// NaT is the int64 pandas and numpy read as Not a Time.
const NaT = math.MinInt64

// unitNanos is the nanoseconds of a datetime64/timedelta64 unit ("[ns]").
func unitNanos(unit string) (int64, bool) {
	switch unit {
	case "[ns]":
		return 1, true
	case "[us]":
		return 1e3, true
	case "[ms]":
		return 1e6, true
	case "[s]":
		return 1e9, true
	}
	return 0, false
}

// split is a count v of unit as whole seconds and nanoseconds after them
// (0 <= ns < 1e9), or false when the unit is not read or the seconds
// overflow.
func split(v int64, unit string) (sec, ns int64, ok bool) {
	u, ok := unitNanos(unit)
	if !ok {
		return 0, 0, false
	}
	per := int64(1e9) / u // counts a second
	sec, rem := v/per, v%per
	if rem < 0 {
		sec, rem = sec-1, rem+per
	}
	return sec, rem * u, true
}

// fraction is pandas' fractional seconds: nothing, .ffffff (microseconds)
// or .fffffffff (nanoseconds), by the finest non-zero digit.
func fraction(ns int64) string {
	switch {
	case ns == 0:
		return ""
	case ns%1000 != 0:
		return fmt.Sprintf(".%09d", ns)
	}
	return fmt.Sprintf(".%06d", ns/1000)
}

// TZ is the time zone of a tz-aware datetime column (pandas'
// DatetimeTZDtype's tz): UTC, a fixed offset, or a named zone (pytz,
// zoneinfo), read from its pickled form.
type TZ struct {
	Name   string // an IANA name ("Europe/Paris"), "" for a fixed offset
	Offset int    // a fixed offset, seconds east of UTC
}

// location is the zone as Go's time package has it; false when a named
// zone is not in the system's zone database.
func (z *TZ) location() (*time.Location, bool) {
	switch z.Name {
	case "":
		return time.FixedZone("", z.Offset), true
	case "UTC":
		return time.UTC, true
	}
	l, err := time.LoadLocation(z.Name)
	return l, err == nil
}

// FormatTimestamp is str(pandas.Timestamp) of a count v of unit (a
// datetime64 element), in zone tz (nil: naive): "2021-01-02 03:04:05.500000",
// "2021-01-01 00:00:00+00:00", "NaT". ok is false when the unit is not
// read, or a named zone is not in the system's zone database (the value
// is then shown in UTC).
func FormatTimestamp(v int64, unit string, tz *TZ) (string, bool) {
	if v == NaT {
		return "NaT", true
	}
	sec, ns, ok := split(v, unit)
	if !ok {
		return strconv.FormatInt(v, 10) + unit, false
	}
	t := time.Unix(sec, ns).UTC()
	if tz == nil {
		return t.Format("2006-01-02 15:04:05") + fraction(ns), true
	}
	loc, ok := tz.location()
	if !ok {
		loc = time.UTC
	}
	t = t.In(loc)
	return t.Format("2006-01-02 15:04:05") + fraction(ns) + t.Format("-07:00"), ok
}

// FormatTimedelta is str(pandas.Timedelta) of a count v of unit (a
// timedelta64 element): "1 days 00:00:00", "-1 days +22:00:00",
// "0 days 00:00:00.500000", "NaT".
func FormatTimedelta(v int64, unit string) (string, bool) {
	if v == NaT {
		return "NaT", true
	}
	sec, ns, ok := split(v, unit)
	if !ok {
		return strconv.FormatInt(v, 10) + unit, false
	}
	days, rest := sec/86400, sec%86400
	if rest < 0 {
		days, rest = days-1, rest+86400
	}
	sign := ""
	if days < 0 {
		sign = "+"
	}
	return fmt.Sprintf("%d days %s%02d:%02d:%02d%s", days, sign, rest/3600, rest/60%60, rest%60, fraction(ns)), true
}

// String is the zone as pandas names it in a dtype: its name, or
// UTC+HH:MM for a fixed offset.
func (z *TZ) String() string {
	if z == nil {
		return ""
	}
	if z.Name != "" {
		return z.Name
	}
	o, sign := z.Offset, '+'
	if o < 0 {
		o, sign = -o, '-'
	}
	return fmt.Sprintf("UTC%c%02d:%02d", sign, o/3600, o/60%60)
}

// FormatTime is a datetime64 or timedelta64 element (its int64 count v,
// of dtype descr: "<M8[ns]", "<m8[us]") as pandas shows it in a column:
// FormatTimestamp in zone tz (nil: naive) or FormatTimedelta. false when
// descr is neither, or its unit or zone is not read.
func FormatTime(descr string, v int64, tz *TZ) (string, bool) {
	d, ok := ParseDType(descr)
	if !ok || d.Size != 8 {
		return "", false
	}
	switch d.Kind {
	case 'M':
		return FormatTimestamp(v, d.Unit, tz)
	case 'm':
		return FormatTimedelta(v, d.Unit)
	}
	return "", false
}

// FormatTime is element v of a DatetimeArray or TimedeltaArray as pandas
// shows it (FormatTime), false for other arrays.
func (e *Extension) FormatTime(v int64) (string, bool) {
	if e.Kind != 't' {
		return "", false
	}
	if e.Delta {
		return FormatTimedelta(v, e.Unit)
	}
	return FormatTimestamp(v, e.Unit, e.TZ)
}
