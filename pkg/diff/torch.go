package diff

import (
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// MaxTensorScan bounds the nodes visited to name tensors.
const MaxTensorScan = 5_000_000

// tensorPaths finds, breadth first from the root of each pickle part, the
// Python path of every tensor rebuilt from a storage, by storage key, and
// of every joblib array wrapper, by "array:" + part name:
// a changed storage is then reported at root['layer.weight'], not at the
// zip member that holds it; and the tensor at each such path (by
// storage key, the first; by "path:" + path, each).
func tensorPaths(doc *input.Doc, opt canon.Options) (map[string]string, map[string]*input.TensorRef) {
	out := map[string]string{}
	refs := map[string]*input.TensorRef{}
	// joblib arrays: the NumpyArrayWrapper node each raw part follows
	type at struct {
		part, stream int
		id           pickle.ID
	}
	wrappers := map[at]string{}
	for _, p := range doc.Parts {
		if p.JoblibArray() {
			wrappers[at{p.Of, p.NodeStream, p.NodeID}] = p.Name
		}
	}
	for pi, p := range doc.Parts {
		if p.Pickle == nil || p.Role != input.RolePickle {
			continue
		}
		for _, st := range p.Pickle.Streams {
			hasPID := len(wrappers) > 0
			for _, ev := range st.Store().Log {
				if ev.Kind == pickle.EvPersID {
					hasPID = true
					break
				}
			}
			if !hasPID {
				continue
			}
			v := canon.Normalize(st, opt)
			type item struct {
				n    *canon.Node
				path string
			}
			seen := map[*canon.Node]bool{}
			queue := []item{{v.Root(), ppath.Root}}
			visited := 0
			for len(queue) > 0 && visited < MaxTensorScan {
				it := queue[0]
				queue = queue[1:]
				if seen[it.n] {
					continue
				}
				seen[it.n] = true
				visited++
				n := it.n
				id, inStream := n.StreamID()
				if name, ok := wrappers[at{pi, st.Index, id}]; ok && inStream {
					if _, dup := out["array:"+name]; !dup {
						out["array:"+name] = it.path
					}
				}
				// (a call a rule built is never a tensor's: rules rewrite
				// only copyreg, functools, cloudpickle and dill calls)
				if n.Kind() == pickle.KindCall && inStream {
					if t, ok := doc.TensorAt(v.Store(), id); ok && t.Storage != nil {
						if _, dup := out[t.Storage.Key]; !dup {
							out[t.Storage.Key] = it.path
							refs[t.Storage.Key] = t
						}
						refs["path:"+it.path] = t
						continue
					}
				}
				for _, k := range viewKids(n) {
					if !seen[k.n] {
						queue = append(queue, item{k.n, it.path + k.edge})
					}
				}
			}
		}
	}
	return out, refs
}
