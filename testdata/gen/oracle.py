"""The pickletools oracle.

usage: python3.13 oracle.py FIXTURES_DIR

For every primary fixture under FIXTURES_DIR, finds the pickle stream(s) it
is or contains and writes, next to it:

  <stream>.ops.jsonl   one JSON object per opcode from pickletools.genops:
                       {"pos": <int>, "op": "<NAME>", "arg": <typed arg>}
  <stream>.dis.txt     `python -m pickletools <stream>` output (first stream)

where <stream> is the fixture itself for a bare pickle, and an extracted file
for a container (also written by this script):

  x.pt       (torch zip)        -> x.pt.data.pkl       (the archive's */data.pkl)
  x.npy      (dtype=object)     -> x.npy.payload.pkl   (bytes after the header)
  x.gz/.bz2/.xz/.zst/.lz4,
  compressed joblib files       -> x.<ext>.stream.pkl  (decompressed bytes)

Multi-stream files (group `multi`, legacy torch.save) get one
<file>.<i>.ops.jsonl per stream; pos is always relative to the start of the
file the ops describe.  See testdata/README.md for the exact arg encoding.

Must not unpickle anything: it only uses pickletools.genops/dis, zipfile and
the decompressors.
"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
import bz2
import gzip
import lzma

import pickletools

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

DERIVED_SUFFIXES = (".ops.jsonl", ".dis.txt", ".data.pkl", ".stream.pkl", ".payload.pkl")
IGNORED_SUFFIXES = (".txt", ".json", ".jsonl", ".md")
# streams stored in legacy (non-zip) torch.save files: magic number, protocol
# version, sys_info, the object, the storage keys; then raw storage bytes.
TORCH_LEGACY_STREAMS = 5


# --- py2 string opcodes ---------------------------------------------------
# pickletools decodes STRING as ASCII (and fails on non-ASCII bytes, which
# Python 2 happily writes) and BINSTRING/SHORT_BINSTRING as latin-1.  The
# oracle reports the raw bytes instead, tagged {"bytes": ...}.
def _read_stringnl_bytes(f):
    data = f.readline()
    if not data.endswith(b"\n"):
        raise ValueError("no newline found when trying to read stringnl")
    data = data[:-1]
    for q in (b'"', b"'"):
        if data.startswith(q):
            if not data.endswith(q) or len(data) < 2:
                raise ValueError("string quote %r not found at both ends of %r" % (q, data))
            data = data[1:-1]
            break
    else:
        raise ValueError("no string quotes around %r" % data)
    import codecs
    return codecs.escape_decode(data)[0]


def _read_string1_bytes(f):
    n = pickletools.read_uint1(f)
    data = f.read(n)
    if len(data) != n:
        raise ValueError("expected %d bytes in a string1, but only %d remain" % (n, len(data)))
    return data


def _read_string4_bytes(f):
    n = pickletools.read_int4(f)
    if n < 0:
        raise ValueError("string4 byte count < 0: %d" % n)
    data = f.read(n)
    if len(data) != n:
        raise ValueError("expected %d bytes in a string4, but only %d remain" % (n, len(data)))
    return data


_PATCHED = {
    "STRING": _read_stringnl_bytes,
    "BINSTRING": _read_string4_bytes,
    "SHORT_BINSTRING": _read_string1_bytes,
}


def _genops_patched(f):
    """pickletools.genops with the py2-string readers swapped for bytes readers."""
    saved = {}
    for op in pickletools.opcodes:
        if op.name in _PATCHED:
            saved[op.name] = op.arg
    descs = {}
    for name, reader in _PATCHED.items():
        a = saved[name]
        descs[name] = pickletools.ArgumentDescriptor(name=a.name, n=a.n, reader=reader, doc=a.doc)
    for op in pickletools.opcodes:
        if op.name in descs:
            op.arg = descs[op.name]
    try:
        for item in pickletools.genops(f):
            yield item
    finally:
        for op in pickletools.opcodes:
            if op.name in saved:
                op.arg = saved[op.name]


def typed_arg(a):
    if a is None:
        return None
    if isinstance(a, bool):
        return {"bool": a}
    if isinstance(a, int):
        return {"int": str(a)}
    if isinstance(a, float):
        return {"float": struct.pack(">d", a).hex()}
    if isinstance(a, str):
        return {"str": a.encode("utf-8", "surrogatepass").hex()}
    if isinstance(a, bytearray):
        return {"bytearray": bytes(a).hex()}
    if isinstance(a, bytes):
        return {"bytes": a.hex()}
    raise TypeError("unexpected pickletools arg type %r" % type(a))


def line(pos, name, arg):
    return json.dumps({"pos": pos, "op": name, "arg": arg}, separators=(",", ":")) + "\n"


def ops_one_stream(f, spans=None):
    """Read one pickle from file object f (at its current position) up to and
    including STOP.  Returns the list of jsonl lines.  `spans` (joblib) maps the
    offset right after a BUILD to a non-pickle region the loader consumes."""
    out = []
    spans = spans or {}
    for op, arg, pos in _genops_patched(f):
        out.append(line(pos, op.name, typed_arg(arg)))
        if op.name == "BUILD" and pos + 1 in spans:
            sp = spans[pos + 1]
            if sp["kind"] == "raw":
                out.append(line(sp["start"], "@RAW", {"int": str(sp["end"] - sp["start"])}))
                f.seek(sp["end"])
            elif sp["kind"] == "pickle":
                out.append(line(sp["start"], "@NESTED", {"int": str(sp["end"] - sp["start"])}))
                out.extend(ops_one_stream(f))
                if f.tell() != sp["end"]:
                    raise ValueError("nested pickle ended at %d, expected %d" % (f.tell(), sp["end"]))
            else:
                raise ValueError("unknown span kind %r" % sp["kind"])
    return out


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


DIS_MAX_LINES = 1500
DIS_MAX_LINE_CHARS = 8000


def dis_text(data):
    """What `python -m pickletools FILE` prints for the first pickle in data.
    If pickletools gives up (non-pickle bytes inside a joblib stream, a py2
    STRING it cannot decode, ...), the partial output is kept and one
    '# pickletools error: ...' line is added.

    Long listings are cut, always with a marker starting '# ... truncated'
    so that everything before the marker is exact pickletools output: after
    DIS_MAX_LINES lines, or inside the first line longer than
    DIS_MAX_LINE_CHARS characters (a huge bytes/str repr), where the marker
    directly follows the first DIS_MAX_LINE_CHARS characters of that line."""
    out = io.StringIO()
    err = None
    try:
        pickletools.dis(io.BytesIO(data), out, None, 4, 0)
    except Exception as e:  # keep what was printed
        err = "# pickletools error: %s: %s\n" % (type(e).__name__, e)
    lines = out.getvalue().splitlines(True)
    kept = []
    for i, l in enumerate(lines):
        if i >= DIS_MAX_LINES:
            kept.append("# ... truncated: %d more lines (run python -m pickletools on the file)\n"
                        % (len(lines) - i))
            return "".join(kept)
        body = l.rstrip("\n")
        if len(body) > DIS_MAX_LINE_CHARS:
            kept.append(body[:DIS_MAX_LINE_CHARS])
            kept.append("# ... truncated: this line has %d more chars and %d more lines follow "
                        "(run python -m pickletools on the file)\n"
                        % (len(body) - DIS_MAX_LINE_CHARS, len(lines) - i - 1))
            return "".join(kept)
        kept.append(l)
    if err:
        kept.append(err)
    return "".join(kept)


def emit_single(stream_path, data, spans=None):
    f = io.BytesIO(data)
    lines = ops_one_stream(f, spans)
    write_text(stream_path + ".ops.jsonl", "".join(lines))
    write_text(stream_path + ".dis.txt", dis_text(data))
    return 1


def emit_multi(path, data, max_streams=None):
    """One .<i>.ops.jsonl per stream; stops at EOF, at max_streams, or at the
    first stream that does not parse (trailing junk)."""
    f = io.BytesIO(data)
    i = 0
    while f.tell() < len(data) and (max_streams is None or i < max_streams):
        start = f.tell()
        try:
            lines = ops_one_stream(f)
        except Exception as e:
            print("  %s: stream %d at offset %d does not parse (%s: %s); %d trailing bytes"
                  % (os.path.basename(path), i, start, type(e).__name__, e, len(data) - start))
            break
        write_text("%s.%d.ops.jsonl" % (path, i), "".join(lines))
        i += 1
    write_text(path + ".dis.txt", dis_text(data))
    return i


def decompress(path, data):
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:3] == b"BZh":
        return bz2.decompress(data)
    if data[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return _cli(["zstd", "-dc", path])
    if data[:4] == b"\x04\x22\x4d\x18":
        return _cli(["lz4", "-dc", path])
    if data[:1] == b"\x78":  # zlib (joblib "zlib" compressor)
        return zlib.decompress(data)
    if data[:1] == b"\x5d":  # raw .lzma (LZMA_ALONE)
        return lzma.decompress(data, format=lzma.FORMAT_ALONE)
    return None


def _cli(cmd):
    if shutil.which(cmd[0]) is None:
        raise RuntimeError("%s CLI not installed" % cmd[0])
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout


def is_compressed_name(name):
    return name.endswith((".gz", ".bz2", ".xz", ".lzma", ".zst", ".lz4", ".z"))


def process(path, group):
    name = os.path.basename(path)
    with open(path, "rb") as f:
        data = f.read()

    if name.endswith((".pt", ".pth")):
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                members = [m for m in z.namelist() if m.endswith("/data.pkl") or m == "data.pkl"]
                if len(members) != 1:
                    raise ValueError("%s: expected one data.pkl, got %r" % (path, members))
                inner = z.read(members[0])
            out = path + ".data.pkl"
            with open(out, "wb") as f:
                f.write(inner)
            return emit_single(out, inner)
        return emit_multi(path, data, TORCH_LEGACY_STREAMS)

    if name.endswith(".npy"):
        if data[:6] != b"\x93NUMPY":
            raise ValueError("%s: not an .npy file" % path)
        major = data[6]
        if major == 1:
            hlen, hstart = struct.unpack("<H", data[8:10])[0], 10
        else:
            hlen, hstart = struct.unpack("<I", data[8:12])[0], 12
        header = data[hstart:hstart + hlen].decode("latin-1")
        if "'O'" not in header and "|O" not in header:
            print("  %s: numeric .npy, no pickle inside" % name)
            return 0
        inner = data[hstart + hlen:]
        out = path + ".payload.pkl"
        with open(out, "wb") as f:
            f.write(inner)
        return emit_single(out, inner)

    if ".joblib" in name:
        spans_path = path + ".rawspans.json"
        spans = None
        if os.path.exists(spans_path):
            with open(spans_path) as f:
                spans = {s["after_build"]: s for s in json.load(f)}
        stream = data
        target = path
        if is_compressed_name(name):
            stream = decompress(path, data)
            if stream is None:
                raise ValueError("%s: unknown compression" % path)
            target = path + ".stream.pkl"
            with open(target, "wb") as f:
                f.write(stream)
        return emit_single(target, stream, spans)

    if group == "compressed" and is_compressed_name(name):
        try:
            stream = decompress(path, data)
        except Exception as e:
            print("  SKIP %s: %s" % (name, e))
            return 0
        if stream is None:
            raise ValueError("%s: unknown compression" % path)
        target = path + ".stream.pkl"
        with open(target, "wb") as f:
            f.write(stream)
        return emit_single(target, stream)

    if group == "multi":
        return emit_multi(path, data)

    return emit_single(path, data)


def is_primary(name):
    if name.startswith(".") or name.endswith(DERIVED_SUFFIXES):
        return False
    if name.endswith(IGNORED_SUFFIXES):
        return False
    if name.endswith(".rawspans.json"):
        return False
    return True


def main():
    root = sys.argv[1]
    # drop previous oracle output (and extracted inner streams) first
    for dirpath, _, files in os.walk(root):
        for n in files:
            if n.endswith(DERIVED_SUFFIXES):
                os.remove(os.path.join(dirpath, n))
    total = 0
    nfiles = 0
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        group = os.path.relpath(dirpath, root).split(os.sep)[0]
        for n in sorted(files):
            if not is_primary(n):
                continue
            path = os.path.join(dirpath, n)
            total += process(path, group)
            nfiles += 1
    print("oracle (Python %s): %d fixtures, %d op streams" % (sys.version.split()[0], nfiles, total))


if __name__ == "__main__":
    main()
