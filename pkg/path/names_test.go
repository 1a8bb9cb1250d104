package path

import "testing"

// NamesArgsOf(module, name, n) is NamesArgs(module + "." + name, n) for
// every split, including the ones where a dot or the join falls inside a
// name the table knows.
func TestNamesArgsOf(t *testing.T) {
	mods := []string{"", "types", "typ", "types.Code", "cloudpickle.cloudpickle", "dill._dill", "x", "types.CodeType"}
	names := []string{"", "CodeType", "Type", "es.CodeType", "FunctionType", "_create_code", "a._create_code",
		"_make_function", "_create_function", "_make_skeleton_class", "_create_type", "_make_cell", "_create_cell",
		"create_code", "_builtin_type", "x.y", "."}
	for _, m := range mods {
		for _, nm := range names {
			for _, n := range []int{0, 1, 2, 16, 17, 18, 19, 20} {
				if got, want := NamesArgsOf(m, nm, n), NamesArgs(m+"."+nm, n); got != want {
					t.Errorf("NamesArgsOf(%q, %q, %d) = %v, NamesArgs(%q) = %v", m, nm, n, got, m+"."+nm, want)
				}
			}
		}
	}
}
