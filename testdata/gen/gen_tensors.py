"""Fixtures for pk-canon/2's torch storages (issue 11): testdata/tensors/.

Each object of OBJECTS is written by a separate process in every form torch
offers: torch.save zip (.pt), torch.save legacy (_use_new_zipfile_serialization=False,
.legacy.pt) and pickle.dump at protocols 2 and 4 (_p2.pkl, _p4.pkl: the
storages as torch.storage._load_from_bytes of nested legacy bytes). The
"changed" objects differ from their base in one element.

Run with Debian's python3 (torch 1.13):

    /usr/bin/python3 testdata/gen/gen_tensors.py [OUTDIR]

PK_ONLY=name,name rewrites only those objects (the others are left alone).

The Go tests (pkg/canon/tensor_test.go) read the committed files only.
"""
import gzip
import os
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensors")

OBJECTS = {
    "sd": "collections.OrderedDict([('w', torch.arange(6.0).reshape(2, 3)), ('b', torch.ones(3))])",
    "sd_changed": "collections.OrderedDict([('w', torch.arange(6.0).reshape(2, 3)), ('b', torch.tensor([1.0, 1.0, 2.0]))])",
    "views": "(lambda x: {'a': x, 'b': x[2:], 't': x.reshape(2, 3).t()})(torch.arange(6, dtype=torch.int64))",
    "copies": "{'a': torch.arange(6, dtype=torch.int64), 'b': torch.arange(6, dtype=torch.int64)[2:].clone(), 't': torch.arange(6, dtype=torch.int64).reshape(2, 3).t()}",
    "linear": "(torch.manual_seed(0), torch.nn.Linear(3, 2).state_dict())[1]",
    "mixed": "{'f16': torch.ones(2, dtype=torch.float16), 'i8': torch.tensor([1, -2], dtype=torch.int8), 'bool': torch.tensor([True, False]), 'step': 3}",
    # a model's state dict (names with dots, as nn.Module gives them) and the same with one weight changed
    "net": "(torch.manual_seed(0), torch.nn.Sequential(collections.OrderedDict([('fc', torch.nn.Linear(10, 8)), ('out', torch.nn.Linear(8, 2))])).state_dict())[1]",
    "net_changed": "(lambda sd: (sd['fc.weight'].__setitem__((3, 7), sd['fc.weight'][3, 7] + 1.0), sd)[1])((torch.manual_seed(0), torch.nn.Sequential(collections.OrderedDict([('fc', torch.nn.Linear(10, 8)), ('out', torch.nn.Linear(8, 2))])).state_dict())[1])",
    # tensors that see part of their storage (torch saves the whole storage):
    # the changed one differs outside 'head''s view (pk diff: root['head']<data>[0]),
    # inside 'mid''s (root['mid'][1], in its storage) and in the transposed 't'
    "part": "{'head': torch.arange(6, dtype=torch.int64)[2:], 'mid': torch.arange(6.0)[1:4], 't': torch.arange(6, dtype=torch.int32).reshape(2, 3).t()}",
    "part_changed": "(lambda x, y, z: (x.__setitem__(0, 100), y.__setitem__(2, -1.5), z.__setitem__(4, 40), {'head': x[2:], 'mid': y[1:4], 't': z.reshape(2, 3).t()})[3])(torch.arange(6, dtype=torch.int64), torch.arange(6.0), torch.arange(6, dtype=torch.int32))",
    # one tensor of each dtype torch spells (bfloat16, float16, complex, bool, small ints, float64),
    # and the same with one element of each changed
    "dtypes": "{'bf16': torch.tensor([0.1, 1.0, 2.0], dtype=torch.bfloat16), 'f16': torch.tensor([0.1, 1.0, 2.0], dtype=torch.float16), 'c64': torch.tensor([1+2j, 0.1-1j], dtype=torch.complex64), 'c128': torch.tensor([1+2j, 0.5], dtype=torch.complex128), 'bool': torch.tensor([True, False, True]), 'i8': torch.tensor([-1, 2], dtype=torch.int8), 'u8': torch.tensor([1, 255], dtype=torch.uint8), 'i16': torch.tensor([3, -300], dtype=torch.int16), 'f64': torch.tensor([0.1, 0.2], dtype=torch.float64)}",
    "dtypes_changed": "{'bf16': torch.tensor([0.1, 1.0, -2.5], dtype=torch.bfloat16), 'f16': torch.tensor([0.1, 1.0, -2.5], dtype=torch.float16), 'c64': torch.tensor([1+2j, 3j], dtype=torch.complex64), 'c128': torch.tensor([1+2j, -0.25+1j], dtype=torch.complex128), 'bool': torch.tensor([True, True, True]), 'i8': torch.tensor([-1, -128], dtype=torch.int8), 'u8': torch.tensor([1, 7], dtype=torch.uint8), 'i16': torch.tensor([3, 300], dtype=torch.int16), 'f64': torch.tensor([0.1, 0.3], dtype=torch.float64)}",
}

# Storages of 1 MiB or more (pk reads their nested torch.save bytes again
# from the file): written by pickle.dump only, and committed gzip'd (mtime
# 0); the tests decompress them (and read the .gz files as compressed inputs).
BIG = {
    "big": "collections.OrderedDict([('w', torch.zeros(500, 600)), ('b', torch.arange(3.0))])",
    "big_changed": "collections.OrderedDict([('w', torch.zeros(500, 600).index_put_((torch.tensor([400]), torch.tensor([123])), torch.tensor(1.5))), ('b', torch.arange(3.0))])",
}

PRELUDE = """
import collections, pickle, sys, torch
obj = %s
form, path = sys.argv[1], sys.argv[2]
if form == 'zip':
    torch.save(obj, path)
elif form == 'legacy':
    torch.save(obj, path, _use_new_zipfile_serialization=False)
else:
    with open(path, 'wb') as f:
        pickle.dump(obj, f, protocol=int(form[1:]))
"""


def main():
    os.makedirs(OUT, exist_ok=True)
    only = [n for n in os.environ.get("PK_ONLY", "").split(",") if n]  # rewrite these objects only
    if not only:
        for name in os.listdir(OUT):
            if name.endswith((".pt", ".pkl", ".pkl.gz")):
                os.remove(os.path.join(OUT, name))
    for name, expr in OBJECTS.items():
        if only and name not in only:
            continue
        for form, suffix in (("zip", ".pt"), ("legacy", ".legacy.pt"), ("p2", "_p2.pkl"), ("p4", "_p4.pkl")):
            subprocess.run([sys.executable, "-c", PRELUDE % expr, form, os.path.join(OUT, name + suffix)], check=True,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
    for name, expr in BIG.items():
        if only and name not in only:
            continue
        for form in ("p2", "p4"):
            path = os.path.join(OUT, "%s_%s.pkl" % (name, form))
            subprocess.run([sys.executable, "-c", PRELUDE % expr, form, path], check=True,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
            with open(path, "rb") as f:
                data = f.read()
            with open(path + ".gz", "wb") as f:
                f.write(gzip.compress(data, mtime=0))
            os.remove(path)


if __name__ == "__main__":
    main()
