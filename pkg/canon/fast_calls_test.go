package canon

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFastCalls: the streaming path refuses the calls a rule reads
// (ruleGlobal), not their modules: a types.SimpleNamespace row streams, a
// builtins.frozenset one does not; pk hash's pass leaves calls in a dict
// result to the canon sink. Either way the digest is the store path's.
func TestFastCalls(t *testing.T) {
	ns := "\x8c\x05types\x8c\x0fSimpleNamespace\x93)R}\x8c\x01aK\x01sb"
	for name, c := range map[string]struct {
		data string
		fast bool
	}{
		"namespace in a list":  {"\x80\x04](" + ns + ns + "e.", true},
		"frozenset in a list":  {"\x80\x04](\x8c\x08builtins\x8c\tfrozenset\x93]K\x03a\x85Re.", false},
		"namespace in a dict":  {"\x80\x04}(\x8c\x01x" + ns + "\x8c\x01y" + ns + "u.", false},
		"plain dict in a dict": {"\x80\x04}(\x8c\x01x}\x8c\x01aK\x01s\x8c\x01y]K\x02au.", true},
	} {
		p := filepath.Join(t.TempDir(), "f.pkl")
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		res, ok := fastHashFile(p, Options{})
		if ok != c.fast {
			t.Errorf("%s: streaming path taken %v, want %v", name, ok, c.fast)
		}
		noFast = true
		want, err := HashFile(p, Options{})
		noFast = false
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ok && res.Digest != want.Digest {
			t.Errorf("%s: %s, the store path %s", name, res.Digest, want.Digest)
		}
	}
}
