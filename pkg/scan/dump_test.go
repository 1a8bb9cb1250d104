package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDumpFixtures(t *testing.T) {
	if os.Getenv("SCAN_DUMP") == "" {
		t.Skip()
	}
	pol, _ := NewPolicy(strings.Split(os.Getenv("SCAN_DUMP"), ",")...)
	filepath.Walk("../../testdata/fixtures", func(p string, fi os.FileInfo, err error) error {
		if fi.IsDir() || strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".txt") || strings.HasSuffix(p, ".json") {
			return nil
		}
		r := ScanFile(p, pol)
		if r.Verdict == Clean {
			return nil
		}
		fmt.Printf("%s %s %s\n", r.Verdict, p, r.Error)
		for _, f := range r.Findings {
			fmt.Printf("   %s %s %s %d %s: %s\n", f.Severity, f.Role, f.Global, f.Offset, f.Opcode, f.Reason)
		}
		return nil
	})
}
