package canon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// FuzzHash: whatever bytes the reader accepts, the canonical form must be
// computed (or refused with an error) without panicking, twice to the same
// digest, and a view walked over every node must not panic either.
func FuzzHash(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/fixtures/*/*.pkl")
	for i, s := range seeds {
		if i%7 != 0 {
			continue
		}
		if b, err := os.ReadFile(s); err == nil && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	f.Add([]byte("\x80\x04]q\x00(h\x00h\x00e."))
	for _, g := range []string{"../../testdata/arrays/*_p[245].pkl", "../../testdata/tensors/*_p[24].pkl"} {
		more, _ := filepath.Glob(g)
		for i, s := range more {
			if b, err := os.ReadFile(s); err == nil && i%3 == 0 && len(b) < 1<<16 {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("\x80\x02cfunctools\npartial\nq\x00c__builtin__\ngetattr\nc__builtin__\nobject\nX\x07\x00\x00\x00__new__\x86R\x85R(h\x00K\x01\x85}N" + "tb)R."))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		file, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "fuzz", ReadOptions(Options{}))
		if err != nil {
			return
		}
		doc := &input.Doc{Path: "fuzz", Format: "pickle", Parts: []input.Part{{Pickle: file}}}
		r1, err1 := HashDoc(doc, Options{})
		r2, err2 := HashDoc(doc, Options{})
		if (err1 == nil) != (err2 == nil) || err1 == nil && r1.Digest != r2.Digest {
			t.Fatalf("not deterministic: %v %v", err1, err2)
		}
		// pk-canon/2's readers (arrays, storages) on the same bytes
		q1, e1 := HashDoc(doc, Options{Form: Form2})
		q2, e2 := HashDoc(doc, Options{Form: Form2})
		if (e1 == nil) != (e2 == nil) || e1 == nil && q1.Digest != q2.Digest {
			t.Fatalf("pk-canon/2 not deterministic: %v %v", e1, e2)
		}
		for _, s := range file.Streams {
			for _, o := range []Options{{}, {Form: Form2}} {
				v := Normalize(s, o)
				stack := []*Node{v.Root()}
				seen := map[*Node]bool{}
				for len(stack) > 0 && len(seen) < 10000 {
					n := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					if n == nil || seen[n] {
						continue
					}
					seen[n] = true
					n.Digest()
					_ = n.Value()
					stack = append(stack, n.Items()...)
					for _, e := range n.Entries() {
						stack = append(stack, e.Key, e.Value)
					}
					stack = append(stack, n.Func(), n.Args(), n.Kwargs())
					for _, o := range n.Ops() {
						stack = append(stack, o.Args...)
					}
				}
			}
		}
	})
}
