package canon

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// RuleStorageKey: legacy torch.save files name each storage by the memory
// address of its data (str(storage._cdata)), new in every process. The key
// is replaced by the storage's ordinal in order of first appearance among
// the persistent ids ('storage', type, KEY, location, numel) of the file,
// in the persistent ids, in the key list pickle (whose order follows the
// addresses, so it becomes the ordinals in order) and in the names and
// order of the raw storage records. Zip-format files (torch ≥ 1.6) number
// their storages already and are left alone.
const RuleStorageKey = "torch-storage-key"

// PartRef is one part of an input in canonical order, with its canonical
// name: the order and names pk hash covers and pk diff aligns by.
type PartRef struct {
	Index int    // in Doc.Parts
	Name  string // Doc.Key, or "storage #N" for renamed legacy storages
}

// DocOptions returns opt completed with what the whole input tells about
// its streams (the legacy torch storage keys). Use it for every Normalize
// of the input's streams.
func DocOptions(doc *input.Doc, opt Options) Options {
	if opt.v2() {
		opt.arrays = newDocArrays(doc)
		opt.arrays.decide(opt)
	}
	if opt.Strict || !strings.Contains(doc.Format, "torch-legacy") {
		return opt
	}
	keys := map[string]int{}
	for _, p := range doc.Parts {
		if p.Pickle == nil {
			continue
		}
		for _, st := range p.Pickle.Streams {
			s := st.Store()
			for n := pickle.ID(0); n < pickle.ID(s.Len()); n++ {
				if s.Kind(n) != pickle.KindPersID {
					continue
				}
				if r, ok := doc.StorageAt(s, n); ok {
					if _, seen := keys[r.Key]; !seen {
						keys[r.Key] = len(keys)
					}
				}
			}
		}
	}
	if len(keys) > 0 {
		opt.storageKeys = keys
	}
	return opt
}

// Parts lists the parts of doc in canonical order with canonical names.
func Parts(doc *input.Doc, opt Options) []PartRef {
	out := make([]PartRef, 0, len(doc.Parts))
	keys := opt.storageKeys
	var storages []PartRef
	first := -1
	for i, p := range doc.Parts {
		if opt.arrays != nil && opt.arrays.used[i] {
			continue // the data of an array of a stream (Form2)
		}
		if keys != nil && p.Role == input.RoleStorage {
			if k, ok := keys[p.Key]; ok {
				if first < 0 {
					first = len(out)
					out = append(out, PartRef{Index: -1})
				}
				storages = append(storages, PartRef{Index: i, Name: fmt.Sprintf("storage #%d", k)})
				continue
			}
		}
		out = append(out, PartRef{Index: i, Name: doc.Key(i)})
	}
	if first >= 0 {
		sort.Slice(storages, func(a, b int) bool {
			return keys[doc.Parts[storages[a].Index].Key] < keys[doc.Parts[storages[b].Index].Key]
		})
		out = append(out[:first], append(storages, out[first+1:]...)...)
	}
	return out
}

// storageKey rewrites the key of a torch persistent id node.
func (v *View) storageKey(n pickle.ID) {
	if v.nitems(n) != 1 {
		return
	}
	pid := v.items(n)[0]
	items, ok := v.tuple(pid)
	if !ok || len(items) < 5 {
		return
	}
	if s, ok := v.str(items[0]); !ok || s != "storage" {
		return
	}
	key, ok := v.str(items[2])
	if !ok {
		return
	}
	k, ok := v.Opt.storageKeys[key]
	if !ok {
		return
	}
	na := append([]pickle.ID(nil), items...)
	na[2] = v.placeholder(items[2], fmt.Sprintf("storage #%d", k))
	t := v.synth(pickle.KindTuple, v.res(pid))
	v.setKids(t, na)
	v.setRepl(pid, t)
	v.note(RuleStorageKey, n)
}

// storageKeyList rewrites the root of the key-list pickle of a legacy file:
// a list of keys (written in the order of their addresses) becomes the list
// of their ordinals in order.
func (v *View) storageKeyList() {
	root := v.s.Root
	if root < 0 || v.kind(root) != pickle.KindList || v.nmuts(root) > 0 || v.nitems(root) == 0 {
		return
	}
	ords := make([]int, 0, v.nitems(root))
	for _, it := range v.items(root) {
		s, ok := v.str(it)
		if !ok {
			return
		}
		k, ok := v.Opt.storageKeys[s]
		if !ok {
			return
		}
		ords = append(ords, k)
	}
	sort.Ints(ords)
	l := v.synth(pickle.KindList, root)
	items := make([]pickle.ID, 0, len(ords))
	for _, k := range ords {
		items = append(items, v.placeholder(root, fmt.Sprintf("storage #%d", k)))
	}
	v.setKids(l, items)
	v.setRepl(root, l)
	v.note(RuleStorageKey, root)
}
