package huge

import (
	"os"
	"runtime"
	"strconv"
	"strings"
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

// vmFlags returns the VmFlags of the mapping that holds address p
// (/proc/self/smaps), "" when none is found.
func vmFlags(t *testing.T, p uintptr) string {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			z, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(p) >= a && uint64(p) < z
			continue
		}
		if in && strings.HasPrefix(l, "VmFlags:") {
			return l
		}
	}
	return ""
}

// TestForget: the advice outlives the array (it is the address range's),
// so Forget takes it back from every range Advise marked.
func TestForget(t *testing.T) {
	if off {
		t.Skip("PK_NO_HUGEPAGES=1")
	}
	buf := make([]uint64, 8<<20/8)
	Advise(buf)
	p := (uintptr(unsafe.Pointer(&buf[0])) + 4<<20) &^ (2<<20 - 1)
	if f := vmFlags(t, p); !strings.Contains(f, " hg") {
		t.Skipf("no huge-page advice to take back (%q)", f)
	}
	Forget()
	if f := vmFlags(t, p); strings.Contains(f, " hg") || !strings.Contains(f, " nh") {
		t.Fatalf("after Forget: %q, want nh and no hg", f)
	}
	advised.Lock()
	n := len(advised.r)
	advised.Unlock()
	if n != 0 {
		t.Fatalf("%d ranges still recorded after Forget", n)
	}
	runtime.KeepAlive(buf)
}

// TestAdviseLarge: AdviseLarge leaves an array under Large alone (its
// contents stay, its pages are not marked) and advises one of Large or
// more as Advise does.
func TestAdviseLarge(t *testing.T) {
	if off {
		t.Skip("PK_NO_HUGEPAGES=1")
	}
	Forget() // (a range another test advised, which small may land in, reads nh)
	small := make([]uint64, 8<<20/8)
	for i := range small {
		small[i] = 1
	}
	AdviseLarge(small)
	for i := range small {
		if small[i] != 1 {
			t.Fatalf("small[%d] = %d after AdviseLarge of 8 MiB: its pages were handed back", i, small[i])
		}
	}
	p := (uintptr(unsafe.Pointer(&small[0])) + 4<<20) &^ (2<<20 - 1)
	if f := vmFlags(t, p); strings.Contains(f, " hg") {
		t.Errorf("8 MiB array advised: %q", f)
	}
	large := make([]uint64, 2*Large/8)
	AdviseLarge(large)
	p = (uintptr(unsafe.Pointer(&large[0])) + Large) &^ (2<<20 - 1)
	if f := vmFlags(t, p); !strings.Contains(f, " hg") {
		advised.Lock()
		n := len(advised.r)
		advised.Unlock()
		if n == 0 {
			t.Skipf("no huge-page advice here (%q)", f) // (madvise refused: no THP)
		}
		t.Errorf("%d MiB array not advised: %q", 2*Large>>20, f)
	}
	Forget()
	runtime.KeepAlive(small)
	runtime.KeepAlive(large)
}
