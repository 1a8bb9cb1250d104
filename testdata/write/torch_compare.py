"""Load two torch.save files (an original and its pk canon output) and say
whether they load to the same thing: prints "same", or the first difference.

    python3 torch_compare.py ORIGINAL CANONICAL

Same means: the same structure (dict keys in order, lists, tuples, scalars),
tensors of equal dtype, shape, stride, storage offset and values, and the
same sharing of storages between tensors. Used by pkg/write's
TestPythonTorch (torch.load runs pickle code: only the committed fixtures).
"""

import sys

import torch


def load(path):
    return torch.load(path, map_location="cpu")


def compare(a, b, where, storages):
    if type(a) is not type(b):
        return "%s: %s vs %s" % (where, type(a).__name__, type(b).__name__)
    if isinstance(a, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride() \
                or a.storage_offset() != b.storage_offset():
            return "%s: tensor layout differs" % where
        if not torch.equal(a, b):
            return "%s: tensor values differ" % where
        pa, pb = a.storage().data_ptr(), b.storage().data_ptr()
        if storages.setdefault(("a", pa), pb) != pb or storages.setdefault(("b", pb), pa) != pa:
            return "%s: storage sharing differs" % where
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return "%s: keys %r vs %r" % (where, list(a), list(b))
        for k in a:
            d = compare(a[k], b[k], "%s[%r]" % (where, k), storages)
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return "%s: length" % where
        for i, (x, y) in enumerate(zip(a, b)):
            d = compare(x, y, "%s[%d]" % (where, i), storages)
            if d:
                return d
        return None
    if a != b:
        return "%s: %r vs %r" % (where, a, b)
    return None


d = compare(load(sys.argv[1]), load(sys.argv[2]), "root", {})
print(d or "same")
