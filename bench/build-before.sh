#!/usr/bin/env bash
# bench/build-before.sh <commit> <dir>: a built copy of this repository at <commit>, for
# `node bench/run.mjs --extra before=<dir>` (before/after measured in the same run).
# git archive, not git worktree add: nothing is added to the repository's own list of worktrees.
# The copy gets its own node_modules (npm ci), so it runs with the dependencies its lock file pinned,
# and .bench-commit, which names the commit in the report.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/build-before.sh <commit> <dir>   e.g. bench/build-before.sh 8c4514b /tmp/sr-before" >&2
  exit 2
fi
commit=$1
dir=$2
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
full=$(git -C "$repo" rev-parse --verify --quiet "$commit^{commit}") || { echo "not a commit: $commit" >&2; exit 2; }
if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
  echo "$dir exists and is not empty; give a new directory" >&2
  exit 1
fi

mkdir -p "$dir"
git -C "$repo" archive "$full" | tar -x -C "$dir"
cd "$dir"
npm ci --no-audit --no-fund
npm run build
echo "$full" > .bench-commit
echo "built ${full:0:7} in $(pwd); measure it beside the current build with:"
echo "  node bench/run.mjs --extra before=$(pwd)"
