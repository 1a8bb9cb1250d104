#!/usr/bin/env python3
"""Inputs of scripts/bench.d/scan.sh (issue 13's two scanner benchmarks).

    gen_bench.py DIR [DICTS_MB [BYTES_MB]]

writes, when missing:
  DIR/smalldicts.pkl  about DICTS_MB (default 27) MB: one list of small dicts
                      (five keys: int, str, float, a two-item list, bool),
                      protocol 4, as CPython's pickler writes it
  DIR/bytes.pkl       about BYTES_MB (default 400; 0: not written) MB: a list of
                      100 MB bytes objects, written opcode by opcode (PROTO 4,
                      EMPTY_LIST, MARK, BINBYTES8 ..., APPENDS, STOP) so that
                      no copy of the payload is held in memory
Each file is written to a temporary name and renamed, so an interrupted run
leaves nothing half-written behind.
"""
import os
import pickle
import struct
import sys


def row(i):
    return {"id": i, "name": "user%d" % i, "score": i * 0.25, "tags": ["a", "b"], "active": i % 2 == 0}


def smalldicts(path, mb):
    # the rows' size grows with the digits of i: sample them where a file
    # of this size has most of its rows
    sample, mid = 10000, int(mb * 20000)
    per = len(pickle.dumps([row(i) for i in range(mid, mid + sample)], protocol=4)) / sample
    n = int(mb * 1e6 / per)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump([row(i) for i in range(n)], f, protocol=4)
    os.replace(tmp, path)


def blobs(path, mb):
    chunk = (b"pk-bench" * 8192)  # 64 KiB
    left = int(mb * 1e6)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"\x80\x04]\x94(")  # PROTO 4, EMPTY_LIST, MEMOIZE, MARK
        while left > 0:
            size = min(left, 100 * 1000 * 1000)
            f.write(b"\x8e" + struct.pack("<Q", size))  # BINBYTES8
            k = size
            while k > 0:
                f.write(chunk[: min(k, len(chunk))])
                k -= len(chunk)
            left -= size
        f.write(b"e.")  # APPENDS, STOP
    os.replace(tmp, path)


def main():
    out = sys.argv[1]
    dicts_mb = float(sys.argv[2]) if len(sys.argv) > 2 else 27
    bytes_mb = float(sys.argv[3]) if len(sys.argv) > 3 else 400
    os.makedirs(out, exist_ok=True)
    p = os.path.join(out, "smalldicts.pkl")
    if not os.path.exists(p):
        smalldicts(p, dicts_mb)
    p = os.path.join(out, "bytes.pkl")
    if bytes_mb > 0 and not os.path.exists(p):
        blobs(p, bytes_mb)


if __name__ == "__main__":
    main()
