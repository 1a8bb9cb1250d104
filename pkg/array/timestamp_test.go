package array

import (
	"testing"
	"time"
)

// TestFormatTimes: str(pandas.Timestamp) and str(pandas.Timedelta) of
// int64 nanosecond counts, as pandas 1.5.3 prints them (the expected text
// is pandas' own, printed by /usr/bin/python3).
func TestFormatTimes(t *testing.T) {
	_, zones := time.LoadLocation("Europe/Paris")
	for _, c := range []struct {
		v                 int64
		naive, utc, paris string
	}{
		{1609459200000000000, "2021-01-01 00:00:00", "2021-01-01 00:00:00+00:00", "2021-01-01 01:00:00+01:00"},
		{1609556645500000000, "2021-01-02 03:04:05.500000", "2021-01-02 03:04:05.500000+00:00", "2021-01-02 04:04:05.500000+01:00"},
		{1609556645000001000, "2021-01-02 03:04:05.000001", "2021-01-02 03:04:05.000001+00:00", "2021-01-02 04:04:05.000001+01:00"},
		{1609556645000000001, "2021-01-02 03:04:05.000000001", "2021-01-02 03:04:05.000000001+00:00", "2021-01-02 04:04:05.000000001+01:00"},
		{-9223372036854775807, "1677-09-21 00:12:43.145224193", "1677-09-21 00:12:43.145224193+00:00", ""},
		{-1, "1969-12-31 23:59:59.999999999", "1969-12-31 23:59:59.999999999+00:00", ""},
		{0, "1970-01-01 00:00:00", "1970-01-01 00:00:00+00:00", ""},
		{NaT, "NaT", "NaT", "NaT"},
	} {
		if s, ok := FormatTimestamp(c.v, "[ns]", nil); !ok || s != c.naive {
			t.Errorf("%d: %q, want %q", c.v, s, c.naive)
		}
		if s, ok := FormatTimestamp(c.v, "[ns]", &TZ{Name: "UTC"}); !ok || s != c.utc {
			t.Errorf("%d UTC: %q, want %q", c.v, s, c.utc)
		}
		if c.paris != "" && zones == nil {
			if s, ok := FormatTimestamp(c.v, "[ns]", &TZ{Name: "Europe/Paris"}); !ok || s != c.paris {
				t.Errorf("%d Europe/Paris: %q, want %q", c.v, s, c.paris)
			}
		}
	}
	if s, _ := FormatTimestamp(1609459200, "[s]", &TZ{Offset: -3 * 3600}); s != "2020-12-31 21:00:00-03:00" {
		t.Errorf("[s] UTC-03:00: %q", s)
	}
	if s, ok := FormatTimestamp(5, "[D]", nil); ok || s != "5[D]" {
		t.Errorf("[D]: %q %v", s, ok)
	}
	for _, c := range []struct {
		v    int64
		want string
	}{
		{86400000000000, "1 days 00:00:00"},
		{7200000000000, "0 days 02:00:00"},
		{-7200000000000, "-1 days +22:00:00"},
		{500000000, "0 days 00:00:00.500000"},
		{1, "0 days 00:00:00.000000001"},
		{-1, "-1 days +23:59:59.999999999"},
		{1000, "0 days 00:00:00.000001"},
		{0, "0 days 00:00:00"},
		{-864000001000000, "-11 days +23:59:59.999000"},
		{9223372036854775807, "106751 days 23:47:16.854775807"},
		{-9223372036854775807, "-106752 days +00:12:43.145224193"},
		{NaT, "NaT"},
	} {
		if s, ok := FormatTimedelta(c.v, "[ns]"); !ok || s != c.want {
			t.Errorf("%d: %q, want %q", c.v, s, c.want)
		}
	}
	if (&TZ{Offset: -3*3600 - 1800}).String() != "UTC-03:30" || (&TZ{Name: "Europe/Paris"}).String() != "Europe/Paris" {
		t.Error("TZ.String")
	}
}
