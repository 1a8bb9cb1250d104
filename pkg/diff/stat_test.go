package diff

import "testing"

func TestTopPath(t *testing.T) {
	for _, c := range [][2]string{
		{"root", "root"},
		{"root['x'][2]", "root['x']"},
		{"root['a]b'].c", "root['a]b']"},
		{`root["it's ]"][0]`, `root["it's ]"]`},
		{"root[(1, 'x')]['k']", "root[1, 'x']"},
		{"root[1, 'x']['k']", "root[1, 'x']"},
		{"root.provider.create.__code__", "root.provider"},
		{"root[200000:600000]", "root[*]"},
		{"root[3]['name']", "root[*]"},
		{"root<effect 2>", "root<effect *>"},
		{"root<effect 2:12>", "root<effect *>"},
		{"root.__dict__['a b'].y", "root.__dict__['a b']"},
		{"stream[1]['k'][0]", "stream[1]['k']"},
		{"part['a.pkl']['w'][3]", "part['a.pkl']['w']"},
		{"part['data/0']", "part['data/0']"},
		{"trailing", "trailing"},
	} {
		if got := TopPath(c[0]); got != c[1] {
			t.Errorf("TopPath(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}
