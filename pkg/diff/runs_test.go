package diff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// table is n rows {'id': i, 'name': 'row<i>', 'pair': [i % 1000, 'p']};
// rename(i) gives another name to row i.
func table(n int, rename func(i int) bool) *pv {
	l := &pv{k: 'l'}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("row%d", i)
		if rename != nil && rename(i) {
			name = "renamed"
		}
		l.kids = append(l.kids, &pv{k: 'd', kids: []*pv{
			{k: 's', s: "id"}, {k: 'i', i: int64(i)},
			{k: 's', s: "name"}, {k: 's', s: name},
			{k: 's', s: "pair"}, {k: 'l', kids: []*pv{{k: 'i', i: int64(i % 1000)}, {k: 's', s: "p"}}},
		}})
	}
	return l
}

// TestRuns: a table against its first rows is one entry (a run), in text
// and JSON, removed or added; a stretch of rows changed in place is the
// first pair's entries and then one run; fewer than RunMin items stay
// entries of their own. The fast path takes each pair and gives the graph
// path's report byte for byte.
func TestRuns(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, v *pv) string { return writeFile(t, dir, name, dump(v, 4, 1<<16)) }
	long, short := file("long.pkl", table(600, nil)), file("short.pkl", table(200, nil))
	renamed := file("renamed.pkl", table(600, func(i int) bool { return i >= 100 && i < 400 }))
	few := file("few.pkl", table(203, nil))
	type want struct {
		paths []string // every entry's path and kind
		text  []string // lines the text shows
		json  []string // lines the JSON shows
	}
	cases := []struct {
		a, b string
		want want
	}{
		{long, short, want{
			paths: []string{"root[200:600] removed 400"},
			text:  []string{"root[200:600]  removed (400 items)", "  - {'id': 200, 'name': 'row200', 'pair': [...2 items]} ... {'id': 599, 'name': 'row599', 'pair': [...2 items]}"},
			json:  []string{`"path":"root[200:600]","kind":"removed","count":400,`},
		}},
		{short, long, want{
			paths: []string{"root[200:600] added 400"},
			text:  []string{"root[200:600]  added (400 items)", "long.pkl differ: 1 difference"},
			json:  []string{`"path":"root[200:600]","kind":"added","count":400,`},
		}},
		{long, renamed, want{
			paths: []string{"root[100]['name'] changed 0", "root[101:400] changed 299"},
			text:  []string{"root[101:400]  changed (299 items)", "  + {'id': 101, 'name': 'renamed', 'pair': [...2 items]} ... {'id': 399, 'name': 'renamed', 'pair': [...2 items]}"},
			json:  []string{`"path":"root[101:400]","kind":"changed","count":299,`},
		}},
		{short, few, want{
			paths: []string{"root[200] added 0", "root[201] added 0", "root[202] added 0"},
		}},
	}
	for _, c := range cases {
		fast, ok := fastFiles(c.a, c.b, Options{})
		if !ok {
			t.Fatalf("%s %s: the fast path did not take it", c.a, c.b)
		}
		slow, err := slowFiles(c.a, c.b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f, s := renderAll(t, fast), renderAll(t, slow); f != s {
			t.Errorf("fast path\n%s\ngraph path\n%s", f, s)
		}
		var got []string
		for _, e := range slow.Entries {
			got = append(got, fmt.Sprintf("%s %s %d", e.Path, e.Kind, e.Count))
		}
		if strings.Join(got, "\n") != strings.Join(c.want.paths, "\n") {
			t.Errorf("%s %s: entries\n%s\nwant\n%s", c.a, c.b, strings.Join(got, "\n"), strings.Join(c.want.paths, "\n"))
		}
		var text, js bytes.Buffer
		slow.WriteText(&text, 50)
		slow.WriteJSON(&js, 50)
		for _, l := range c.want.text {
			if !strings.Contains(text.String(), l+"\n") {
				t.Errorf("text has no line %q:\n%s", l, text.String())
			}
		}
		for _, l := range c.want.json {
			if !strings.Contains(js.String(), l) {
				t.Errorf("JSON has no %q:\n%s", l, js.String())
			}
		}
	}
}

func TestRunsOfAlignment(t *testing.T) {
	ops := []EditOp{{'=', 0, 0}}
	for i := 1; i <= 12; i++ {
		ops = append(ops, EditOp{'+', -1, i})
	}
	ops = append(ops, EditOp{'=', 1, 13}, EditOp{'-', 2, -1}, EditOp{'-', 3, -1})
	var got []string
	for _, r := range Runs(ops) {
		got = append(got, fmt.Sprintf("%c%d,%d,%d", r.Kind, r.A, r.B, r.N))
	}
	if s := strings.Join(got, " "); s != "=0,0,1 +-1,1,12 =1,13,1 -2,-1,1 -3,-1,1" {
		t.Fatal(s)
	}
	if Thousands(400000) != "400,000" || Thousands(12) != "12" || Thousands(-1234567) != "-1,234,567" {
		t.Fatal(Thousands(400000), Thousands(-1234567))
	}
}
