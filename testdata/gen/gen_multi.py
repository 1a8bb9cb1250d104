"""multi fixtures: several pickles in one file.

usage: python3 gen_multi.py OUTDIR
  three_streams.pkl   pickle.dumps(A, 0) + pickle.dumps(B, 2) + pickle.dumps(C, 5)
  trailing_junk.pkl   pickle.dumps(D, 4) + b"TRAILING JUNK after STOP: not a pickle\\n"
pickle.loads() returns only the first object; a load-until-EOF loop returns
all three (and fails on the junk).
"""
import os
import pickle
import sys

JUNK = b"TRAILING JUNK after STOP: not a pickle\n"


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    a = {"stream": 0, "items": [1, 2, 3]}
    b = ["stream", 1, (True, None)]
    c = {"stream": 2, "data": b"\x00\x01" * 10, "f": 1.5}
    with open(os.path.join(outdir, "three_streams.pkl"), "wb") as f:
        f.write(pickle.dumps(a, 0) + pickle.dumps(b, 2) + pickle.dumps(c, 5))
    with open(os.path.join(outdir, "trailing_junk.pkl"), "wb") as f:
        f.write(pickle.dumps({"ok": True, "n": 42}, 4) + JUNK)
    print("multi: wrote 2 fixtures")


if __name__ == "__main__":
    main()
