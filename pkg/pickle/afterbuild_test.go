package pickle

import (
	"bytes"
	"strings"
	"testing"
)

// A BUILD hook that consumes raw bytes between opcodes, as joblib does:
// the stream continues after them and the bytes are attributed to the
// BUILD target.
func TestAfterBuildConsumesBytes(t *testing.T) {
	// EMPTY_LIST, EMPTY_DICT, BUILD, <4 raw bytes>, STOP
	b := []byte("]}b" + "RAW!" + ".")
	var got []byte
	target := NoID
	opt := Options{AfterBuild: func(rd *Reader, _ *Store, n ID) error {
		target = n
		got = append(got, rd.Peek(4)...)
		_, err := rd.Discard(4)
		return err
	}}
	f, err := Parse(bytes.NewReader(b), int64(len(b)), "t", opt)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "RAW!" {
		t.Fatalf("hook saw %q", got)
	}
	st := f.Streams[0]
	if st.Root.ID != int32(target) || st.End != int64(len(b)) || f.Trailing != nil {
		t.Fatalf("root %v target %v end %d trailing %v", st.Root, target, st.End, f.Trailing)
	}
	var sum int64 = st.Self
	for _, n := range st.All {
		sum += n.Self
	}
	if sum != int64(len(b)) {
		t.Fatalf("bytes attributed %d, want %d", sum, len(b))
	}
	if st.All[target].Self != 1+1+4 { // EMPTY_LIST, BUILD, raw bytes
		t.Fatalf("target.Self = %d", st.All[target].Self)
	}
}

func TestAfterBuildError(t *testing.T) {
	b := []byte("]}b.")
	opt := Options{AfterBuild: func(rd *Reader, _ *Store, n ID) error {
		return &Error{Offset: rd.Offset(), Reason: "no array here"}
	}}
	_, err := Parse(bytes.NewReader(b), int64(len(b)), "t", opt)
	if err == nil || !strings.Contains(err.Error(), "no array here") {
		t.Fatalf("err = %v", err)
	}
}

func TestFrameLeft(t *testing.T) {
	// PROTO 4, FRAME 3, NONE NONE BUILD, then STOP outside the frame.
	b := []byte("\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00NNb.")
	var left []int64
	opt := Options{AfterBuild: func(rd *Reader, _ *Store, n ID) error {
		left = append(left, rd.FrameLeft())
		return nil
	}}
	if _, err := Parse(bytes.NewReader(b), int64(len(b)), "t", opt); err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != 0 {
		t.Fatalf("FrameLeft = %v", left)
	}
}

// Past its first opcodes the machine decodes the opcodes whole in the read
// buffer in batches; a batch ends with a BUILD when AfterBuild is set, so
// the hook reads right after it. Raw bytes that look like opcodes (a BUILD
// among them) follow each BUILD; with batches running on past them, the
// hook would read opcodes and the machine the raw bytes.
func TestAfterBuildInBatches(t *testing.T) {
	var b []byte
	b = append(b, '(')
	for range 300 {
		b = append(b, 'N') // enough opcodes for the machine to batch
	}
	b = append(b, '0') // POP_MARK
	const raw = "bNb)"
	var want []int64
	for range 50 {
		b = append(b, "]K\x07\x85b"...) // EMPTY_LIST, (BININT1 7,), BUILD
		want = append(want, int64(len(b)))
		b = append(b, raw...)
		b = append(b, '0') // POP
	}
	b = append(b, "N."...)
	var at []int64
	opt := Options{AfterBuild: func(rd *Reader, _ *Store, n ID) error {
		at = append(at, rd.Offset())
		if got := string(rd.Peek(len(raw))); got != raw {
			t.Errorf("hook at %d sees %q", rd.Offset(), got)
		}
		_, err := rd.Discard(int64(len(raw)))
		return err
	}}
	for _, graph := range []bool{true, false} {
		at = at[:0]
		opt.NoGraph = !graph
		f, err := Parse(bytes.NewReader(b), int64(len(b)), "t", opt)
		if err != nil {
			t.Fatal(err)
		}
		if st := f.Streams[0]; st.End != int64(len(b)) || f.Trailing != nil {
			t.Fatalf("end %d of %d, trailing %v", st.End, len(b), f.Trailing)
		}
		if len(at) != len(want) {
			t.Fatalf("hook ran %d times, want %d", len(at), len(want))
		}
		for i := range want {
			if at[i] != want[i] {
				t.Fatalf("hook %d at offset %d, want %d", i, at[i], want[i])
			}
		}
	}
}
