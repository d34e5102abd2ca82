#!/usr/bin/env bash
# An older commit's tree in .old/ of this checkout, for the device calls that judge with both (run_all.sh
# containment .old, run_all.sh restructure .old): run here, before the call, and name .old in its carry.
#
#     bash scripts/gpu/prepare_old_checkout.sh 075c86d
#
# The tree is the commit's tracked files (git archive): nothing built, nothing ignored. .old/ is ignored
# through the repository's info/exclude (the main repository's when this is a worktree: git's common dir),
# so it neither shows in git status nor travels unless carried.
set -euo pipefail
COMMIT=${1:?usage: prepare_old_checkout.sh COMMIT}
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
git rev-parse --verify --quiet "$COMMIT^{commit}" >/dev/null || {
  echo "no such commit: $COMMIT" >&2
  exit 1
}
rm -rf .old
mkdir .old
git archive "$COMMIT" | tar -x -C .old
EXCLUDE="$(git rev-parse --path-format=absolute --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$EXCLUDE")"
grep -qxF "/.old/" "$EXCLUDE" 2>/dev/null || echo "/.old/" >>"$EXCLUDE"
echo ".old: $(git rev-parse --short "$COMMIT") ($(git log -1 --format=%s "$COMMIT" | cut -c1-80)), $(du -sh .old | cut -f1); ignored through $EXCLUDE"
