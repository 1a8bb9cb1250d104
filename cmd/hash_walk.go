package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// expand lists the inputs of pk hash: arguments as given, directories
// walked with -r (sorted by name, as find | sort would; --include and
// --exclude globs matched on the base name and on the path relative to the
// argument). Symbolic links are followed, to files and to directories; a
// broken link, a link loop and a file that is not a regular file are
// reported in notes ("skipped: ..."), never dropped silently. errs are
// directories that could not be read.
func expand(args []string, f hashFlags) (names []string, errs []error, notes []string) {
	w := &walker{inc: f.include, exc: f.exclude}
	for _, a := range args {
		if a == "-" || !f.recursive {
			w.out = append(w.out, a) // a directory is reported when hashed
			continue
		}
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			w.out = append(w.out, a)
			continue
		}
		w.dir(a, "", []fs.FileInfo{fi})
	}
	return w.out, w.errs, w.notes
}

type walker struct {
	inc, exc []string
	out      []string
	errs     []error
	notes    []string
}

func (w *walker) note(format string, a ...any) { w.notes = append(w.notes, fmt.Sprintf(format, a...)) }

// matches reports whether a glob of pats matches the base name or rel.
func matches(pats []string, base, rel string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, base); ok {
			return true
		}
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// dir walks directory p (rel: its path below the argument); stack holds
// the directories above it, to find link loops.
func (w *walker) dir(p, rel string, stack []fs.FileInfo) {
	ents, err := os.ReadDir(p)
	if err != nil {
		w.errs = append(w.errs, err)
		return
	}
	for _, e := range ents {
		cp := filepath.Join(p, e.Name())
		crel := path.Join(rel, e.Name())
		if matches(w.exc, e.Name(), crel) {
			continue
		}
		t := e.Type()
		// files that --include leaves out are passed over before anything
		// is said of them (a directory is walked whatever its name)
		left := len(w.inc) > 0 && !matches(w.inc, e.Name(), crel)
		var fi fs.FileInfo
		if t&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(cp)
			fi, err = os.Stat(cp)
			if err != nil && left {
				continue
			}
			switch {
			case errors.Is(err, syscall.ELOOP):
				w.note("skipped: %s: a loop of symbolic links (-> %s)", cp, target)
				continue
			case errors.Is(err, fs.ErrNotExist):
				w.note("skipped: %s: a broken symbolic link (-> %s)", cp, target)
				continue
			case err != nil:
				w.errs = append(w.errs, err)
				continue
			}
			t = fi.Mode().Type()
		}
		switch {
		case t.IsDir():
			if fi == nil {
				if fi, err = os.Stat(cp); err != nil {
					w.errs = append(w.errs, err)
					continue
				}
			}
			if loopsTo(stack, fi) {
				target, _ := os.Readlink(cp)
				w.note("skipped: %s: a symbolic link to a directory that holds it (-> %s), a loop", cp, target)
				continue
			}
			w.dir(cp, crel, append(stack, fi))
		case left:
		case t.IsRegular():
			w.out = append(w.out, cp)
		default:
			w.note("skipped: %s: not a regular file (%s)", cp, kindOf(t))
		}
	}
}

func loopsTo(stack []fs.FileInfo, fi fs.FileInfo) bool {
	for _, a := range stack {
		if os.SameFile(a, fi) {
			return true
		}
	}
	return false
}

func kindOf(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return t.String()
}
