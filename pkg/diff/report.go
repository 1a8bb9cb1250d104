package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
)

// Kinds of difference.
const (
	Changed      = "changed"
	Added        = "added"
	Removed      = "removed"
	TypeChanged  = "type changed"
	AliasChanged = "alias changed"
)

// Entry is one difference, at a path a Python user would write.
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
}

// Reason is one normalisation that contributed to equality.
type Reason struct {
	Rule  string `json:"rule"`
	Count int    `json:"count"`
}

// Result is the whole answer for two inputs.
type Result struct {
	A, B       string   `json:"-"`
	Same       bool     `json:"same"`
	BytesEqual bool     `json:"bytes_equal"`
	DigestA    string   `json:"digest_a"`
	DigestB    string   `json:"digest_b"`
	Reasons    []Reason `json:"reasons,omitempty"`
	Entries    []Entry  `json:"differences"`
	Omitted    int      `json:"omitted"`
}

// LargeValue is the size from which both sides show their byte sizes.
const LargeValue = 1024

// WriteText writes the report for people: a summary line, then one block per
// entry. max limits the entries shown (0: all).
func (r *Result) WriteText(w io.Writer, max int) {
	bold := color.New(color.Bold).SprintFunc()
	red := color.New(color.FgRed).SprintFunc()
	green := color.New(color.FgGreen).SprintFunc()
	yellow := color.New(color.FgYellow).SprintFunc()
	if r.Same && r.DigestA != r.DigestB {
		fmt.Fprintf(w, "%s and %s are the same outside the ignored paths\n", r.A, r.B)
		return
	}
	if r.Same {
		if r.BytesEqual {
			fmt.Fprintf(w, "%s and %s are identical\n", r.A, r.B)
			return
		}
		fmt.Fprintf(w, "%s and %s differ in bytes but are the same pickle (%s)", r.A, r.B, r.DigestA)
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
	shown := r.Entries
	if max > 0 && len(shown) > max {
		shown = shown[:max]
	}
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
		fmt.Fprintf(w, "%s  %s\n", bold(e.Path), kind)
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

// WriteJSON writes the report as one JSON object.
func (r *Result) WriteJSON(w io.Writer, max int) error {
	out := *r
	if max > 0 && len(out.Entries) > max {
		out.Omitted += len(out.Entries) - max
		out.Entries = out.Entries[:max]
	}
	if out.Entries == nil {
		out.Entries = []Entry{}
	}
	type named struct {
		A string `json:"a"`
		B string `json:"b"`
		Result
	}
	return encodeJSON(w, named{A: r.A, B: r.B, Result: out})
}

// encodeJSON writes v as diff's --json does: one indented object.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
