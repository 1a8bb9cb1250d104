package write

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// slowReader gives its bytes a few at a time.
type slowReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(13))], r.b)
	r.b = r.b[n:]
	return n, nil
}

// TestLookahead: the decoder's lookahead (touchAhead, or the read ahead
// on a goroutine: ahead.go) over a run of every
// plain form (a tuple's header with its digest among them), read whole or a few bytes at a time (embeddings cut at the
// window's end, the window moved), queues for each str and bytes it
// reaches the fingerprint of its own text at its own offset: item takes
// those instead of computing them, so a wrong one would number the value
// as another.
func TestLookahead(t *testing.T) {
	defer func(v int) { touchMin = v }(touchMin)
	touchMin = 0
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mode := range []struct{ slow, ahead bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		var run bytes.Buffer
		uv := func(n int) { run.Write(binary.AppendUvarint(nil, uint64(n))) }
		text := func() string {
			n := 70 // (strs past 64 bytes are not plain: touchAhead passes over them)
			if mode.ahead {
				n = 65 // (the read ahead stops at the first: a folded run has none)
			}
			b := make([]byte, rng.IntN(n))
			for i := range b {
				b[i] = byte('a' + rng.IntN(3))
			}
			return string(b)
		}
		var strs []string // in order
		for range 20000 {
			switch rng.IntN(8) {
			case 0:
				run.WriteByte('n')
			case 1:
				run.Write([]byte{'b', byte(rng.IntN(2))})
			case 2:
				run.WriteString("f12345678")
			case 3:
				m := text()
				run.Write([]byte{'i', '+'})
				uv(len(m))
				run.WriteString(m)
			case 4:
				run.Write([]byte{'N', "ld"[rng.IntN(2)]})
				uv(rng.IntN(300))
				run.WriteByte(0)
			case 5:
				run.WriteString("Hs\x02abT") // (a digest of 4 bytes that reads as a str)
				uv(rng.IntN(300))
			default:
				s := text()
				run.WriteByte("sy"[rng.IntN(2)])
				uv(len(s))
				run.WriteString(s)
				strs = append(strs, s)
			}
		}
		slow := mode.slow
		vals := &values{fingerprints: true}
		vals.init()
		var rd io.Reader = bytes.NewReader(run.Bytes())
		if slow {
			rd = &slowReader{run.Bytes(), rng}
		}
		e := &emitter{dsize: 4}
		d := e.decoder(rd)
		if mode.ahead {
			// read ahead on a goroutine (ahead.go): its blocks cut the
			// forms as the window does
			d.ah = startAhead(rd, vals.fseed, 4, &d.apool)
			d.rd = d.ah
		}
		queued, k := 0, 0
		for d.fill(1) {
			if d.p+touchLead/2 >= d.ahead {
				if d.ah != nil {
					d.ahead = d.p + touchLead
					d.ah.touchTo(vals, d.off+int64(d.ahead))
				} else {
					d.touchAhead(vals)
				}
			}
			at, tag := d.off+int64(d.p), d.buf[d.p]
			d.p++
			var ok bool
			switch tag {
			case 'n':
				ok = true
			case 'b':
				ok = d.fill(1)
				d.p++
			case 'f':
				ok = d.fill(8)
				d.p += 8
			case 'N':
				d.fill(1)
				d.p++
				_, ok = d.uvarint(1 << 20)
				ok = ok && d.fill(1)
				d.p++
			case 'H':
				ok = d.fill(5)
				d.p += 5
				_, ok = d.uvarint(1 << 20)
			case 'i':
				d.fill(1)
				d.p++
				_, ok = d.text()
			case 's', 'y':
				var s string
				s, ok = d.text()
				if s != strs[k] {
					t.Fatalf("slow %v: str %d read as %q, not %q", slow, k, s, strs[k])
				}
				k++
				if fp, q := d.queued(at); q {
					queued++
					if fp != vals.fingerprint(tag, s) {
						t.Fatalf("slow %v: str %d (%q at %d) queued with another's fingerprint", slow, k-1, s, at)
					}
				}
			}
			if !ok {
				t.Fatalf("slow %v: embedding at %d cut", slow, at)
			}
		}
		if k != len(strs) {
			t.Fatalf("slow %v: %d strs read of %d", slow, k, len(strs))
		}
		d.stopAhead()
		t.Logf("%+v: %d of %d strs and bytes queued", mode, queued, len(strs))
		if (!slow || mode.ahead) && queued < len(strs)*9/10 || queued == 0 {
			t.Errorf("%+v: only %d of %d strs and bytes queued", mode, queued, len(strs))
		}
	}
}

// TestAheadMatches: every corpus file and fold fixture, every stream
// fingerprinted and read ahead from its first run of one item (ahead.go),
// compactions at 4 records, gives the output, or the error, it gives
// without the read ahead, with the output's check off: a fingerprint the
// read ahead queued at another value's offset would number that value as
// another, which the check would otherwise hide by writing the stream
// again.
func TestAheadMatches(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	defer func(v int64) { fpMin = v }(fpMin)
	defer func(v int) { touchMin = v }(touchMin)
	defer func(v int) { aheadMin = v }(aheadMin)
	defer func() { noAhead, noVerify = false, false }()
	pickle.MinCompact, fpMin, touchMin, aheadMin, noVerify = 4, 0, 0, 1, true
	files := sinkFiles(t)
	read, retried := 0, 0
	for _, p := range files {
		noAhead = true
		r0 := fpRetries
		want, werr := File(p, Options{}, false)
		noAhead = false
		before := aheadRuns
		got, gerr := File(p, Options{}, false)
		if aheadRuns > before {
			read++
		}
		retried += fpRetries - r0
		sameOutput(t, p, "without the read ahead", "with it", want, werr, got, gerr, nil)
	}
	t.Logf("%d of %d files read a run ahead", read, len(files))
	if read < testfile.ShortDiv(40, 4) { // (sinkFiles: a sample under -short)
		t.Errorf("only %d files read a run ahead", read)
	}
}
