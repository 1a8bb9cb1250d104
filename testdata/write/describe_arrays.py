"""Load array, frame and tensor pickles and print a description of each, one JSON line a file.

    python3 describe_arrays.py [--pickle] FILE...

Used by pkg/write's TestPythonArrays: the fixtures of testdata/arrays, frames,
tensors are described in one process (each loaded as its producer loads it:
joblib.load, np.load(allow_pickle=True), torch.load, else pickle.load), their
`pk canon` outputs in another (pickle.load, or torch.load for a torch.save
file, np.load for a .npy file; --pickle: pickle.load for every other file,
then joblib.load again for each, which must describe alike). The descriptions must
be equal: a numpy array by its dtype (str, descr, item size, alignment, flags,
aligned struct or not), shape, memory order (C / F contiguous) and element
bytes (object arrays: their items described); a torch tensor by dtype, shape,
stride, storage offset and values; a pandas DataFrame by its columns, index,
dtypes and values; an instance (a fitted estimator) by class and __dict__;
data by value. An array of non-native byte order is compared as values: numpy's
_reconstruct (protocols 0-4) loads it swapped to native order, _frombuffer
(protocol 5) as it is, and pk-canon/2 reads both as one array; a structured
array by its fields (joblib.load leaves the padding between fields
uninitialised). Identity is described where it is observable: an array or
list seen again is a back-reference.
"""

import hashlib
import json
import pickle
import sys


def describe(x, seen):
    import numpy as np

    if isinstance(x, (np.ndarray, list, dict)) or hasattr(x, "__dict__"):
        if id(x) in seen:
            return {"ref": seen[id(x)]}
        seen[id(x)] = len(seen)
    try:
        import torch

        if isinstance(x, torch.Tensor):
            return {"tensor": str(x.dtype), "shape": list(x.shape), "stride": list(x.stride()),
                    "offset": x.storage_offset(),
                    # (complex values by repr: JSON has no complex numbers)
                    "values": [repr(v) if isinstance(v, complex) else v for v in x.detach().flatten().tolist()]}
    except ImportError:
        pass
    try:
        import pandas as pd

        if isinstance(x, pd.Series):
            return {"series": repr(x.name), "index": describe(x.index.to_numpy(), {}), "dtype": str(x.dtype),
                    "values": describe(x.to_numpy(), {})}
        if isinstance(x, pd.DataFrame):
            return {"frame": [str(c) for c in x.columns], "index": describe(x.index.to_numpy(), {}),
                    "dtypes": [str(d) for d in x.dtypes],
                    "columns": [describe(x[c].to_numpy(), {}) for c in x.columns]}
    except ImportError:
        pass
    if isinstance(x, np.ndarray):
        if x.dtype.byteorder not in "=|" and not x.dtype.isnative:
            # numpy's _reconstruct loads a non-native array as native (its
            # __setstate__ swaps it), _frombuffer as it is: pk-canon/2 reads
            # both as one value, so the byte order is compared as values
            x = x.astype(x.dtype.newbyteorder("="))
        d = x.dtype
        out = {"dtype": d.str, "descr": str(d.descr), "itemsize": d.itemsize, "alignment": d.alignment,
               "flags": d.flags, "aligned": d.isalignedstruct, "shape": list(x.shape),
               "c": bool(x.flags.c_contiguous), "f": bool(x.flags.f_contiguous), "type": type(x).__name__}
        if d.hasobject:
            out["items"] = [describe(v, seen) for v in x.ravel(order="K").tolist()] if d.fields is None else repr(x.tolist())
        elif d.names:
            # by field: the padding between fields is not part of the value
            # (joblib.load leaves it uninitialised)
            out["bytes"] = hashlib.sha256(b"".join(x[n].tobytes(order="A") for n in d.names)).hexdigest()
        else:
            out["bytes"] = hashlib.sha256(x.tobytes(order="A")).hexdigest()
        return out
    if isinstance(x, np.generic):
        return {"scalar": str(x.dtype), "value": repr(x.item())}
    if isinstance(x, dict):
        return {"dict": sorted([[repr(k), describe(v, seen)] for k, v in x.items()], key=lambda e: e[0])}
    if isinstance(x, (list, tuple)):
        return {type(x).__name__: [describe(v, seen) for v in x]}
    if isinstance(x, float):
        return {"float": x.hex()}
    if isinstance(x, (int, str, bytes, bool, type(None))):
        return {"v": repr(x)}
    if hasattr(x, "__dict__"):
        return {"class": type(x).__module__ + "." + type(x).__qualname__, "dict": describe(dict(vars(x)), seen)}
    return {"repr": repr(x)}


def is_npy(path):
    with open(path, "rb") as f:
        return f.read(6) == b"\x93NUMPY"


def load(path, loader):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b" and not path.endswith(".joblib") and not ".joblib." in path:
        import gzip

        with gzip.open(path, "rb") as f:
            return pickle.load(f)
    if loader == "pickle":
        with open(path, "rb") as f:
            head = f.read(2)
        if head[:1] == b"\x78" or head == b"\x1f\x8b":  # zlib, gzip (joblib's .z)
            import joblib

            return joblib.load(path)
        with open(path, "rb") as f:
            return pickle.load(f)
    if path.endswith(".pt"):
        import torch

        return torch.load(path)
    if path.endswith(".joblib"):
        import joblib

        return joblib.load(path)
    if path.endswith(".npy") or is_npy(path):
        import numpy as np

        return np.load(path, allow_pickle=True)
    with open(path, "rb") as f:
        return pickle.load(f)


def main():
    args = sys.argv[1:]
    as_pickle = args[:1] == ["--pickle"]
    if as_pickle:
        args = args[1:]
    for path in args:
        rec = {"file": path}
        try:
            if as_pickle and not path.endswith(".pt") and not is_npy(path):
                rec["desc"] = describe(load(path, "pickle"), {})
                import joblib

                again = describe(joblib.load(path), {})
                if again != rec["desc"]:
                    rec["error"] = "joblib.load describes it otherwise than pickle.load"
            else:
                rec["desc"] = describe(load(path, "native"), {})
        except Exception as e:  # noqa: BLE001
            rec["error"] = type(e).__name__ + ": " + str(e)[:200]
        print(json.dumps(rec, sort_keys=True))


if __name__ == "__main__":
    main()
