#!/usr/bin/env python3
"""pk scan as the map step of dask.distributed (issue 13, docs/pk-scan.md).

    dask-scan.py [--scheduler ADDR | --workers N] [--pk PATH] [--batch K] ROOT... > verdicts.jsonl

Lists the files under each ROOT here (the client), splits them into batches of
K, and has the workers run `pk scan --json FILE...` on each batch: one pk
process per batch, never the pickles themselves (nothing is unpickled in any
Python process; the workers only start pk and read its JSON Lines). Every
record pk writes comes back to the client and goes to stdout as one JSON line,
so the output is what `pk scan -r --json ROOT` writes on one machine, in the
order of the batches. A file that a worker could not scan (pk missing on that
worker, a crash) comes back as {"file": ..., "verdict": "invalid", "error": ...},
never as clean. The exit status is pk's: 0 all clean, 1 any flagged, 2 any
unreadable (the largest over the batches).

With --workers N (default 2) it starts a LocalCluster of N single-threaded
worker processes on this machine; with --scheduler it joins a running
cluster (`dask scheduler` / `dask worker`), whose workers must have pk on
their PATH (or at --pk) and see the files under the same paths.
"""
import argparse
import json
import os
import subprocess
import sys


def scan_batch(pk, files):
    """Runs pk scan on files (on a worker); returns (exit code, records)."""
    try:
        p = subprocess.run([pk, "scan", "--json", "--no-progress", "--"] + files,
                           capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.SubprocessError) as e:
        return 2, [{"file": f, "verdict": "invalid", "error": "worker could not run pk: %s" % e} for f in files]
    recs = []
    for line in p.stdout.splitlines():
        if line.strip():
            recs.append(json.loads(line))
    seen = {r.get("file") for r in recs}
    for f in files:
        if f not in seen:
            msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "no record from pk (exit %d)" % p.returncode
            recs.append({"file": f, "verdict": "invalid", "error": msg})
    return p.returncode, recs


def walk(roots):
    out = []
    for root in roots:
        if os.path.isfile(root):
            out.append(root)
            continue
        for d, dirs, names in os.walk(root):
            dirs.sort()
            for n in sorted(names):
                out.append(os.path.join(d, n))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--scheduler", help="address of a running dask scheduler")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    ap.add_argument("--pk", default="pk", help="pk on the workers (default: pk on PATH)")
    ap.add_argument("--batch", type=int, default=64, help="files per pk process (default 64)")
    a = ap.parse_args()
    from dask.distributed import Client, LocalCluster

    files = walk(a.roots)
    batches = [files[i:i + a.batch] for i in range(0, len(files), a.batch)]
    cluster = None
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
    try:
        futures = client.map(scan_batch, [a.pk] * len(batches), batches, pure=False)
        worst = 0
        for fut in futures:  # in batch order
            code, recs = fut.result()
            worst = max(worst, code if code in (0, 1, 2) else 2)
            for r in recs:
                sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")
        sys.stdout.flush()
        return worst
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    sys.exit(main())
