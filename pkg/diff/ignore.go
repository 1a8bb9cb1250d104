package diff

import (
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
)

// ParseIgnore reads --ignore paths (pkg/path's grammar) and returns them
// as pkg/path spells them; a malformed one is an error naming its place.
func ParseIgnore(paths []string) ([]string, error) {
	out := make([]string, len(paths))
	for i, s := range paths {
		c, err := ppath.Canonical(s)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// CanonicalIgnores is ParseIgnore that keeps a path it cannot read as it is
// (callers of the package that did not check them).
func CanonicalIgnores(paths []string) []string {
	out := make([]string, len(paths))
	for i, s := range paths {
		out[i] = s
		if c, err := ppath.Canonical(s); err == nil {
			out[i] = c
		}
	}
	return out
}

// unmatched returns the --ignore paths that name nothing: neither matched
// by the walk (hit) nor found in any of the inputs' pickles by reaches.
func unmatched(opt Options, hit []bool, docs ...*input.Doc) []string {
	var left []int
	for i := range opt.Ignore {
		if !hit[i] {
			left = append(left, i)
		}
	}
	if len(left) == 0 {
		return nil
	}
	for _, d := range docs {
		if d == nil {
			continue
		}
		o := canon.DocOptions(d, opt.Canon)
		main := d.MainPart()
		for _, r := range canon.Parts(d, o) {
			p := &d.Parts[r.Index]
			at := partPath(r, r.Index == main)
			for _, i := range left {
				if ppath.Under(at, opt.Ignore[i]) {
					hit[i] = true
				}
			}
			if p.Pickle == nil {
				continue
			}
			heads := streamHeads(d, p)
			for si, st := range p.Pickle.Streams {
				var want []int
				for _, i := range left {
					if !hit[i] && (ppath.Under(opt.Ignore[i], heads[si]) || ppath.Under(heads[si], opt.Ignore[i])) {
						want = append(want, i)
					}
				}
				if len(want) == 0 {
					continue
				}
				v := canon.Normalize(st, o)
				for _, i := range want {
					if reaches(v.Root(), heads[si], opt.Ignore[i]) {
						hit[i] = true
						continue
					}
					for _, e := range v.EffectNodes() {
						if reaches(e, heads[si]+ppath.Pseudo("effect", e.EffectIndex()), opt.Ignore[i]) {
							hit[i] = true
							break
						}
					}
				}
			}
		}
	}
	var out []string
	for _, i := range left {
		if !hit[i] {
			out = append(out, opt.Ignore[i])
		}
	}
	return out
}
