#!/bin/bash
# The validation harness's own tests (run on the machine; the harness boots
# the bed itself): bad input refused before anything runs, a tiny ladder
# produces the table, CSV and plots, a broken profile shows FAILED and an
# unverified run is never reported as a time.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
WS=$TOP/validation/run_weak_scaling.sh
OUT=${TB_OUT:-$TOP/tb-out}/validation-test
FAILED=0
pass() { echo "ok - validation: $1"; }
fail() { echo "not ok - validation: $1: $2"; FAILED=1; }

# expect_refused NAME REGEX ARGS...: exit 2, message, nothing run
expect_refused() {
    local name=$1 re=$2 out rc
    shift 2
    rm -rf "$OUT/refused"
    out=$(timeout 60 "$WS" --out "$OUT/refused" "$@" 2>&1); rc=$?
    if [ $rc = 2 ] && echo "$out" | grep -qE -- "$re" && [ ! -e "$OUT/refused/results.csv" ]; then pass "$name"
    else fail "$name" "rc $rc, output: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
}

out=$("$WS" --help); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q -- '--hostfile FILE' && echo "$out" | grep -q -- '--repeat N' &&
    pass "--help" || fail "--help" "rc $rc"
expect_refused "unknown case refused" "unknown case 'n3np7'" --cases n3np7
expect_refused "unknown transport refused" "unknown transport 'infiniband'" --transports infiniband
expect_refused "missing hostfile refused" "hostfile '/nonexistent/hosts' not found" --hostfile /nonexistent/hosts
printf 'onlyhost slots=20\n' >/tmp/ws-one-host.$$
expect_refused "too few hosts refused" "has 1 host\(s\); cases n2np40 need 2" --hostfile /tmp/ws-one-host.$$ --cases n2np40
rm -f /tmp/ws-one-host.$$
expect_refused "bad --repeat refused" "--repeat must be a positive integer" --repeat 0
printf 'h1 slots=20\nh2 slots=20\n' >/tmp/ws-two-hosts.$$
expect_refused "--pvrdma outside the local bed refused" "--pvrdma is for the local test bed" --pvrdma --hostfile /tmp/ws-two-hosts.$$ --cases n2np40
rm -f /tmp/ws-two-hosts.$$
expect_refused "unknown option refused" "unknown option '--fast'" --fast

# Deliberately broken and unverifiable transport profiles.
mkdir -p "$OUT"
cat >"$OUT/broken.conf" <<'CONF'
column="Broken"
mpirun_args=(--no-such-mpirun-option)
verify_regex="never printed"
CONF
cat >"$OUT/unverified.conf" <<'CONF'
# Claims a transport it does not use: TCP carries the traffic.
column="Unverified"
mpirun_args=(--mca pml ob1 --mca btl tcp,self)
verify_regex='mca: bml: Using pvrdma btl for send'
CONF
rm -rf "$OUT/run"
timeout 1500 "$WS" --cases t1np1,t2np2 --transports "tcp,$OUT/broken.conf,$OUT/unverified.conf" \
    --out "$OUT/run" >"$OUT/run.log" 2>&1
rc=$?
[ $rc = 0 ] && pass "tiny ladder ran (exit 0)" || fail "tiny ladder ran" "exit $rc (log $OUT/run.log)"
csv=$OUT/run/results.csv
for f in results.csv table.md ratios.md fig14-times.png fig15-speedup.png fig16-pvrdma-vs-passthrough.png fig17-tcp-vs-pvrdma.png; do
    [ -s "$OUT/run/$f" ] && pass "$f produced" || fail "$f produced" "missing or empty"
done
grep -q 'Cases | Mesh Size | Time Delta (s) | PVRDMA (s) | Passthrough (s) | TCP (s)' "$OUT/run/table.md" &&
    pass "table in the paper's layout" || fail "table in the paper's layout" "header missing"
n=$(awk -F, '$6 == "tcp" && $9 == "ok" && $10 > 0' "$csv" | wc -l)
[ "$n" = 2 ] && pass "tcp runs have times" || fail "tcp runs have times" "$n of 2"
grep -qE '^\| t2np2 \| \(40 20 1\) \| 1.2e-6 \|.* [0-9]+\.[0-9]+ \|' "$OUT/run/table.md" &&
    pass "table row with a time" || fail "table row with a time" "no t2np2 row with a time"
# every row of the broken profile (at least one) is FAILED and has no time
awk -F, '$6 == "broken" { n++; if ($9 != "FAILED" || $10 != "") bad++ } END { exit !(n > 0 && !bad) }' "$csv" &&
    pass "every row of the broken profile shows FAILED, no time" ||
    fail "every row of the broken profile shows FAILED, no time" "$(grep broken "$csv" | head -3 | tr '\n' ' ')"
grep -qE '^\| t2np2 .*\| FAILED \|' "$OUT/run/table.md" && pass "FAILED in the table" || fail "FAILED in the table" "not shown"
awk -F, '$1 == "t2np2" && $6 == "unverified" { print $9 "|" $10 "|" $13 }' "$csv" | grep -qE '^FAILED\|\|unverified' &&
    pass "unverified run is FAILED, not a time" || fail "unverified run is FAILED" "$(grep unverified "$csv" | tail -1)"
exit $FAILED
