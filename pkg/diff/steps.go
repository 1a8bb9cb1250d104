package diff

import (
	"regexp"
	"slices"
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Named steps of scikit-learn's composite estimators. A Pipeline's steps,
// a FeatureUnion's transformer_list, a ColumnTransformer's transformers
// and a voting or stacking ensemble's estimators are lists of tuples whose
// first item is the step's name: (name, estimator) or (name, transformer,
// columns). An entry below such a tuple keeps its exact path
// (root.steps[1][1].coef_[0, 3], which --path and --ignore read) and says
// in its note which step it is in, by name and class:
//
//	root.steps[1][1].coef_[0, 3]  changed  - -0.61  + 0.39
//	  (1 of 4 elements differ; in step 'clf' (sklearn.linear_model._logistic.LogisticRegression))
//
// Nested composites name every step on the way ('features' / 'pca'). The
// steps are those the walk compares (noteStep) and, for the entries of
// raw parts (a joblib file's arrays), those on the way to the arrays
// (tensorPaths, stepTuple).

// stepAttrs are the attributes that hold named steps; stepLists their
// edges, stepPath the path of a step's tuple (an index of one of them).
var (
	stepAttrs = []string{"steps", "transformer_list", "transformers", "estimators"}
	stepLists = func() map[string]bool {
		m := map[string]bool{}
		for _, a := range stepAttrs {
			m["."+a] = true
		}
		return m
	}()
	stepPath = regexp.MustCompile(`\.(` + strings.Join(stepAttrs, "|") + `)\[[0-9]+\]$`)
)

// stepTuple returns the note of the step that n at path is ("" when it is
// none): a tuple of at least two items, a str first, at a stepPath.
func stepTuple(n *canon.Node, path string) string {
	if n == nil || n.Kind() != pickle.KindTuple || !stepPath.MatchString(path) {
		return ""
	}
	it := n.Items()
	if len(it) < 2 || it[0].Kind() != pickle.KindStr {
		return ""
	}
	note := "'" + it[0].Str() + "'"
	if it[1].Kind() == pickle.KindCall {
		if class := qualified(it[1].Func()); class != "" {
			note += " (" + class + ")"
		}
	}
	return note
}

// noteStep records the step that the pair a, b at path is, when both sides
// name the same step the same way.
func (c *cmp) noteStep(a, b *canon.Node, path pathRef) {
	// (the edges first: the path's string costs its depth, and a walk
	// meets a tuple at every level of a deep nesting)
	if a.Kind() != pickle.KindTuple || path < 0 || c.paths.parent(path) < 0 {
		return
	}
	if !stepLists[string(c.paths.edge(c.paths.parent(path)))] {
		return
	}
	at := c.paths.String(path)
	if na := stepTuple(a, at); na != "" && na == stepTuple(b, at) {
		c.addStep(at, na)
	}
}

func (c *cmp) addStep(path, note string) {
	if c.steps == nil {
		c.steps = map[string]string{}
	}
	c.steps[path] = note
}

// stepNote appends to note the steps an entry at path is in, outermost
// first.
func (c *cmp) stepNote(path, note string) string {
	var in []string
	for at := range c.steps {
		if ppath.Under(path, at) {
			in = append(in, at)
		}
	}
	if len(in) == 0 {
		return note
	}
	slices.SortFunc(in, func(x, y string) int { return len(x) - len(y) })
	names := make([]string, len(in))
	for i, at := range in {
		names[i] = c.steps[at]
	}
	s := "in step " + strings.Join(names, " / ")
	if note == "" {
		return s
	}
	return note + "; " + s
}
