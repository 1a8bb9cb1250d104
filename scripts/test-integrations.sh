#!/usr/bin/env bash
# test-integrations.sh [PK]: runs pk where people work, for real.
#  (a) action.yml: its run: steps, as GitHub's runner runs them (bash
#      --noprofile --norc -eo pipefail), in a temporary workspace, with its
#      ${{ }} expressions filled in; the uses: step (actions/setup-go) is left
#      out: Go is here. A re-pickled file passes, a changed one fails.
#  (b) .pre-commit-hooks.yaml: pre-commit try-repo of a copy of the hook
#      definitions and their script as they are in the work tree (try-repo
#      of this repository would leave out untracked files) on a temporary
#      git repository holding a
#      pickle and its PKSUMS; skipped when pre-commit is not installed
#      (Debian: apt-get install pre-commit). Needs no network: the hooks are
#      language system/script.
# PK is a built pk (default bin/pk). make test-integrations runs this.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
pk=$(realpath "${1:-$repo/bin/pk}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-integrations: FAIL: $*" >&2; exit 1; }
ok() { echo "test-integrations: ok: $*"; }

# Pickles (protocol 0): same.pkl means what a.pkl means (another dict order),
# changed.pkl does not.
mk() {
  case $1 in
  a) printf '(dp0\nVx\np1\nI1\nsVy\np2\nI2\ns.' ;;
  same) printf '(dp0\nVy\np1\nI2\nsVx\np2\nI1\ns.' ;;
  changed) printf '(dp0\nVx\np1\nI3\nsVy\np2\nI2\ns.' ;;
  esac
}

# --- (a) the GitHub Action --------------------------------------------------
py=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then py=$p; break; fi
done
if [[ -z $py ]]; then
  echo "test-integrations: skipped (a): no python3 with yaml to read action.yml (Debian: python3-yaml)"
else
  # action_steps DIR KEY=VALUE...: writes DIR/N.sh for each run: step of
  # action.yml, inputs from the arguments or their defaults
  action_steps() {
    "$py" - "$repo/action.yml" "$@" <<'PY'
import os, re, sys, yaml
path, out, *kv = sys.argv[1:]
act = yaml.safe_load(open(path))
given = dict(a.split("=", 1) for a in kv)
inputs = {k: str(v.get("default", "")) for k, v in act.get("inputs", {}).items()}
for k, v in act.get("inputs", {}).items():
    if v.get("required") and k not in given:
        sys.exit(f"action.yml: input {k} is required")
inputs.update(given)
ctx = {"github.action_path": os.path.dirname(os.path.abspath(path)), "runner.temp": os.environ["RUNNER_TEMP"]}
ctx.update({"inputs." + k: v for k, v in inputs.items()})
def fill(s):
    def one(m):
        e = m.group(1).strip()
        if e not in ctx:
            sys.exit(f"action.yml: unknown expression ${{{{ {e} }}}}")
        return ctx[e]
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(s))
assert act["runs"]["using"] == "composite"
n = 0
for step in act["runs"]["steps"]:
    if "run" not in step:
        continue  # uses: (actions/setup-go)
    assert step.get("shell") == "bash", step
    assert "if" not in step, step
    n += 1
    with open(os.path.join(out, f"{n}.sh"), "w") as f:
        for k, v in step.get("env", {}).items():
            f.write(f"export {k}={fill(v)!r}\n".replace("!r", ""))
        f.write(f"cd {fill(step.get('working-directory', '.'))!r}\n")
        f.write(fill(step["run"]))
PY
  }
  # run_action WS FIRST KEY=VALUE...: the run: steps from the FIRST on, in
  # turn, in workspace WS (after a first full run, 2 is the check alone:
  # pk is installed already)
  run_action() {
    local ws=$1 first=$2 d
    shift 2
    d=$(mktemp -d "$tmp/steps.XXXX")
    action_steps "$d" "$@"
    for s in $(ls "$d" | sort -n); do
      [[ ${s%.sh} -ge $first ]] || continue
      (cd "$ws" && bash --noprofile --norc -eo pipefail "$d/$s") || return $?
    done
  }
  export RUNNER_TEMP=$tmp/runner GITHUB_PATH=$tmp/github_path
  mkdir -p "$RUNNER_TEMP" "$tmp/ws/models"
  : >"$GITHUB_PATH"
  mk a >"$tmp/ws/models/a.pkl"
  (cd "$tmp/ws" && "$pk" hash models/a.pkl >PKSUMS)
  run_action "$tmp/ws" 1 sums=PKSUMS >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "action: a clean check failed"; }
  grep -q '^models/a.pkl: OK$' "$tmp/out" || { cat "$tmp/out"; fail "action: no OK line"; }
  grep -qx "$RUNNER_TEMP/pk/bin" "$GITHUB_PATH" || fail "action: pk's bin not added to GITHUB_PATH"
  [[ -x $RUNNER_TEMP/pk/bin/pkhash ]] || fail "action: pkhash not installed"
  ok "action: installs pk and checks PKSUMS"
  mk same >"$tmp/ws/models/a.pkl"
  run_action "$tmp/ws" 2 sums=PKSUMS args=--quiet >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "action: a re-pickled file failed"; }
  ok "action: a re-pickled file passes"
  mk changed >"$tmp/ws/models/a.pkl"
  rc=0
  run_action "$tmp/ws" 2 sums=PKSUMS >"$tmp/out" 2>&1 || rc=$?
  [[ $rc -eq 1 ]] || { cat "$tmp/out"; fail "action: a changed pickle gave exit $rc, not 1"; }
  grep -q '^models/a.pkl: FAILED$' "$tmp/out" || { cat "$tmp/out"; fail "action: no FAILED line"; }
  ok "action: a changed pickle fails (exit 1)"
  mkdir -p "$tmp/ws2/sub"
  mk a >"$tmp/ws2/sub/a.pkl"
  (cd "$tmp/ws2/sub" && "$pk" hash a.pkl >S1 && "$pk" hash --tag a.pkl >S2)
  run_action "$tmp/ws2" 2 sums="S1 S2 missing-is-ignored" working-directory=sub args=--strict >"$tmp/out" 2>&1 && rc=0 || rc=$?
  [[ $rc -eq 2 ]] || { cat "$tmp/out"; fail "action: a missing SUMS file gave exit $rc, not 2"; }
  [[ $(grep -c '^a.pkl: OK$' "$tmp/out") -eq 2 ]] || { cat "$tmp/out"; fail "action: several SUMS files in working-directory"; }
  ok "action: several SUMS files, working-directory, args"
fi

# --- (c) pk scan as the map step of dask (scripts/dask-scan.py) -------------
# A LocalCluster of three workers scans a generated tree (plain pickles, one
# that calls os.system, a truncated one, a text file, a nested directory);
# every file's verdict comes back, and equals what pk scan -r --json says on
# one machine.
dpy=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import dask.distributed' 2>/dev/null; then dpy=$p; break; fi
done
if [[ -z $dpy ]]; then
  echo "test-integrations: skipped (c): no python3 with dask.distributed (Debian: apt-get install python3-distributed)"
else
  tree=$tmp/tree
  mkdir -p "$tree/sub/deeper" "$tree/deeper"
  "$dpy" - "$tree" <<'PY'
import os, pickle, sys
t = sys.argv[1]
for i in range(40):
    d = os.path.join(t, "sub" if i % 3 else "", "deeper" if i % 7 == 0 else "")
    with open(os.path.join(d, "data%02d.pkl" % i), "wb") as f:
        pickle.dump({"i": i, "v": [i, 2 * i], "s": {1, 2}}, f, protocol=i % 6)
with open(os.path.join(t, "evil.pkl"), "wb") as f:  # os.system('true'), as raw opcodes
    f.write(b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.")
with open(os.path.join(t, "sub", "cut.pkl"), "wb") as f:
    f.write(pickle.dumps(list(range(100)), protocol=4)[:-7])
with open(os.path.join(t, "notes.txt"), "w") as f:
    f.write("not a pickle\n")
PY
  set +e
  "$dpy" "$repo/scripts/dask-scan.py" --workers 3 --batch 7 --pk "$pk" "$tree" >"$tmp/dask.jsonl" 2>"$tmp/dask.err"
  dcode=$?
  PK_NO_PROGRESS=1 "$pk" scan -r --json "$tree" >"$tmp/local.jsonl" 2>/dev/null
  lcode=$?
  set -e
  [[ $dcode == "$lcode" ]] || { cat "$tmp/dask.err"; fail "dask-scan: exit $dcode, pk scan -r: $lcode"; }
  verdicts() { "$py0" -c 'import json,sys; [print(r["file"], r["verdict"]) for r in map(json.loads, sys.stdin)]' <"$1" | sort; }
  py0=$dpy
  n=$(find "$tree" -type f | wc -l)
  got=$(verdicts "$tmp/dask.jsonl" | wc -l)
  [[ $got == "$n" ]] || { cat "$tmp/dask.err"; fail "dask-scan: $got verdicts for $n files"; }
  diff <(verdicts "$tmp/dask.jsonl") <(verdicts "$tmp/local.jsonl") >"$tmp/vd" || { cat "$tmp/vd"; fail "dask-scan: verdicts differ from pk scan -r"; }
  grep -q '"verdict":"dangerous"' "$tmp/dask.jsonl" || fail "dask-scan: evil.pkl not dangerous"
  ok "dask-scan: 3 workers, $n files, every verdict back and equal to pk scan -r (exit $dcode)"
fi

# --- (b) pre-commit ---------------------------------------------------------
if ! command -v pre-commit >/dev/null; then
  echo "test-integrations: skipped (b): pre-commit is not installed (Debian: apt-get install pre-commit)"
  exit 0
fi
export PRE_COMMIT_HOME=$tmp/pre-commit-home
export GIT_AUTHOR_NAME=pk GIT_AUTHOR_EMAIL=pk@example.invalid GIT_COMMITTER_NAME=pk GIT_COMMITTER_EMAIL=pk@example.invalid
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
mkdir -p "$tmp/bin"
ln -s "$pk" "$tmp/bin/pk"
ln -s pk "$tmp/bin/pkhash"
ln -s pk "$tmp/bin/pkdiff"
export PATH=$tmp/bin:$PATH
# the hook repository: what pre-commit takes of this one (the hook
# definitions and the script they name), as they are in the work tree
hooks=$tmp/hooks
mkdir -p "$hooks/scripts"
cp "$repo/.pre-commit-hooks.yaml" "$hooks/"
cp "$repo/scripts/pkdiff-staged.sh" "$hooks/scripts/"
git -C "$hooks" init -q
git -C "$hooks" add .
git -C "$hooks" commit -qm hooks
r=$tmp/r
git init -q "$r"
cd "$r"
mk a >a.pkl
pk hash a.pkl >PKSUMS
git add a.pkl PKSUMS
git commit -qm 'a pickle and its digest'
try() { pre-commit try-repo "$hooks" "$@" >"$tmp/out" 2>&1; }
try pkhash-check --all-files || { cat "$tmp/out"; fail "pre-commit: pkhash-check on a clean tree"; }
ok "pre-commit: pkhash-check passes on a clean tree"
mk same >a.pkl
git add a.pkl
try pkhash-check || { cat "$tmp/out"; fail "pre-commit: pkhash-check on a re-pickled file"; }
try pkdiff-unchanged || { cat "$tmp/out"; fail "pre-commit: pkdiff-unchanged on a re-pickled file"; }
ok "pre-commit: a re-pickled file passes both hooks"
mk changed >a.pkl
git add a.pkl
! try pkhash-check || { cat "$tmp/out"; fail "pre-commit: pkhash-check passed a changed pickle"; }
grep -q 'a.pkl: FAILED' "$tmp/out" || { cat "$tmp/out"; fail "pre-commit: pkhash-check did not name the file"; }
! try pkdiff-unchanged || { cat "$tmp/out"; fail "pre-commit: pkdiff-unchanged passed a changed pickle"; }
grep -q "root\['x'\]  changed" "$tmp/out" || { cat "$tmp/out"; fail "pre-commit: pkdiff-unchanged did not show the path"; }
ok "pre-commit: a changed pickle fails both hooks, with its path"
