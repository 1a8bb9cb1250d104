package pickle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stackUse says how many stack items an opcode takes (not counting the
// MARK that Mark opcodes take) and whether its target sits below the MARK
// (APPENDS, SETITEMS, ADDITEMS). Every opcode of the table must be listed:
// a new opcode fails TestTableComplete until it is.
var stackUse = map[string]struct {
	pops        int
	belowMark   bool // the target is the item under the MARK
	classAtMark bool // OBJ: the class is the first item after the MARK
}{
	"MARK": {}, "STOP": {pops: 1}, "POP": {pops: 1}, "POP_MARK": {}, "DUP": {pops: 1},
	"FLOAT": {}, "INT": {}, "BININT": {}, "BININT1": {}, "LONG": {}, "BININT2": {}, "NONE": {},
	"PERSID": {}, "BINPERSID": {pops: 1}, "REDUCE": {pops: 2}, "STRING": {}, "BINSTRING": {},
	"SHORT_BINSTRING": {}, "UNICODE": {}, "BINUNICODE": {}, "APPEND": {pops: 2}, "BUILD": {pops: 2},
	"GLOBAL": {}, "DICT": {}, "EMPTY_DICT": {}, "APPENDS": {belowMark: true}, "GET": {}, "BINGET": {},
	"INST": {}, "LONG_BINGET": {}, "LIST": {}, "EMPTY_LIST": {}, "OBJ": {classAtMark: true},
	"PUT": {pops: 1}, "BINPUT": {pops: 1}, "LONG_BINPUT": {pops: 1}, "SETITEM": {pops: 3}, "TUPLE": {},
	"EMPTY_TUPLE": {}, "SETITEMS": {belowMark: true}, "BINFLOAT": {}, "PROTO": {}, "NEWOBJ": {pops: 2},
	"EXT1": {}, "EXT2": {}, "EXT4": {}, "TUPLE1": {pops: 1}, "TUPLE2": {pops: 2}, "TUPLE3": {pops: 3},
	"NEWTRUE": {}, "NEWFALSE": {}, "LONG1": {}, "LONG4": {}, "BINBYTES": {}, "SHORT_BINBYTES": {},
	"SHORT_BINUNICODE": {}, "BINUNICODE8": {}, "BINBYTES8": {}, "EMPTY_SET": {}, "ADDITEMS": {belowMark: true},
	"FROZENSET": {}, "NEWOBJ_EX": {pops: 3}, "STACK_GLOBAL": {pops: 2}, "MEMOIZE": {pops: 1}, "FRAME": {},
	"BYTEARRAY8": {}, "NEXT_BUFFER": {}, "READONLY_BUFFER": {pops: 1},
}

// argSample is a valid encoding of an argument of each kind; multi-byte
// UTF-8 sits where a cut can fall inside a character.
var argSample = map[ArgKind]string{
	ArgNone:          "",
	ArgUint1:         "\x02",
	ArgUint2:         "\x01\x00",
	ArgInt4:          "\x01\x00\x00\x00",
	ArgUint4:         "\x01\x00\x00\x00",
	ArgUint8:         "\x01\x00\x00\x00\x00\x00\x00\x00",
	ArgDecimalShort:  "12\n",
	ArgDecimalLong:   "12L\n",
	ArgFloatNL:       "1.5\n",
	ArgStringNL:      "'ab'\n",
	ArgStringNLNoEsc: "ab\n",
	ArgStringNLPair:  "os\npath\n",
	ArgUnicodeNL:     "a\\u00e9\n",
	ArgString1:       "\x03abc",
	ArgString4:       "\x03\x00\x00\x00abc",
	ArgBytes1:        "\x03abc",
	ArgBytes4:        "\x03\x00\x00\x00abc",
	ArgBytes8:        "\x03\x00\x00\x00\x00\x00\x00\x00abc",
	ArgBytearray8:    "\x03\x00\x00\x00\x00\x00\x00\x00abc",
	ArgUnicode1:      "\x03\xc3\xa9a",
	ArgUnicode4:      "\x03\x00\x00\x00\xc3\xa9a",
	ArgUnicode8:      "\x03\x00\x00\x00\x00\x00\x00\x00a\xc3\xa9",
	ArgLong1:         "\x02\x01\x02",
	ArgLong4:         "\x02\x00\x00\x00\x01\x02",
	ArgFloat8:        "\x3f\xf8\x00\x00\x00\x00\x00\x00",
}

func TestTableComplete(t *testing.T) {
	seen := map[byte]bool{}
	for _, info := range Opcodes() {
		if _, ok := stackUse[info.Name]; !ok {
			t.Errorf("opcode %s has no stackUse entry", info.Name)
		}
		if _, ok := argSample[info.Arg]; !ok {
			t.Errorf("argument kind %d of %s has no sample", info.Arg, info.Name)
		}
		if seen[byte(info.Code)] {
			t.Errorf("opcode byte %#x twice", byte(info.Code))
		}
		seen[byte(info.Code)] = true
		if Lookup(byte(info.Code)) == nil || Lookup(byte(info.Code)).Name != info.Name || info.Code.String() != info.Name {
			t.Errorf("Lookup/String disagree for %s", info.Name)
		}
		if info.Proto < 0 || info.Proto > HighestProtocol {
			t.Errorf("%s: protocol %d", info.Name, info.Proto)
		}
	}
	if len(Opcodes()) != 68 {
		t.Errorf("%d opcodes, protocols 0-5 have 68", len(Opcodes()))
	}
	if len(stackUse) != len(Opcodes()) {
		t.Errorf("stackUse lists %d opcodes, the table %d", len(stackUse), len(Opcodes()))
	}
}

// expectErr parses in (as a file and as stdin) and checks the error.
func expectErr(t *testing.T, in []byte, off int64, op, reason string) {
	t.Helper()
	for _, stdin := range []bool{false, true} {
		var err error
		if stdin {
			_, err = Parse(onlyReader{bytes.NewReader(in)}, -1, "-", Options{})
		} else {
			_, err = parseBytes(in)
		}
		if err == nil {
			t.Errorf("%q (stdin %v): no error, want %q at %d", in, stdin, reason, off)
			continue
		}
		pe, cerr := checkError(err, len(in))
		if cerr != nil {
			t.Errorf("%q: %v", in, cerr)
			continue
		}
		if pe.Offset != off || pe.Op != op || !strings.Contains(pe.Reason, reason) {
			t.Errorf("%q (stdin %v): got %v\n  want offset %d %s ~%q", in, stdin, err, off, op, reason)
		}
	}
}

func encode(info OpInfo) []byte { return cat(info.Code, argSample[info.Arg]) }

// TestUnderflowEveryOpcode: every opcode that takes stack items fails with
// CPython's message, at its own offset, when one item is missing, and when
// a MARK sits where an operand is expected.
func TestUnderflowEveryOpcode(t *testing.T) {
	n := 0
	for _, info := range Opcodes() {
		u := stackUse[info.Name]
		op := encode(info)
		name := info.Name
		switch {
		case u.pops > 0:
			n++
			// One item short, no MARK.
			in := cat(proto4, rep("N", u.pops-1), op, STOP)
			expectErr(t, in, int64(2+u.pops-1), name, "unpickling stack underflow")
			// A MARK where an operand is expected (POP pops the MARK instead).
			in = cat(proto4, NONE, MARK, rep("N", u.pops-1), op, STOP)
			if info.Code == POP {
				f, err := parseBytes(in)
				if err != nil || f.Streams[0].Root.Kind != KindNone || f.Streams[0].LeftoverMarks != 0 {
					t.Errorf("POP on a MARK: %v", err)
				}
				continue
			}
			expectErr(t, in, int64(4+u.pops-1), name, "unexpected MARK found")
		case info.Mark:
			n++
			// No MARK at all.
			expectErr(t, cat(proto4, NONE, NONE, op, STOP), 4, name, "could not find MARK")
			if u.belowMark || u.classAtMark {
				// A MARK but nothing under it (or after it, for OBJ).
				expectErr(t, cat(proto4, MARK, op, STOP), 3, name, "unpickling stack underflow")
				// The same inside an outer MARK.
				expectErr(t, cat(proto4, MARK, MARK, op, STOP), 4, name, "unexpected MARK found")
			}
		}
	}
	if n < 25 {
		t.Errorf("only %d stack-consuming opcodes tested", n)
	}
}

// TestTruncateEveryArgument cuts a valid encoding of every opcode that has
// an argument at every byte: the error names the opcode at its offset.
func TestTruncateEveryArgument(t *testing.T) {
	cuts := 0
	for _, info := range Opcodes() {
		if info.Arg == ArgNone {
			continue
		}
		full := cat(proto4, encode(info))
		for k := 3; k < len(full); k++ {
			cuts++
			expectErr(t, full[:k], 2, info.Name, "truncated")
		}
		// Cut inside the argument, then more opcodes that are not STOP:
		// a declared length now swallows them, a text line ends early, or
		// the error still names this opcode.
	}
	if cuts < 100 {
		t.Errorf("only %d cuts", cuts)
	}
}

// TestEveryOpcodeHasAValidForm runs each opcode on a stack that suits it,
// so that the table of encodings stays loadable (and the truncation test
// cuts real encodings).
func TestEveryOpcodeHasAValidForm(t *testing.T) {
	for _, info := range Opcodes() {
		u := stackUse[info.Name]
		var in []byte
		switch {
		case info.Code == STOP || info.Code == MARK || info.Code == FRAME:
			continue
		case info.Code == PROTO:
			in = cat(encode(info), NONE, STOP)
		case info.Code == GET || info.Code == BINGET || info.Code == LONG_BINGET:
			// Memo slots 1, 2 and 12 as the samples read them.
			in = cat(NONE, PUT, "1\n", PUT, "2\n", PUT, "12\n", encode(info), STOP)
		case info.Code == STACK_GLOBAL:
			in = cat(SHORT_BINUNICODE, byte(2), "os", SHORT_BINUNICODE, byte(4), "path", encode(info), STOP)
		case info.Code == BUILD || info.Code == REDUCE || info.Code == NEWOBJ:
			in = cat(GLOBAL, "m\nC\n", EMPTY_TUPLE, encode(info), STOP)
		case info.Code == NEWOBJ_EX:
			in = cat(GLOBAL, "m\nC\n", EMPTY_TUPLE, EMPTY_DICT, encode(info), STOP)
		case info.Code == APPEND || info.Code == SETITEM:
			in = cat(EMPTY_DICT, EMPTY_LIST, rep("N", u.pops-1), encode(info), STOP)
			if info.Code == SETITEM {
				in = cat(EMPTY_DICT, NONE, NONE, encode(info), STOP)
			}
		case info.Code == OBJ:
			in = cat(MARK, GLOBAL, "m\nC\n", NONE, encode(info), STOP)
		case u.belowMark:
			target := EMPTY_LIST
			if info.Code == SETITEMS {
				target = EMPTY_DICT
			} else if info.Code == ADDITEMS {
				target = EMPTY_SET
			}
			in = cat(target, MARK, NONE, NONE, encode(info), STOP)
		case info.Code == POP_MARK:
			in = cat(NONE, MARK, NONE, encode(info), STOP)
		case info.Mark:
			in = cat(MARK, NONE, NONE, encode(info), STOP)
		case info.Code == POP:
			in = cat(NONE, NONE, encode(info), STOP)
		case u.pops > 0:
			in = cat(rep("N", u.pops), encode(info), STOP)
		default:
			in = cat(encode(info), STOP)
		}
		f, err := parseBytes(in)
		if err != nil {
			t.Errorf("%s: %q: %v", info.Name, in, err)
			continue
		}
		if err := checkFile(f, int64(len(in))); err != nil {
			t.Errorf("%s: %v", info.Name, err)
		}
	}
}

// docs/reader.md lists every opcode of the table.
func TestDocsListEveryOpcode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "reader.md"))
	if err != nil {
		t.Skip("docs/reader.md not found")
	}
	for _, info := range Opcodes() {
		if !strings.Contains(string(doc), "| "+info.Name+" |") {
			t.Errorf("docs/reader.md does not list %s", info.Name)
		}
	}
}
