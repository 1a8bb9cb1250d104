package diff

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
)

// A torch zip against a legacy torch file (torchCross): the same
// checkpoint saved both ways holds the same tensors, but the zip names its
// storages 0, 1, ... and the legacy file by memory address, in another
// container. They are compared by what torch.load returns: the main
// pickles as root against root, and each persistent id that names a
// storage by the storage it names (dtype, element count, bytes), not by
// its key; the storage parts are not aligned by name. The pickles only the
// legacy file has and the zip's version record are entries that say what
// they hold.

// crossStorage compares two persistent ids that name torch storages by
// those storages. It returns false when either is no storage reference
// (the walk then compares them as values).
func (c *cmp) crossStorage(a, b *canon.Node, at pathRef) bool {
	ida, okA := a.StreamID()
	idb, okB := b.StreamID()
	if !okA || !okB {
		return false
	}
	ra, okA := c.docA.StorageAt(c.storeA, ida)
	rb, okB := c.docB.StorageAt(c.storeB, idb)
	if !okA || !okB || ra.Part == nil || rb.Part == nil || ra.Part.Raw == nil || rb.Part.Raw == nil {
		return false
	}
	pa, pb := ra.Part, rb.Part
	if ra.DType == rb.DType && ra.Numel == rb.Numel && bytes.Equal(pa.Raw.Digest, pb.Raw.Digest) {
		return true
	}
	// at the tensor rather than at its argument: root['w'], not
	// root['w'].__reduce__[1][0]
	p := c.paths.String(at)
	if t, ok := strings.CutSuffix(p, ppath.Args+ppath.Index(0)); ok {
		p = t
	}
	e := Entry{NoOffset: true, Path: p, Kind: Changed, A: partShort(pa), ArrA: partArray(pa), B: partShort(pb), ArrB: partArray(pb), SizeA: pa.Raw.Len, SizeB: pb.Raw.Len}
	label := func(p *input.Part) string {
		if l := partLabel(p); strings.HasPrefix(l, "storage ") {
			return l
		} else {
			return "storage " + l
		}
	}
	note := label(pa) + " against " + label(pb)
	c.heldPath('a', pa) // (makes the tensors of side a known)
	if ee, ok := rawElements(p, c.docA, c.docB, pa.Raw, pb.Raw, c.tensorRefA["path:"+p]); ok {
		ee.Note += "; " + note
		c.addPart(ee)
		return true
	}
	if n, ok := changedElements(pa.Raw, pb.Raw); ok {
		note = fmt.Sprintf("%d element(s) differ in %s", n, note)
	}
	e.Note = note
	c.addPart(e)
	return true
}

// crossNote says what a part or stream only one side has holds, when a
// torch zip is compared with a legacy file.
func (c *cmp) crossNote(d *input.Doc, p *input.Part, stream int) string {
	if !c.cross {
		return ""
	}
	if strings.HasSuffix(d.Format, "torch-legacy") && stream >= 0 {
		switch stream {
		case 0:
			return "the legacy torch file's magic number, which torch.load checks"
		case 1:
			return "the legacy torch file's protocol version, which torch.load checks"
		case 2:
			return "the legacy torch file's system info (byte order, type sizes)"
		case 4:
			return "the legacy torch file's list of storage keys, in the order of their records"
		}
	}
	if p != nil && p.Role == input.RoleMeta {
		return "the torch zip's " + string(p.Role) + " record " + p.Name + ", which torch.load reads"
	}
	return ""
}
