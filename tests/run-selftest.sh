#!/bin/bash
# tests/run's own contract, against a stub bed (no QEMU; seconds): a lost
# node never hides a failure, a rerun happens only for a known bed cause
# named in the summary, a skip is not a pass, a suite that exits non-zero
# without a failed check fails.  Each case runs tests/run --no-setup --only
# on one fake suite through PVRDMA_TEST_SUITES / PVRDMA_TB.
set -u
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
W=$(mktemp -d /tmp/run-selftest.XXXXXX)
trap 'rm -rf "$W"' EXIT
FAILED=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; FAILED=1; }

# The stub bed: runs the suite script here.  $W/attempt counts the runs, so
# a suite can behave differently on its rerun.
cat >"$W/tb" <<'STUB'
#!/bin/bash
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
n=$(($(cat "$STUB_W/attempt" 2>/dev/null || echo 0) + 1))
echo "$n" >"$STUB_W/attempt"
ATTEMPT=$n exec "$@"
STUB
chmod +x "$W/tb"

# fake_suite NAME BODY: a suite script; BODY may use $ATTEMPT and console
# CONTENT (writes a kept console for node2 and logs where, as tb does).
fake_suite() {
    cat >"$W/$1.sh" <<SUITE
console() { mkdir -p "$W/consoles/\$ATTEMPT"; echo "\$1" >"$W/consoles/\$ATTEMPT/console.node2"
            echo "tb: guest consoles kept in $W/consoles/\$ATTEMPT" >&2; }
$2
SUITE
}

# run_case NAME: tests/run on the fake suite NAME; output in $OUT, status $RC.
run_case() {
    rm -f "$W/attempt"
    OUT=$(STUB_W=$W PVRDMA_TB="$W/tb" PVRDMA_TEST_SUITES="$1:2:1:60:$W/$1.sh" \
          TB_OUT="$W/out.$1" "$TOP/tests/run" --no-setup --only "$1" 2>&1)
    RC=$?
}

LOST='echo "not ok - bed: node2 stopped answering (no ssh) by the end of the check above"; exit 3'

fake_suite corrupt "echo 'ok - first'
echo 'not ok - data: rank 1 from 0: 65536 bytes, byte 4096 is 0x00, expected 0x5e'
echo 'not ok - waits on node2: timed out after 600s'
console 'watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [swapper/0:0]'
$LOST"
run_case corrupt
if [ $RC != 0 ] && echo "$OUT" | grep -q '^  not ok - data: .*byte 4096' &&
   ! echo "$OUT" | grep -q 'again on a fresh bed'; then
    pass "a data failure before a lost node fails the run, no rerun"
else
    fail "a data failure before a lost node fails the run, no rerun" "rc $RC: $(echo "$OUT" | tail -n 5 | tr '\n' '|')"
fi

fake_suite lockup "if [ \$ATTEMPT = 1 ]; then
  echo 'ok - first'; echo 'not ok - waits on node2: timed out after 600s'
  console '[ 812.1] watchdog: BUG: soft lockup - CPU#0 stuck for 23s! [kworker/0:1:57]'
  $LOST
fi
echo 'ok - first'; echo 'ok - waits on node2'"
run_case lockup
if [ $RC = 0 ] && echo "$OUT" | grep -q '^Reruns:' && echo "$OUT" | grep -q 'cause in the consoles: node2: .*soft lockup' &&
   echo "$OUT" | grep -q '^2 passed, 0 failed'; then
    pass "a lost node with a soft lockup in its console is rerun, the cause named"
else
    fail "a lost node with a soft lockup in its console is rerun, the cause named" "rc $RC: $(echo "$OUT" | tail -n 5 | tr '\n' '|')"
fi

fake_suite nocause "echo 'not ok - waits on node2: timed out after 600s'
console '[  30.0] tb: heartbeat mem 700M load 1.0'
$LOST
echo 'ok - would pass on a rerun'"
run_case nocause
if [ $RC != 0 ] && echo "$OUT" | grep -q 'not rerun: the kept consoles show no known bed cause' &&
   [ "$(cat "$W/attempt")" = 1 ]; then
    pass "a lost node without a known cause fails the run, no rerun"
else
    fail "a lost node without a known cause fails the run, no rerun" "rc $RC: $(echo "$OUT" | tail -n 5 | tr '\n' '|')"
fi

fake_suite skip "echo 'ok - real'; echo 'ok - GID type mismatch # SKIP no RoCE v1 GID'"
run_case skip
if [ $RC != 0 ] && echo "$OUT" | grep -q 'skipped, which is a failure: GID type mismatch' &&
   echo "$OUT" | grep -q '^1 passed, 1 failed'; then
    pass "a skipped check counts as a failure"
else
    fail "a skipped check counts as a failure" "rc $RC: $(echo "$OUT" | tail -n 3 | tr '\n' '|')"
fi

fake_suite silent "echo 'ok - only passes'; exit 5"
run_case silent
if [ $RC != 0 ] && echo "$OUT" | grep -q 'ended with status 5 and no failed check'; then
    pass "a suite that exits non-zero without a failed check fails"
else
    fail "a suite that exits non-zero without a failed check fails" "rc $RC: $(echo "$OUT" | tail -n 3 | tr '\n' '|')"
fi

fake_suite clean "echo 'ok - one'; echo 'ok - two'"
run_case clean
[ $RC = 0 ] && echo "$OUT" | grep -q '^2 passed, 0 failed' && pass "a clean suite passes" ||
    fail "a clean suite passes" "rc $RC: $(echo "$OUT" | tail -n 3 | tr '\n' '|')"
exit $FAILED
