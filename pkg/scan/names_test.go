package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNameTableCap: past maxNames distinct names the scanner stops adding
// to its tables (analyze.go, info and own) and makes a name's text and
// verdict again at each use. The tables stay at the cap, and a name met
// past it gets the text and verdict it gets in a scan that never reached it.
func TestNameTableCap(t *testing.T) {
	s := &scanner{}
	for i := range maxNames + 100 {
		n := Name{Module: "mod", Qual: fmt.Sprintf("f%d", i)}
		if got := s.text(n); got != "mod.f"+fmt.Sprint(i) {
			t.Fatalf("text of name %d = %q", i, got)
		}
		s.own(n.String())
	}
	if len(s.names) != maxNames || len(s.texts) != maxNames {
		t.Fatalf("tables hold %d names and %d texts, want %d each", len(s.names), len(s.texts), maxNames)
	}
	for _, n := range []Name{{"os", "system"}, {"builtins", "eval"}, {"mod", "f0"}, {"mod", fmt.Sprint("f", maxNames+50)}} {
		sev, why := s.classify(n)
		wsev, wwhy := classify(n)
		if sev != wsev || why != wwhy || s.text(n) != n.String() || s.own(n.String()) != n.String() {
			t.Errorf("%s past the cap: %q %q %q, want %q %q %q", n, sev, why, s.text(n), wsev, wwhy, n.String())
		}
	}
	if len(s.names) != maxNames || len(s.texts) != maxNames {
		t.Fatalf("tables grew past the cap: %d names, %d texts", len(s.names), len(s.texts))
	}

	// End to end: a list of maxNames+100 calls of distinct functions, then a
	// call of os.system. Its finding reads as in a file of that call alone.
	var b strings.Builder
	for i := range maxNames + 100 {
		b.WriteString(pCall(pG("mod", fmt.Sprint("f", i))))
	}
	system := pCall(pG("os", "system"), pS("echo"))
	find := func(body string) Finding {
		p := filepath.Join(t.TempDir(), "f.pkl")
		if err := os.WriteFile(p, []byte(pWrap(body)), 0o644); err != nil {
			t.Fatal(err)
		}
		rep := ScanFile(p, DefaultPolicy())
		if rep.Error != "" {
			t.Fatalf("scan: %s", rep.Error)
		}
		for _, f := range rep.Findings {
			if f.Global == "os.system" {
				return f
			}
		}
		t.Fatalf("no finding for os.system in %d findings", len(rep.Findings))
		return Finding{}
	}
	got, want := find(b.String()+system), find(system)
	// (the offsets differ: the call comes later in the first file)
	at := regexp.MustCompile(` at [0-9]+`)
	got.Offset, want.Offset = 0, 0
	got.Reason, want.Reason = at.ReplaceAllString(got.Reason, " at N"), at.ReplaceAllString(want.Reason, " at N")
	if got != want {
		t.Errorf("os.system past the cap:\n got  %+v\n want %+v", got, want)
	}
}
