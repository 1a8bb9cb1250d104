#!/usr/bin/env bash
# pkdiff-staged.sh [PKDIFF-FLAG]... FILE...: the pkdiff-unchanged pre-commit
# hook (.pre-commit-hooks.yaml). For each FILE that HEAD has, compares
# HEAD's version with the file as staged (pre-commit sets unstaged changes
# aside while hooks run) by meaning, with pkdiff: exit 1 when one changed,
# 2 when one cannot be read, 0 otherwise. Arguments that start with "-"
# are pkdiff flags (give values as --flag=value).
set -u
flags=()
files=()
for a in "$@"; do
  if [[ ${#files[@]} -eq 0 && $a == -* ]]; then flags+=("$a"); else files+=("$a"); fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for f in "${files[@]}"; do
  git cat-file -e "HEAD:$f" 2>/dev/null || continue # new in this commit
  old="$tmp/HEAD:$(basename "$f")"
  git show "HEAD:$f" >"$old" || { status=2; continue; }
  pkdiff --color=never "${flags[@]}" -- "$old" "$f" >"$tmp/out" 2>&1
  rc=$?
  case $rc in
  0) ;;
  1)
    echo "$f: its meaning changed since HEAD (pkdiff HEAD:$f $f):"
    sed 's/^/  /' "$tmp/out"
    [[ $status -eq 0 ]] && status=1
    ;;
  *)
    cat "$tmp/out"
    status=2
    ;;
  esac
done
exit $status
