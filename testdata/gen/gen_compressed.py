"""compressed fixtures: one stdlib pickle, whole-file compressed.

usage: python3 gen_compressed.py OUTDIR
  small_p4.pkl.gz   gzip (mtime=0, deterministic)
  small_p4.pkl.bz2  bz2
  small_p4.pkl.xz   xz
  small_p4.pkl.zst  zstd: python module `zstandard` if importable, else the `zstd` CLI
  small_p4.pkl.lz4  lz4 frame: python module `lz4` if importable, else the `lz4` CLI
Missing compressors are skipped with a message.
"""
import bz2
import gzip
import lzma
import os
import pickle
import shutil
import subprocess
import sys


def payload():
    return {"name": "compressed", "values": [1, 2.5, "three", b"four", None],
            "nested": {"t": (1, 2), "s": frozenset({1, 2, 3})}}


def zstd_compress(data):
    try:
        import zstandard
        return zstandard.ZstdCompressor(level=19).compress(data), "python zstandard"
    except ImportError:
        pass
    if shutil.which("zstd"):
        return subprocess.run(["zstd", "-q", "-19", "-c", "--no-check"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout, "zstd CLI"
    return None, "no zstandard module and no zstd CLI"


def lz4_compress(data):
    try:
        import lz4.frame
        return lz4.frame.compress(data), "python lz4"
    except ImportError:
        pass
    if shutil.which("lz4"):
        return subprocess.run(["lz4", "-q", "-9", "-c"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout, "lz4 CLI"
    return None, "no lz4 module and no lz4 CLI"


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    raw = pickle.dumps(payload(), 4)
    outs = {
        "gz": (gzip.compress(raw, mtime=0), "gzip"),
        "bz2": (bz2.compress(raw), "bz2"),
        "xz": (lzma.compress(raw), "lzma/xz"),
        "zst": zstd_compress(raw),
        "lz4": lz4_compress(raw),
    }
    for ext, (data, how) in outs.items():
        if data is None:
            print("  SKIP small_p4.pkl.%s: %s" % (ext, how))
            continue
        with open(os.path.join(outdir, "small_p4.pkl." + ext), "wb") as f:
            f.write(data)
        print("  small_p4.pkl.%s via %s" % (ext, how))


if __name__ == "__main__":
    main()
