"""Two legacy (pre-zip) torch.save files of the same state_dict, each made by
its own process with other allocations before it, so the storage keys (memory
addresses) differ. Run with Debian's python3 (python3-torch):

    /usr/bin/python3 testdata/canon/gen_torch_legacy.py testdata/canon
"""
import os
import subprocess
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
prog = r'''
import sys, torch
torch.manual_seed(0)
sd = {"w": torch.randn(3, 4), "b": torch.zeros(4), "i": torch.arange(5), "x": torch.ones(2, 2)}
junk = [torch.randn(100) for _ in range(int(sys.argv[2]))]
torch.save(sd, sys.argv[1], _use_new_zipfile_serialization=False)
'''
for name, junk in (("legacy_same_a.pt", 3), ("legacy_same_b.pt", 7)):
    subprocess.run([sys.executable, "-c", prog, os.path.join(out, name), str(junk)], check=True)
