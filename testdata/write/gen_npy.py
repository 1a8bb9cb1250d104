"""Write testdata/write/npy/: .npy files of plain data for pk canon's .npy writer (pkg/write/npy.go).

    python3 testdata/write/gen_npy.py testdata/write/npy

Used by pkg/write's TestNpyFiles and TestPythonNpy. Files of one group have one pk hash (pk-canon/2 reads a
.npy file as its array: descr, shape, memory order, element bytes; not its header's version, spelling or
padding) and must give one canonical output, numpy.save's bytes for the array:

  f8        np.save of a 2x3 float64 array; the same array in a 2.0 and a 3.0 header
            (np.lib.format.write_array's version=), and in a hand-written header (keys in another
            order, no spaces, double quotes, padded to 16 bytes instead of 64);
  g1d       a 1-d array by np.save, and in a header saying fortran_order True (one dimension: C and F
            are one order, docs/canonical-form-2.md §2.2);
  gz        f8.npy gzip'd by Python at level 9 and at level 1 with a file name and a time stamp (the
            output is gzip'd with pk canon's fixed settings); xz and lzma ("alone") and zlib copies.

Other files, each its own digest: the same values big-endian (another descr), in Fortran order (another
order), with bytes after the data (numpy ignores them, pk hash covers them); structured dtypes with field
names that need quoting, a subarray, a nested struct and gaps between fields (numpy writes them as ('',
'|Vn') fields), a field name outside latin-1 (numpy writes a 3.0 header), 3000 fields (a header over
64 KiB: numpy writes 2.0; gzip'd to keep it small). Refused by pk canon: a truncated file, a header that is
not a dict, the descr '=f8' (numpy reads it; pk-canon/2 does not read it as an array's). A bz2 copy
(f8.npy.bz2, refused while pk canon had no bz2 writer) is written as the others. A field name with an escape in numpy's header ('a\\x01': escape_field.npy) is written. Debian's python3 with
numpy 1.24 wrote the committed files; a rerun writes the same bytes.
"""

import bz2
import gzip
import io
import lzma
import os
import sys
import zlib

import numpy as np


def saved(a, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, a)
    else:
        np.lib.format.write_array(b, a, version=version)
    return b.getvalue()


def header_v1(text, align):
    """A 1.0 .npy preamble and header of the given dict text, padded to align bytes."""
    h = text.encode("latin1")
    pad = align - (10 + len(h) + 1) % align
    if pad == align:
        pad = 0
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h


def main(out):
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))

    def put(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    f8 = np.arange(6, dtype="<f8").reshape(2, 3) / 4
    put("f8.npy", saved(f8))
    put("f8_v2.npy", saved(f8, (2, 0)))
    put("f8_v3.npy", saved(f8, (3, 0)))
    put("f8_respaced.npy", header_v1('{"shape":(2,3),"fortran_order":False,"descr":"<f8"}', 16) + f8.tobytes())

    g = np.arange(5, dtype="<i2")
    put("g1d.npy", saved(g))
    put("g1d_fortranflag.npy", header_v1("{'descr': '<i2', 'fortran_order': True, 'shape': (5,), }", 64) + g.tobytes())

    put("gz_f8.npy.gz", gzip.compress(saved(f8), compresslevel=9, mtime=0))
    b = io.BytesIO()
    with gzip.GzipFile("named.npy", "wb", compresslevel=1, fileobj=b, mtime=1234567890) as z:
        z.write(saved(f8))
    put("gz_f8_level1.npy.gz", b.getvalue())
    put("f8.npy.xz", lzma.compress(saved(f8)))
    put("f8.npy.lzma", lzma.compress(saved(f8), format=lzma.FORMAT_ALONE))
    put("f8.npy.z", zlib.compress(saved(f8), 6))

    put("f8_bigendian.npy", saved(f8.astype(">f8")))
    put("f8_fortran.npy", saved(np.asfortranarray(f8)))
    put("f8_trailing.npy", saved(f8) + b"tail bytes")

    names = np.dtype({"names": ["a", "it's", 'q"uote', "both'\"", "back\\slash", "tab\there", "\xe9t\xe9"],
                      "formats": ["<i4", ("<f4", (2, 3)), np.dtype([("x", "u1"), ("y", ">u2")]), "|S3", "<U2",
                                  "|b1", "<M8[ms]"],
                      "offsets": [0, 8, 40, 44, 48, 56, 64], "itemsize": 80})
    s = np.zeros(3, dtype=names)
    s["a"] = [1, 2, 3]
    s["it's"] = np.arange(18, dtype="<f4").reshape(3, 2, 3)
    s['q"uote']["y"] = [7, 8, 9]
    s["both'\""] = [b"ab", b"cd", b"e"]
    s["back\\slash"] = ["x", "yz", ""]
    s["tab\there"] = [True, False, True]
    s["\xe9t\xe9"] = np.array([0, 1, 2], dtype="<M8[ms]")
    put("struct_names.npy", saved(s))
    u = np.zeros(2, dtype=[("\u540d\u524d", "<i4"), ("v", "<f2")])
    u["\u540d\u524d"] = [5, 6]
    put("struct_unicode.npy", saved(u))
    many = np.zeros(1, dtype=[("field_%04d" % i, "u1") for i in range(3000)])
    many["field_0007"] = 7
    put("struct_v2.npy.gz", gzip.compress(saved(many), compresslevel=9, mtime=0))

    put("refused_truncated.npy", saved(f8)[:-8])
    put("refused_notdict.npy", header_v1("['descr', '<f8']", 64) + f8.tobytes())
    put("refused_native.npy", header_v1("{'descr': '=f8', 'fortran_order': False, 'shape': (2, 3), }", 64) + f8.tobytes())
    esc = np.zeros(2, dtype=[("a\x01", "<i4")])
    put("escape_field.npy", saved(esc))
    put("f8.npy.bz2", bz2.compress(saved(f8)))


if __name__ == "__main__":
    main(sys.argv[1])
