package canon

// The digests of small pure tuples in pass 2 of the streaming hash (see
// fast.go): a tuple of pure values is encoded as 'H' and the digest of its
// body, one SHA-256 block for a row's small tuple, and a table's rows often
// hold the same few (a category and a flag: dicts_tuples' "pair" takes 20
// values in 500,000 rows). Each encoder keeps the bodies it digested last in
// a small table, one place per body's hash, and reads a digest there when
// the body is the same byte for byte; when few of its looks find one it
// stops looking.

import "hash/maphash"

// tupleBodyMax is the longest body kept (a place is 80 bytes).
const tupleBodyMax = 47

// tuplePlaces is the table's size (a power of two).
const tuplePlaces = 512

// tupleProbe is how many looks the table is judged on: fewer than one in
// eight found and it is not looked in again.
const tupleProbe = 8192

type tupleSums struct {
	off          bool
	looks, found int // in the current probe
	seed         maphash.Seed
	places       []tuplePlace // made at the first look
}

type tuplePlace struct {
	n    uint8 // the body's length (0: empty; a body is at least 2 bytes)
	body [tupleBodyMax]byte
	sum  [32]byte
}

// noTupleSums turns the table off (tests compare both ways).
var noTupleSums bool

// sumTuple appends to dst the digest of a pure tuple's body, as
// e.opt.Algo.sum does.
func (e *fastEnc) sumTuple(dst, body []byte) []byte {
	c := &e.tsums
	if c.off || len(body) > tupleBodyMax || noTupleSums {
		return e.opt.Algo.sum(dst, body)
	}
	if c.places == nil {
		c.places, c.seed = make([]tuplePlace, tuplePlaces), maphash.MakeSeed()
	}
	p := &c.places[maphash.Bytes(c.seed, body)&(tuplePlaces-1)]
	n := e.opt.Algo.Size()
	c.looks++
	if int(p.n) == len(body) && string(p.body[:len(body)]) == string(body) {
		c.found++
		return append(dst, p.sum[:n]...)
	}
	if c.looks >= tupleProbe {
		c.off = c.found < tupleProbe/8
		c.looks, c.found = 0, 0
	}
	dst = e.opt.Algo.sum(dst, body)
	p.n = uint8(len(body))
	copy(p.body[:], body)
	copy(p.sum[:], dst[len(dst)-n:])
	return dst
}
