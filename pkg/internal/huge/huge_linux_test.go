package huge

import "testing"

// TestAdviseDrops: Advise hands the pages of the array back to the kernel
// (which is what keeps a cleared, reused array's spare capacity out of the
// resident set): written here before the call, as the allocator's clearing
// writes them, the whole 2 MiB pages inside the array read zero after it.
func TestAdviseDrops(t *testing.T) {
	if off {
		t.Skip("PK_NO_HUGEPAGES=1")
	}
	buf := make([]uint64, 8<<20/8)
	for i := range buf {
		buf[i] = 1
	}
	Advise(buf)
	// every 2 MiB page inside 8 MiB: at least the middle 4 MiB
	for i := len(buf) / 4; i < 3*len(buf)/4; i++ {
		if buf[i] != 0 {
			t.Fatalf("buf[%d] = %d after Advise: its page was not handed back", i, buf[i])
		}
	}
}
