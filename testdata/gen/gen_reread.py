"""Fixtures for payloads of 1 MiB or more read again through a compression
(docs/canonical-form-2.md §5): testdata/reread/.

Two objects whose one payload is 1.2 MB holding every byte value (so that
protocol 2's latin-1 str of it has two-byte UTF-8 characters), each written
by a separate process:

* an array, {'w': numpy uint8 (1200, 1024)}, pickled at protocols 2 and 4
  (array_p2.pkl, array_p4.pkl: protocol 2 writes its data as
  _codecs.encode(str, 'latin1'));
* a tensor, {'t': torch uint8 (1200, 1024)}, pickled by pickle.dump at
  protocols 2 and 4 (tensor_p2.pkl, tensor_p4.pkl: its storage is
  torch.storage._load_from_bytes of nested torch.save bytes) and saved by
  torch.save as a zip (tensor.pt) and in the legacy format
  (tensor.legacy.pt).

And containers: the array saved by torch.save (array.pt: a zip whose
data.pkl holds it at torch's protocol 2), the tensor dumped by joblib with
gzip at protocol 2 (tensor_p2.joblib.gz, committed as it is), and an object
array holding the tensor and a str, {'a': array([t, 'x'], dtype=object)},
dumped by joblib with gzip (objarr.joblib.gz, committed as it is: joblib
writes the array as a nested pickle, whose payload offsets are the outer
stream's) and pickled at protocol 4 (objarr_p4.pkl).

Every file is committed gzip'd (mtime 0: NAME.gz; the Go tests decompress
them and compress them again with the compressors Go has) and the protocol
2 pickles also bz2'd (NAME.bz2: Go's standard library has no bz2 writer). Run with Debian's
python3 (numpy 1.24, torch 1.13):

    /usr/bin/python3 testdata/gen/gen_reread.py [OUTDIR]

A rerun gives the same bytes except the tensor pickles and the legacy file,
which name the storage by its memory address (their pk2 digests do not
change). The Go tests (pkg/canon/reread_test.go, pkg/write) read the
committed files only.
"""
import bz2
import gzip
import os
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reread")

ARRAY = "{'w': np.tile(np.arange(256, dtype=np.uint8), 4800).reshape(1200, 1024)}"
TENSOR = "{'t': torch.arange(256, dtype=torch.uint8).repeat(4800).reshape(1200, 1024)}"
OBJARR = ("(lambda a: (a.__setitem__(0, torch.arange(256, dtype=torch.uint8).repeat(4800)), a.__setitem__(1, 'x'), "
          "{'a': a})[2])(np.empty(2, dtype=object))")

PRELUDE = """
import pickle, sys
import numpy as np
%s
obj = %s
form, path = sys.argv[1], sys.argv[2]
if form == 'zip':
    torch.save(obj, path)
elif form == 'joblib':
    import joblib
    joblib.dump(obj, path, compress=('gzip', 3), protocol=2)
elif form == 'joblibgz':
    import joblib
    joblib.dump(obj, path, compress=('gzip', 3))
elif form == 'legacy':
    torch.save(obj, path, _use_new_zipfile_serialization=False)
else:
    with open(path, 'wb') as f:
        pickle.dump(obj, f, protocol=int(form[1:]))
"""


def write(imports, expr, form, name):
    path = os.path.join(OUT, name)
    subprocess.run([sys.executable, "-c", PRELUDE % (imports, expr), form, path], check=True,
                   env=dict(os.environ, PYTHONHASHSEED="0"))
    if form.startswith("joblib"):
        return
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    with open(path + ".gz", "wb") as f:
        f.write(gzip.compress(data, compresslevel=9, mtime=0))
    if form == "p2":
        with open(path + ".bz2", "wb") as f:
            f.write(bz2.compress(data, 9))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith((".gz", ".bz2")):
            os.remove(os.path.join(OUT, name))
    for form in ("p2", "p4"):
        write("", ARRAY, form, "array_%s.pkl" % form)
        write("import torch", TENSOR, form, "tensor_%s.pkl" % form)
    write("import torch", TENSOR, "zip", "tensor.pt")
    write("import torch", TENSOR, "legacy", "tensor.legacy.pt")
    write("import torch", ARRAY, "zip", "array.pt")
    write("import torch", TENSOR, "joblib", "tensor_p2.joblib.gz")
    write("import torch", OBJARR, "joblibgz", "objarr.joblib.gz")
    write("import torch", OBJARR, "p4", "objarr_p4.pkl")


if __name__ == "__main__":
    main()
