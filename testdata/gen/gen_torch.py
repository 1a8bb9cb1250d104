"""torch fixtures: torch.save of a small state_dict.

usage: python3 gen_torch.py OUTDIR
  state_dict_zip_<tag>.pt     default zip format (<stem>/data.pkl, <stem>/data/<key>, <stem>/version)
  state_dict_legacy_<tag>.pt  _use_new_zipfile_serialization=False: 5 pickles back to back
                              (magic number, protocol version, sys_info, the object,
                              storage keys) followed by raw storage bytes
The state_dict holds tensors of several dtypes/shapes, a tied entry (same
tensor twice) and a view sharing a storage at an offset.
"""
import collections
import os
import sys

import torch


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    tag = "torch" + "".join(torch.__version__.split("+")[0].split(".")[:2])
    torch.manual_seed(0)
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4
    sd = collections.OrderedDict()
    sd["layer.weight"] = w
    sd["layer.bias"] = torch.tensor([0.5, -0.5], dtype=torch.float32)
    sd["emb.weight"] = torch.tensor([[1, 2], [3, 4], [5, 6]], dtype=torch.float16)
    sd["bn.num_batches_tracked"] = torch.tensor(7, dtype=torch.int64)
    sd["mask"] = torch.tensor([True, False, True, True])
    sd["bf"] = torch.tensor([1.0, -2.0], dtype=torch.bfloat16)
    sd["ids"] = torch.tensor([1, 2, 3], dtype=torch.int32)
    sd["head.weight"] = w          # tied: same tensor object
    sd["row1"] = w[1]              # view: same storage, offset 3
    torch.save(sd, os.path.join(outdir, "state_dict_zip_%s.pt" % tag))
    torch.save(sd, os.path.join(outdir, "state_dict_legacy_%s.pt" % tag),
               _use_new_zipfile_serialization=False)
    print("torch %s: wrote 2 fixtures" % torch.__version__)


if __name__ == "__main__":
    main()
