package scan

import (
	"os"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestScanOwnAllocs reports what scanning allocates on top of the streams'
// stores (docs/engine.md): the stores are made first, then ScanDoc runs
// over them, and the heap it allocates is compared with the stores'
// footprint and the file's size. The files are named by PK_SCAN_ALLOCS
// (a list of paths); without it the test is skipped.
func TestScanOwnAllocs(t *testing.T) {
	paths := os.Getenv("PK_SCAN_ALLOCS")
	if paths == "" {
		t.Skip("PK_SCAN_ALLOCS names no files")
	}
	for _, path := range splitList(paths) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := input.Open(path, pickle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var foot int64
		nodes := 0
		for _, p := range doc.Parts {
			if p.Pickle == nil {
				continue
			}
			for _, st := range p.Pickle.Streams {
				s := st.Store()
				foot += s.Footprint()
				nodes += s.Len()
			}
		}
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		rep := ScanDoc(doc, nil)
		runtime.ReadMemStats(&b)
		t.Logf("%s: %d bytes, %d nodes, store %d bytes (%.2fx the file); scan allocates %d bytes in %d objects (%.3fx the file, %.1f bytes a node); verdict %s, %d findings",
			path, fi.Size(), nodes, foot, float64(foot)/float64(fi.Size()), b.TotalAlloc-a.TotalAlloc, b.Mallocs-a.Mallocs,
			float64(b.TotalAlloc-a.TotalAlloc)/float64(fi.Size()), float64(b.TotalAlloc-a.TotalAlloc)/float64(max(nodes, 1)), rep.Verdict, len(rep.Findings))
	}
}

func splitList(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ':' || s[i] == ' ' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
