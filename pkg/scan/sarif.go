package scan

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 output (docs/pk-scan.md, Output): one run, one rule per
// severity, one result per finding and per invalid input, each located in
// its file (with the byte offset when it is an offset in the file itself,
// not in a decompressed stream or a container member).

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool      sarifTool       `json:"tool"`
	Artifacts []sarifArtifact `json:"artifacts"`
	Results   []sarifResult   `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
}

type sarifArtifact struct {
	Location   sarifArtifactLocation `json:"location"`
	Properties map[string]any        `json:"properties"`
}

type sarifArtifactLocation struct {
	URI   string `json:"uri"`
	Index *int   `json:"index,omitempty"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties map[string]any  `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifRegion struct {
	ByteOffset int64 `json:"byteOffset"`
	ByteLength int64 `json:"byteLength"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

var sarifRules = []struct{ id, level, short, full string }{
	{SevDangerous, "error", "Loading runs a known code, import, I/O or process primitive, changes an object it did not create, or uses a name that cannot be resolved statically", "pk scan: the verdict dangerous (docs/pk-scan.md)."},
	{SevCode, "error", "The file carries code: functions, classes or code objects (cloudpickle, dill)", "pk scan: the verdict code; allowed with the cloudpickle or dill preset."},
	{SevUnknown, "warning", "Loading imports or calls a global that is not on the allowlist", "pk scan: the verdict unknown; allow it with --allow or --policy."},
	{"invalid", "error", "The input cannot be read: CPython refuses it or pk cannot read it, so it was not scanned", "pk scan: the verdict invalid."},
	{SevNote, "note", "A fact about loading that does not change the verdict (persistent ids, out-of-band buffers)", "pk scan: a note."},
}

// WriteSARIF writes the reports as one SARIF 2.1.0 log.
func WriteSARIF(w io.Writer, reps []*Report, version string) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "pk scan", Version: version,
			InformationURI: "https://github.com/pk-tools/pk/blob/main/docs/pk-scan.md"}},
		Artifacts: []sarifArtifact{},
		Results:   []sarifResult{},
	}
	ruleIndex := map[string]int{}
	for i, r := range sarifRules {
		ruleIndex[r.id] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: "pk-scan/" + r.id, Name: r.id, ShortDescription: sarifText{r.short}, FullDescription: sarifText{r.full},
			DefaultConfiguration: map[string]any{"level": r.level},
		})
	}
	for ai, rep := range reps {
		idx := ai
		uri := fileURI(rep.File)
		run.Artifacts = append(run.Artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: uri},
			Properties: map[string]any{"verdict": string(rep.Verdict), "format": rep.Format}})
		loc := func(off int64, inFile bool, global string) []sarifLocation {
			l := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: uri, Index: &idx}}}
			if inFile && off >= 0 {
				l.PhysicalLocation.Region = &sarifRegion{ByteOffset: off, ByteLength: 1}
			}
			if global != "" {
				l.LogicalLocations = []sarifLogical{{FullyQualifiedName: global, Kind: "function"}}
			}
			return []sarifLocation{l}
		}
		plain := !strings.Contains(rep.Format, "+")
		for _, f := range rep.Findings {
			i := ruleIndex[f.Severity]
			props := map[string]any{"role": string(f.Role), "opcode": f.Opcode, "offset": f.Offset, "stream": f.Stream, "verdict": string(rep.Verdict)}
			if f.Global != "" {
				props["global"] = f.Global
			}
			if f.Part != "" {
				props["part"] = f.Part
			}
			run.Results = append(run.Results, sarifResult{RuleID: "pk-scan/" + sarifRules[i].id, RuleIndex: i, Level: sarifRules[i].level,
				Message: sarifText{f.Reason}, Locations: loc(f.Offset, plain && f.Part == "", f.Global), Properties: props})
		}
		if rep.Error != "" {
			i := ruleIndex["invalid"]
			run.Results = append(run.Results, sarifResult{RuleID: "pk-scan/invalid", RuleIndex: i, Level: "error",
				Message: sarifText{rep.Error}, Locations: loc(-1, false, ""), Properties: map[string]any{"verdict": string(rep.Verdict)}})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// fileURI turns a path into a relative or file: URI reference.
func fileURI(p string) string {
	if p == "-" {
		return "stdin"
	}
	p = filepath.ToSlash(p)
	u := &url.URL{Path: p}
	if filepath.IsAbs(p) {
		u.Scheme = "file"
	}
	return u.String()
}
