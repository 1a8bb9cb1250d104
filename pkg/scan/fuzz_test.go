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
// store holds a call whose callable is not an allowlisted global (or a
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
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 4 // every stream of a few opcodes is compacted (Keep)
	f.Fuzz(func(t *testing.T, b []byte) {
		// with and without release, compressed layers too (an xz or LZMA
		// header's dictionary costs a window that grows with the data, no
		// longer what it declares: pkg/input/lzma.go)
		if kr, fr := keepBytes(t, b, pol); kr.Verdict != fr.Verdict || len(kr.Findings) != len(fr.Findings) || kr.Error != fr.Error {
			t.Fatalf("Keep changes the report: %s %d findings %q, without: %s %d findings %q", kr.Verdict, len(kr.Findings), kr.Error, fr.Verdict, len(fr.Findings), fr.Error)
		}
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
				s := st.Store()
				for i := 0; i < s.Len(); i++ {
					n := pickle.ID(i)
					if s.Kind(n) == pickle.KindGlobal && s.NMuts(n) > 0 {
						m := s.Muts(n)[0]
						t.Fatalf("clean, but %s at %d mutates the global %s", m.Op, m.Offset, s.Qualified(n))
					}
					if s.Kind(n) != pickle.KindCall {
						continue
					}
					fn := s.Func(n)
					switch {
					case s.Kind(fn) == pickle.KindGlobal && !s.Has(fn, pickle.FlagDynamic):
						nm := Name{s.Str(fn), s.Name(fn)}
						if !pol.Allowed(RoleCall, nm) && !pol.Allowed(RoleConstruct, nm) {
							t.Fatalf("clean, but the %s at %d calls %s, not on the allowlist", s.Op(n), s.Offset(n), nm)
						}
					case s.Kind(fn) == pickle.KindCall:
						if g := s.Func(fn); s.Kind(g) != pickle.KindGlobal || fetchers[Name{s.Str(g), s.Name(g)}] == 0 {
							t.Fatalf("clean, but the %s at %d calls the result of a call", s.Op(n), s.Offset(n))
						}
					default:
						t.Fatalf("clean, but the %s at %d calls a %s", s.Op(n), s.Offset(n), s.Kind(fn))
					}
				}
			}
		}
	})
}
