package diff

import (
	"reflect"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// TestPathsLater: the entries of walks whose paths are rendered when the
// walk is done (addAt, walkDone: streams of bigWalk nodes or more) are
// the entries rendered as they are added: every directory of testdata, each
// file against the next, with every walk's paths left for later, as they
// are, under --ignore and with Options.Detail.
func TestPathsLater(t *testing.T) {
	later, entries := 0, 0
	eachTestPair(func(a, b string, opt Options, want *Result) {
		pathsLaterAt = 0
		got, err := Files(a, b, opt)
		pathsLaterAt = bigWalk
		if err != nil {
			t.Fatalf("%s %s: %v", a, b, err)
		}
		if !reflect.DeepEqual(got.Entries, want.Entries) {
			t.Fatalf("%s %s %+v: paths rendered later\n%+v\nwant\n%+v", a, b, opt, got.Entries, want.Entries)
		}
		entries += len(want.Entries)
		if len(opt.Ignore) == 0 && opt.Detail == 0 {
			later += len(want.Entries)
		}
	})
	t.Logf("%d entries, %d of them of walks without --ignore or Detail", entries, later)
	if later < 100 {
		t.Errorf("only %d entries compared", later)
	}
}

// eachTestPair calls fn with every directory of testdata's files, each
// against the next (at most testfile.ShortDiv(16, 8) a directory), as they
// are, with Options.Detail (not under -short) and under --ignore, and the
// result of Files on them; pairs Files refuses are passed over.
func eachTestPair(fn func(a, b string, opt Options, want *Result)) {
	opts := testfile.Sample([]Options{{}, {Detail: 2}, {Ignore: []string{"root['x']"}}}, 2) // (-short: not Detail)
	for _, files := range plainPicklesByDir() {
		for i := 0; i+1 < len(files) && i < testfile.ShortDiv(16, 8); i++ {
			for _, opt := range opts {
				if want, err := Files(files[i], files[i+1], opt); err == nil {
					fn(files[i], files[i+1], opt, want)
				}
			}
		}
	}
}
