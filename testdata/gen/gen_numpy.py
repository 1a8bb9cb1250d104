"""numpy fixtures: ndarray pickles and .npy files.

usage: python3 gen_numpy.py OUTDIR
  f32_2d_p<P>_<tag>.pkl    float32 (3, 4) C-order array, pickle.dumps protocol P
  i64_p<P>_<tag>.pkl       int64 vector incl. 2**40 and a negative
  f64_fortran_p4_<tag>.pkl float64 (2, 3) Fortran-order array
  object_p<P>_<tag>.pkl    dtype=object array [1, 'two', None, (3, 4), 2.5]
  float64_<tag>.npy        np.save of a float64 (2, 3) array (no pickle inside)
  object_<tag>.npy         np.save(..., allow_pickle=True) of the object array
                           (header + a pickle stream)
Protocol 5 exercises numpy's PickleBuffer path (in-band: BYTEARRAY8/BINBYTES).
"""
import os
import pickle
import sys

import numpy as np


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    tag = "np" + "".join(np.__version__.split(".")[:2])
    f32 = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    i64 = np.array([1, -2, 3, 2 ** 40, -(2 ** 63)], dtype=np.int64)
    f64f = np.asfortranarray(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -0.0]]))
    obj = np.array([1, "two", None, (3, 4), 2.5], dtype=object)

    def dump(name, value, proto):
        with open(os.path.join(outdir, "%s_p%d_%s.pkl" % (name, proto, tag)), "wb") as f:
            f.write(pickle.dumps(value, proto))

    for proto in (2, 4, 5):
        dump("f32_2d", f32, proto)
        dump("i64", i64, proto)
        dump("object", obj, proto)
    dump("f64_fortran", f64f, 4)
    np.save(os.path.join(outdir, "float64_%s.npy" % tag), np.array([[1.0, 2.5, -3.0], [0.0, 1e300, -0.0]]))
    np.save(os.path.join(outdir, "object_%s.npy" % tag), obj, allow_pickle=True)
    print("numpy %s: wrote %d files" % (np.__version__, len(os.listdir(outdir))))


if __name__ == "__main__":
    main()
