package canon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// emptiesPickle is a protocol 4 stream whose first opcodes (an EXT code,
// popped: an event no rule folds past) make the canon sink stop folding,
// so that the store is held whole from its first compaction and its empty
// containers may share records (pickle.Keep.OneEmpty); body follows, and
// the root is the list body leaves on the stack.
func emptiesPickle(body ...string) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x04\x82\x010") // PROTO 4, EXT1 1, POP
	for _, s := range body {
		b.WriteString(s)
	}
	b.WriteString(".")
	return b.Bytes()
}

// TestSharedEmpties: the empty dicts and lists that pk hash's store shares
// (pickle.Keep.OneEmpty) are each an object of their own in the digest,
// and those a later opcode can tell apart (read again through the memo,
// DUP, filled after they were taken) keep their records: the digest
// through the canon sink is the whole store's for each.
func TestSharedEmpties(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 4
	row := "](}}]}](}]l\x94]}\x86e" // [{}, {}, [], {}, [], [{}, []], ([], {})]
	many := "]("
	for range 40 {
		many += row
	}
	many += "e"
	cases := []struct {
		name   string
		body   []string
		shared bool // the store shares at least one record
	}{
		{"distinct", []string{many}, true},
		{"memoized", []string{"](}\x94}\x94]\x94}\x94e", many}, true},
		// a dict taken, then read again from the memo: [d, d] (one object)
		{"memo read", []string{"]\x94(}\x94}\x94}\x94eh\x02a", many}, true},
		// one filled through the memo after it was taken: {1: 2}
		{"memo filled", []string{"]\x94(}\x94}\x94}\x94eh\x02K\x01K\x02s0", many}, true},
		// DUP: the same dict twice
		{"dup", []string{"](}2}}e", many}, true},
		// filled while on the stack
		{"filled", []string{"](}K\x01K\x02s}]e", many}, true},
		// an empty list appended to in place after a GET of its list
		{"list grown", []string{"](]\x94]\x94eh\x01K\x07a0", many}, true},
		// tuples of empty containers, the tuple made after them
		{"tuples", []string{"](}]\x86}\x85]}]\x87e", many}, true},
		// BUILD on an empty dict (an operation), then taken
		{"built", []string{"](}}K\x01K\x02sb}e", many}, true},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, emptiesPickle(c.body...), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{{NoPaths: true}, {NoPaths: true, Form: Form2}, {NoPaths: true, KeepDictOrder: true}} {
			noFast, noFold = true, true
			want, werr := HashFile(p, opt)
			noFold = false
			got, gerr := HashFile(p, opt)
			noFast = false
			if werr != nil || gerr != nil {
				t.Fatalf("%s: whole store: %v; sink: %v", c.name, werr, gerr)
			}
			if want.Digest != got.Digest {
				t.Errorf("%s %+v: whole store %s, shared empties %s", c.name, opt, want.Digest, got.Digest)
			}
		}
		// the store the digest read shares records
		shared, names := 0, 0
		_, _, ok := EachStreamFolded(p, Options{}, nil, func(st *pickle.Stream, _ []byte) error {
			s := st.Store()
			for id := pickle.ID(0); int(id) < s.Len(); id++ {
				if s.SharedEmpty(id) {
					shared++
				}
				if s.Kind(id) == pickle.KindList || s.Kind(id) == pickle.KindTuple {
					for _, k := range s.Items(id) {
						if s.SharedEmpty(k) {
							names++
						}
					}
				}
			}
			return nil
		})
		if !ok {
			t.Fatalf("%s: not read stream by stream", c.name)
		}
		if c.shared && (shared == 0 || names < 100) {
			t.Errorf("%s: %d shared records named %d times, want some named 100 times or more", c.name, shared, names)
		}
	}
}

// TestSharedEmptiesApart: two empty dicts, or an empty dict taken twice,
// are told apart by the digest with their records shared as without.
func TestSharedEmptiesApart(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 4
	pad := "]("
	for range 40 {
		pad += "](}}]}](}]l\x94]}\x86e"
	}
	pad += "e"
	dir := t.TempDir()
	digest := func(name string, body ...string) string {
		p := filepath.Join(dir, name+".pkl")
		if err := os.WriteFile(p, emptiesPickle(body...), 0o644); err != nil {
			t.Fatal(err)
		}
		noFast = true
		defer func() { noFast = false }()
		res, err := HashFile(p, Options{NoPaths: true})
		if err != nil {
			t.Fatal(err)
		}
		return res.Digest
	}
	two := digest("two", pad, "0](}}e") // [{}, {}]
	// (pad memoizes 40 lists: the dict is memo index 40)
	one := digest("one", pad, "0](}\x94h\x28e")
	if two == one {
		t.Errorf("[{}, {}] and [d, d] hash the same: %s", two)
	}
	lists := digest("lists", pad, "0](]]e")
	if lists == two {
		t.Errorf("[[], []] and [{}, {}] hash the same: %s", two)
	}
}
