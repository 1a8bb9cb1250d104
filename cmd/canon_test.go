package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCanonScripts runs cmd/testdata/script/canon_*.txtar: pk canon.
func TestCanonScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "canon_"), Setup: inputsEnv(t), Cmds: fileCmds})
}

// TestCanonOutputDevice: -o names a device or a link: the device is written
// to, not replaced by a file (as root, renaming over /dev/null replaced it),
// and a link still points where it did, at the new output.
func TestCanonOutputDevice(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.pkl")
	if err := os.WriteFile(in, []byte("\x80\x04]\x94(K\x01K\x02e."), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(os.DevNull)
	if err != nil || before.Mode()&os.ModeDevice == 0 {
		t.Skip("no device at", os.DevNull)
	}
	if rc := Main([]string{"pk", "canon", in, "-o", os.DevNull}); rc != 0 {
		t.Fatalf("pk canon -o %s: exit %d", os.DevNull, rc)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi.Mode(), err)
	}
	dir := t.TempDir()
	target, link := filepath.Join(dir, "out.pkl"), filepath.Join(dir, "link.pkl")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if rc := Main([]string{"pk", "canon", in, "-o", link}); rc != 0 {
		t.Fatalf("pk canon -o link: exit %d", rc)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || len(b) == 0 {
		t.Fatalf("the link's target was not written: %d bytes, %v", len(b), err)
	}
}
