package huge

import (
	"testing"
	"unsafe"
)

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

// TestTrim: Trim hands back the whole pages past the length (they read
// zero), and nothing else.
func TestTrim(t *testing.T) {
	buf := make([]uint64, 1<<20/8)
	for i := range buf {
		buf[i] = 1
	}
	short := buf[:1000] // (8,000 bytes: into the second or third page)
	if !Trim(short) {
		t.Fatal("Trim did not trim 1 MiB")
	}
	base := uintptr(unsafe.Pointer(&buf[0]))
	lo := (base + 8*uintptr(len(short)) + 4095) &^ 4095
	hi := (base + 8*uintptr(cap(buf))) &^ 4095
	for i := range buf {
		want := uint64(1)
		if a := base + 8*uintptr(i); a >= lo && a < hi {
			want = 0
		}
		if buf[i] != want {
			t.Fatalf("buf[%d] = %d after Trim, want %d (trimmed %#x-%#x)", i, buf[i], want, lo, hi)
		}
	}
	if Trim(buf[:len(buf)-100]) {
		t.Error("Trim trimmed less than minTrim")
	}
}
