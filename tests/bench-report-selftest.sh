#!/bin/bash
# scripts/bench/exits-report's OpenFOAM tables against a made-up results
# file (seconds, no bed): a line per row and run, doorbells per solver time
# step, "of stock" over the same run's stock row (else the median of the
# stock runs), a failed run shown with its reason, medians over the runs,
# and a results file of the old layout (kind "foam", one t2np2 run).
set -u
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
W=$(mktemp -d /tmp/bench-report-selftest.XXXXXX)
trap 'rm -rf "$W"' EXIT
FAILED=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; FAILED=1; }
has() {  # NAME REGEX FILE
    if grep -qE -- "$2" "$3"; then pass "$1"; else fail "$1" "no line /$2/ in: $(cat "$3")"; fi
}

cat >"$W/new.txt" <<'R'
btl foam.t2np2.1 all.doorbell.qp.send 100
btl foam.t2np2.1 all.doorbell.qp.srq 20
btl foam.t2np2.1 all.doorbell.cq.poll 380
btl foam.t2np2.1 all.command 50
btl foam.t2np2.1 seconds 70.5
btl foam.t2np2.1 steps 25
btl foam.t2np2.1 msgs 1
ucxstock foam.t2np2.1 all.doorbell.qp.send 100
ucxstock foam.t2np2.1 all.doorbell.cq.poll 1900
ucxstock foam.t2np2.1 seconds 80
ucxstock foam.t2np2.1 steps 25
ucxstock foam.t2np2.1 msgs 1
btl foam.t2np2.2 all.doorbell.qp.send 100
btl foam.t2np2.2 all.doorbell.cq.poll 400
btl foam.t2np2.2 seconds 72.5
btl foam.t2np2.2 steps 25
btl foam.t2np2.2 msgs 1
ucxstock foam.t2np2.2 why FAILED: mpirun exit 134: Endpoint timeout
btl-spin1 foam.t2np2.1 all.doorbell.cq.poll 900
btl-spin1 foam.t2np2.1 seconds 69
btl-spin1 foam.t2np2.1 steps 25
btl-spin1 foam.t2np2.2 all.doorbell.cq.poll 1100
btl-spin1 foam.t2np2.2 seconds 73
btl-spin1 foam.t2np2.2 steps 25
btl foam.t2np4.1 all.doorbell.cq.poll 600
btl foam.t2np4.1 seconds 140
btl foam.t2np4.1 steps 50
R
"$TOP/scripts/bench/exits-report" "$W/new.txt" >"$W/new.md" 2>"$W/new.err"
[ -s "$W/new.err" ] && fail "report without errors" "$(cat "$W/new.err")"
# run 1: 500 doorbells, 20 per step, 500 / 2000 of stock
has "a line per run, per time step, of stock" '^\| btl pvrdma \| 1 \| 120 \| 380 \| 0 \| 500 \| 20 \| 0\.25 \| 50 \| 70\.5 \|$' "$W/new.md"
# run 2: its stock failed, so the stock runs' median (2000)
has "of stock over the stock median when the run's own failed" '^\| btl pvrdma \| 2 \| 100 \| 400 \| 0 \| 500 \| 20 \| 0\.25 \|' "$W/new.md"
has "a failed run with its reason" '^\| pml ucx, stock rc_verbs/ud_verbs \| 2 \| FAILED: mpirun exit 134: Endpoint timeout \|' "$W/new.md"
has "medians over the runs" '^\| btl pvrdma, idle spin unpaced \(btl_pvrdma_idle_spin_scale 1\) \| 2 of 2 \| 1000 \| 0\.50 \| 71\.0 \| 0\.99 \|$' "$W/new.md"
has "a stock row that failed once: runs ok" '^\| pml ucx, stock rc_verbs/ud_verbs \| 1 of 2 \| 2000 \| 1\.00 \| 80\.0 \| 1\.12 \|$' "$W/new.md"
has "a second case, its own table" '^\| OpenFOAM t2np4 \(validation harness, 4 ranks on 2 nodes\)' "$W/new.md"
has "no stock row: no ratio" '^\| btl pvrdma \| 1 \| 0 \| 600 \| 0 \| 600 \| 12 \| - \|' "$W/new.md"

# the layout of the results before 2026-11-28 (evening): kind "foam"
cat >"$W/old.txt" <<'R'
btl foam all.doorbell.qp.send 12125
btl foam all.doorbell.cq.poll 68870
btl foam seconds 68.99
btl foam msgs 1
ucxstock foam all.doorbell.cq.poll 192504
ucxstock foam seconds 64.00
ucxstock foam msgs 1
R
"$TOP/scripts/bench/exits-report" "$W/old.txt" >"$W/old.md" 2>&1
has "old layout: t2np2, one run" '^\| btl pvrdma \| 1 \| 12125 \| 68870 \| 0 \| 80995 \| - \| 0\.42 \|' "$W/old.md"
exit $FAILED
