package input

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/pickle"
)

// This file is the one place where pk words the errors of an input that is
// not a pickle at all: a directory, an empty file, text, an image, an
// archive, an executable. Every command reports its input errors through
// Explain, so they all say the same thing.

// SniffLen is how many leading bytes Looks needs to see.
const SniffLen = 4096

// Looks says what data looks like from its first bytes (up to SniffLen), as
// a phrase that follows "looks like": "text (first line \"...\")", "a PNG
// image", "an ELF executable", ..., or "" when it looks like nothing pk
// knows (pickles included). It never says what a pickle looks like: the
// containers pk opens (compression, torch zip, .npy) are named too, for the
// errors of their content.
func Looks(head []byte) string {
	has := func(p string) bool { return len(head) >= len(p) && string(head[:len(p)]) == p }
	switch {
	case len(head) == 0:
		return ""
	case head[0] == 0x80:
		return "" // PROTO: a pickle of protocol 2 or later
	case has("\x89PNG\r\n\x1a\n"):
		return "a PNG image"
	case has("\xff\xd8\xff"):
		return "a JPEG image"
	case has("GIF87a"), has("GIF89a"):
		return "a GIF image"
	case has("RIFF") && len(head) >= 12 && string(head[8:12]) == "WEBP":
		return "a WebP image"
	case has("%PDF-"):
		return "a PDF document"
	case has("\x7fELF"):
		return "an ELF executable or shared library"
	case has("\xcf\xfa\xed\xfe"), has("\xce\xfa\xed\xfe"), has("\xca\xfe\xba\xbe"):
		return "a Mach-O executable"
	case has("MZ") && !isText(head):
		return "a Windows executable (PE)"
	case has("\x89HDF\r\n\x1a\n"):
		return "an HDF5 file (h5py, Keras .h5)"
	case has("SQLite format 3\x00"):
		return "an SQLite database"
	case has("GGUF"):
		return "a GGUF model file"
	case has("7z\xbc\xaf\x27\x1c"):
		return "a 7-Zip archive"
	case has("Rar!\x1a\x07"):
		return "a RAR archive"
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		return "a tar archive (extract the pickle from it first)"
	case has("PK\x03\x04"):
		if n := firstZipMember(head); strings.HasSuffix(n, ".npy") {
			return "a NumPy .npz archive (a zip of .npy files; unzip it and give pk one member)"
		}
		return "a zip archive"
	case safetensors(head):
		return "a safetensors file"
	}
	if c := sniffCompression(head); c != "" {
		return "a " + c + " stream"
	}
	if isText(head) {
		return "text (first line " + firstLine(head) + ")"
	}
	return ""
}

// safetensors: an 8-byte little-endian header length, then a JSON object.
func safetensors(head []byte) bool {
	if len(head) < 10 {
		return false
	}
	n := binary.LittleEndian.Uint64(head)
	return n > 1 && n < 100<<20 && head[8] == '{' && (head[9] == '"' || head[9] == '}')
}

// firstZipMember is the name in the first local file header.
func firstZipMember(head []byte) string {
	if len(head) < 30 {
		return ""
	}
	n := int(binary.LittleEndian.Uint16(head[26:]))
	if 30+n > len(head) {
		return ""
	}
	return string(head[30 : 30+n])
}

// isText reports whether head is UTF-8 (a rune cut at the end is allowed)
// without NUL bytes or control characters other than whitespace and ESC.
func isText(head []byte) bool {
	b := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if len(b) == 0 {
		return false
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			if len(b) < utf8.UTFMax && !utf8.FullRune(b) {
				return true // cut by the end of the head
			}
			return false
		}
		if r < 0x20 && !strings.ContainsRune("\t\n\r\f\v\x1b", r) || r == 0x7f {
			return false
		}
		b = b[size:]
	}
	return true
}

// firstLine quotes the first line that is not blank, shortened.
func firstLine(head []byte) string {
	s := string(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if strings.TrimSpace(l) == "" {
			continue
		}
		const max = 40
		if utf8.RuneCountInString(l) > max {
			l = string([]rune(l)[:max]) + "…"
		}
		return fmt.Sprintf("%q", l)
	}
	return `""`
}

// NotPickleError says that an input is not a pickle at all, and what its
// bytes look like. It wraps the reader's error (a *pickle.Error), so the
// offset stays available.
type NotPickleError struct {
	File string
	// Looks is what the bytes look like (see Looks); "" when nothing is
	// recognised; "empty" for no bytes at all.
	Looks string
	// Layer names the decompressed stream that is not a pickle
	// ("gzip-decompressed stream"); "" for the input itself.
	Layer string
	Err   error
}

func (e *NotPickleError) Unwrap() error { return e.Err }

func (e *NotPickleError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": not a pickle: ")
	what := "the file"
	if e.File == "-" {
		what = "standard input"
	}
	if e.Layer != "" {
		what = "the " + e.Layer
	}
	switch {
	case e.Looks == "empty":
		b.WriteString(what + " is empty")
	case e.Looks == "":
		b.WriteString(bareReason(e.Err))
	default:
		if e.Layer != "" {
			b.WriteString(what + " ")
		}
		b.WriteString("looks like " + e.Looks)
		if strings.HasPrefix(e.Looks, "text") && e.Err != nil {
			// protocol 0 pickles are text too: say where reading it failed
			b.WriteString("; read as a pickle it fails at " + bareReason(e.Err))
		}
	}
	return b.String()
}

// bareReason is err's text without the file name and layer note.
func bareReason(err error) string {
	if pe, ok := pickle.AsError(err); ok {
		c := *pe
		c.File = ""
		if i := strings.Index(c.Reason, " (offset "); i >= 0 && strings.HasSuffix(c.Reason, "stream)") {
			c.Reason = c.Reason[:i]
		}
		return c.Error()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// DirError is the error for a directory given where a file is needed.
func DirError(path string) error {
	return &Error{File: path, Offset: -1, Reason: "is a directory"}
}

// ErrStdinTwice is the error for "-" given twice.
var ErrStdinTwice = errors.New("stdin can be read only once: give '-' at most once")

// Explain returns err, an error from reading an input as a pickle, worded
// for a person when the input is not a pickle at all: a directory, an empty
// file, text, an image, an archive, ... (see Looks). Other errors (a pickle
// damaged after its first opcodes, a container refused) are returned
// unchanged. stdinHead holds the first bytes of standard input, for an
// error that names "-" (nil when they are not known).
func Explain(err error, stdinHead []byte) error {
	if err == nil {
		return nil
	}
	var np *NotPickleError
	if errors.As(err, &np) {
		return err
	}
	file, ok := errFile(err)
	if !ok {
		return err
	}
	if file != "-" {
		if fi, serr := os.Stat(file); serr == nil && fi.IsDir() {
			return DirError(file)
		}
	}
	head := stdinHead
	if file != "-" {
		head = readHead(file, 64<<10)
	}
	pe, isPickle := pickle.AsError(err)
	var ie *Error
	if !isPickle {
		if errors.As(err, &ie) && hasPrefix(head, zipMagic) && file != "-" {
			if looks := zipNotTorch(file); looks != "" {
				return &NotPickleError{File: file, Looks: looks, Err: err}
			}
		}
		return err
	}
	layer := ""
	if c := sniffCompression(head); c != "" {
		if !strings.Contains(pe.Reason, "-decompressed stream)") {
			return err
		}
		layer = c + "-decompressed stream"
		head = decompressHead(c, head)
	}
	if strings.HasPrefix(pe.Reason, "empty input") {
		return &NotPickleError{File: file, Looks: "empty", Layer: layer, Err: err}
	}
	looks := Looks(head)
	switch {
	case looks == "":
		if pe.Offset == 0 && pe.Op == "" && strings.HasPrefix(pe.Reason, "invalid opcode") {
			return &NotPickleError{File: file, Layer: layer, Err: err}
		}
		return err
	case strings.HasPrefix(looks, "text"):
		// a protocol 0 pickle is text: only a failure on its first line
		// says that this text is not one
		end := bytes.IndexByte(head, '\n')
		if end < 0 {
			end = len(head)
		}
		if pe.Offset > int64(end) {
			return err
		}
	case strings.HasPrefix(looks, "a zip"), strings.HasPrefix(looks, "a NumPy .npz"):
		return err // read as a torch archive; its own errors say why not
	}
	return &NotPickleError{File: file, Looks: looks, Layer: layer, Err: err}
}

// errFile names the input an error is about.
func errFile(err error) (string, bool) {
	if pe, ok := pickle.AsError(err); ok && pe.File != "" {
		return pe.File, true
	}
	var ie *Error
	if errors.As(err, &ie) && ie.File != "" {
		return ie.File, true
	}
	return "", false
}

func readHead(path string, n int) []byte {
	if ReadOnce(path) {
		return nil // (read already: opened again, a FIFO waits for a writer)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, n)
	m, _ := io.ReadFull(f, buf)
	return buf[:m]
}

// decompressHead decompresses what it can of head.
func decompressHead(kind string, head []byte) []byte {
	r, done, err := decompressor(kind, bytes.NewReader(head), 1<<20, int64(len(head)), func() io.Reader { return bytes.NewReader(head) })
	if err != nil {
		return nil
	}
	defer done()
	buf := make([]byte, SniffLen)
	n, _ := io.ReadFull(r, buf)
	return buf[:n]
}

// zipNotTorch says what a zip archive is when it has no data.pkl member
// (torch.save always writes one), or "".
func zipNotTorch(path string) string {
	z, err := zip.OpenReader(path)
	if err != nil {
		return ""
	}
	defer z.Close()
	npy := len(z.File) > 0
	for _, f := range z.File {
		if f.Name == "data.pkl" || strings.HasSuffix(f.Name, "/data.pkl") {
			return ""
		}
		npy = npy && strings.HasSuffix(f.Name, ".npy")
	}
	if npy {
		return "a NumPy .npz archive (a zip of .npy files; unzip it and give pk one member)"
	}
	first := ""
	if len(z.File) > 0 {
		first = fmt.Sprintf(", first member %q", z.File[0].Name)
	}
	return fmt.Sprintf("a zip archive that is not a torch.save checkpoint (no data.pkl member%s)", first)
}
