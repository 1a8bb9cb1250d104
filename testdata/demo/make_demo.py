"""Make the demo pickles of `make demo` (committed; rerun to remake them).

usage: ~/.pyenv/versions/3.11.7/bin/python testdata/demo/make_demo.py
       (any Python with cloudpickle; the committed files come from 3.11.7 with
       cloudpickle 2.1.0)

  scaler_a.pkl, scaler_b.pkl  cloudpickle.dumps of the same dynamically defined
                              class, each from its own fresh process: the bytes
                              differ (cloudpickle writes a random class-tracker
                              id per process) but the class is the same
  model.pkl                   cloudpickle.dumps of an instance of a dynamic class
                              with one fat attribute (`cache`, 200 KiB of bytes)
                              next to small ones

The producer code runs from a fixed directory (/tmp/pk-demo-gen) because
cloudpickle stores the defining file's path in the pickle.
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STAGE = "/tmp/pk-demo-gen"

PRODUCER = r'''
import sys
import cloudpickle


class Scaler:
    """Scales a list of numbers."""
    factor = 2.5

    def __init__(self, offset=0.0):
        self.offset = offset

    def apply(self, xs):
        return [x * self.factor + self.offset for x in xs]


class Model:
    def __init__(self):
        self.name = "demo-model"
        self.weights = [i / 10 for i in range(32)]
        self.labels = ["cat", "dog", "bird"]
        self.cache = bytes(range(256)) * 800  # the fat attribute: 200 KiB


what, out = sys.argv[1], sys.argv[2]
obj = Scaler if what == "class" else Model()
with open(out, "wb") as f:
    f.write(cloudpickle.dumps(obj))
'''


def main():
    os.makedirs(STAGE, exist_ok=True)
    script = os.path.join(STAGE, "producer.py")
    with open(script, "w") as f:
        f.write(PRODUCER)
    for what, name in (("class", "scaler_a.pkl"), ("class", "scaler_b.pkl"), ("model", "model.pkl")):
        # a fresh process per file, so the class-tracker ids differ
        subprocess.run([sys.executable, script, what, os.path.join(HERE, name)], check=True, cwd=STAGE)
        print("wrote", name, os.path.getsize(os.path.join(HERE, name)), "bytes")
    shutil.rmtree(STAGE, ignore_errors=True)


if __name__ == "__main__":
    main()
