package trace

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium, or skips.
func chromium(t *testing.T) string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed: the SVG/HTML rendering test needs it (apt-get install chromium)")
	return ""
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

func TestBrowserRendersSVGAndHTML(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	tr := load(t, "../../testdata/trace/stdlib_p2.pkl")
	svg := filepath.Join(dir, "t.svg")
	page := filepath.Join(dir, "t.html")
	for _, w := range []struct {
		name string
		fn   func(*bytes.Buffer) error
	}{
		{svg, func(b *bytes.Buffer) error { return tr.WriteSVG(b, tr.Root(), SVGOptions{}) }},
		{page, func(b *bytes.Buffer) error { return tr.WriteHTML(b, tr.Root(), HTMLOptions{}) }},
	} {
		var b bytes.Buffer
		if err := w.fn(&b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "http://") && !strings.Contains(b.String(), "http://www.w3.org/2000/svg") {
			t.Errorf("%s refers to the network", w.name)
		}
		os.WriteFile(w.name, b.Bytes(), 0o644)
	}

	// Both browsers run at once (each takes seconds to start).
	shot := filepath.Join(dir, "svg.png")
	domc := make(chan []byte, 1)
	go func() {
		domc <- runChromiumBg(bin, t.TempDir(), "--dump-dom", "--window-size=1200,800", "file://"+page+"#selftest")
	}()
	// The SVG: a screenshot that is not blank and has the boxes' colours.
	runChromium(t, bin, "--screenshot="+shot, "--window-size=1200,400", "file://"+svg)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	coloured := 0
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 2 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 > 190 && g>>8 < 230 && b>>8 < 120 { // warm box colours
				coloured++
			}
		}
	}
	if coloured < 2000 {
		t.Errorf("SVG screenshot has %d box pixels: not rendered?", coloured)
	}

	// The HTML: rendered by its script, and a click zooms in and back.
	dom := string(<-domc)
	m := regexp.MustCompile(`id="pk-rendered"[^>]*data-boxes="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("page did not render (no pk-rendered marker):\n%.2000s", dom)
	}
	if n, _ := strconv.Atoi(m[1]); n < 5 {
		t.Errorf("page drew %d boxes", n)
	}
	if !strings.Contains(dom, "selftest ok: zoomed to root") {
		i := strings.Index(dom, "pk-selftest")
		t.Errorf("click self-test: %.300s", dom[max(i, 0):])
	}
	if strings.Count(dom, `class="box"`) < 5 {
		t.Errorf("few boxes in the DOM")
	}
}

// runChromiumBg is runChromium for another goroutine: errors end up as an
// empty DOM, which the caller reports.
func runChromiumBg(bin, profile string, args ...string) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile}
	out, _ := exec.CommandContext(ctx, bin, append(base, args...)...).Output()
	return out
}
