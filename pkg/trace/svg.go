package trace

import (
	"bufio"
	"encoding/json"
	"hash/fnv"
	"html"
	"io"
	"sort"
	"strconv"
	"strings"
)

// SVGOptions tune the icicle.
type SVGOptions struct {
	Width    int // pixels (default 1200)
	RowH     int // pixels per level (default 20)
	MaxDepth int // levels drawn (default 24)
}

// defaults fills in the options left zero.
func (o *SVGOptions) defaults() {
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.RowH <= 0 {
		o.RowH = 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 24
	}
}

// picNode is one box of a picture: an item and its place.
type picNode struct {
	it    Item
	depth int
	x, w  float64
	off   int64 // bytes before the box under start: x is off × scale
	pi    int32 // the box's record in a fast picture (fast_pic.go)
}

// layout places the items from start, left to right in stream order, each
// as wide as its share of start's bytes. Children narrower than minW are
// not drawn (their bytes show as the parent's colour), nor a run the
// pictures' sink folded (sink.go: none of its roots is drawn); references
// take no width, and the stub under which a compaction left what folded
// roots owned and the memo still names is no child of the stream
// (nextTopKid; their bytes are in the runs). A box's x is the bytes before it under start (an integer sum of
// the preceding siblings' sizes, drawn or not, and its parent's) times the
// scale, so a tree that holds only the boxes drawn and their offsets (the
// fast picture, fast_pic.go) places them alike. visit returns false to
// stop. Explicit stack; only drawn items are visited.
func (t *Tree) layout(start Item, width, minW float64, maxDepth int, visit func(p picNode) bool) {
	if start.Size <= 0 {
		visit(picNode{it: start, w: width})
		return
	}
	scale := width / float64(start.Size)
	stack := []picNode{{it: start, w: width}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !visit(p) {
			return
		}
		if p.depth+1 >= maxDepth {
			continue
		}
		var next []picNode
		if t.pic != nil {
			next = t.pic.kids(p, scale, minW, next)
		} else {
			// children as kids: only the drawn ones become items
			kids := t.kidsOf(p.it)
			off := p.off
			for i := range kids {
				k := &kids[i]
				if t.placed && (p.it.Kind == ItemFile && t.Doc == nil || t.compressedPart(p.it)) {
					off = p.off + t.fileOffset(k)
				}
				if k.kind == ItemRef || k.size <= 0 {
					continue
				}
				if w := float64(k.size) * scale; w >= minW && !k.folded(p.it.Stream) {
					next = append(next, picNode{it: k.open(p.it.Stream, p.it.pl), depth: p.depth + 1, x: float64(off) * scale, off: off, w: w})
				}
				off += k.size
			}
		}
		for i := len(next) - 1; i >= 0; i-- {
			stack = append(stack, next[i])
		}
	}
}

// fileOffset is the bytes of the File's children before k, a stream or the
// trailing bytes, in a tree that holds only some of its streams (placed):
// the streams lie back to back from the first.
func (t *Tree) fileOffset(k *kid) int64 {
	if k.kind == ItemStream && k.item != nil && k.item.Stream != nil {
		return k.item.Stream.Store.Begin - t.streamsAt
	}
	return t.streamBytes // the trailing bytes, after every stream
}

// colour picks a warm flame-graph colour from the type code (stable across runs).
func colour(code string, ref bool) string {
	h := fnv.New32a()
	h.Write([]byte(code))
	v := h.Sum32()
	r := 205 + v%50
	g := 80 + (v>>8)%130
	b := 40 + (v>>16)%60
	switch code {
	case CodeStream, CodeFile:
		r, g, b = 180, 180, 190
	}
	return "rgb(" + strconv.Itoa(int(r)) + "," + strconv.Itoa(int(g)) + "," + strconv.Itoa(int(b)) + ")"
}

func fit(s string, px float64) string {
	n := int(px / 7)
	if n <= 1 {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// WriteSVG writes an icicle of the bytes under start: one row per level,
// each box as wide as its bytes, labelled where it is wide enough, with the
// path, type, size and share in a tooltip.
func (t *Tree) WriteSVG(w io.Writer, start Item, o SVGOptions) error {
	o.defaults()
	if err := t.picServes(start, o.spec()); err != nil {
		return err
	}
	var boxes []picNode
	depth := 0
	t.layout(start, float64(o.Width-20), 0.5, o.MaxDepth, func(p picNode) bool {
		boxes = append(boxes, p)
		depth = max(depth, p.depth+1)
		return true
	})
	codes := legendCodes(t, boxes)
	top := 64
	H := top + depth*o.RowH + 10
	b := bufio.NewWriter(w)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="` + strconv.Itoa(o.Width) + `" height="` + strconv.Itoa(H) + `" viewBox="0 0 ` + strconv.Itoa(o.Width) + " " + strconv.Itoa(H) + `" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="12">` + "\n")
	b.WriteString(`<rect width="100%" height="100%" fill="#fdfdf8"/>` + "\n")
	title := "pk trace: " + t.File.Name
	if start.PathLen() > 0 {
		title += "  " + start.Path()
	}
	title += "  " + Human(start.Size) + " (" + itoa(start.Size) + " bytes)"
	b.WriteString(`<text x="10" y="24" font-size="16" font-weight="bold" id="title">` + html.EscapeString(title) + "</text>\n")
	b.WriteString(`<text x="10" y="38" fill="#555">width = bytes in the file (with all an object holds); each row one level deeper; shared objects drawn where they were built; hover for path and sizes</text>` + "\n")
	// the legend: the type codes drawn, with their colours
	b.WriteString(`<g id="legend">`)
	lx := 10.0
	for _, c := range codes {
		txt := c[0]
		if c[1] != "" {
			txt += " " + c[1]
		}
		b.WriteString(`<rect x="` + ff(lx) + `" y="46" width="10" height="10" fill="` + colour(c[0], false) + `"/>`)
		b.WriteString(`<text x="` + ff(lx+13) + `" y="55" font-size="11">` + html.EscapeString(txt) + `</text>`)
		lx += 13 + float64(len([]rune(txt)))*6.7 + 12
		if lx > float64(o.Width-60) {
			break
		}
	}
	b.WriteString("</g>\n")
	for _, p := range boxes {
		code := t.Code(p.it)
		label := code + " " + t.picLabel(p.it)
		tip := label + "\n" + p.it.Path() + "\n" + Human(p.it.Size) + " (" + itoa(p.it.Size) + " B), " + pct(p.it.Size, t.Total) + " of the file, self " + itoa(p.it.Self) + " B"
		x := 10 + p.x
		y := top + p.depth*o.RowH
		b.WriteString(`<g class="node"><title>` + html.EscapeString(tip) + `</title>`)
		b.WriteString(`<rect x="` + ff(x) + `" y="` + strconv.Itoa(y) + `" width="` + ff(max(p.w-0.5, 0.3)) + `" height="` + strconv.Itoa(o.RowH-1) + `" fill="` + colour(code, false) + `" rx="2"/>`)
		if s := fit(label+" "+Human(p.it.Size), p.w-6); s != "" {
			b.WriteString(`<text x="` + ff(x+3) + `" y="` + strconv.Itoa(y+o.RowH-6) + `">` + html.EscapeString(s) + `</text>`)
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// HTMLOptions tune the page.
type HTMLOptions struct {
	MaxNodes int // boxes embedded in the page (default 20000)
	MaxDepth int // levels embedded (default 40)
}

// defaults fills in the options left zero.
func (o *HTMLOptions) defaults() {
	if o.MaxNodes <= 0 {
		o.MaxNodes = 20000
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 40
	}
}

// WriteHTML writes a self-contained page (inline CSS and JS, no network):
// an icicle of the bytes under start where a click on a box zooms into that
// subtree and the path bar (or Backspace) goes back. The page writes
// <div id="pk-rendered" data-boxes="N"> once drawn; opened with the URL
// hash #selftest it clicks into the largest child and back, and writes the
// outcome into <div id="pk-selftest">.
func (t *Tree) WriteHTML(w io.Writer, start Item, o HTMLOptions) error {
	o.defaults()
	if err := t.picServes(start, o.spec()); err != nil {
		return err
	}
	// Keep the boxes at least total/MaxNodes wide: at most MaxNodes of
	// them per level band, and every embedded box is visible when zoomed.
	minW := 1.0
	width := float64(o.MaxNodes)
	type jn struct {
		C string `json:"c"`           // code
		L string `json:"l"`           // role + label
		P string `json:"p"`           // path
		S int64  `json:"s"`           // size
		F int64  `json:"f"`           // self
		K []int  `json:"k,omitempty"` // children indexes
	}
	var nodes []jn
	var pics []picNode
	index := map[[2]int64]int{}
	parentAt := []int{} // by depth: index of the open box
	count := 0
	t.layout(start, width, minW, o.MaxDepth, func(p picNode) bool {
		if count >= o.MaxNodes {
			return false // (pre-order: no later box is embedded either)
		}
		count++
		n := jn{C: t.Code(p.it), L: t.picLabel(p.it), P: p.it.Path(), S: p.it.Size, F: p.it.Self}
		nodes = append(nodes, n)
		pics = append(pics, picNode{it: p.it})
		i := len(nodes) - 1
		parentAt = append(parentAt[:p.depth], i)
		if p.depth > 0 {
			par := parentAt[p.depth-1]
			nodes[par].K = append(nodes[par].K, i)
		}
		_ = index
		return true
	})
	data, err := json.Marshal(struct {
		File   string      `json:"file"`
		Total  int64       `json:"total"`
		Legend [][2]string `json:"legend"`
		Nodes  []jn        `json:"nodes"`
	}{t.File.Name, t.Total, legendCodes(t, pics), nodes})
	if err != nil {
		return err
	}
	// JSON inside <script>: keep "</script>" out.
	js := strings.ReplaceAll(string(data), "</", `<\/`)
	b := bufio.NewWriter(w)
	b.WriteString(strings.Replace(htmlPage, "/*DATA*/null", js, 1))
	return b.Flush()
}

// picLabel is a box's text: role and label, the file's name not repeated
// (the title has it) nor a role that the label already starts with (a
// container's parts).
func (t *Tree) picLabel(it Item) string {
	l := t.Label(it)
	switch {
	case it.Kind == ItemFile:
		name := t.File.Name
		if t.Doc != nil {
			name = t.Doc.Path
		}
		return strings.TrimSpace(strings.TrimPrefix(l, name))
	case it.Role == "" || strings.HasPrefix(l, it.Role):
		return l
	}
	return it.Role + " " + l
}

// codeWords name the type codes in the pictures' legends.
var codeWords = map[string]string{
	CodeFile: "input", CodeStream: "pickle", CodeTrailing: "trailing bytes", "Ct": "container bytes",
	CodeList: "list", CodeTuple: "tuple", CodeD2: "dict", CodeSet: "set", CodeFSet: "frozenset",
	CodeStr: "str", CodeBytes: "bytes", CodeBArr: "bytearray", CodeInt: "int", CodeFloat: "float", CodeBool: "bool", CodeNone: "None",
	CodeReduce: "call", CodeObj: "instance", CodeGlobal: "global", CodeF1: "function by value", CodeF2: "global by reference",
	CodeT1: "builtin type", CodeT2: "class by value", CodeT4: "class by reference", CodeCo: "code", CodeArray: "array",
	CodeDtype: "dtype", CodeTensor: "tensor", CodeStore: "storage", CodePers: "persistent id", CodeCe1: "cell", CodeD1: "__main__ dict",
}

// legendCodes lists the codes of the boxes, most bytes first (a box's own
// bytes), with their words: at most 16.
func legendCodes(t *Tree, boxes []picNode) [][2]string {
	by := map[string]int64{}
	var order []string
	for _, p := range boxes {
		c := t.Code(p.it)
		if _, ok := by[c]; !ok {
			order = append(order, c)
		}
		by[c] += p.it.Self
	}
	sort.SliceStable(order, func(i, j int) bool { return by[order[i]] > by[order[j]] })
	if len(order) > 16 {
		order = order[:16]
	}
	out := make([][2]string, len(order))
	for i, c := range order {
		out[i] = [2]string{c, codeWords[c]}
	}
	return out
}
