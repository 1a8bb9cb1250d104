package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// FuzzScan: scanning never panics, and the verdict is never clean when the
// graph holds a call whose callable is not an allowlisted global (or a
// getattr-like fetch the scanner names), or a mutation of a global.
func FuzzScan(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/scan/corpus/*")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte("cos\nsystem\n(S'x'\ntR."))
	f.Add([]byte("\x80\x04]\x94."))
	pol := DefaultPolicy()
	f.Fuzz(func(t *testing.T, b []byte) {
		rep := ScanReader(bytes.NewReader(b), "fuzz", pol)
		if rep.Verdict == Invalid {
			if rep.Error == "" {
				t.Fatalf("invalid without an error")
			}
			return
		}
		doc, err := input.OpenReader(bytes.NewReader(b), "fuzz", pickle.Options{}, input.Options{})
		if err != nil {
			t.Fatalf("scan read it (%s), input refuses it: %v", rep.Verdict, err)
		}
		if rep.Verdict != Clean {
			return
		}
		for _, p := range doc.Parts {
			if p.Pickle == nil {
				continue
			}
			for _, st := range p.Pickle.Streams {
				for _, n := range st.All {
					for _, m := range n.Muts() {
						if n.Kind == pickle.KindGlobal {
							t.Fatalf("clean, but %s at %d mutates the global %s", m.Op, m.Offset, n.Qualified())
						}
					}
					if n.Kind != pickle.KindCall {
						continue
					}
					fn := n.Func()
					switch {
					case fn.Kind == pickle.KindGlobal && fn.Flags&pickle.FlagDynamic == 0:
						nm := Name{fn.Str, fn.Name()}
						if !pol.Allowed(RoleCall, nm) && !pol.Allowed(RoleConstruct, nm) {
							t.Fatalf("clean, but the %s at %d calls %s, not on the allowlist", n.Op, n.Offset, nm)
						}
					case fn.Kind == pickle.KindCall:
						if g := fn.Func(); g.Kind != pickle.KindGlobal || fetchers[Name{g.Str, g.Name()}] == 0 {
							t.Fatalf("clean, but the %s at %d calls the result of a call", n.Op, n.Offset)
						}
					default:
						t.Fatalf("clean, but the %s at %d calls a %s", n.Op, n.Offset, fn.Kind)
					}
				}
			}
		}
	})
}
