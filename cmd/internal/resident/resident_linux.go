package resident

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// DropExecutable hands back (madvise MADV_DONTNEED) the resident pages of
// the read-only mappings of the running executable that hold no page of
// its own (see the package comment). Anything that fails (no /proc)
// leaves the pages as they are.
func DropExecutable() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range cleanMappings(smaps, exe) {
		// (the raw call: the range is no Go memory to make a slice of)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, m.lo, m.hi-m.lo, syscall.MADV_DONTNEED)
	}
}

// mapping is an address range of the process.
type mapping struct{ lo, hi uintptr }

// cleanMappings returns, from the text of /proc/self/smaps, the mappings
// of the file exe that are private and read-only ("r-xp", "r--p") and hold
// no anonymous page (none was written: copied on write, it would be lost).
func cleanMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur mapping
	ok := false
	flush := func() {
		if ok {
			out = append(out, cur)
		}
		ok = false
	}
	for _, line := range bytes.Split(smaps, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if m, is := header(f); is {
			flush()
			cur = m
			ok = len(f) >= 6 && string(bytes.Join(f[5:], []byte{' '})) == exe &&
				(string(f[1]) == "r-xp" || string(f[1]) == "r--p")
			continue
		}
		if string(f[0]) == "Anonymous:" && (len(f) < 2 || string(f[1]) != "0") {
			ok = false // (a page written: the mapping is not the file's alone)
		}
	}
	flush()
	return out
}

// header reports whether the fields of a line of smaps start a mapping
// (its range, as "lo-hi" in hex), and the range.
func header(f [][]byte) (mapping, bool) {
	if len(f) < 5 || bytes.HasSuffix(f[0], []byte{':'}) {
		return mapping{}, false
	}
	r := bytes.SplitN(f[0], []byte{'-'}, 2)
	if len(r) != 2 {
		return mapping{}, false
	}
	lo, err1 := strconv.ParseUint(string(r[0]), 16, 64)
	hi, err2 := strconv.ParseUint(string(r[1]), 16, 64)
	if err1 != nil || err2 != nil || hi <= lo {
		return mapping{}, false
	}
	return mapping{uintptr(lo), uintptr(hi)}, true
}
