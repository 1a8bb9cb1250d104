package diff

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// slowFiles is Files on the graph path.
func slowFiles(a, b string, opt Options) (*Result, error) {
	noFast = true
	defer func() { noFast = false }()
	return Files(a, b, opt)
}

// renderAll is everything a Result shows: text (all entries and the default
// --max) and JSON.
func renderAll(t testing.TB, r *Result) string {
	var b bytes.Buffer
	r.WriteText(&b, 0)
	b.WriteString("--\n")
	r.WriteText(&b, 50)
	b.WriteString("--\n")
	if err := r.WriteJSON(&b, 0); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// agreeFast checks that the fast path, when it takes the pair, gives the
// graph path's Result; it reports whether it took it.
func agreeFast(t *testing.T, a, b string, opt Options) bool {
	t.Helper()
	fast, ok := fastFiles(a, b, opt)
	slow, err := slowFiles(a, b, opt)
	if !ok {
		return false
	}
	if err != nil {
		t.Errorf("%s vs %s: the fast path took a pair the graph path refuses: %v", a, b, err)
		return true
	}
	for _, e := range slow.Entries {
		fastKinds[e.Kind+map[bool]string{true: " at root", false: ""}[strings.Count(e.Path, "[") == 1]]++
	}
	if f, s := renderAll(t, fast), renderAll(t, slow); f != s {
		t.Errorf("%s vs %s %+v: fast path\n%s\ngraph path\n%s", a, b, opt.Canon, f, s)
	}
	return true
}

// fastKinds counts the entries the fast path produced, by kind (tests
// log it: the generated pairs must cover every kind).
var fastKinds = map[string]int{}

var fastOpts = []Options{{}, {Canon: canon.Options{KeepDictOrder: true}}, {Canon: canon.Options{Algo: canon.XXH3}}}

// TestFastDiffCorpus: every pair of testdata/differ and every pair of files
// in one testdata/equiv case.
func TestFastDiffCorpus(t *testing.T) {
	var pairs [][2]string
	dirs, _ := filepath.Glob(filepath.Join(corpus, "differ", "*"))
	for _, d := range dirs {
		pairs = append(pairs, [2]string{filepath.Join(d, "a.pkl"), filepath.Join(d, "b.pkl")})
	}
	dirs, _ = filepath.Glob(filepath.Join(corpus, "equiv", "*"))
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.pkl"))
		sort.Strings(files)
		for i := range files {
			for j := range files {
				if i != j && (j == i+1 || j == 0) {
					pairs = append(pairs, [2]string{files[i], files[j]})
				}
			}
		}
	}
	if len(pairs) < 30 {
		t.Fatalf("only %d pairs in the corpus", len(pairs))
	}
	taken := 0
	for _, p := range pairs {
		for _, opt := range fastOpts {
			if agreeFast(t, p[0], p[1], opt) {
				taken++
			}
		}
	}
	t.Logf("fast path took %d of %d", taken, len(pairs)*len(fastOpts))
	if taken < 20 {
		t.Errorf("fast path took only %d pairs", taken)
	}
}

// ---- a plain-data pickler, as CPython's writes each protocol ----

// pv is a plain value: n none, b bool, i int, f float, s str, y bytes,
// l list, d dict (kids: key, value, ...), t tuple, e set, F frozenset.
type pv struct {
	k    byte
	i    int64
	f    float64
	s    string
	kids []*pv
}

func (v *pv) clone() *pv {
	c := *v
	c.kids = nil
	for _, k := range v.kids {
		c.kids = append(c.kids, k.clone())
	}
	return &c
}

func (v *pv) container() bool { return strings.IndexByte("ldteF", v.k) >= 0 }

// pure: a value the fast path may read back from the memo.
func (v *pv) pure() bool {
	switch v.k {
	case 'l', 'd', 'e', 'o':
		return false
	case 't', 'F':
		for _, k := range v.kids {
			if !k.pure() {
				return false
			}
		}
	}
	return true
}

func (v *pv) key() string {
	var b strings.Builder
	b.WriteByte(v.k)
	switch v.k {
	case 'i', 'b':
		b.WriteString(strconv.FormatInt(v.i, 10))
	case 'f':
		b.WriteString(strconv.FormatUint(math.Float64bits(v.f), 16))
	case 's', 'y':
		b.WriteString(strconv.Quote(v.s))
	}
	b.WriteByte('(')
	for _, k := range v.kids {
		b.WriteString(k.key())
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

type pw struct {
	proto int
	frame int
	out   bytes.Buffer
	cur   bytes.Buffer
	memo  map[string]int
	n     int
}

func (w *pw) op(b ...byte) {
	w.cur.Write(b)
	if w.proto >= 4 && w.cur.Len() >= w.frame {
		w.flush()
	}
}

func (w *pw) flush() {
	if w.cur.Len() == 0 {
		return
	}
	if w.proto >= 4 {
		w.out.WriteByte(0x95)
		binary.Write(&w.out, binary.LittleEndian, uint64(w.cur.Len()))
	}
	w.out.Write(w.cur.Bytes())
	w.cur.Reset()
}

func u32(n int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(n)) }

func (w *pw) put(key string) {
	idx := w.n
	w.n++
	if key != "" {
		w.memo[key] = idx
	}
	switch {
	case w.proto >= 4:
		w.op(0x94)
	case w.proto >= 1 && idx < 256:
		w.op('q', byte(idx))
	case w.proto >= 1:
		w.op(append([]byte{'r'}, u32(idx)...)...)
	default:
		w.op([]byte(fmt.Sprintf("p%d\n", idx))...)
	}
}

func (w *pw) get(idx int) {
	switch {
	case w.proto >= 1 && idx < 256:
		w.op('h', byte(idx))
	case w.proto >= 1:
		w.op(append([]byte{'j'}, u32(idx)...)...)
	default:
		w.op([]byte(fmt.Sprintf("g%d\n", idx))...)
	}
}

func (w *pw) batches(items []*pv, step int, one, many byte) {
	for i := 0; i < len(items); i += 1000 * step {
		end := min(i+1000*step, len(items))
		if end-i == step && one != 0 {
			for _, x := range items[i:end] {
				w.save(x)
			}
			w.op(one)
			continue
		}
		w.op('(')
		for _, x := range items[i:end] {
			w.save(x)
		}
		w.op(many)
	}
}

func (w *pw) save(v *pv) {
	if v.pure() && v.k != 'n' && v.k != 'b' && v.k != 'i' && v.k != 'f' && !(v.k == 't' && len(v.kids) == 0) {
		if idx, ok := w.memo[v.key()]; ok {
			w.get(idx)
			return
		}
	}
	switch v.k {
	case 'n':
		w.op('N')
	case 'b':
		switch {
		case w.proto >= 2 && v.i != 0:
			w.op(0x88)
		case w.proto >= 2:
			w.op(0x89)
		default:
			w.op([]byte(fmt.Sprintf("I0%d\n", v.i))...)
		}
	case 'i':
		x := v.i
		switch {
		case w.proto >= 1 && x >= 0 && x < 256:
			w.op('K', byte(x))
		case w.proto >= 1 && x >= 0 && x < 65536:
			w.op('M', byte(x), byte(x>>8))
		case w.proto >= 1 && x >= math.MinInt32 && x <= math.MaxInt32:
			w.op(append([]byte{'J'}, u32(int(x))...)...)
		case w.proto >= 2:
			b := binary.LittleEndian.AppendUint64(nil, uint64(x))
			for len(b) > 1 && (b[len(b)-1] == 0 && b[len(b)-2]&0x80 == 0 || b[len(b)-1] == 0xff && b[len(b)-2]&0x80 != 0) {
				b = b[:len(b)-1]
			}
			w.op(append([]byte{0x8a, byte(len(b))}, b...)...)
		case x >= math.MinInt32 && x <= math.MaxInt32:
			w.op([]byte(fmt.Sprintf("I%d\n", x))...)
		default:
			w.op([]byte(fmt.Sprintf("L%dL\n", x))...)
		}
	case 'f':
		if w.proto >= 1 {
			w.op(binary.BigEndian.AppendUint64([]byte{'G'}, math.Float64bits(v.f))...)
		} else {
			w.op([]byte("F" + strconv.FormatFloat(v.f, 'g', -1, 64) + "\n")...)
		}
	case 's':
		switch {
		case w.proto >= 4 && len(v.s) < 256:
			w.op(append([]byte{0x8c, byte(len(v.s))}, v.s...)...)
		case w.proto >= 1:
			w.op(append(append([]byte{'X'}, u32(len(v.s))...), v.s...)...)
		default:
			w.op([]byte("V" + v.s + "\n")...)
		}
		w.put(v.key())
	case 'y':
		if len(v.s) < 256 {
			w.op(append([]byte{'C', byte(len(v.s))}, v.s...)...)
		} else {
			w.op(append(append([]byte{'B'}, u32(len(v.s))...), v.s...)...)
		}
		w.put(v.key())
	case 'l':
		if w.proto >= 1 {
			w.op(']')
			w.put("")
			w.batches(v.kids, 1, 'a', 'e')
		} else {
			w.op('(', 'l')
			w.put("")
			for _, x := range v.kids {
				w.save(x)
				w.op('a')
			}
		}
	case 'd':
		if w.proto >= 1 {
			w.op('}')
			w.put("")
			w.batches(v.kids, 2, 's', 'u')
		} else {
			w.op('(', 'd')
			w.put("")
			for i := 0; i < len(v.kids); i += 2 {
				w.save(v.kids[i])
				w.save(v.kids[i+1])
				w.op('s')
			}
		}
	case 't':
		if len(v.kids) == 0 {
			if w.proto >= 1 {
				w.op(')')
			} else {
				w.op('(', 't')
			}
			return
		}
		if w.proto >= 2 && len(v.kids) <= 3 {
			for _, x := range v.kids {
				w.save(x)
			}
			w.op(0x85 + byte(len(v.kids)) - 1)
		} else {
			w.op('(')
			for _, x := range v.kids {
				w.save(x)
			}
			w.op('t')
		}
		key := ""
		if v.pure() {
			key = v.key()
		}
		w.put(key)
	case 'e':
		w.op(0x8f)
		w.put("")
		w.batches(v.kids, 1, 0, 0x90)
	case 'F':
		w.op('(')
		for _, x := range v.kids {
			w.save(x)
		}
		w.op(0x91)
		w.put(v.key())
	case 'o':
		w.saveObj(v)
	}
}

// dump pickles v as CPython's pickler writes protocol proto (frames of
// about frame bytes from protocol 4).
func dump(v *pv, proto, frame int) []byte {
	w := &pw{proto: proto, frame: frame, memo: map[string]int{}}
	if proto >= 2 {
		w.out.Write([]byte{0x80, byte(proto)})
	}
	w.save(v)
	w.op('.')
	w.flush()
	return w.out.Bytes()
}

// ---- random values and changes ----

type vgen struct {
	r     *rand.Rand
	proto int
	words []string
}

func (g *vgen) word() string { return g.words[g.r.Intn(len(g.words))] }

func (g *vgen) scalar() *pv {
	switch g.r.Intn(9) {
	case 0:
		return &pv{k: 'n'}
	case 1:
		return &pv{k: 'b', i: int64(g.r.Intn(2))}
	case 2:
		return &pv{k: 'i', i: int64(g.r.Intn(300))}
	case 3:
		return &pv{k: 'i', i: g.r.Int63n(1<<40) - 1<<39}
	case 4:
		return &pv{k: 'f', f: float64(g.r.Intn(2000)) / 8}
	case 5:
		if g.proto >= 3 {
			return &pv{k: 'y', s: g.word()}
		}
		return &pv{k: 's', s: g.word() + "x"}
	case 6:
		if g.r.Intn(20) == 0 {
			return &pv{k: 's', s: strings.Repeat(g.word(), 200)}
		}
		fallthrough
	default:
		return &pv{k: 's', s: g.word()}
	}
}

func (g *vgen) key() *pv {
	switch g.r.Intn(6) {
	case 0:
		return &pv{k: 'i', i: int64(g.r.Intn(100000))}
	case 1:
		return &pv{k: 't', kids: []*pv{{k: 's', s: g.word()}, {k: 'i', i: int64(g.r.Intn(50))}}}
	}
	return &pv{k: 's', s: g.word() + strconv.Itoa(g.r.Intn(30))}
}

func (g *vgen) value(depth int) *pv {
	if depth <= 0 || g.r.Intn(3) == 0 {
		return g.scalar()
	}
	switch g.r.Intn(7) {
	case 0, 1:
		return g.list(depth-1, g.r.Intn(6))
	case 2, 3:
		return g.dict(depth-1, g.r.Intn(6))
	case 4:
		n := g.r.Intn(5)
		t := &pv{k: 't'}
		for i := 0; i < n; i++ {
			t.kids = append(t.kids, g.value(depth-1))
		}
		return t
	case 5:
		if g.proto >= 4 {
			k := byte('e')
			if g.r.Intn(2) == 0 {
				k = 'F'
			}
			s := &pv{k: k}
			seen := map[string]bool{}
			for i := g.r.Intn(5); i > 0; i-- {
				x := g.key()
				if !seen[x.key()] {
					seen[x.key()] = true
					s.kids = append(s.kids, x)
				}
			}
			return s
		}
	}
	return g.scalar()
}

func (g *vgen) list(depth, n int) *pv {
	l := &pv{k: 'l'}
	for i := 0; i < n; i++ {
		l.kids = append(l.kids, g.value(depth))
	}
	return l
}

func (g *vgen) dict(depth, n int) *pv {
	d := &pv{k: 'd'}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		k := g.key()
		if seen[k.key()] {
			continue
		}
		seen[k.key()] = true
		d.kids = append(d.kids, k, g.value(depth))
	}
	return d
}

// containers lists the lists and dicts of v (v first), without recursion.
func containers(v *pv) []*pv {
	var out []*pv
	stack := []*pv{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.k == 'l' || x.k == 'd' {
			out = append(out, x)
		}
		if x.k == 'l' || x.k == 'd' || x.k == 't' {
			stack = append(stack, x.kids...)
		}
	}
	return out
}

// mutate changes v in place: at the root (root true) or in a container
// below it.
func (g *vgen) mutate(v *pv, root bool) {
	cs := containers(v)
	c := v
	if !root && len(cs) > 1 {
		c = cs[1+g.r.Intn(len(cs)-1)]
	}
	step := 1
	if c.k == 'd' {
		step = 2
	}
	n := len(c.kids) / step
	switch op := g.r.Intn(5); {
	case op == 0 || n == 0: // insert
		at := g.r.Intn(n+1) * step
		var ins []*pv
		if c.k == 'd' {
			k := &pv{k: 's', s: "new" + strconv.Itoa(g.r.Intn(1000))}
			for i := 0; i < len(c.kids); i += 2 {
				if c.kids[i].key() == k.key() {
					return
				}
			}
			ins = []*pv{k, g.value(2)}
		} else {
			ins = []*pv{g.value(2)}
		}
		c.kids = append(c.kids[:at], append(ins, c.kids[at:]...)...)
	case op == 1: // delete
		at := g.r.Intn(n) * step
		c.kids = append(c.kids[:at], c.kids[at+step:]...)
	case op == 2: // a new value
		at := g.r.Intn(n)*step + step - 1
		c.kids[at] = g.value(2)
	default: // a scalar somewhere below changes
		at := g.r.Intn(n)*step + step - 1
		x := c.kids[at]
		for x.container() && len(x.kids) > 0 && x.k != 'e' && x.k != 'F' {
			x = x.kids[g.r.Intn(len(x.kids))]
		}
		switch x.k {
		case 'i':
			x.i++
		case 's':
			x.s += "!"
		case 'f':
			x.f = -x.f - 1
		default:
			*x = *g.scalar()
		}
	}
}

var words = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega name score tags id")

func writeFile(t testing.TB, dir, name string, b []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFastDiffGenerated: random plain-data pickles of every protocol, list
// and dict results, changed at the root and below (values, insertions,
// deletions, new values; memo references to strings and tuples built in
// other items), agree with the graph path.
func TestFastDiffGenerated(t *testing.T) {
	dir := t.TempDir()
	taken, total := 0, 0
	for seed := int64(0); seed < int64(testfile.ShortDiv(24, 4)); seed++ {
		for proto := 0; proto <= 5; proto++ {
			g := &vgen{r: rand.New(rand.NewSource(seed*7 + int64(proto))), proto: proto, words: words}
			var a *pv
			n := 1 + g.r.Intn(40)
			if seed%10 == 9 {
				n = 1000 + g.r.Intn(1500) // several batches
			}
			if seed%2 == 0 {
				a = g.list(3, n)
			} else {
				a = g.dict(3, n)
			}
			b := a.clone()
			for k := g.r.Intn(3); k >= 0; k-- {
				g.mutate(b, g.r.Intn(2) == 0)
			}
			frame := 64 + g.r.Intn(400)
			da, db := dump(a, proto, frame), dump(b, proto, frame+g.r.Intn(2)*100)
			switch seed % 4 {
			case 1:
				da, db = gz(da), gz(db)
			case 2:
				db = gz(db)
			}
			pa := writeFile(t, dir, fmt.Sprintf("a%d_%d.pkl", seed, proto), da)
			pb := writeFile(t, dir, fmt.Sprintf("b%d_%d.pkl", seed, proto), db)
			same := writeFile(t, dir, fmt.Sprintf("s%d_%d.pkl", seed, proto), dump(a, proto, frame))
			other := writeFile(t, dir, fmt.Sprintf("o%d_%d.pkl", seed, proto), dump(a, max(proto, 4-proto%2), 1<<16))
			for _, opt := range []Options{fastOpts[(int(seed)+proto)%len(fastOpts)]} {
				for _, pair := range [][2]string{{pa, pb}, {pb, pa}, {pa, same}, {pa, other}} {
					total++
					if agreeFast(t, pair[0], pair[1], opt) {
						taken++
					}
				}
			}
		}
	}
	t.Logf("fast path took %d of %d pairs; entries %v", taken, total, fastKinds)
	if taken < total*9/10 {
		t.Errorf("fast path took only %d of %d pairs", taken, total)
	}
}

// gz compresses b as gzip does.
func gz(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// TestFastDiffFallsBack: what the fast path leaves to the graph path.
func TestFastDiffFallsBack(t *testing.T) {
	dir := t.TempDir()
	list := func(n, base int) *pv {
		l := &pv{k: 'l'}
		for i := 0; i < n; i++ {
			l.kids = append(l.kids, &pv{k: 'i', i: int64(base + i)})
		}
		return l
	}
	ab := func(name string, a, b []byte) [2]string {
		return [2]string{writeFile(t, dir, name+"_a.pkl", a), writeFile(t, dir, name+"_b.pkl", b)}
	}
	// every other item changed: no run, each its own entry
	every2 := func(l *pv) *pv {
		for i := 0; i < len(l.kids); i += 2 {
			l.kids[i] = &pv{k: 'i', i: -1 - int64(i)}
		}
		return l
	}
	plain := dump(list(3, 0), 4, 1<<16)
	cases := map[string][2]string{
		"many items differ": ab("many", dump(list(2*maxFastItems+1000, 0), 4, 1<<16), dump(every2(list(2*maxFastItems+1000, 0)), 4, 1<<16)),
		"tuple result":      ab("tuple", dump(&pv{k: 't', kids: []*pv{{k: 'i', i: 1}}}, 4, 1<<16), dump(&pv{k: 't', kids: []*pv{{k: 'i', i: 2}}}, 4, 1<<16)),
		"list vs dict":      ab("kinds", plain, dump(&pv{k: 'd'}, 4, 1<<16)),
		"left under result": ab("left", []byte("\x80\x04K\x01]\x94K\x02a."), []byte("\x80\x04K\x01]\x94K\x03a.")),
		"put of a memo ref": ab("reput", []byte("\x80\x02]q\x00(X\x01\x00\x00\x00aq\x01h\x01q\x02K\x01e."), []byte("\x80\x02]q\x00(X\x01\x00\x00\x00aq\x01h\x01q\x02K\x02e.")),
		"a rule's call":     ab("call", []byte("\x80\x04]\x94(\x8c\x08builtins\x8c\tfrozenset\x93]K\x03a\x85Re."), plain),
		"a POP":             ab("pop", []byte("\x80\x04]\x94(K\x01K\x020e."), plain),
		"trailing bytes":    ab("trailing", []byte("\x80\x04]\x94.N."), []byte("\x80\x04]\x94.")),
	}
	for name, p := range cases {
		if _, ok := fastFiles(p[0], p[1], Options{}); ok {
			t.Errorf("%s: the fast path took it", name)
		}
		if _, err := Files(p[0], p[1], Options{}); err != nil && name != "trailing bytes" {
			t.Errorf("%s: %v", name, err)
		}
	}
	p := ab("ok", plain, dump(list(3, 1), 4, 1<<16))
	if _, ok := fastFiles(p[0], p[1], Options{}); !ok {
		t.Fatal("the fast path refused a plain pair")
	}
	for _, opt := range []Options{{Ignore: []string{"root[0]"}}} {
		if _, ok := fastFiles(p[0], p[1], opt); ok {
			t.Errorf("%+v: taken", opt)
		}
	}
	if _, ok := fastFiles("-", p[1], Options{}); ok {
		t.Error("stdin taken")
	}
	// thousands of differing items, under maxFastItems: taken, and agreeing
	many := list(6000, 0)
	for i := 0; i < len(many.kids); i += 3 {
		many.kids[i] = &pv{k: 's', s: "changed" + strconv.Itoa(i)}
	}
	lots := ab("lots", dump(list(6000, 0), 4, 1<<16), dump(many, 4, 1<<16))
	if !agreeFast(t, lots[0], lots[1], Options{}) {
		t.Error("2000 differing items not taken")
	}
	// the same tuple result: the verdict needs no items
	same := ab("sametuple", dump(&pv{k: 't', kids: []*pv{{k: 'i', i: 1}}}, 4, 1<<16), dump(&pv{k: 't', kids: []*pv{{k: 'i', i: 1}}}, 2, 1<<16))
	if !agreeFast(t, same[0], same[1], Options{}) {
		t.Error("equal tuple results not taken")
	}
}

// FuzzFastDiff: on any two inputs, the fast path either leaves them to the
// graph path or gives its Result (and never panics).
func FuzzFastDiff(f *testing.F) {
	for seed := int64(0); seed < 6; seed++ {
		g := &vgen{r: rand.New(rand.NewSource(seed)), proto: int(seed), words: words}
		a := g.list(2, 4)
		if seed%2 == 1 {
			a = g.dict(2, 4)
		}
		b := a.clone()
		g.mutate(b, seed%3 == 0)
		f.Add(dump(a, int(seed), 64), dump(b, int(seed), 80))
		// instances of memoised class globals
		o := &pv{k: 'l'}
		for i := 0; i < 4; i++ {
			o.kids = append(o.kids, instance(g, i))
		}
		p := o.clone()
		mutateObj(g, p)
		f.Add(dump(o, int(seed), 64), dump(p, int(seed), 80))
		// an object result
		ro := obj("mymod", "D", seed < 2, nil, &pv{k: 'd', kids: []*pv{{k: 's', s: "rows"}, o, {k: 's', s: "n"}, {k: 'i', i: 1}}}, nil)
		rp := obj("mymod", "D", seed < 2, nil, &pv{k: 'd', kids: []*pv{{k: 's', s: "rows"}, p, {k: 's', s: "n"}, {k: 'i', i: 2}}}, nil)
		f.Add(dump(ro, int(seed), 64), dump(rp, int(seed), 80))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, pb := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
		if os.WriteFile(pa, a, 0o644) != nil || os.WriteFile(pb, b, 0o644) != nil {
			t.Skip()
		}
		agreeFast(t, pa, pb, Options{})
	})
}

// bigList holds a str above pickle.DefaultBlobThreshold (streamed and
// digested, not kept), read again by GET in another item.
func bigList(suffix string) *pv {
	big := &pv{k: 's', s: strings.Repeat("0123456789abcdef", 70000) + suffix}
	return &pv{k: 'l', kids: []*pv{big, {k: 'i', i: 1}, {k: 't', kids: []*pv{big, {k: 'n'}}}}}
}

// TestFastDiffCases: hand-written pairs the pickler does not write.
func TestFastDiffCases(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		a, b string
		fast bool // the fast path must take it
	}{
		"dict from mark":        {"(K\x01K\x02d.", "(K\x01K\x03d.", false},
		"list from mark":        {"(K\x01K\x02l.", "(K\x01K\x03l.", false},
		"empty list from mark":  {"(lK\x01a.", "(lK\x02a.", true},
		"list then items":       {"(K\x01lK\x02a.", "(K\x01lK\x03a.", false},
		"same, from mark":       {"(K\x01K\x02d.", "}K\x01K\x02s.", true},
		"a GET of the key":      {"}(X\x01\x00\x00\x00aq\x01K\x01X\x01\x00\x00\x00bh\x01u.", "}(X\x01\x00\x00\x00aq\x01K\x02X\x01\x00\x00\x00bh\x01u.", true},
		"nested list in tuple":  {"](]K\x01a\x85e.", "](]K\x02a\x85e.", true},
		"bytearray items":       {"\x80\x05]\x94(\x96\x01\x00\x00\x00\x00\x00\x00\x00ae.", "\x80\x05]\x94(\x96\x01\x00\x00\x00\x00\x00\x00\x00be.", true},
		"one item appended":     {"]K\x01a.", "]K\x01aK\x02a.", true},
		"key removed, added":    {"}(K\x01K\x02K\x03K\x04u.", "}(K\x01K\x02K\x05K\x04u.", true},
		"two puts of one value": {"](K\x01p1\np2\ne.", "](K\x02p1\np2\ne.", false},
		"large str changed":     {string(dump(bigList(""), 4, 1<<16)), string(dump(bigList("x"), 4, 1<<16)), true},
		"large str removed":     {string(dump(bigList(""), 2, 1<<16)), string(dump(&pv{k: 'l', kids: bigList("").kids[1:]}, 2, 1<<16)), true},
	} {
		pa := writeFile(t, dir, "a.pkl", []byte(c.a))
		pb := writeFile(t, dir, "b.pkl", []byte(c.b))
		if got := agreeFast(t, pa, pb, Options{}); got != c.fast {
			t.Errorf("%s: fast path taken %v, want %v", name, got, c.fast)
		}
	}
}

// rows is a list of n small records, as a table in a pickle.
func rows(n int, g *vgen) *pv {
	l := &pv{k: 'l'}
	for i := 0; i < n; i++ {
		l.kids = append(l.kids, &pv{k: 'd', kids: []*pv{
			{k: 's', s: "id"}, {k: 'i', i: int64(i)},
			{k: 's', s: "name"}, {k: 's', s: g.word() + strconv.Itoa(i)},
			{k: 's', s: "score"}, {k: 'f', f: float64(i) / 4},
			{k: 's', s: "tags"}, {k: 't', kids: []*pv{{k: 's', s: g.word()}, {k: 's', s: "b"}}},
		}})
	}
	return l
}

// TestFastDiffNested: large lists and dicts inside the result (above
// canon.BigItemMin) are compared by another pass over both files, level by
// level, as the walk compares them.
func TestFastDiffNested(t *testing.T) {
	dir := t.TempDir()
	descended, passes := 0, fastDescents
	for seed := int64(0); seed < int64(testfile.ShortDiv(6, 2)); seed++ {
		proto := int(seed % 6)
		g := &vgen{r: rand.New(rand.NewSource(seed)), proto: proto, words: words}
		table := rows(28000, g)
		var a *pv
		switch seed % 3 {
		case 0: // {'rows': [...], 'meta': {...}}
			a = &pv{k: 'd', kids: []*pv{{k: 's', s: "rows"}, table, {k: 's', s: "meta"}, g.dict(2, 5)}}
		case 1: // [[...], 'x', {'inner': [...]}]
			a = &pv{k: 'l', kids: []*pv{table, {k: 's', s: "x"}, {k: 'd', kids: []*pv{{k: 's', s: "inner"}, rows(28000, g)}}}}
		case 2: // {'a': {'b': [...], 'c': 1}}
			a = &pv{k: 'd', kids: []*pv{{k: 's', s: "a"}, {k: 'd', kids: []*pv{{k: 's', s: "b"}, table, {k: 's', s: "c"}, {k: 'i', i: 1}}}}}
		}
		b := a.clone()
		bigs := []*pv{}
		for _, c := range containers(b) {
			if c.k == 'l' && len(c.kids) >= 20000 {
				bigs = append(bigs, c)
			}
		}
		for k := 0; k < 1+int(seed%3); k++ {
			c := bigs[g.r.Intn(len(bigs))]
			switch g.r.Intn(3) {
			case 0:
				c.kids[g.r.Intn(len(c.kids))].kids[5].f = -1
			case 1:
				at := g.r.Intn(len(c.kids))
				c.kids = append(c.kids[:at], c.kids[at+1:]...)
			case 2:
				c.kids[g.r.Intn(len(c.kids))].kids = append(c.kids[0].clone().kids, &pv{k: 's', s: "new"}, &pv{k: 'n'})
			}
		}
		if seed%4 == 1 {
			g.mutate(b, true)
		}
		da, db := dump(a, proto, 1<<16), dump(b, proto, 1<<16)
		if seed%2 == 1 {
			da, db = gz(da), gz(db) // offsets in the decompressed stream
		}
		pa := writeFile(t, dir, fmt.Sprintf("a%d.pkl", seed), da)
		pb := writeFile(t, dir, fmt.Sprintf("b%d.pkl", seed), db)
		noLockstep = seed%3 == 2 // (the passes over two large lists alone, or in lockstep)
		for _, opt := range []Options{fastOpts[seed%2]} {
			if !agreeFast(t, pa, pb, opt) {
				t.Errorf("seed %d: the fast path left it to the graph path", seed)
			}
		}
		noLockstep = false
		if r, _ := fastFiles(pa, pb, Options{}); r != nil {
			for _, e := range r.Entries {
				if strings.Count(e.Path, "[") > 2 {
					descended++
					break
				}
			}
		}
	}
	t.Logf("%d pairs differed below a large container; %d passes over one", descended, fastDescents-passes)
	if descended < testfile.ShortDiv(4, 2) || fastDescents-passes < testfile.ShortDiv(6, 2) {
		t.Errorf("only %d pairs differed below a large container, %d passes descended into one", descended, fastDescents-passes)
	}
}

// TestFastDiffLockstep: two list results of many rows, read in lockstep
// (canon.Lockstep), changed near the start, in the middle, at the end,
// with rows removed and added, give the graph path's report with the
// lockstep and without; and a change past the first rows lets both passes
// drop what comes before it.
func TestFastDiffLockstep(t *testing.T) {
	dir := t.TempDir()
	const n = 30000
	for seed := int64(0); seed < int64(testfile.ShortDiv(8, 2)); seed++ {
		proto := 2 + int(seed%4)
		g := &vgen{r: rand.New(rand.NewSource(seed)), proto: proto, words: words}
		a := rows(n, g)
		b := a.clone()
		at := []int{3, n / 2, n - 2, n/3 + g.r.Intn(n/3)}[seed%4]
		switch seed % 3 {
		case 0:
			b.kids[at].kids[5].f = -1
		case 1:
			b.kids = append(b.kids[:at:at], b.kids[at+1:]...)
		case 2:
			b.kids = append(b.kids[:at:at], append([]*pv{rows(2, g).kids[1]}, b.kids[at:]...)...)
		}
		pa := writeFile(t, dir, fmt.Sprintf("a%d.pkl", seed), dump(a, proto, 1<<16))
		pb := writeFile(t, dir, fmt.Sprintf("b%d.pkl", seed), dump(b, proto, 1<<16))
		for _, off := range []bool{false, true} {
			noLockstep = off
			if !agreeFast(t, pa, pb, Options{}) {
				t.Errorf("seed %d (lockstep off %v): the fast path left it to the graph path", seed, off)
			}
			noLockstep = false
		}
		fa, fb, ok := fastItems(pa, pb, Options{})
		if !ok {
			t.Fatalf("seed %d: fastItems", seed)
		}
		t.Logf("seed %d: first difference %d, kept from %d and %d", seed, at, fa.Base(), fb.Base())
		// (the pass that ends last drops at its check-ins, every 5,000
		// rows here, what the other published)
		if base := max(fa.Base(), fb.Base()); base > at || at >= n/3 && base == 0 {
			t.Errorf("seed %d: passes kept items from %d and %d, the lists first differ at %d", seed, fa.Base(), fb.Base(), at)
		}
	}
}
