#!/bin/bash
# The bed's own contract, checked from the machine side: exit status passes
# through, timeouts end with 124 and leave no QEMU behind, a QEMU that exits
# early is quoted in the bed failure, bad options are refused.
set -u
TB=${TB:-$(dirname "$0")/../scripts/testbed/tb}
FAILED=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; FAILED=1; }

out=$("$TB" run --hosts 1 --timeout 20 -- sleep 600 2>&1)
rc=$?
[ $rc = 124 ] && pass "tb run --timeout ends with 124" || fail "tb run --timeout ends with 124" "got $rc"
echo "$out" | grep -q 'timeout after 20 s' && pass "timeout is reported" || fail "timeout is reported" "no message: $out"
# Only this run's guests count (other beds may be running): they are the
# QEMUs on the segment tb announced.
seg=$(echo "$out" | sed -n 's/.*segment \([0-9]*\)[,)].*/\1/p' | head -n 1)
sleep 1
if [ -z "$seg" ]; then
    fail "no QEMU left behind" "tb did not announce its segment: $out"
elif pgrep -f "qemu-system-x86_64 .*mcast=230.0.0.1:$seg," >/dev/null; then
    fail "no QEMU left behind" "$(pgrep -af "mcast=230.0.0.1:$seg," | cut -c1-120)"
else
    pass "no QEMU left behind"
fi

# One 3-guest bed (--net switch, the default from 3 guests) for two parts
# of the contract.  First the guests reach each other through the bed's
# learning switch (l2switch.c), which is gone after the run and whose
# counters are kept next to the results.  Then a node that goes silent
# mid-suite: the watcher ends the check waiting on it, that check fails,
# and the suite stops (status 3, which tb run passes through) with one
# line instead of failing every later check after its own timeout; tb
# keeps the consoles.  Here node2's network is taken down under a check
# that would wait 600 s (2 missed rounds of 5 s, not CI's 6 of 20 s, and
# 10 s for each ssh to the lost node, not 45: 349 s -> ~150 s of CI's run).
lost=$(mktemp -d /tmp/tb-selftest.XXXXXX)
cat >"$lost/lost-node.sh" <<SCRIPT
BED_WATCH_PERIOD=5 BED_WATCH_MISSES=2 BED_LOST_SSH_TIMEOUT=10
. "$PWD/tests/bed/lib.sh"
for n in node2 node3; do
    ssh -o ConnectTimeout=30 \$n true || { echo "reach: \$n did not answer"; exit 1; }
done
echo "reach: node2 and node3 answered"
watch_nodes
timeout 5 ssh node2 'ip link set eth0 down' >/dev/null 2>&1
check "a check waiting on node2" 600 sleep 600
pass "the suite went on"
SCRIPT
chmod -R a+rX "$lost"
out=$("$TB" run --hosts 3 --timeout 400 --out "$lost/out" -- bash "$lost/lost-node.sh" 2>&1); rc=$?
seg=$(echo "$out" | sed -n 's/.*segment \([0-9]*\), switch).*/\1/p' | head -n 1)
if echo "$out" | grep -q '^reach: node2 and node3 answered' && [ -n "$seg" ]; then
    pass "3 guests reach each other through the bed's switch"
else
    fail "3 guests reach each other through the bed's switch" "rc $rc: $(echo "$out" | grep -m1 '^reach:\|segment') $(echo "$out" | tail -n 3)"
fi
if [ $rc = 3 ] && echo "$out" | grep -q '^not ok - bed: node2 stopped answering' &&
   ! echo "$out" | grep -q 'the suite went on'; then
    pass "a node that stops answering ends the suite with one clear line"
    pass "tb run passes the command's exit status (3)"
else
    fail "a node that stops answering ends the suite with one clear line" "rc $rc: $(echo "$out" | tail -n 4)"
    fail "tb run passes the command's exit status" "got $rc, want 3"
fi
sleep 1
if [ -n "$seg" ] && pgrep -f "l2switch $seg " >/dev/null; then
    fail "no switch left behind" "$(pgrep -af "l2switch $seg " | cut -c1-120)"
else
    pass "no switch left behind"
fi
grep -q 'unicast, [0-9]* flooded' "$lost/out/tb-l2switch.log" 2>/dev/null && grep -qv ': 0 unicast' "$lost/out/tb-l2switch.log" &&
    pass "the switch forwarded unicast frames and its counters are kept ($(cat "$lost/out/tb-l2switch.log"))" ||
    fail "the switch forwarded unicast frames and its counters are kept" "$(cat "$lost/out/tb-l2switch.log" 2>&1)"
ls "$lost"/out/consoles/*/console.node2 >/dev/null 2>&1 && pass "consoles kept when the command fails" ||
    fail "consoles kept when the command fails" "nothing in $lost/out/consoles"
rm -rf "$lost"
out=$("$TB" run --hosts 3 --net bogus -- true 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- '--net must be switch or mcast' && pass "bad --net refused" || fail "bad --net refused" "rc $rc: $out"
# A QEMU that exits early: the bed failure quotes its own error output (the
# last lines that say something) and its exit status. No guest boots: a
# stand-in qemu-system-x86_64 first on PATH fails at once.
fake=$(mktemp -d /tmp/tb-selftest.XXXXXX)
printf '#!/bin/sh\necho "qemu-system-x86_64: -smp 2: tb-selftest stand-in refuses to start" >&2\necho >&2\nexit 1\n' >"$fake/qemu-system-x86_64"
chmod +x "$fake/qemu-system-x86_64"
out=$(PATH="$fake:$PATH" "$TB" run --hosts 1 --timeout 60 --out "$fake/out" -- true 2>&1); rc=$?
if [ $rc = 3 ] && echo "$out" | grep -qF "bed failure: node1's QEMU exited early (status 1; qemu: qemu-system-x86_64: -smp 2: tb-selftest stand-in refuses to start)"; then
    pass "a QEMU that exits early: the message quotes its error output"
else
    fail "a QEMU that exits early: the message quotes its error output" "rc $rc: $(echo "$out" | tail -n 2)"
fi
printf '#!/bin/sh\nexit 0\n' >"$fake/qemu-system-x86_64"
out=$(PATH="$fake:$PATH" "$TB" run --hosts 1 --timeout 60 --out "$fake/out" -- true 2>&1); rc=$?
if [ $rc = 3 ] && echo "$out" | grep -qF "node1's QEMU exited early (status 0; no error output from qemu: the guest powered off or reset itself"; then
    pass "a QEMU that exits early without a word: the message says so"
else
    fail "a QEMU that exits early without a word: the message says so" "rc $rc: $(echo "$out" | tail -n 2)"
fi
rm -rf "$fake"

out=$("$TB" run --hosts 0 -- true 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- '--hosts must be' && pass "bad --hosts refused" || fail "bad --hosts refused" "rc $rc: $out"
out=$("$TB" run --hosts 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q 'no command' && pass "missing command refused" || fail "missing command refused" "rc $rc: $out"
out=$("$TB" run --bogus 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "unknown option '--bogus'" && pass "unknown option refused" || fail "unknown option refused" "rc $rc: $out"
"$TB" doctor >/dev/null && pass "tb doctor says the bed can run" || fail "tb doctor says the bed can run" "doctor failed"
exit $FAILED
