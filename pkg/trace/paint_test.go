package trace

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/fatih/color"
)

// TestPaintAgrees: a tree's lines with colour on are its lines with colour
// off plus escape codes (lineBuf.paint writes the text itself when colour
// is off; references, their numbers, counts and cycles, codes and roles).
func TestPaintAgrees(t *testing.T) {
	// a list holding itself twice (a reference run and a cycle) and a
	// shared dict twice
	p := writeTemp(t, t.TempDir(), "refs.pkl", []byte("\x80\x04]\x94(h\x00h\x00}\x94K\x01K\x02sh\x01e."))
	tr, err := slowTree(p)
	if err != nil {
		t.Fatal(err)
	}
	render := func(noColor bool) string {
		defer func(prev bool) { color.NoColor = prev }(color.NoColor)
		color.NoColor = noColor
		var b bytes.Buffer
		for _, opt := range []Options{{Depth: -1}, {Depth: -1, All: true}} {
			if err := tr.WriteText(&b, tr.Root(), opt, Style{ASCII: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.WriteGroups(&b, 5, false, Style{ASCII: true}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain, colored := render(true), render(false)
	if !bytes.Contains([]byte(colored), []byte("\x1b[")) {
		t.Fatal("no escape codes with colour on")
	}
	if bytes.Contains([]byte(plain), []byte("\x1b[")) {
		t.Fatal("escape codes with colour off")
	}
	if stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored, ""); stripped != plain {
		t.Errorf("colour on, escapes removed:\n%s\ncolour off:\n%s", stripped, plain)
	}
	for _, want := range []string{"cycle", "#0", "#1"} {
		if !bytes.Contains([]byte(plain), []byte(want)) {
			t.Errorf("no %q in\n%s", want, plain)
		}
	}
}
