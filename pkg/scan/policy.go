package scan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Name is a global as find_class looks it up: the module, and the
// (possibly dotted) qualified name inside it. Module-only names (an
// import_module result) have an empty Qual.
type Name struct{ Module, Qual string }

func (n Name) String() string {
	if n.Qual == "" {
		return n.Module
	}
	return n.Module + "." + n.Qual
}

// Policy is an allowlist of exact names per role. Construct implies build:
// a class that may be instantiated may also get its state (BUILD) and its
// items. A name allowed in any role may also be resolved (kept as a value).
type Policy struct {
	Call      map[Name]bool
	Construct map[Name]bool
	Mutate    map[Name]bool
	Resolve   map[Name]bool
	// ConstructPackages are packages ("sklearn") any class of which (in the
	// package or a submodule) may be constructed and built: the one
	// non-exact form, written "construct PACKAGE.*".
	ConstructPackages []string
	// Presets applied, in order.
	Presets []string
	// torch: persistent ids ('storage', <storage class>, key, location,
	// numel) inside torch.save files are torch's own storages.
	torchStorage bool
	// dill: names in __main__ may be resolved (kept as values, fetched
	// from): dill pickles __main__'s classes by value and refers to them by
	// name while it rebuilds them
	allowMain bool
}

// DefaultPresets is what pk scan allows without --allow.
var DefaultPresets = []string{"data", "numpy", "torch"}

// NewPolicy returns a policy of the given presets.
func NewPolicy(presets ...string) (*Policy, error) {
	p := &Policy{Call: map[Name]bool{}, Construct: map[Name]bool{}, Mutate: map[Name]bool{}, Resolve: map[Name]bool{}}
	for _, name := range presets {
		if err := p.AddPreset(name); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// DefaultPolicy is NewPolicy(DefaultPresets...).
func DefaultPolicy() *Policy {
	p, err := NewPolicy(DefaultPresets...)
	if err != nil {
		panic(err)
	}
	return p
}

// PresetNames lists the presets.
func PresetNames() []string {
	out := make([]string, 0, len(presets))
	for k := range presets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// AddPreset adds a preset's entries.
func (p *Policy) AddPreset(name string) error {
	entries, ok := presets[name]
	if !ok {
		return fmt.Errorf("unknown preset %q (presets: %s)", name, strings.Join(PresetNames(), ", "))
	}
	for _, pr := range p.Presets {
		if pr == name {
			return nil
		}
	}
	p.Presets = append(p.Presets, name)
	if name == "torch" {
		p.torchStorage = true
	}
	if name == "dill" {
		p.allowMain = true
	}
	for _, e := range entries {
		roles, spec, _ := strings.Cut(e, " ")
		if pkg, ok := strings.CutSuffix(spec, ".*"); ok && roles == "n" {
			p.ConstructPackages = append(p.ConstructPackages, pkg)
			continue
		}
		n, err := ParseName(spec)
		if err != nil {
			panic(err)
		}
		for _, r := range roles {
			switch r {
			case 'c':
				p.Call[n] = true
			case 'n':
				p.Construct[n] = true
			case 'm':
				p.Mutate[n] = true
			case 'r':
				p.Resolve[n] = true
			default:
				panic("bad preset role " + string(r))
			}
		}
	}
	return nil
}

// ParseName reads "module:qualname" (the pair exactly), or "module.name"
// (split at the last dot: the name has no dot).
func ParseName(s string) (Name, error) {
	s = strings.TrimSpace(s)
	if m, q, ok := strings.Cut(s, ":"); ok {
		if m == "" || q == "" || strings.ContainsAny(s, " \t") {
			return Name{}, fmt.Errorf("bad name %q: want module:qualname", s)
		}
		return Name{m, q}, nil
	}
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || i == len(s)-1 || strings.ContainsAny(s, " \t") {
		return Name{}, fmt.Errorf("bad name %q: want module.name or module:qualname", s)
	}
	return Name{s[:i], s[i+1:]}, nil
}

// Allowed reports whether role may be applied to n. A dotted name matches
// an entry that splits the same dotted path elsewhere between module and
// qualname (pickle's dill/_dill.x is the entry dill._dill:x): importing a
// module sets it as an attribute of its package.
func (p *Policy) Allowed(role Role, n Name) bool {
	if p.allowMain && role == RoleResolve && n.Module == "__main__" {
		// dill refers to the classes it is rebuilding by their __main__
		// name; never a name known to be dangerous (__main__.os.system)
		if sev, _ := classify(n); sev != SevDangerous {
			return true
		}
	}
	if p.allowed(role, n) {
		return true
	}
	if !strings.Contains(n.Qual, ".") && !strings.Contains(n.Module, ".") {
		return false
	}
	full := n.String()
	for i := 0; i < len(full); i++ {
		if full[i] == '.' {
			if alt := (Name{full[:i], full[i+1:]}); alt != n && p.allowed(role, alt) {
				return true
			}
		}
	}
	return false
}

func (p *Policy) inPackage(n Name) bool {
	for _, pkg := range p.ConstructPackages {
		if n.Module == pkg || strings.HasPrefix(n.Module, pkg+".") {
			return n.Qual != "" && !strings.Contains(n.Qual, ".")
		}
	}
	return false
}

func (p *Policy) allowed(role Role, n Name) bool {
	switch role {
	case RoleCall:
		return p.Call[n]
	case RoleConstruct, RoleBuild:
		return p.Construct[n] || p.inPackage(n)
	case RoleMutate:
		return p.Mutate[n]
	case RoleResolve:
		return p.Resolve[n] || p.Call[n] || p.Construct[n] || p.Mutate[n]
	}
	return false
}

// LoadFile adds the entries of a policy file (docs/pk-scan.md): JSON
//
//	{"presets": ["data"], "call": ["mod:qual"], "construct": [...], "mutate": [...], "resolve": [...]}
//
// or text, one entry a line, '#' comments:
//
//	preset numpy
//	call module:qualname
//	construct module.Name
func (p *Policy) LoadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := p.load(b); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

func (p *Policy) load(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var j struct {
			Presets   []string `json:"presets"`
			Call      []string `json:"call"`
			Construct []string `json:"construct"`
			Mutate    []string `json:"mutate"`
			Resolve   []string `json:"resolve"`
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return err
		}
		for _, pr := range j.Presets {
			if err := p.AddPreset(pr); err != nil {
				return err
			}
		}
		for _, l := range []struct {
			role string
			xs   []string
		}{{"call", j.Call}, {"construct", j.Construct}, {"mutate", j.Mutate}, {"resolve", j.Resolve}} {
			for _, x := range l.xs {
				if err := p.addEntry(l.role, x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return fmt.Errorf("line %d: want \"ROLE NAME\" (roles: preset, call, construct, mutate, resolve)", line)
		}
		if f[0] == "preset" {
			if err := p.AddPreset(f[1]); err != nil {
				return fmt.Errorf("line %d: %v", line, err)
			}
			continue
		}
		if err := p.addEntry(f[0], f[1]); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
	}
	return sc.Err()
}

// addEntry adds "ROLE NAME" from a policy file.
func (p *Policy) addEntry(role, spec string) error {
	if pkg, ok := strings.CutSuffix(spec, ".*"); ok {
		if role != "construct" && role != "build" {
			return fmt.Errorf("%s: PACKAGE.* is allowed only with construct", spec)
		}
		p.ConstructPackages = append(p.ConstructPackages, pkg)
		return nil
	}
	n, err := ParseName(spec)
	if err != nil {
		return err
	}
	switch role {
	case "call":
		p.Call[n] = true
	case "construct", "build":
		p.Construct[n] = true
	case "mutate":
		p.Mutate[n] = true
	case "resolve":
		p.Resolve[n] = true
	default:
		return fmt.Errorf("unknown role %q (roles: preset, call, construct, mutate, resolve)", role)
	}
	return nil
}
