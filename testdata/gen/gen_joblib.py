"""joblib fixtures: joblib.dump of a dict holding numpy arrays, uncompressed and
compressed with every compressor joblib has here.

usage: python3 gen_joblib.py OUTDIR
  dict_<tag>.joblib                uncompressed
  dict_<method>_<tag>.joblib.<ext> compress=(method, 3)
  objarray_<tag>.joblib            a dict holding an object-dtype array (the
                                   array is written as a nested pickle)

A joblib stream is NOT a plain pickle: after the BUILD of each
joblib.numpy_pickle.NumpyArrayWrapper, joblib's unpickler reads the array
straight from the file (a padding-length byte, padding, raw data; or a nested
protocol-2 pickle for object arrays).  For each fixture this script records
those regions in <fixture>.rawspans.json, offsets relative to the
(decompressed) stream:
  [{"after_build": <offset right after the BUILD opcode>,
    "start": <first byte of the region>, "end": <one past its last byte>,
    "kind": "raw" | "pickle"}]
It finds them with joblib's own unpickler (instrumented), so the oracle can
walk the stream with pickletools without joblib.
"""
import json
import os
import sys

import joblib
import numpy as np
from joblib import numpy_pickle as npk

METHODS = [("zlib", "z"), ("gzip", "gz"), ("bz2", "bz2"), ("xz", "xz"), ("lzma", "lzma"), ("lz4", "lz4")]


class SpanRecorder(npk.NumpyUnpickler):
    dispatch = npk.NumpyUnpickler.dispatch.copy()

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.spans = []

    def load_build(self):
        start = self.file_handle.tell()
        wrapper = self.stack[-2] if len(self.stack) >= 2 else None
        super().load_build()
        end = self.file_handle.tell()
        if isinstance(wrapper, npk.NumpyArrayWrapper):
            kind = "pickle" if wrapper.dtype.hasobject else "raw"
            self.spans.append({"after_build": start, "start": start, "end": end, "kind": kind})

    dispatch[b"b"[0]] = load_build


def record_spans(path):
    with open(path, "rb") as f:
        fobj = npk._read_fileobject(f, path, None)
        with fobj as fh:
            if isinstance(fh, str):
                raise RuntimeError("unexpected old joblib format")
            u = SpanRecorder(path, fh, mmap_mode=None)
            obj = u.load()
    return obj, u.spans


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    tag = "jl" + joblib.__version__.replace(".", "")
    data = {
        "weights": np.arange(12, dtype=np.float64).reshape(3, 4) / 8,
        "ids": np.arange(5, dtype=np.int32),
        "name": "model",
        "scale": 0.5,
    }
    jobs = [("dict_%s.joblib" % tag, data, 0)]
    for method, ext in METHODS:
        jobs.append(("dict_%s_%s.joblib.%s" % (method, tag, ext), data, (method, 3)))
    objdata = {"objects": np.array([1, "two", None, (3, 4)], dtype=object),
               "floats": np.array([1.5, -2.5], dtype=np.float32)}
    jobs.append(("objarray_%s.joblib" % tag, objdata, 0))
    n = 0
    for name, value, compress in jobs:
        path = os.path.join(outdir, name)
        try:
            joblib.dump(value, path, compress=compress)
        except Exception as e:  # lz4 is optional in joblib
            print("  SKIP %s: %s: %s" % (name, type(e).__name__, e))
            if os.path.exists(path):
                os.remove(path)
            continue
        obj, spans = record_spans(path)
        assert set(obj) == set(value), name
        with open(path + ".rawspans.json", "w") as f:
            json.dump(spans, f, indent=1)
            f.write("\n")
        n += 1
    print("joblib %s: wrote %d fixtures" % (joblib.__version__, n))


if __name__ == "__main__":
    main()
