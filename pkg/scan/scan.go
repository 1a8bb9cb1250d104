// Package scan says what loading a pickle would import, call and change,
// without loading it, and judges that against an allowlist (pk scan, issue
// 13; docs/pk-scan.md).
//
// It opens an input with pkg/input (every container pk reads), runs pk's
// symbolic machine (pkg/pickle) over every stream of every pickle part, and
// walks each stream's call log in its compact store (Stream.Store, Store.Events;
// docs/engine.md), never the *Node graph: every global resolution, every
// call with what it calls, every BUILD or container operation on an object
// the pickle did not create, every persistent id, EXT code and out-of-band
// buffer. Each operation that the Policy does not allow becomes a Finding
// with its offset, opcode and a reason in plain words; the worst finding
// gives the input's Verdict.
package scan

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Verdict is the judgement of one input.
type Verdict string

const (
	Clean     Verdict = "clean"     // every operation loading performs is on the allowlist
	Unknown   Verdict = "unknown"   // globals not on the allowlist, none known to be dangerous
	Code      Verdict = "code"      // the file carries code (cloudpickle or dill functions, classes, code objects)
	Dangerous Verdict = "dangerous" // a known code-execution, import, I/O or process primitive, or a name that cannot be resolved statically
	Invalid   Verdict = "invalid"   // bytes CPython refuses, or that pk cannot read: never clean
)

// rank orders verdicts from best to worst.
func (v Verdict) rank() int {
	switch v {
	case Clean:
		return 0
	case Unknown:
		return 1
	case Code:
		return 2
	case Dangerous:
		return 3
	case Invalid:
		return 4
	}
	return 4
}

// Worse reports whether v is worse than w.
func (v Verdict) Worse(w Verdict) bool { return v.rank() > w.rank() }

// Role says what loading does with a global or object.
type Role string

const (
	RoleCall      Role = "call"      // called: REDUCE, INST, OBJ (func(*args))
	RoleConstruct Role = "construct" // instantiated without __init__: NEWOBJ, NEWOBJ_EX, copyreg._reconstructor/__newobj__
	RoleBuild     Role = "build"     // an instance the pickle created gets BUILD (__setstate__) or item/append operations
	RoleMutate    Role = "mutate"    // BUILD, SETITEM(S), APPEND(S), ADDITEMS on an object the pickle did not create (a class, a module's __dict__)
	RoleResolve   Role = "resolve"   // looked up (module imported, attribute fetched) and kept as a value, not called
	RolePersID    Role = "persid"    // a persistent id, resolved by the loader's persistent_load
	RoleExt       Role = "ext"       // an EXT code, resolved through copyreg's extension registry
	RoleBuffer    Role = "buffer"    // an out-of-band buffer (NEXT_BUFFER), supplied by the caller
)

// Severity of a finding: "dangerous", "code", "unknown", or "note" (a fact
// that does not change the verdict).
const (
	SevNote      = "note"
	SevUnknown   = "unknown"
	SevCode      = "code"
	SevDangerous = "dangerous"
)

func sevVerdict(s string) Verdict {
	switch s {
	case SevDangerous:
		return Dangerous
	case SevCode:
		return Code
	case SevUnknown:
		return Unknown
	}
	return Clean
}

// Finding is one operation loading performs that the policy does not allow
// (or, with severity "note", a fact worth knowing).
type Finding struct {
	Global   string `json:"global"` // module.qualname; "" when no name can be given
	Role     Role   `json:"role"`
	Offset   int64  `json:"offset"` // of the opcode, in the part's (decompressed) stream
	Opcode   string `json:"opcode"`
	Reason   string `json:"reason"`
	Severity string `json:"severity"`
	Part     string `json:"part,omitempty"` // the part of a container ("archive/data.pkl", "array 0"); "" for a bare pickle
	Stream   int    `json:"stream"`         // index of the pickle in its part (0 for the first)
}

// Report is the result for one input.
type Report struct {
	File     string    `json:"file"`
	Format   string    `json:"format,omitempty"`
	Verdict  Verdict   `json:"verdict"`
	Findings []Finding `json:"findings"`
	Error    string    `json:"error,omitempty"` // why the input is invalid
	Notes    []string  `json:"notes,omitempty"` // container notes (pkg/input)
	// Err is the error that made the input invalid when it could not be
	// opened at all (Error holds its text).
	Err error `json:"-"`
}

// ScanFile scans the file at path ("-" for stdin).
func ScanFile(path string, pol *Policy) *Report { return scanFile(path, pol, &Keep) }

// scanFile is ScanFile with what the machine keeps (nil: everything; the
// tests compare both).
func scanFile(path string, pol *Policy, keep *pickle.Keep) *Report {
	if keep != nil {
		if rep, ok := scanEach(path, pol, keep); ok {
			return rep
		}
		if rep, ok := scanOpened(path, pol, keep); ok {
			return rep
		}
	}
	doc, err := input.Open(path, pickle.Options{Keep: keep})
	if err != nil {
		return invalid(path, err)
	}
	return ScanDoc(doc, pol)
}

// scanOpened scans what scanEach leaves (a compressed layer, joblib content)
// through input.Open, analysing the events of the first part's pickle as
// they become final (Keep.Final; pkg/input gives the file's or the
// decompressed layer's bytes again for the plan). ok is false when it cannot
// vouch for the result: the open failed (the caller reports it in input's
// words), the machine released what a later opcode read (Error.Released:
// the events taken so far would count twice), or events were taken from a
// pickle that is not the input's first part.
func scanOpened(path string, pol *Policy, keep *pickle.Keep) (*Report, bool) {
	if pol == nil {
		pol = DefaultPolicy()
	}
	first := &input.Doc{Path: path, Parts: []input.Part{{Name: "", Role: input.RolePickle, Of: -1}}}
	s := &scanner{pol: pol, doc: first, ext: map[int64]extEntry{}, kinds: map[sameKey]*kindState{}}
	k := *keep
	k.Final = func(ps *pickle.Store, evs []pickle.SEvent) bool {
		if !s.final(ps, evs) {
			return false
		}
		s.took++
		return true
	}
	k.Taints = scanTaints
	doc, err := input.Open(path, pickle.Options{Keep: &k})
	if err != nil {
		return nil, false
	}
	if s.took > 0 && (len(doc.Parts) == 0 || doc.Parts[0].Name != "" || doc.Parts[0].Role != input.RolePickle || doc.Parts[0].Pickle == nil) {
		return nil, false
	}
	return scanDoc(s, doc), true
}

// scanTaints: what an analysis reads of another node that may still change
// is the items of a list, dict or set (argument descriptions); a global's
// or an object's later operations are events of their own (pickle.Keep).
func scanTaints(k pickle.Kind) bool {
	return k == pickle.KindList || k == pickle.KindDict || k == pickle.KindSet
}

// scanEach scans a bare pickle file, plain or under one layer of
// compression (input.EachStreamDecompressed), stream by stream (pickle.ParseEach):
// one stream's store is held at a time, so a million pickles back to back
// cost one. It gives the report ScanDoc gives for the same file, and leaves
// to the caller (ok false) what input.Open reads otherwise: a container,
// joblib content (a wrapper's BUILD), legacy torch (its magic number as the
// first stream), and any error, which the caller reports with input's
// words.
func scanEach(path string, pol *Policy, keep *pickle.Keep) (*Report, bool) {
	if pol == nil {
		pol = DefaultPolicy()
	}
	doc := &input.Doc{Path: path, Format: "pickle", Parts: []input.Part{{Name: "", Role: input.RolePickle, Of: -1}}}
	if c, _ := input.PeekFile(path); c != "" {
		// under one layer of compression: read as it is decompressed
		// (input.Open held every stream's store: a million pickles of
		// None in 2 KB of gzip took 600 MB)
		doc.Compression, doc.Format = c, input.Layered(c, "pickle")
	}
	s := &scanner{pol: pol, doc: doc, ext: map[int64]extEntry{}, kinds: map[sameKey]*kindState{}}
	k := *keep
	k.Final = s.final
	k.Taints = scanTaints
	file, compression, ok := input.EachStreamDecompressed(path, pickle.Options{NoGraph: true, Keep: &k}, input.Options{}, func(st *pickle.Stream) error {
		s.stream(st, &doc.Parts[0])
		return nil
	})
	if !ok || compression != doc.Compression {
		return nil, false
	}
	rep := &Report{File: path, Format: doc.Format, Verdict: Clean, Findings: []Finding{}}
	p := &doc.Parts[0]
	p.Pickle = file
	s.trailing(rep, p)
	s.finish(rep)
	return rep, true
}

// ScanReader scans r (its size unknown, as stdin), naming it name.
func ScanReader(r io.Reader, name string, pol *Policy) *Report {
	doc, err := input.OpenReader(r, name, pickle.Options{Keep: &Keep}, input.Options{})
	if err != nil {
		return invalid(name, err)
	}
	return ScanDoc(doc, pol)
}

// Keep is what the machine keeps of values for scan (pickle.Keep): the
// call log whole, and of everything else what brief and the joblib hook
// read (argument descriptions are three levels deep and show the first
// items; a NumpyArrayWrapper's state dict has seven entries). The store of
// a plain table then stays small however long the table is.
var Keep = pickle.Keep{Depth: 3, Items: 64}

func invalid(name string, err error) *Report {
	return &Report{File: name, Verdict: Invalid, Findings: []Finding{}, Error: err.Error(), Err: err}
}

// ScanDoc scans an opened input.
func ScanDoc(doc *input.Doc, pol *Policy) *Report {
	if pol == nil {
		pol = DefaultPolicy()
	}
	return scanDoc(&scanner{pol: pol, doc: doc, ext: map[int64]extEntry{}, kinds: map[sameKey]*kindState{}}, doc)
}

// scanDoc scans an opened input with s (which may have analysed events of
// its first part already: scanOpened).
func scanDoc(s *scanner, doc *input.Doc) *Report {
	s.doc = doc
	rep := &Report{File: doc.Path, Format: doc.Format, Verdict: Clean, Findings: []Finding{}, Notes: doc.Notes}
	for i := range doc.Parts {
		p := &doc.Parts[i]
		if p.Pickle == nil {
			if p.Role == input.RoleTrailing && p.Raw != nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d bytes after the data that the loader ignores (not a pickle: not scanned)", partName(p), p.Raw.Len))
			}
			continue
		}
		for _, st := range p.Pickle.Streams {
			s.stream(st, p)
		}
		s.trailing(rep, p)
	}
	s.finish(rep)
	return rep
}

// trailing adds what a part's bytes after its last complete pickle mean.
func (s *scanner) trailing(rep *Report, p *input.Part) {
	doc := s.doc
	if t := p.Pickle.Trailing; t != nil {
		msg := fmt.Sprintf("offset %d: %d bytes after the last complete pickle do not form one (%s): a load-until-EOF loop would read them, and pk could not scan them", t.Offset, t.Len, t.Reason)
		if strings.HasPrefix(t.Reason, fmt.Sprintf("offset %d: ", t.Offset)) && !strings.Contains(t.Reason, "stricter than CPython") {
			// the first opcode fails: a load-until-EOF loop stops there
			// without running anything
			rep.Notes = append(rep.Notes, partPrefix(p)+fmt.Sprintf("offset %d: %d bytes after the last complete pickle are not one (%s): a load-until-EOF loop fails on their first opcode, before anything runs", t.Offset, t.Len, t.Reason))
			return
		}
		if isTorchLegacy(doc) {
			// torch.load reads its five pickles and the records, then stops
			rep.Notes = append(rep.Notes, partPrefix(p)+msg+" (torch.load ignores them)")
			return
		}
		if rep.Error == "" {
			rep.Error = doc.Path + ": " + partPrefix(p) + msg
		}
	}
}

// finish orders the findings and gives the verdict.
func (s *scanner) finish(rep *Report) {
	s.summarize()
	sort.SliceStable(s.out, func(i, j int) bool {
		a, b := s.out[i], s.out[j]
		if a.part != b.part {
			return a.part < b.part
		}
		if a.f.Stream != b.f.Stream {
			return a.f.Stream < b.f.Stream
		}
		if a.f.Offset != b.f.Offset {
			return a.f.Offset < b.f.Offset
		}
		return a.seq.less(b.seq)
	})
	for _, o := range s.out {
		if o.dropped {
			continue
		}
		rep.Findings = append(rep.Findings, o.f)
		if v := sevVerdict(o.f.Severity); v.Worse(rep.Verdict) {
			rep.Verdict = v
		}
	}
	if rep.Error != "" {
		rep.Verdict = Invalid
	}
}

func partName(p *input.Part) string {
	if p.Name == "" {
		return "the file"
	}
	return p.Name
}

func partPrefix(p *input.Part) string {
	if p.Name == "" {
		return ""
	}
	return p.Name + ": "
}

// Flagged reports whether the verdict is anything but clean and invalid.
func (r *Report) Flagged() bool { return r.Verdict != Clean && r.Verdict != Invalid }
