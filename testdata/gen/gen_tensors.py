"""Fixtures for pk-canon/2's torch storages (issue 11): testdata/tensors/.

Each object of OBJECTS is written by a separate process in every form torch
offers: torch.save zip (.pt), torch.save legacy (_use_new_zipfile_serialization=False,
.legacy.pt) and pickle.dump at protocols 2 and 4 (_p2.pkl, _p4.pkl: the
storages as torch.storage._load_from_bytes of nested legacy bytes). The
"changed" objects differ from their base in one element.

Run with Debian's python3 (torch 1.13):

    /usr/bin/python3 testdata/gen/gen_tensors.py [OUTDIR]

The Go tests (pkg/canon/tensor_test.go) read the committed files only.
"""
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
    for name in os.listdir(OUT):
        if name.endswith((".pt", ".pkl")):
            os.remove(os.path.join(OUT, name))
    for name, expr in OBJECTS.items():
        for form, suffix in (("zip", ".pt"), ("legacy", ".legacy.pt"), ("p2", "_p2.pkl"), ("p4", "_p4.pkl")):
            subprocess.run([sys.executable, "-c", PRELUDE % expr, form, os.path.join(OUT, name + suffix)], check=True,
                           env=dict(os.environ, PYTHONHASHSEED="0"))


if __name__ == "__main__":
    main()
