"""Fixtures for pkg/input: real torch, joblib and numpy files, compressed
pickles and hostile containers, with the values the Go tests check.

usage: /usr/bin/python3 testdata/inputs/gen_inputs.py [OUTDIR]   (default: this folder)
needs Debian's python3-torch, python3-joblib, python3-numpy and the gzip,
bzip2, xz, zstd, lz4 command-line tools for the whole-file compressions that
have no module here.

Writes expected.json: for every fixture, what pk must find in it
  sha256 of every torch storage by key, of every joblib/.npy array's raw
  bytes (in stream order), of the decompressed pickle of compressed files;
and for every hostile container, what torch.load / joblib.load did with it
(loaded or not, the error) so the tests can check pk reads exactly what the
real consumer reads or refuses.
"""
import bz2
import collections
import gzip
import hashlib
import io
import json
import lzma
import os
import pickle
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib

import joblib
import numpy as np
import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
EXP = collections.OrderedDict()


def sha(b):
    return hashlib.sha256(b).hexdigest()


def path(name):
    return os.path.join(OUT, name)


def state_dict(bump=False):
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4
    if bump:
        w[1, 2] = 99.0  # one element of one tensor differs
    sd = collections.OrderedDict()
    sd["layer.weight"] = w
    sd["layer.bias"] = torch.tensor([0.5, -0.5], dtype=torch.float32)
    sd["emb.weight"] = torch.tensor([[1, 2], [3, 4], [5, 6]], dtype=torch.float16)
    sd["steps"] = torch.tensor(7, dtype=torch.int64)
    sd["mask"] = torch.tensor([True, False, True])
    sd["head.weight"] = w        # tied: same tensor, same storage
    sd["row1"] = w[1]            # view: same storage at offset 3
    return sd


def storages(sd):
    """key order is torch's: storages numbered in order of first pickling."""
    out = collections.OrderedDict()
    seen = {}
    for v in sd.values():
        if hasattr(v, "untyped_storage"):
            s = v.untyped_storage()
        else:
            s = v.storage()
            s = s.untyped() if hasattr(s, "untyped") else s._untyped_storage
        ptr = s.data_ptr()
        if ptr in seen:
            continue
        seen[ptr] = str(len(seen))
        out[seen[ptr]] = bytes(s.tolist())
    return out


def tensors(sd):
    """per state-dict entry: sha256 of its whole storage, dtype, shape, offset."""
    out = collections.OrderedDict()
    for k, v in sd.items():
        if hasattr(v, "untyped_storage"):
            s = v.untyped_storage()
        else:
            s = v.storage()
            s = s.untyped() if hasattr(s, "untyped") else s._untyped_storage
        out[k] = {"storage_sha256": sha(bytes(s.tolist())), "dtype": str(v.dtype).replace("torch.", ""),
                  "shape": list(v.shape), "offset": v.storage_offset()}
    return out


def torch_files():
    for tag, bump in (("a", False), ("b", True)):
        sd = state_dict(bump)
        st = storages(sd)
        for fmt, new in (("zip", True), ("legacy", False)):
            name = "torch_%s_%s.pt" % (fmt, tag)
            torch.save(sd, path(name), _use_new_zipfile_serialization=new)
            back = torch.load(path(name))
            assert all(torch.equal(back[k], sd[k]) for k in sd)
            EXP[name] = {"format": "torch-" + fmt, "storages": {k: sha(v) for k, v in st.items()},
                         "storage_len": {k: len(v) for k, v in st.items()},
                         "tensors": tensors(sd)}


def try_torch(name):
    try:
        sd = torch.load(path(name))
        ok = isinstance(sd, dict) and set(sd) == set(state_dict())
        same = ok and all(torch.equal(sd[k], state_dict()[k]) for k in sd)
        return {"torch_loads": ok, "torch_same_values": same}
    except Exception as e:  # what torch says is the point
        return {"torch_loads": False, "torch_error": ("%s: %s" % (type(e).__name__, e))[:200]}


def zip_entries(b):
    """(name, local header offset, central header offset) of each entry."""
    eocd = b.rfind(b"PK\x05\x06")
    n, size, off = struct.unpack("<HII", b[eocd + 10:eocd + 20])
    out = []
    p = off
    for _ in range(n):
        assert b[p:p + 4] == b"PK\x01\x02"
        nl, xl, cl = struct.unpack("<HHH", b[p + 28:p + 34])
        lho = struct.unpack("<I", b[p + 42:p + 46])[0]
        out.append((b[p + 46:p + 46 + nl].decode(), lho, p))
        p += 46 + nl + xl + cl
    return out


def hostile():
    base = open(path("torch_zip_a.pt"), "rb").read()
    ents = {n: (l, c) for n, l, c in zip_entries(base)}
    arch = [n for n in ents if n.endswith("/data.pkl")][0].split("/")[0]
    st0 = arch + "/data/0"
    cases = collections.OrderedDict()

    # a storage byte changed, CRCs left alone (corruption torch cannot see)
    b = bytearray(base)
    l, c = ents[st0]
    nl, xl = struct.unpack("<HH", b[l + 26:l + 30])
    b[l + 30 + nl + xl] ^= 0x01
    cases["hostile_crc_mismatch.pt"] = bytes(b)

    # encrypted flag bit set on data.pkl in both headers
    b = bytearray(base)
    l, c = ents[arch + "/data.pkl"]
    b[l + 6] |= 1
    b[c + 8] |= 1
    cases["hostile_encrypted_flag.pt"] = bytes(b)

    # local header names the storage differently from the central directory
    b = bytearray(base)
    l, c = ents[st0]
    nl = struct.unpack("<H", b[l + 26:l + 28])[0]
    b[l + 30 + nl - 1:l + 30 + nl] = b"9"
    cases["hostile_local_name.pt"] = bytes(b)

    # two members with the name of storage 0 (the second one all zeros)
    zin = zipfile.ZipFile(io.BytesIO(base))
    members = [(i.filename, zin.read(i.filename)) for i in zin.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zo:
        import warnings
        for n, data in members + [(st0, b"\0" * len(zin.read(st0)))]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                zo.writestr(zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0)), data)
    cases["hostile_duplicate.pt"] = out.getvalue()

    # junk before the archive (offsets unchanged: relative to the junk)
    cases["hostile_junk_before.pt"] = b"JUNKJUNKJUNKJUNK" + base

    # truncated archive: the central directory is gone
    cases["hostile_truncated.pt"] = base[:len(base) * 2 // 3]

    for name, data in cases.items():
        open(path(name), "wb").write(data)
        EXP[name] = dict(try_torch(name), format="hostile")

    # gzip with a bad CRC-32 in the trailer
    raw = pickle.dumps({"a": [1, 2, 3]}, protocol=4)
    gz = bytearray(gzip.compress(raw, mtime=0))
    gz[-8] ^= 0xFF
    open(path("hostile_badcrc.pkl.gz"), "wb").write(bytes(gz))
    try:
        gzip.decompress(bytes(gz))
        v = {"python_gzip": "ok"}
    except Exception as e:
        v = {"python_gzip": "%s: %s" % (type(e).__name__, e)}
    EXP["hostile_badcrc.pkl.gz"] = dict(v, format="hostile")


def joblib_files():
    data = collections.OrderedDict()
    data["weights"] = np.arange(12, dtype=np.float64).reshape(3, 4) / 8
    data["ids"] = np.arange(5, dtype=np.int32)
    data["fortran"] = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    data["names"] = np.array(["ab", "c"], dtype="U2")
    data["empty"] = np.zeros((0, 3), dtype=np.float32)
    data["name"] = "model"

    def arrays(d):
        out = []
        for v in d.values():
            if isinstance(v, np.ndarray):
                out.append({"sha256": sha(v.tobytes("F" if (v.flags.f_contiguous and not v.flags.c_contiguous) else "C")),
                            "len": v.nbytes, "dtype": v.dtype.str, "shape": list(v.shape)})
        return out

    for tag, bump in (("a", False), ("b", True)):
        d = collections.OrderedDict((k, (v.copy(order="K") if isinstance(v, np.ndarray) else v)) for k, v in data.items())
        if bump:
            d["ids"][3] = 42
        name = "joblib_%s.joblib" % tag
        joblib.dump(d, path(name))
        EXP[name] = {"format": "joblib", "arrays": arrays(d)}
    for method, ext in (("zlib", "z"), ("gzip", "gz"), ("bz2", "bz2"), ("xz", "xz"), ("lzma", "lzma")):
        name = "joblib_a_%s.joblib.%s" % (method, ext)
        joblib.dump(data, path(name), compress=(method, 3))
        EXP[name] = {"format": "joblib", "compression": method, "arrays": arrays(data)}
    # joblib's lz4 needs the lz4 module, missing here: the lz4 CLI writes the same frame format
    raw = open(path("joblib_a.joblib"), "rb").read()
    subprocess.run(["lz4", "-q", "-f", path("joblib_a.joblib"), path("joblib_a_lz4.joblib.lz4")], check=True)
    EXP["joblib_a_lz4.joblib.lz4"] = {"format": "joblib", "compression": "lz4", "arrays": arrays(data)}
    obj = collections.OrderedDict()
    obj["objects"] = np.array([1, "two", None, (3, 4)], dtype=object)
    obj["floats"] = np.array([1.5, -2.5], dtype=np.float32)
    joblib.dump(obj, path("joblib_objarray.joblib"))
    EXP["joblib_objarray.joblib"] = {"format": "joblib", "arrays": [{"object": True}] + arrays({"f": obj["floats"]})}


def compressed():
    value = {"name": "compressed", "values": list(range(100)), "blob": b"x" * 300}
    raw = pickle.dumps(value, protocol=4) + pickle.dumps([1, 2], protocol=2)  # two pickles back to back
    open(path("plain.pkl"), "wb").write(raw)
    files = {
        "plain.pkl.gz": gzip.compress(raw, mtime=0),
        "plain.pkl.bz2": bz2.compress(raw),
        "plain.pkl.xz": lzma.compress(raw, format=lzma.FORMAT_XZ),
        "plain.pkl.lzma": lzma.compress(raw, format=lzma.FORMAT_ALONE),
        "plain.pkl.z": zlib.compress(raw),
    }
    for name, data in files.items():
        open(path(name), "wb").write(data)
    subprocess.run(["zstd", "-q", "-f", path("plain.pkl"), "-o", path("plain.pkl.zst")], check=True)
    subprocess.run(["lz4", "-q", "-f", path("plain.pkl"), path("plain.pkl.lz4")], check=True)
    for name in list(files) + ["plain.pkl.zst", "plain.pkl.lz4"]:
        EXP[name] = {"format": "compressed", "pickle_sha256": sha(raw), "pickle_len": len(raw), "streams": 2}


def npy_files():
    a = np.arange(10, dtype="<f4").reshape(2, 5)
    cases = collections.OrderedDict()
    cases["plain_v1.npy"] = (a, (1, 0))
    cases["plain_v2.npy"] = (np.arange(6, dtype=">i8"), (2, 0))
    cases["plain_v3.npy"] = (np.zeros(2, dtype=[("\u00e9", "<i4"), ("b", "<f8", (2,))]), (3, 0))
    cases["fortran.npy"] = (np.asfortranarray(a), None)
    for name, (arr, ver) in cases.items():
        with open(path(name), "wb") as f:
            np.lib.format.write_array(f, arr, version=ver)
        data = arr.tobytes("F" if (arr.flags.f_contiguous and not arr.flags.c_contiguous) else "C")
        EXP[name] = {"format": "npy", "sha256": sha(data), "len": len(data), "shape": list(arr.shape),
                     "descr": np.lib.format.dtype_to_descr(arr.dtype) if not arr.dtype.names else "structured"}
    o = np.array([{"k": 1}, "s", 2.5], dtype=object)
    np.save(path("objects.npy"), o, allow_pickle=True)
    EXP["objects.npy"] = {"format": "npy", "object": True, "shape": [3]}


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    torch_files()
    hostile()
    joblib_files()
    compressed()
    npy_files()
    EXP["_versions"] = {"torch": torch.__version__, "joblib": joblib.__version__, "numpy": np.__version__}
    with open(path("expected.json"), "w") as f:
        json.dump(EXP, f, indent=1, sort_keys=False)
        f.write("\n")
    print("wrote %d fixtures to %s" % (len(EXP) - 1, OUT))


if __name__ == "__main__":
    main()
