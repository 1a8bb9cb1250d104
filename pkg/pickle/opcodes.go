// Package pickle owns the pickle protocol as data: the opcode table, a bounded
// streaming reader that yields every opcode with its byte offset, and a
// symbolic machine that turns the opcodes of one or more pickle streams into
// an object graph and an ordered log of every call-like operation — without
// importing, calling or executing anything.
//
// The reader and the machine follow CPython's C unpickler where it differs
// from the documentation (see docs/reader.md). Every error is an *Error that
// names the file, the byte offset, the opcode and the reason.
package pickle

// ArgKind says how an opcode's argument is laid out in the stream.
type ArgKind uint8

const (
	ArgNone          ArgKind = iota
	ArgUint1                 // 1-byte unsigned
	ArgUint2                 // 2-byte little-endian unsigned
	ArgInt4                  // 4-byte little-endian signed
	ArgUint4                 // 4-byte little-endian unsigned
	ArgUint8                 // 8-byte little-endian unsigned
	ArgDecimalShort          // decimal text line (INT, GET, PUT)
	ArgDecimalLong           // decimal text line with optional trailing L (LONG)
	ArgFloatNL               // float text line (FLOAT)
	ArgStringNL              // quoted, escaped text line (STRING)
	ArgStringNLNoEsc         // raw text line (PERSID)
	ArgStringNLPair          // two raw text lines (GLOBAL, INST)
	ArgUnicodeNL             // raw-unicode-escape text line (UNICODE)
	ArgString1               // 1-byte length + bytes (SHORT_BINSTRING)
	ArgString4               // 4-byte signed length + bytes (BINSTRING)
	ArgBytes1                // SHORT_BINBYTES
	ArgBytes4                // BINBYTES
	ArgBytes8                // BINBYTES8
	ArgBytearray8            // BYTEARRAY8
	ArgUnicode1              // SHORT_BINUNICODE
	ArgUnicode4              // BINUNICODE
	ArgUnicode8              // BINUNICODE8
	ArgLong1                 // 1-byte length + two's complement little-endian
	ArgLong4                 // 4-byte signed length + two's complement little-endian
	ArgFloat8                // 8-byte big-endian IEEE-754
)

// Opcode is one byte of the pickle instruction set.
type Opcode byte

// OpInfo describes one opcode: its pickletools name, its argument and the
// protocol that introduced it. No opcode is checked against the protocol
// while reading, as CPython does not check either.
type OpInfo struct {
	Code  Opcode
	Name  string
	Arg   ArgKind
	Proto int
	// Mark is true for opcodes that consume the topmost MARK.
	Mark bool
}

// The opcodes, named as pickletools names them.
const (
	MARK             Opcode = '('
	STOP             Opcode = '.'
	POP              Opcode = '0'
	POP_MARK         Opcode = '1'
	DUP              Opcode = '2'
	FLOAT            Opcode = 'F'
	INT              Opcode = 'I'
	BININT           Opcode = 'J'
	BININT1          Opcode = 'K'
	LONG             Opcode = 'L'
	BININT2          Opcode = 'M'
	NONE             Opcode = 'N'
	PERSID           Opcode = 'P'
	BINPERSID        Opcode = 'Q'
	REDUCE           Opcode = 'R'
	STRING           Opcode = 'S'
	BINSTRING        Opcode = 'T'
	SHORT_BINSTRING  Opcode = 'U'
	UNICODE          Opcode = 'V'
	BINUNICODE       Opcode = 'X'
	APPEND           Opcode = 'a'
	BUILD            Opcode = 'b'
	GLOBAL           Opcode = 'c'
	DICT             Opcode = 'd'
	EMPTY_DICT       Opcode = '}'
	APPENDS          Opcode = 'e'
	GET              Opcode = 'g'
	BINGET           Opcode = 'h'
	INST             Opcode = 'i'
	LONG_BINGET      Opcode = 'j'
	LIST             Opcode = 'l'
	EMPTY_LIST       Opcode = ']'
	OBJ              Opcode = 'o'
	PUT              Opcode = 'p'
	BINPUT           Opcode = 'q'
	LONG_BINPUT      Opcode = 'r'
	SETITEM          Opcode = 's'
	TUPLE            Opcode = 't'
	EMPTY_TUPLE      Opcode = ')'
	SETITEMS         Opcode = 'u'
	BINFLOAT         Opcode = 'G'
	PROTO            Opcode = 0x80
	NEWOBJ           Opcode = 0x81
	EXT1             Opcode = 0x82
	EXT2             Opcode = 0x83
	EXT4             Opcode = 0x84
	TUPLE1           Opcode = 0x85
	TUPLE2           Opcode = 0x86
	TUPLE3           Opcode = 0x87
	NEWTRUE          Opcode = 0x88
	NEWFALSE         Opcode = 0x89
	LONG1            Opcode = 0x8a
	LONG4            Opcode = 0x8b
	BINBYTES         Opcode = 'B'
	SHORT_BINBYTES   Opcode = 'C'
	SHORT_BINUNICODE Opcode = 0x8c
	BINUNICODE8      Opcode = 0x8d
	BINBYTES8        Opcode = 0x8e
	EMPTY_SET        Opcode = 0x8f
	ADDITEMS         Opcode = 0x90
	FROZENSET        Opcode = 0x91
	NEWOBJ_EX        Opcode = 0x92
	STACK_GLOBAL     Opcode = 0x93
	MEMOIZE          Opcode = 0x94
	FRAME            Opcode = 0x95
	BYTEARRAY8       Opcode = 0x96
	NEXT_BUFFER      Opcode = 0x97
	READONLY_BUFFER  Opcode = 0x98
)

// HighestProtocol is the highest protocol pk (and CPython 3.8+) knows.
const HighestProtocol = 5

var opList = []OpInfo{
	{MARK, "MARK", ArgNone, 0, false},
	{STOP, "STOP", ArgNone, 0, false},
	{POP, "POP", ArgNone, 0, false},
	{POP_MARK, "POP_MARK", ArgNone, 1, true},
	{DUP, "DUP", ArgNone, 0, false},
	{FLOAT, "FLOAT", ArgFloatNL, 0, false},
	{INT, "INT", ArgDecimalShort, 0, false},
	{BININT, "BININT", ArgInt4, 1, false},
	{BININT1, "BININT1", ArgUint1, 1, false},
	{LONG, "LONG", ArgDecimalLong, 0, false},
	{BININT2, "BININT2", ArgUint2, 1, false},
	{NONE, "NONE", ArgNone, 0, false},
	{PERSID, "PERSID", ArgStringNLNoEsc, 0, false},
	{BINPERSID, "BINPERSID", ArgNone, 1, false},
	{REDUCE, "REDUCE", ArgNone, 0, false},
	{STRING, "STRING", ArgStringNL, 0, false},
	{BINSTRING, "BINSTRING", ArgString4, 1, false},
	{SHORT_BINSTRING, "SHORT_BINSTRING", ArgString1, 1, false},
	{UNICODE, "UNICODE", ArgUnicodeNL, 0, false},
	{BINUNICODE, "BINUNICODE", ArgUnicode4, 1, false},
	{APPEND, "APPEND", ArgNone, 0, false},
	{BUILD, "BUILD", ArgNone, 0, false},
	{GLOBAL, "GLOBAL", ArgStringNLPair, 0, false},
	{DICT, "DICT", ArgNone, 0, true},
	{EMPTY_DICT, "EMPTY_DICT", ArgNone, 1, false},
	{APPENDS, "APPENDS", ArgNone, 1, true},
	{GET, "GET", ArgDecimalShort, 0, false},
	{BINGET, "BINGET", ArgUint1, 1, false},
	{INST, "INST", ArgStringNLPair, 0, true},
	{LONG_BINGET, "LONG_BINGET", ArgUint4, 1, false},
	{LIST, "LIST", ArgNone, 0, true},
	{EMPTY_LIST, "EMPTY_LIST", ArgNone, 1, false},
	{OBJ, "OBJ", ArgNone, 1, true},
	{PUT, "PUT", ArgDecimalShort, 0, false},
	{BINPUT, "BINPUT", ArgUint1, 1, false},
	{LONG_BINPUT, "LONG_BINPUT", ArgUint4, 1, false},
	{SETITEM, "SETITEM", ArgNone, 0, false},
	{TUPLE, "TUPLE", ArgNone, 0, true},
	{EMPTY_TUPLE, "EMPTY_TUPLE", ArgNone, 1, false},
	{SETITEMS, "SETITEMS", ArgNone, 1, true},
	{BINFLOAT, "BINFLOAT", ArgFloat8, 1, false},
	{PROTO, "PROTO", ArgUint1, 2, false},
	{NEWOBJ, "NEWOBJ", ArgNone, 2, false},
	{EXT1, "EXT1", ArgUint1, 2, false},
	{EXT2, "EXT2", ArgUint2, 2, false},
	{EXT4, "EXT4", ArgInt4, 2, false},
	{TUPLE1, "TUPLE1", ArgNone, 2, false},
	{TUPLE2, "TUPLE2", ArgNone, 2, false},
	{TUPLE3, "TUPLE3", ArgNone, 2, false},
	{NEWTRUE, "NEWTRUE", ArgNone, 2, false},
	{NEWFALSE, "NEWFALSE", ArgNone, 2, false},
	{LONG1, "LONG1", ArgLong1, 2, false},
	{LONG4, "LONG4", ArgLong4, 2, false},
	{BINBYTES, "BINBYTES", ArgBytes4, 3, false},
	{SHORT_BINBYTES, "SHORT_BINBYTES", ArgBytes1, 3, false},
	{SHORT_BINUNICODE, "SHORT_BINUNICODE", ArgUnicode1, 4, false},
	{BINUNICODE8, "BINUNICODE8", ArgUnicode8, 4, false},
	{BINBYTES8, "BINBYTES8", ArgBytes8, 4, false},
	{EMPTY_SET, "EMPTY_SET", ArgNone, 4, false},
	{ADDITEMS, "ADDITEMS", ArgNone, 4, true},
	{FROZENSET, "FROZENSET", ArgNone, 4, true},
	{NEWOBJ_EX, "NEWOBJ_EX", ArgNone, 4, false},
	{STACK_GLOBAL, "STACK_GLOBAL", ArgNone, 4, false},
	{MEMOIZE, "MEMOIZE", ArgNone, 4, false},
	{FRAME, "FRAME", ArgUint8, 4, false},
	{BYTEARRAY8, "BYTEARRAY8", ArgBytearray8, 5, false},
	{NEXT_BUFFER, "NEXT_BUFFER", ArgNone, 5, false},
	{READONLY_BUFFER, "READONLY_BUFFER", ArgNone, 5, false},
}

var opTable [256]*OpInfo

func init() {
	for i := range opList {
		opTable[opList[i].Code] = &opList[i]
	}
}

// Lookup returns the description of code, or nil if code is not an opcode.
func Lookup(code byte) *OpInfo { return opTable[code] }

// Opcodes returns the whole table in pickletools order.
func Opcodes() []OpInfo { return append([]OpInfo(nil), opList...) }

// String returns the pickletools name of op, or a hex form for unknown bytes.
func (op Opcode) String() string {
	if info := opTable[op]; info != nil {
		return info.Name
	}
	const hexdigits = "0123456789abcdef"
	return "<unknown opcode 0x" + string([]byte{hexdigits[op>>4], hexdigits[op&15]}) + ">"
}
