package write

import (
	"fmt"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// TestFollowCheck: with outputs spilled past 64 bytes, the check of the
// output follows the writing (follow.go) wherever the first stream's
// result is a list; with fingerprints of 2 bits (values collide all the
// time, and the first write of a stream is often wrong) every file gives
// the output, or the error, it gives with the check after the writing and
// 64-bit fingerprints: a wrong output never passes the check that follows
// it.
func TestFollowCheck(t *testing.T) {
	defer func(v int) { spillAt = v }(spillAt)
	defer func(v int64) { fpMin = v }(fpMin)
	defer func() { fpCollide, noFollow = false, false }()
	files := sinkFiles(t)
	followed, wrongFirst, differs := followChecks, fpRetries, followDiffers
	for _, collide := range []bool{false, true} {
		for _, p := range files {
			fpCollide, noFollow, spillAt, fpMin = false, true, 1<<30, 1<<20
			want, werr := File(p, Options{}, false)
			fpCollide, noFollow, spillAt, fpMin = collide, false, 64, 0
			got, gerr := File(p, Options{}, false)
			sameOutput(t, fmt.Sprintf("%s (colliding %v)", p, collide), "checked after the writing", "checked beside it", want, werr, got, gerr, nil)
		}
	}
	t.Logf("%d outputs checked beside their writing, %d found wrong there, %d streams written again after a wrong first write", followChecks-followed, followDiffers-differs, fpRetries-wrongFirst)
	if followChecks-followed < testfile.ShortDiv(50, 2) {
		t.Errorf("only %d outputs checked beside their writing", followChecks-followed)
	}
	if followDiffers-differs < testfile.ShortDiv(20, 2) {
		t.Errorf("only %d outputs found wrong by the check beside their writing", followDiffers-differs)
	}
	if fpRetries-wrongFirst < testfile.ShortDiv(20, 2) {
		t.Errorf("only %d streams written again after a wrong first write", fpRetries-wrongFirst)
	}
}
