"""Compare .npy files with their pk canon outputs, one JSON line a pair.

    python3 npy_compare.py ORIGINAL OUTPUT [ORIGINAL OUTPUT ...]

Used by pkg/write's TestPythonNpy. Each file is decompressed when it is gzip'd, xz'd, lzma'd, zlib'd, zstd'd or
lz4'd (by content; zstd and lz4 with the zstandard and lz4 modules: without them the pair is skipped, "skip"),
loaded with np.load(allow_pickle=False), and compared: dtype (str, descr, item size), shape, C and F
contiguity, element bytes (by field for a structured dtype: numpy's copies leave the padding between fields
uninitialised), and the data bytes of the two files. Then np.save of the output's array must write the output's header, and the data and what follows it (the
trailing bytes the original had after its data, which numpy ignores) must be the original's.
"""

import bz2
import gzip
import io
import json
import lzma
import sys
import zlib

import numpy as np


def plain(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:2] == b"\x1f\x8b":
        return gzip.decompress(b)
    if b[:6] == b"\xfd7zXZ\x00" or b[:3] == b"\x5d\x00\x00":
        return lzma.decompress(b)
    if b[:1] == b"\x78":
        return zlib.decompress(b)
    if b[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(b)
    if b[:4] == b"\x04\x22\x4d\x18":
        import lz4.frame

        return lz4.frame.decompress(b)
    if b[:3] == b"BZh":
        return bz2.decompress(b)
    return b


def values(a):
    if a.dtype.names:
        return b"".join(values(a[n]) for n in a.dtype.names)
    return a.tobytes(order="A")


def describe(a):
    d = a.dtype
    return {"str": d.str, "descr": str(d.descr), "itemsize": d.itemsize, "shape": list(a.shape),
            "c": bool(a.flags.c_contiguous), "f": bool(a.flags.f_contiguous), "values": values(a).hex()}


def load(b):
    return np.load(io.BytesIO(b), allow_pickle=False, max_header_size=1 << 20)


def main():
    args = sys.argv[1:]
    for orig, out in zip(args[::2], args[1::2]):
        rec = {"file": orig}
        try:
            ib, ob = plain(orig), plain(out)
        except ImportError as e:
            rec["skip"] = str(e)
            print(json.dumps(rec, sort_keys=True))
            continue
        try:
            a, b = load(ib), load(ob)
            if describe(a) != describe(b):
                rec["error"] = "loads otherwise: %.300s != %.300s" % (describe(a), describe(b))
            else:
                s = io.BytesIO()
                np.save(s, b)
                saved = s.getvalue()
                # the header: np.save's copy of a structured array with gaps
                # leaves the padding uninitialised (the data is compared below)
                if len(saved) > len(ob) or not ob.startswith(saved[:len(saved) - b.nbytes]):
                    rec["error"] = "np.save of the loaded array writes other bytes: %r, output %r" % (saved[:200], ob[:200])
                elif ib[len(ib) - (len(ob) - len(saved) + a.nbytes):] != ob[len(ob) - (len(ob) - len(saved) + a.nbytes):]:
                    rec["error"] = "the data and the bytes after it are not the original's"
        except Exception as e:  # noqa: BLE001
            rec["error"] = type(e).__name__ + ": " + str(e)[:300]
        print(json.dumps(rec, sort_keys=True))


if __name__ == "__main__":
    main()
