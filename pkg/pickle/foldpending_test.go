package pickle

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// TestFoldPendingRows: a table's rows waiting on the stack for their batch
// of APPENDS are not offered to the consumer entry by entry (they are
// folded whole once appended; offering their entries first encoded every
// row twice), while large dicts still
// have their entries offered as they are filled, by batches of SETITEMS or
// by single SETITEMs on top of the stack above the list's MARK (waiting,
// but past foldPendingItems, which bounds what such a wait holds).
func TestFoldPendingRows(t *testing.T) {
	defer func(v int) { MinCompact = v }(MinCompact)
	MinCompact = 64
	// protocol 2: a list of rows of 10 str keys, appended in batches of 100
	var b bytes.Buffer
	b.WriteString("\x80\x02]q\x00(")
	str := func(s string) { b.WriteByte('U'); b.WriteByte(byte(len(s))); b.WriteString(s) }
	for i := 0; i < 500; i++ {
		b.WriteString("}(")
		for k := 0; k < 10; k++ {
			str(fmt.Sprintf("k%d", k))
			b.WriteString("K\x01")
		}
		b.WriteString("u")
		if i%100 == 99 {
			b.WriteString("e(")
		}
	}
	// a dict filled by 30 batches of 20 entries (right below each batch's
	// MARK while it is filled), and one filled by 3000 single SETITEMs (on
	// top of the stack, above the list's MARK: waiting, but large)
	b.WriteString("}")
	for k := 0; k < 600; k++ {
		if k%20 == 0 {
			b.WriteByte('(')
		}
		str(fmt.Sprintf("w%d", k))
		b.WriteString("K\x02")
		if k%20 == 19 {
			b.WriteByte('u')
		}
	}
	b.WriteString("}")
	for k := 0; k < 3000; k++ {
		str(fmt.Sprintf("x%d", k))
		b.WriteString("K\x03s")
	}
	b.WriteString("e.")
	data := b.Bytes()
	var rowEntries, batchEntries, singleEntries int
	keep := &Keep{Depth: math.MaxInt32, Fold: func(s *Store, _, keys []ID, _ []uint8, out []Folded) {
		for i, k := range keys {
			out[i] = Folded{OK: true, Len: 1} // (folded: the store shrinks, so compactions go on)
			if k == NoID {
				continue
			}
			switch s.Str(k)[0] {
			case 'k':
				rowEntries++
			case 'w':
				batchEntries++
			case 'x':
				singleEntries++
			}
		}
	}}
	if _, err := Parse(bytes.NewReader(data), int64(len(data)), "rows", Options{NoGraph: true, Keep: keep, Replay: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	if rowEntries != 0 {
		t.Errorf("%d entries of rows waiting for their batch were offered; want 0 (each row is offered whole once appended)", rowEntries)
	}
	if batchEntries == 0 {
		t.Errorf("no entry of the dict filled by batches of SETITEMS was offered while it was filled")
	}
	if singleEntries == 0 {
		t.Errorf("no entry of the dict of 3000 single SETITEMs was offered while it was filled")
	}
}
