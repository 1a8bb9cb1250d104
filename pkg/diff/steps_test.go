package diff

import (
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestPipelineSteps: a fitted scikit-learn pipeline with one coefficient
// changed, in every pair of its forms (pickle protocols 2, 4, 5 and
// joblib, whose arrays are raw parts): one entry at the element, its note
// naming the step and its class; the path stays exact.
func TestPipelineSteps(t *testing.T) {
	const dir = "../../testdata/frames/"
	forms := []string{"_p2.pkl", "_p4.pkl", "_p5.pkl", ".joblib"}
	const step = "in step 'clf' (sklearn.linear_model._logistic.LogisticRegression)"
	for _, fa := range forms {
		for _, fb := range forms {
			r, err := Files(dir+"pipeline"+fa, dir+"pipeline_changed"+fb, Options{Canon: canon.Options{Form: canon.Form2}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) != 1 {
				t.Errorf("%s %s: %d entries, want 1: %+v", fa, fb, len(r.Entries), r.Entries)
				continue
			}
			e := r.Entries[0]
			if e.Path != "root.steps[1][1].coef_[0, 3]" || e.Note != "1 of 4 elements differ; "+step {
				t.Errorf("%s %s: %s (%s)", fa, fb, e.Path, e.Note)
			}
		}
	}
	c := &cmp{}
	c.addStep("root.steps[0]", "'features' (sklearn.pipeline.FeatureUnion)")
	c.addStep("root.steps[0][1].transformer_list[1]", "'pca' (sklearn.decomposition._pca.PCA)")
	c.addStep("root.steps[1]", "'clf'")
	got := c.stepNote("root.steps[0][1].transformer_list[1][1].components_[2, 0]", "1 of 8 elements differ")
	if want := "1 of 8 elements differ; in step 'features' (sklearn.pipeline.FeatureUnion) / 'pca' (sklearn.decomposition._pca.PCA)"; got != want {
		t.Errorf("nested steps: %q, want %q", got, want)
	}
	if got := c.stepNote("root.steps[10]", ""); strings.Contains(got, "step") {
		t.Errorf("root.steps[10] is in no step: %q", got)
	}
}
