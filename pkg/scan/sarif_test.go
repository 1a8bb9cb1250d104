package scan

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func sarifOf(t *testing.T, names ...string) []byte {
	var reps []*Report
	for _, n := range names {
		reps = append(reps, ScanFile(n, DefaultPolicy()))
	}
	var b bytes.Buffer
	if err := WriteSARIF(&b, reps, "test"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSARIF checks the log's shape: what SARIF 2.1.0 requires (version,
// runs, tool.driver.name, results with a message) and what pk puts there
// (rules by severity, byte offsets in plain files, the invalid input).
// With PK_SARIF_SCHEMA naming the OASIS schema (sarif-schema-2.1.0.json)
// and python3 with jsonschema, the log is also validated against it.
func TestSARIF(t *testing.T) {
	c := "../../testdata/scan/corpus/"
	out := sarifOf(t, c+"global_reduce.pkl", c+"gzipped.pkl.gz", c+"truncated.pkl", c+"data_p0.pkl", c+"unknown_class.pkl")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Artifacts []struct {
				Properties map[string]any `json:"properties"`
			} `json:"artifacts"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							ByteOffset int64 `json:"byteOffset"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "pk scan" {
		t.Fatalf("bad log head: %s", out[:200])
	}
	run := log.Runs[0]
	if len(run.Artifacts) != 5 || run.Artifacts[3].Properties["verdict"] != "clean" {
		t.Errorf("artifacts: %+v", run.Artifacts)
	}
	seen := map[string]bool{}
	for _, r := range run.Results {
		if r.Message.Text == "" || len(r.Locations) != 1 || r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("bad result %+v", r)
		}
		loc := r.Locations[0].PhysicalLocation
		seen[r.RuleID] = true
		switch {
		case strings.HasSuffix(loc.ArtifactLocation.URI, "global_reduce.pkl"):
			if loc.Region == nil || loc.Region.ByteOffset != 24 || r.Level != "error" {
				t.Errorf("global_reduce: %+v", r)
			}
		case strings.HasSuffix(loc.ArtifactLocation.URI, "gzipped.pkl.gz"):
			if loc.Region != nil {
				t.Errorf("an offset in the decompressed stream given as a file region: %+v", r)
			}
		}
	}
	for _, id := range []string{"pk-scan/dangerous", "pk-scan/invalid", "pk-scan/unknown"} {
		if !seen[id] {
			t.Errorf("no %s result", id)
		}
	}
	schema := os.Getenv("PK_SARIF_SCHEMA")
	if schema == "" {
		t.Log("PK_SARIF_SCHEMA not set: not validated against the OASIS schema")
		return
	}
	f := filepath.Join(t.TempDir(), "log.sarif")
	os.WriteFile(f, out, 0o644)
	cmd := exec.Command("python3", "-c", `import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))`, schema, f)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the log does not validate against %s: %v\n%s", schema, err, msg)
	}
}
