#!/bin/bash
# tests/stack2.sh: the second stack (Debian 13: Open MPI 5.0, UCX 1.18) from
# this tree: its root (scripts/stack2/root.sh, cached per machine), the
# build with -Werror and the unit tests in it (scripts/stack2/build.sh),
# then tests/bed/stack2.sh on 2 guests booted on that root.
# One "ok - " / "not ok - " line per check, like every suite of tests/run.
set -u -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP"
OUT=${TB_OUT:-$TOP/tb-out/tests}
mkdir -p "$OUT"
log=$OUT/stack2-build.log
t0=$(date +%s)
if ROOT=$(scripts/stack2/build.sh 2>"$log") && [ -d "$ROOT" ]; then
    echo "ok - stack2: Debian 13 root, build with -Werror, unit tests, install ($(( $(date +%s) - t0 )) s): $(grep -E '^# (TOTAL|PASS)' "$log" | tr -s ' ' | paste -sd' ' -)"
    grep -E '^stack2-(root|build): (done|configure)' "$log" | sed 's/^/# /'
else
    echo "not ok - stack2: Debian 13 root, build with -Werror, unit tests, install: $(grep -E 'error' "$log" | tail -n 3 | tr '\n' ' ') (log: $log)"
    exit 1
fi
scripts/testbed/tb run --root "$ROOT" --hosts 2 --cpus 1 --timeout 1500 --out "$OUT" -- bash "$TOP/tests/bed/stack2.sh"
