package canon

import (
	"os"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
)

// BenchmarkStoreFootprint measures, for the states named by
// PK_FOOTPRINT (a file path; skipped when unset), what the store path
// costs: the live heap of the parsed input (graph, and the stores once
// built), the stores' Footprint, and what HashDoc allocates on top of
// the stores (canon's own tables and buffers, and its synthetic nodes).
func BenchmarkStoreFootprint(b *testing.B) {
	path := os.Getenv("PK_FOOTPRINT")
	if path == "" {
		b.Skip("PK_FOOTPRINT names the state to measure")
	}
	opt := Options{NoPaths: true} // as pk hash without --explain
	var ms runtime.MemStats
	peak := map[string]uint64{}
	stageHook = func(stage string) {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		peak[stage] = max(peak[stage], m.HeapAlloc)
	}
	defer func() { stageHook = nil }()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		doc, err := input.Open(path, ReadOptions(opt))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		graph := ms.HeapAlloc
		var store int64
		for _, p := range doc.Parts {
			if p.Pickle != nil {
				for _, st := range p.Pickle.Streams {
					store += st.Store().Footprint()
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		withStore, before := ms.HeapAlloc, ms.TotalAlloc
		b.StartTimer()
		if _, err := HashDoc(doc, opt); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(graph)/1e6, "MB-parsed-heap")
		b.ReportMetric(float64(store)/1e6, "MB-store")
		b.ReportMetric(float64(withStore)/1e6, "MB-heap+store")
		b.ReportMetric(float64(ms.TotalAlloc-before)/1e6, "MB-canon-alloc")
		b.ReportMetric((float64(peak["normalized"])-float64(withStore))/1e6, "MB-view-live")
		b.ReportMetric((float64(peak["encoded"])-float64(withStore))/1e6, "MB-encoded-live")
		runtime.KeepAlive(doc)
	}
}
