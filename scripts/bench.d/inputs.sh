#!/usr/bin/env bash
# Benchmarks of pkg/input (issue 6). Runnable alone: bash scripts/bench.d/inputs.sh
#  1. a torch.save checkpoint of ~500 MB of weights (testdata/bench/, gitignored, made
#     once with Debian's python3-torch): input.Open with SHA-256 digests of every storage
#     vs sha256sum of the file; target >= 0.7x the throughput, max RSS < 100 MB.
#  2. pk hash of a gzip'd ~100 MB pickle vs gzip -dc f | pk hash - (when pk hash exists).
set -euo pipefail
cd "$(dirname "$0")/../.."
BENCH=testdata/bench
mkdir -p "$BENCH" bin
PY=${PYTHON:-/usr/bin/python3}
CK=$BENCH/ckpt500.pt
if [ ! -s "$CK" ]; then
  echo "making $CK (torch.save of 8 x 64 MB float32 tensors)" >&2
  "$PY" - "$CK" <<'PY'
import collections, sys, torch
torch.manual_seed(0)
sd = collections.OrderedDict(("layer%d.weight" % i, torch.randn(4096, 4096)) for i in range(8))
torch.save(sd, sys.argv[1])
PY
fi
PK=$BENCH/big.pkl
if [ ! -s "$PK.gz" ]; then
  echo "making $PK.gz (~100 MB pickle: a list of dicts of floats, strings and bytes)" >&2
  "$PY" - "$PK" <<'PY'
import pickle, random, sys
random.seed(0)
rows = [{"id": i, "x": random.random(), "name": "row%d" % i, "tags": ["a", "b", str(i % 97)], "blob": random.randbytes(24)} for i in range(900000)]
with open(sys.argv[1], "wb") as f:
    pickle.dump(rows, f, protocol=4)
PY
  gzip -kf -6 "$PK"
fi
go test -c -o bin/input.bench.test ./pkg/input >/dev/null
size=$(stat -c %s "$CK")
t0=$(date +%s.%N); sha256sum "$CK" >/dev/null; t1=$(date +%s.%N)
ref=$(echo "$t1 - $t0" | bc -l)
out=$( { /usr/bin/time -v env PK_BENCH_FILE="$CK" bin/input.bench.test -test.run '^$' -test.bench BenchmarkOpen -test.benchtime 3x ; } 2>&1 )
nsop=$(echo "$out" | awk '/^BenchmarkOpen/ {print $3}')
rss=$(echo "$out" | awk -F': ' '/Maximum resident set size/ {print $2}')
pkt=$(echo "$nsop / 1000000000" | bc -l)
printf 'torch checkpoint %s (%d MB)\n' "$CK" $((size >> 20))
printf '  sha256sum:                   %.3f s  %.0f MB/s\n' "$ref" "$(echo "$size / $ref / 1048576" | bc -l)"
printf '  input.Open + SHA-256 parts:  %.3f s  %.0f MB/s  ratio %.2f  max RSS %d MB (test binary, 3 runs)\n' \
  "$pkt" "$(echo "$size / $pkt / 1048576" | bc -l)" "$(echo "$ref / $pkt" | bc -l)" $((rss / 1024))
if go build -o bin/pk . 2>/dev/null && bin/pk hash --help >/dev/null 2>&1; then
  gsize=$(stat -c %s "$PK.gz")
  printf 'gzip pickle %s.gz (%d MB, %d MB compressed)\n' "$PK" $(($(stat -c %s "$PK") >> 20)) $((gsize >> 20))
  if command -v hyperfine >/dev/null; then
    hyperfine -w 1 -r 3 "bin/pk hash $PK.gz" "gzip -dc $PK.gz | bin/pk hash -"
  else
    for c in "bin/pk hash $PK.gz" "gzip -dc $PK.gz | bin/pk hash -"; do
      /usr/bin/time -f "  %e s  max RSS %M KB  $c" bash -c "$c >/dev/null"
    done
  fi
else
  echo "pk hash not available yet: gzip benchmark skipped"
fi
