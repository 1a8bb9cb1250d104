#!/usr/bin/env python3
"""Generate pk's benchmark inputs under testdata/bench/ (gitignored).

usage: python3 scripts/bench-gen.py [OUTDIR]     (default: testdata/bench)

Idempotent: a file that already exists is left alone (delete it to remake it).
Deterministic: the same Python writes the same bytes.

  dicts.pkl     ~100 MB: a list of 1,000,000 small dicts, protocol 4,
                {'id': i, 'name': 'user%07d' % i, 'score': i * 0.5,
                 'tags': ['a', 'b'], 'email': 'user%07d@example.com' % i,
                 'city': 'city%04d' % (i % 10000), 'ratio': i / 7,
                 'active': i % 3 == 0}  (~103 bytes pickled per dict)
  dicts-b.pkl   dicts.pkl with one value changed deep inside
                (row 765432's 'score' is -1.0): for pk diff
  dicts.pkl.gz  gzip (level 6, mtime 0) of dicts.pkl
  blobs.pkl     ~500 MB: a dict of five 100 MB bytes objects, protocol 4
"""
import gzip
import os
import pickle
import shutil
import sys

N = 1_000_000
CHANGED_ROW = 765_432


def rows(changed=False):
    out = []
    for i in range(N):
        d = {
            "id": i,
            "name": "user%07d" % i,
            "score": i * 0.5,
            "tags": ["a", "b"],
            "email": "user%07d@example.com" % i,
            "city": "city%04d" % (i % 10000),
            "ratio": i / 7,
            "active": i % 3 == 0,
        }
        if changed and i == CHANGED_ROW:
            d["score"] = -1.0
        out.append(d)
    return out


def write(path, make):
    if os.path.exists(path):
        print("exists: %s (%d bytes)" % (path, os.path.getsize(path)))
        return
    tmp = path + ".tmp"
    make(tmp)
    os.replace(tmp, path)
    print("wrote:  %s (%d bytes)" % (path, os.path.getsize(path)))


def dump(obj):
    def make(tmp):
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=4)
    return make


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "bench")
    os.makedirs(out, exist_ok=True)
    dicts = os.path.join(out, "dicts.pkl")
    if not os.path.exists(dicts) or not os.path.exists(os.path.join(out, "dicts-b.pkl")):
        write(dicts, dump(rows()))
        write(os.path.join(out, "dicts-b.pkl"), dump(rows(changed=True)))

    def gz(tmp):
        with open(dicts, "rb") as src, open(tmp, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw, mtime=0) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    write(dicts + ".gz", gz)

    def blobs(tmp):
        chunk = bytes(range(256)) * (100 * 1024 * 1024 // 256)
        obj = {"blob%d" % k: bytes([k]) + chunk[1:] for k in range(5)}
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=4)
    write(os.path.join(out, "blobs.pkl"), blobs)


if __name__ == "__main__":
    main()
