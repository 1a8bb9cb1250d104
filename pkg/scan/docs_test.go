package scan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// presetBlock renders a preset as docs/pk-scan.md lists it: one entry a
// line, "ROLES module:qualname", cloudpickle's and dill's names once with
// their module list.
func presetBlock(name string) string {
	var entries []string
	switch name {
	case "cloudpickle":
		for _, e := range cloudpickleNames {
			entries = append(entries, e[:2]+"<cloudpickle module>:"+e[2:])
		}
		entries = append(entries, codeCommon...)
	case "dill":
		for _, e := range dillNames {
			entries = append(entries, e[:2]+"<dill module>:"+e[2:])
		}
		entries = append(entries, dillPreset...)
	default:
		entries = presets[name]
	}
	var b strings.Builder
	for _, e := range entries {
		roles, n, _ := strings.Cut(e, " ")
		fmt.Fprintf(&b, "    %-3s %s\n", roles, n)
	}
	return b.String()
}

// TestDocsListPresets: docs/pk-scan.md lists every preset exactly
// (SCAN_PRINT_PRESETS=1 prints the blocks to paste).
func TestDocsListPresets(t *testing.T) {
	if os.Getenv("SCAN_PRINT_PRESETS") != "" {
		for _, p := range PresetNames() {
			fmt.Printf("### %s\n\n%s\n", p, presetBlock(p))
		}
	}
	doc, err := os.ReadFile("../../docs/pk-scan.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range PresetNames() {
		if blk := presetBlock(p); !strings.Contains(string(doc), blk) {
			t.Errorf("docs/pk-scan.md does not list preset %s as:\n%s", p, blk)
		}
	}
}
