package diff

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// ---- objects, as CPython's pickler writes instances ----

// obj is an instance of class mod.name: NEWOBJ (protocol 2 and later) or
// REDUCE of the class with args, then BUILD with state when it has one,
// then APPENDS of items when it has some (a list subclass).
func obj(mod, name string, reduce bool, args []*pv, state *pv, items []*pv) *pv {
	o := &pv{k: 'o', s: mod + "\n" + name, kids: []*pv{{k: 't', kids: args}, {k: '-'}, {k: '-'}}}
	if reduce {
		o.i = 1
	}
	if state != nil {
		o.kids[1] = state
	}
	if items != nil {
		o.kids[2] = &pv{k: 'l', kids: items}
	}
	return o
}

// saveObj writes an obj: the class global once (memoised, then read back
// by GET), the call, its state and items.
func (w *pw) saveObj(v *pv) {
	mod, name, _ := strings.Cut(v.s, "\n")
	gkey := "g:" + v.s
	if idx, ok := w.memo[gkey]; ok {
		w.get(idx)
	} else {
		if w.proto >= 4 {
			w.save(&pv{k: 's', s: mod})
			w.save(&pv{k: 's', s: name})
			w.op(0x93)
		} else {
			w.op([]byte("c" + mod + "\n" + name + "\n")...)
		}
		w.put(gkey)
	}
	args, state, items := v.kids[0], v.kids[1], v.kids[2]
	switch {
	case v.i == 0 && w.proto >= 2:
		w.save(args)
		w.op(0x81) // NEWOBJ
	default:
		w.save(args)
		w.op('R')
	}
	w.put("")
	if state.k != '-' {
		w.save(state)
		w.op('b')
	}
	if items.k == 'l' && len(items.kids) > 0 {
		if w.proto >= 1 {
			w.batches(items.kids, 1, 'a', 'e')
		} else {
			for _, x := range items.kids {
				w.save(x)
				w.op('a')
			}
		}
	}
}

// instance is a small object of class P (or Q) as a dataclass pickles.
func instance(g *vgen, i int) *pv {
	st := &pv{k: 'd', kids: []*pv{
		{k: 's', s: "i"}, {k: 'i', i: int64(i)},
		{k: 's', s: "name"}, {k: 's', s: "n" + strconv.Itoa(i)},
		{k: 's', s: "score"}, {k: 'f', f: float64(i) / 2},
		{k: 's', s: "tags"}, {k: 'l', kids: []*pv{{k: 's', s: "a"}, {k: 's', s: "b"}}},
	}}
	switch g.r.Intn(8) {
	case 0: // a REDUCE with args, no state
		return obj("mymod", "R", true, []*pv{{k: 'i', i: int64(i)}, {k: 's', s: g.word()}}, nil, nil)
	case 1: // a list subclass: items appended to the call result
		return obj("mymod", "L", g.proto < 2, nil, nil, []*pv{{k: 'i', i: int64(i)}, {k: 's', s: g.word()}})
	case 2: // an object inside the state
		st.kids[7] = obj("mymod", "P", g.proto < 2, nil, &pv{k: 'd', kids: []*pv{{k: 's', s: "i"}, {k: 'i', i: -int64(i)}}}, nil)
	}
	return obj("mymod", "P", g.proto < 2, nil, st, nil)
}

// mutateObj changes one instance of the list or dict result r.
func mutateObj(g *vgen, r *pv) string {
	step, off := 1, 0
	if r.k == 'd' {
		step, off = 2, 1
	}
	n := len(r.kids) / step
	at := g.r.Intn(n)*step + off
	o := r.kids[at]
	switch op := g.r.Intn(6); op {
	case 0: // a state value
		if st := o.kids[1]; st.k == 'd' {
			st.kids[1].i += 1000
			return "state"
		}
		o.kids[0].kids = append(o.kids[0].kids, &pv{k: 'n'})
		return "args"
	case 1: // the class's name
		mod, _, _ := strings.Cut(o.s, "\n")
		o.s = mod + "\nRenamed"
		return "class"
	case 2: // an instance inserted
		ins := []*pv{instance(g, 9999)}
		if r.k == 'd' {
			ins = []*pv{{k: 's', s: "new" + strconv.Itoa(g.r.Intn(1000))}, ins[0]}
			for i := 0; i < len(r.kids); i += 2 {
				if r.kids[i].key() == ins[0].key() {
					return "none"
				}
			}
		}
		p := at - off
		r.kids = append(r.kids[:p], append(ins, r.kids[p:]...)...)
		return "insert"
	case 3: // an instance removed
		p := at - off
		r.kids = append(r.kids[:p], r.kids[p+step:]...)
		return "remove"
	case 4: // a new key in the state
		if st := o.kids[1]; st.k == 'd' {
			st.kids = append(st.kids, &pv{k: 's', s: "extra"}, &pv{k: 'i', i: 1})
			return "newattr"
		}
		return "none"
	default: // a tag
		if st := o.kids[1]; st.k == 'd' && st.kids[7].k == 'l' {
			st.kids[7].kids[1] = &pv{k: 's', s: "c"}
			return "tag"
		}
		return "none"
	}
}

// TestFastDiffObjects: lists and dicts of class instances (NEWOBJ + BUILD,
// REDUCE, a list subclass, objects in state; one memoised class global read
// back by GET, written with GLOBAL and BINPUT up to protocol 3 and with
// STACK_GLOBAL of memoised strings, MEMOIZE and FRAME from 4) take the fast
// path and agree with the graph path.
func TestFastDiffObjects(t *testing.T) {
	dir := t.TempDir()
	taken, total := 0, 0
	kinds, seen := map[string]int{}, map[string]int{}
	for seed := int64(0); seed < int64(testfile.ShortDiv(20, 2)); seed++ {
		for _, proto := range []int{0, 1, 2, 3, 4, 5} {
			g := &vgen{r: rand.New(rand.NewSource(seed*11 + int64(proto))), proto: proto, words: words}
			n := 1 + g.r.Intn(30)
			if seed%7 == 6 {
				n = 1000 + g.r.Intn(1500)
			}
			a := &pv{k: 'l'}
			if seed%2 == 1 {
				a.k = 'd'
			}
			for i := 0; i < n; i++ {
				if a.k == 'd' {
					a.kids = append(a.kids, &pv{k: 's', s: "k" + strconv.Itoa(i)})
				}
				a.kids = append(a.kids, instance(g, i))
			}
			b := a.clone()
			for k := g.r.Intn(2); k >= 0; k-- {
				kinds[mutateObj(g, b)]++
			}
			frame := 64 + g.r.Intn(400)
			da, db := dump(a, proto, frame), dump(b, proto, frame)
			if seed%5 == 4 {
				db = gz(db)
			}
			pa := writeFile(t, dir, fmt.Sprintf("a%d_%d.pkl", seed, proto), da)
			pb := writeFile(t, dir, fmt.Sprintf("b%d_%d.pkl", seed, proto), db)
			same := writeFile(t, dir, fmt.Sprintf("s%d_%d.pkl", seed, proto), dump(a, proto, 1<<16))
			for _, pair := range [][2]string{{pa, pb}, {pb, pa}, {pa, same}} {
				total++
				if agreeFast(t, pair[0], pair[1], fastOpts[int(seed)%len(fastOpts)]) {
					taken++
				} else {
					t.Errorf("seed %d proto %d: %s vs %s left to the graph path", seed, proto, pair[0], pair[1])
				}
			}
			if r, ok := fastFiles(pa, pb, Options{}); ok {
				for _, e := range r.Entries {
					switch {
					case strings.HasSuffix(e.Path, ".__class__") || strings.HasSuffix(e.Path, ".__reduce__[0]"):
						seen["class"]++
					case e.Kind == Added || e.Kind == Removed:
						seen[string(e.Kind)]++
					case strings.Count(e.Path, ".") > 0:
						seen["attribute"]++
					}
				}
			}
		}
	}
	t.Logf("fast path took %d of %d pairs; changes %v; entries %v", taken, total, kinds, seen)
	for _, k := range []string{"class", string(Added), string(Removed), "attribute"} {
		if seen[k] < testfile.ShortDiv(5, 2) {
			t.Errorf("only %d entries of kind %s", seen[k], k)
		}
	}
}

// TestFastDiffObjectCases: hand-written object pickles.
func TestFastDiffObjectCases(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		a, b string
		fast bool // the fast path must take it
	}{
		// a global as an item, read back by GET in another
		"global items": {"\x80\x02](cmymod\nP\nq\x01h\x01e.", "\x80\x02](cmymod\nP\nq\x01cmymod\nQ\ne.", true},
		// STACK_GLOBAL of strings memoised before, read back by GET
		"stack global of gets": {"\x80\x04](\x8c\x05mymod\x94\x8c\x01P\x94h\x00h\x01\x93\x94)\x81\x94e.",
			"\x80\x04](\x8c\x05mymod\x94\x8c\x01Q\x94h\x00h\x01\x93\x94)\x81\x94e.", true},
		// a REDUCE of a callable the canonical form rewrites: the graph path
		"rule callable": {"\x80\x04](\x8c\x08builtins\x8c\tfrozenset\x93]K\x03a\x85Re.", "\x80\x04](\x8c\x08builtins\x8c\tfrozenset\x93]K\x04a\x85Re.", false},
		// a REDUCE of a standard-library callable no rule reads (ruleStd): the fast path
		"plain builtin callable": {"\x80\x04](\x8c\x08builtins\x8c\x03int\x93\x8c\x013\x85Re.", "\x80\x04](\x8c\x08builtins\x8c\x03int\x93\x8c\x014\x85Re.", true},
		// an instance read back by GET (shared, mutable): the graph path
		"shared instance": {"\x80\x04](\x8c\x01m\x8c\x01C\x93)\x81\x94h\x00e.", "\x80\x04](\x8c\x01m\x8c\x01D\x93)\x81\x94h\x00e.", false},
		// BUILD of a plain dict: the graph path
		"build of a dict": {"\x80\x04](}}be.", "\x80\x04](}}K\x01K\x02sbe.", false},
		// an object result: the verdict needs no items, a difference the graph
		"object result": {"\x80\x02cmymod\nP\n)\x81}U\x01iK\x01sb.", "\x80\x02cmymod\nP\n)\x81}U\x01iK\x02sb.", false},
		"same object":   {"\x80\x02cmymod\nP\n)\x81}X\x01\x00\x00\x00iK\x01sb.", "\x80\x04\x8c\x05mymod\x8c\x01P\x93)\x81}\x8c\x01iK\x01sb.", true},
	} {
		pa := writeFile(t, dir, "a.pkl", []byte(c.a))
		pb := writeFile(t, dir, "b.pkl", []byte(c.b))
		if got := agreeFast(t, pa, pb, Options{}); got != c.fast {
			t.Errorf("%s: fast path taken %v, want %v", name, got, c.fast)
		}
		if _, err := Files(pa, pb, Options{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestFastDiffFixtures: pairs of the corpus's files (testdata/fixtures: each
// with the next in name order - the same value at another protocol, or the
// next kind - and with the file six later - another value at the same
// protocol) agree with the graph path wherever the fast path takes them.
func TestFastDiffFixtures(t *testing.T) {
	var files []string
	for _, pat := range []string{"stdlib/*.pkl", "compressed/*.pkl.*", "numpy/*.pkl", "joblib/*.pkl"} {
		m, _ := filepath.Glob(filepath.Join(corpus, "fixtures", pat))
		for _, f := range m {
			if !strings.HasSuffix(f, ".txt") && !strings.HasSuffix(f, ".jsonl") {
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	if len(files) < 100 {
		t.Fatalf("only %d fixture files", len(files))
	}
	taken, objects := 0, 0
	for i := range files {
		for _, j := range []int{i + 1, i + 6} {
			if j >= len(files) {
				continue
			}
			if agreeFast(t, files[i], files[j], Options{}) {
				taken++
				if strings.Contains(files[i], "_obj_") || strings.Contains(files[i], "instance") || strings.Contains(files[i], "globals") {
					objects++
				}
			}
		}
	}
	t.Logf("fast path took %d pairs of %d files (%d of objects or globals)", taken, len(files), objects)
	if taken < 40 || objects < 5 {
		t.Errorf("fast path took only %d pairs (%d of objects)", taken, objects)
	}
}

// TestFastDiffObjectsNested: a large list of instances inside the result
// ({'rows': [...], 'meta': ...}) is compared by another pass, as lists of
// plain records are.
func TestFastDiffObjectsNested(t *testing.T) {
	dir := t.TempDir()
	passes := fastDescents
	for _, proto := range []int{2, 4} {
		g := &vgen{r: rand.New(rand.NewSource(int64(proto))), proto: proto, words: words}
		table := &pv{k: 'l'}
		for i := 0; i < 30000; i++ {
			table.kids = append(table.kids, instance(g, i))
		}
		a := &pv{k: 'd', kids: []*pv{{k: 's', s: "rows"}, table, {k: 's', s: "meta"}, instance(g, -1)}}
		b := a.clone()
		rows := b.kids[1]
		for k := 0; k < 3; k++ {
			mutateObj(g, rows)
		}
		pa := writeFile(t, dir, fmt.Sprintf("a%d.pkl", proto), dump(a, proto, 1<<16))
		pb := writeFile(t, dir, fmt.Sprintf("b%d.pkl", proto), dump(b, proto, 1<<16))
		if !agreeFast(t, pa, pb, Options{}) {
			t.Errorf("protocol %d: left to the graph path", proto)
		}
		if r, _ := fastFiles(pa, pb, Options{}); r == nil || len(r.Entries) == 0 || !strings.HasPrefix(r.Entries[0].Path, "root['rows'][") {
			t.Errorf("protocol %d: no difference in the table: %+v", proto, r)
		}
	}
	if fastDescents-passes < 2 {
		t.Errorf("%d passes over the table, want 2 or more", fastDescents-passes)
	}
}

// TestFastDiffObjectRoot: a result that is an object with a dict state
// (Dataset(rows=[...], name=..., meta={...})) is compared attribute by
// attribute, its large attributes by another pass; a different class or
// arguments, or a state that is not a dict of str keys, go to the graph path.
func TestFastDiffObjectRoot(t *testing.T) {
	dir := t.TempDir()
	taken, total, passes := 0, 0, fastDescents
	for seed := int64(0); seed < int64(testfile.ShortDiv(16, 2)); seed++ {
		proto := int(seed % 6)
		g := &vgen{r: rand.New(rand.NewSource(seed)), proto: proto, words: words}
		n := 5 + g.r.Intn(20)
		if seed%8 == 3 {
			n = 30000
		}
		table := &pv{k: 'l'}
		for i := 0; i < n; i++ {
			table.kids = append(table.kids, instance(g, i))
		}
		state := &pv{k: 'd', kids: []*pv{{k: 's', s: "rows"}, table, {k: 's', s: "name"}, {k: 's', s: g.word()}, {k: 's', s: "meta"}, g.dict(2, 4)}}
		a := obj("mymod", "Dataset", proto < 2, nil, state, nil)
		b := a.clone()
		st := b.kids[1]
		want := true
		switch seed % 8 {
		case 0, 3, 5:
			for k := 0; k < 2; k++ {
				mutateObj(g, st.kids[1])
			}
		case 1:
			st.kids[3] = &pv{k: 's', s: "renamed"}
			st.kids = append(st.kids, &pv{k: 's', s: "extra"}, &pv{k: 'i', i: 1})
		case 2:
			st.kids = st.kids[:4] // meta removed
			mutateObj(g, st.kids[1])
		case 4:
			b.s = "mymod\nOther" // another class: the graph path
			want = false
		case 6:
			b.kids[0].kids = []*pv{{k: 'i', i: 1}} // other arguments
			want = false
		case 7:
			st.kids = append(st.kids, &pv{k: 'i', i: 7}, &pv{k: 'n'}) // a key that is no attribute name
			want = false
		}
		pa := writeFile(t, dir, fmt.Sprintf("a%d.pkl", seed), dump(a, proto, 1<<16))
		pb := writeFile(t, dir, fmt.Sprintf("b%d.pkl", seed), dump(b, proto, 1<<16))
		for _, pair := range [][2]string{{pa, pb}, {pb, pa}} {
			total++
			got := agreeFast(t, pair[0], pair[1], fastOpts[int(seed)%len(fastOpts)])
			if got {
				taken++
			}
			if got != want {
				t.Errorf("seed %d: fast path taken %v, want %v", seed, got, want)
			}
		}
	}
	t.Logf("fast path took %d of %d pairs, %d passes over a large attribute", taken, total, fastDescents-passes)
	if fastDescents-passes < 2 {
		t.Errorf("only %d passes over a large attribute", fastDescents-passes)
	}
}
