package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Kinds of difference.
const (
	Changed      = "changed"
	Added        = "added"
	Removed      = "removed"
	TypeChanged  = "type changed"
	AliasChanged = "alias changed"
)

// Entry is one difference, at a path a Python user would write. Its
// struct tags are not the --json shape: WriteJSON writes a jsonEntry
// (docs/schema/diff.schema.json).
type Entry struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	A     string `json:"a,omitempty"` // short rendering of the old side
	B     string `json:"b,omitempty"` // short rendering of the new side
	SizeA int64  `json:"size_a,omitempty"`
	SizeB int64  `json:"size_b,omitempty"`
	OffA  int64  `json:"offset_a"`
	OffB  int64  `json:"offset_b"`
	Note  string `json:"note,omitempty"`
	// Count is the number of items of a run entry (Runs): consecutive
	// items added, removed or changed in place, at a path that names them
	// as a slice (root[200000:600000]); A and B show the first and the
	// last item, OffA and OffB the first one's offset. 0 for one item.
	Count int `json:"count,omitempty"`
	// ValA and ValB are the sides as typed values (pkg/jsonl's encoding)
	// when they are scalars (None, bool, int, float, str, bytes,
	// bytearray); nil otherwise.
	ValA, ValB json.RawMessage `json:"-"`
	// ArrA and ArrB are the dtype and shape of a side that is array data.
	ArrA, ArrB *Array `json:"-"`
	// Elem, for two arrays or tensors that differ in elements, is the
	// index of the first differing element and how many differ; A and B
	// (ValA, ValB) are then that element's values.
	Elem *Element `json:"-"`
	// NoOffset: the entry has no offset in either stream (a container
	// part, the whole canonical form).
	NoOffset bool `json:"-"`
	// Elided: an entry past Options.Detail, whose Path is the head of its
	// path (pathTable.Head) and whose Note is not worded; it is counted
	// (and by --stat, under its top-level path), not shown.
	Elided bool `json:"-"`
}

// Array is the dtype and shape of array data (a storage, a numpy array).
type Array struct {
	DType string
	Shape []int64
}

// Reason is one normalisation that contributed to equality.
type Reason struct {
	Rule  string `json:"rule"`
	Count int    `json:"count"`
}

// Result is the whole answer for two inputs (--json: WriteJSON's records,
// not these tags).
type Result struct {
	A, B       string   `json:"-"`
	Same       bool     `json:"same"`
	BytesEqual bool     `json:"bytes_equal"`
	DigestA    string   `json:"digest_a"`
	DigestB    string   `json:"digest_b"`
	Reasons    []Reason `json:"reasons,omitempty"`
	Entries    []Entry  `json:"differences"`
	Omitted    int      `json:"omitted"`
	// Unmatched are the --ignore paths that name nothing in either input
	// (pk diff warns of each on stderr).
	Unmatched []string `json:"-"`
	// bytesKnown: the inputs' bytes were compared (two regular files:
	// BytesEqual is false for a pipe or stdin, whose bytes are not kept)
	bytesKnown bool
	// big is set when the walk compared views of bigWalk nodes or more:
	// Files collects their garbage before it returns (release)
	big bool
}

// shown is the entries a report shows: at most max (0: all), and none
// from the first one kept with the head of its path only (Elided: past
// Options.Detail, which pk diff sets to --max; an entry dropped after it
// was made, as a repeated element of a joblib frame is, can bring one
// into the first max).
func (r *Result) shown(max int) []Entry {
	shown := r.Entries
	if max > 0 && len(shown) > max {
		shown = shown[:max]
	}
	for i := range shown {
		if shown[i].Elided {
			return shown[:i]
		}
	}
	return shown
}

// LargeValue is the size from which both sides show their byte sizes.
const LargeValue = 1024

// WriteText writes the report for people: a summary line, then one block per
// entry. max limits the entries shown (0: all).
func (r *Result) WriteText(w io.Writer, max int) {
	// (buffered: an entry's path may be megabytes, a million levels deep,
	// and is written as it is, not copied through fmt when uncoloured)
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	w = bw
	bold, red, green, yellow := paint(color.Bold), paint(color.FgRed), paint(color.FgGreen), paint(color.FgYellow)
	if r.Same && r.DigestA != r.DigestB {
		fmt.Fprintf(w, "%s and %s are the same outside the ignored paths\n", r.A, r.B)
		return
	}
	if r.Same {
		if r.BytesEqual {
			fmt.Fprintf(w, "%s and %s are identical\n", r.A, r.B)
			return
		}
		if r.bytesKnown {
			fmt.Fprintf(w, "%s and %s differ in bytes but are the same pickle (%s)", r.A, r.B, r.DigestA)
		} else {
			// (a pipe or stdin: its bytes were not kept to compare)
			fmt.Fprintf(w, "%s and %s are the same pickle (%s)", r.A, r.B, r.DigestA)
		}
		if len(r.Reasons) > 0 {
			var parts []string
			for _, x := range r.Reasons {
				parts = append(parts, fmt.Sprintf("%s ×%d", x.Rule, x.Count))
			}
			fmt.Fprintf(w, ": equal after %s", strings.Join(parts, ", "))
		}
		fmt.Fprintln(w)
		return
	}
	n := len(r.Entries) + r.Omitted
	shown := r.shown(max)
	for _, e := range shown {
		kind := e.Kind
		if e.Count > 0 {
			kind += " (" + Thousands(int64(e.Count)) + " items)"
		}
		switch e.Kind {
		case Added:
			kind = green(kind)
		case Removed:
			kind = red(kind)
		default:
			kind = yellow(kind)
		}
		io.WriteString(w, bold(e.Path))
		io.WriteString(w, "  "+kind+"\n")
		if e.Kind != Added && e.A != "" {
			fmt.Fprintf(w, "  %s %s%s\n", red("-"), e.A, sizeNote(e.SizeA, e.OffA))
		}
		if e.Kind != Removed && e.B != "" {
			fmt.Fprintf(w, "  %s %s%s\n", green("+"), e.B, sizeNote(e.SizeB, e.OffB))
		}
		if e.Note != "" {
			fmt.Fprintf(w, "  (%s)\n", e.Note)
		}
	}
	left := n - len(shown)
	summary := fmt.Sprintf("%s and %s differ: %d difference%s", r.A, r.B, n, plural(n))
	if left > 0 {
		summary += fmt.Sprintf(" (%d not shown; use --max)", left)
	}
	fmt.Fprintln(w, bold(summary))
}

// paint returns a function that colours a string with attr, or returns it
// as it is when colour is off (color.NoColor: --color, NO_COLOR, not a
// terminal).
func paint(attr color.Attribute) func(string) string {
	c := color.New(attr)
	return func(s string) string {
		if color.NoColor {
			return s
		}
		return c.Sprint(s)
	}
}

func sizeNote(size, off int64) string {
	if size >= LargeValue {
		return fmt.Sprintf("  [%s at offset %d]", HumanBytes(size), off)
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// The records of diff --json (docs/json.md, docs/schema/diff.schema.json):
// one a difference, then one summary.
type jsonEntry struct {
	A       string          `json:"a"`
	B       string          `json:"b"`
	Path    string          `json:"path"`
	Kind    string          `json:"kind"`
	Count   int             `json:"count,omitempty"`
	ReprA   string          `json:"repr_a,omitempty"`
	ReprB   string          `json:"repr_b,omitempty"`
	ValueA  json.RawMessage `json:"value_a,omitempty"`
	ValueB  json.RawMessage `json:"value_b,omitempty"`
	DTypeA  string          `json:"dtype_a,omitempty"`
	ShapeA  []int64         `json:"shape_a,omitempty"`
	DTypeB  string          `json:"dtype_b,omitempty"`
	ShapeB  []int64         `json:"shape_b,omitempty"`
	SizeA   int64           `json:"size_a,omitempty"`
	SizeB   int64           `json:"size_b,omitempty"`
	OffsetA *int64          `json:"offset_a,omitempty"`
	OffsetB *int64          `json:"offset_b,omitempty"`
	Note    string          `json:"note,omitempty"`
	// an element of two arrays (Entry.Elem)
	Index          []int64 `json:"index,omitempty"`
	ElementsDiffer int64   `json:"elements_differ,omitempty"`
	Elements       int64   `json:"elements,omitempty"`
}

type jsonSummary struct {
	A           string   `json:"a"`
	B           string   `json:"b"`
	Record      string   `json:"record"`
	Same        bool     `json:"same"`
	BytesEqual  bool     `json:"bytes_equal"`
	DigestA     string   `json:"digest_a"`
	DigestB     string   `json:"digest_b"`
	Reasons     []Reason `json:"reasons,omitempty"`
	Differences int      `json:"differences"`
	Omitted     int      `json:"omitted"`
}

func (r *Result) jsonEntry(e *Entry) jsonEntry {
	j := jsonEntry{A: r.A, B: r.B, Path: e.Path, Kind: e.Kind, Count: e.Count, SizeA: e.SizeA, SizeB: e.SizeB, Note: e.Note}
	hasA, hasB := e.Kind != Added, e.Kind != Removed
	if x := e.Elem; x != nil {
		j.Index, j.ElementsDiffer, j.Elements = x.Index, x.Differ, x.Of
		if j.Index == nil {
			j.Index = []int64{}
		}
	}
	if hasA {
		j.ReprA = e.A
		if e.Count == 0 {
			j.ValueA = e.ValA
		}
		if e.ArrA != nil {
			j.DTypeA, j.ShapeA = e.ArrA.DType, e.ArrA.Shape
		}
		if !e.NoOffset {
			o := e.OffA
			j.OffsetA = &o
		}
	}
	if hasB {
		j.ReprB = e.B
		if e.Count == 0 {
			j.ValueB = e.ValB
		}
		if e.ArrB != nil {
			j.DTypeB, j.ShapeB = e.ArrB.DType, e.ArrB.Shape
		}
		if !e.NoOffset {
			o := e.OffB
			j.OffsetB = &o
		}
	}
	return j
}

// WriteJSON writes the report as JSON Lines: one record a difference (at
// most max; 0: all), then the summary record.
func (r *Result) WriteJSON(w io.Writer, max int) error {
	jw := jsonl.NewWriter(w)
	shown := r.shown(max)
	for i := range shown {
		if err := jw.Write(r.jsonEntry(&shown[i])); err != nil {
			return err
		}
	}
	jw.Write(jsonSummary{A: r.A, B: r.B, Record: "summary", Same: r.Same, BytesEqual: r.BytesEqual,
		DigestA: r.DigestA, DigestB: r.DigestB, Reasons: r.Reasons,
		Differences: len(r.Entries) + r.Omitted, Omitted: r.Omitted + len(r.Entries) - len(shown)})
	return jw.Flush()
}

// ErrorRecord is the record of diff --json when one input cannot be read:
// jsonl.Error with both names.
type ErrorRecord struct {
	A string `json:"a"`
	B string `json:"b"`
	jsonl.Error
}

// typed is n as a typed value when it is a scalar.
func typed(n *canon.Node) json.RawMessage {
	if n == nil {
		return nil
	}
	switch n.Kind() {
	case pickle.KindNone:
		return json.RawMessage("null")
	case pickle.KindBool:
		return jsonl.AppendBool(nil, n.Int().Sign() != 0)
	case pickle.KindInt:
		return jsonl.AppendBigInt(nil, n.Int())
	case pickle.KindFloat:
		return jsonl.AppendFloat(nil, n.Float())
	case pickle.KindStr:
		if n.Len() > int64(len(n.Str())) {
			return jsonl.AppendShortStr(nil, n.Str(), n.Len())
		}
		return jsonl.AppendString(nil, n.Str())
	case pickle.KindBytes, pickle.KindByteArray:
		return jsonl.AppendBytes(nil, n.Kind().String(), n.Str(), n.Len())
	}
	return nil
}

// partArray is the dtype and shape of a raw part, or nil.
func partArray(p *input.Part) *Array {
	if p.Raw == nil || p.Raw.DType == "" {
		return nil
	}
	sh := p.Raw.Shape
	if sh == nil {
		sh = []int64{}
	}
	return &Array{DType: p.Raw.DType, Shape: sh}
}

// HumanBytes renders n in binary units (1.5 KiB).
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}

// Thousands renders n with commas between groups of three digits
// (400,000).
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
