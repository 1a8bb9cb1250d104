package diff

import "testing"

// TestStdlibRepr: datetimes, dates, times, timedeltas and timezones are
// compared and shown as Python's repr shows them (pickled by CPython 3.11,
// protocol 4), not as their state's bytes at .__reduce__[1][0]; a value
// removed from a dict is shown so too. The wanted lines are CPython's
// repr() of each value.
func TestStdlibRepr(t *testing.T) {
	a := []byte("\x80\x04\x95\xd6\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x08datetime\x94\x8c\x08datetime\x94\x93\x94C\x0a\x07\xe4\x01\x01\x00\x00\x00\x00\x00\x00\x94\x85\x94R\x94h\x01\x8c\x04date\x94\x93\x94C\x04\x07\xe4\x02\x1d\x94\x85\x94R\x94h\x01\x8c\x04time\x94\x93\x94C\x06\x0c\x1e\x00\x00\x00\x00\x94\x85\x94R\x94h\x01\x8c\x09timedelta\x94\x93\x94K\x01K\x05K\x00\x87\x94R\x94h\x03C\x0a\x07\xe4\x01\x01\x00\x00\x00\x00\x00\x05\x94h\x01\x8c\x08timezone\x94\x93\x94h\x12K\x00M \x1cK\x00\x87\x94R\x94\x85\x94R\x94\x86\x94R\x94h\x03C\x0a\x07\xe5\x8b\x07\x01\x1e\x00\x00\x00\x00\x94\x85\x94R\x94}\x94\x8c\x01k\x94h\x03C\x0a\x07\xcf\x0c\x1f\x17;;\x00\x00\x00\x94\x85\x94R\x94se.")
	b := []byte("\x80\x04\x95\xc0\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x08datetime\x94\x8c\x08datetime\x94\x93\x94C\x0a\x07\xe4\x01\x02\x00\x00\x00\x00\x00\x00\x94\x85\x94R\x94h\x01\x8c\x04date\x94\x93\x94C\x04\x07\xe4\x03\x01\x94\x85\x94R\x94h\x01\x8c\x04time\x94\x93\x94C\x06\x0c\x1f\x05\x00\x00\x00\x94\x85\x94R\x94h\x01\x8c\x09timedelta\x94\x93\x94J\xff\xff\xff\xffK\x00K\x07\x87\x94R\x94h\x03C\x0a\x07\xe4\x01\x01\x00\x00\x00\x00\x00\x06\x94h\x01\x8c\x08timezone\x94\x93\x94h\x12K\x00K\x00K\x00\x87\x94R\x94\x85\x94R\x94\x86\x94R\x94h\x03C\x0a\x07\xe5\x0b\x07\x01\x1e\x00\x00\x00\x00\x94\x85\x94R\x94}\x94e.")
	want := []Entry{
		{Path: "root[0]", Kind: Changed, A: "datetime.datetime(2020, 1, 1, 0, 0)", B: "datetime.datetime(2020, 1, 2, 0, 0)"},
		{Path: "root[1]", Kind: Changed, A: "datetime.date(2020, 2, 29)", B: "datetime.date(2020, 3, 1)"},
		{Path: "root[2]", Kind: Changed, A: "datetime.time(12, 30)", B: "datetime.time(12, 31, 5)"},
		{Path: "root[3]", Kind: Changed, A: "datetime.timedelta(days=1, seconds=5)", B: "datetime.timedelta(days=-1, microseconds=7)"},
		{Path: "root[4]", Kind: Changed, A: "datetime.datetime(2020, 1, 1, 0, 0, 0, 5, tzinfo=datetime.timezone(datetime.timedelta(seconds=7200)))",
			B: "datetime.datetime(2020, 1, 1, 0, 0, 0, 6, tzinfo=datetime.timezone.utc)"},
		{Path: "root[5]", Kind: Changed, A: "datetime.datetime(2021, 11, 7, 1, 30, fold=1)", B: "datetime.datetime(2021, 11, 7, 1, 30)"},
		{Path: "root[6]['k']", Kind: Removed, A: "datetime.datetime(1999, 12, 31, 23, 59, 59)"},
	}
	r, err := Docs(parseBytes(t, "a", a), parseBytes(t, "b", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range r.Entries {
		got[e.Path] = e
	}
	if len(r.Entries) != len(want) {
		t.Errorf("%d entries, want %d: %+v", len(r.Entries), len(want), r.Entries)
	}
	for _, w := range want {
		e := got[w.Path]
		if e.Kind != w.Kind || e.A != w.A || e.B != w.B {
			t.Errorf("%s: %s %q -> %q; want %s %q -> %q", w.Path, e.Kind, e.A, e.B, w.Kind, w.A, w.B)
		}
	}
}

// TestStdlibReprDecimal: a Decimal is shown as Python's repr shows it.
func TestStdlibReprDecimal(t *testing.T) {
	a := []byte("\x80\x04\x95%\x00\x00\x00\x00\x00\x00\x00]\x94\x8c\x07decimal\x94\x8c\x07Decimal\x94\x93\x94\x8c\x041.10\x94\x85\x94R\x94a.")
	b := []byte("\x80\x04\x95(\x00\x00\x00\x00\x00\x00\x00]\x94\x8c\x07decimal\x94\x8c\x07Decimal\x94\x93\x94\x8c\x07-1.1E+3\x94\x85\x94R\x94a.")
	r, err := Docs(parseBytes(t, "a", a), parseBytes(t, "b", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root[0]" || r.Entries[0].A != "Decimal('1.10')" || r.Entries[0].B != "Decimal('-1.1E+3')" {
		t.Errorf("%+v; want root[0] Decimal('1.10') -> Decimal('-1.1E+3')", r.Entries)
	}
}
