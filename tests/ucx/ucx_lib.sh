# shellcheck shell=bash
# Helpers for the UCX transport bed checks (sourced after tests/bed/lib.sh).

HERE=$(cd "$(dirname "$0")/../.." && pwd)
PRELOAD="LD_PRELOAD=$PVRDMA_UCT_LIB"
DEV=${PVRDMA_BED_DEV:-rxe0:1}
ONLY=${PVRDMA_BED_ONLY:-.}
# PVRDMA_BED_SKIP="regex": checks whose name matches do not run (the suite
# sets its extended checks here unless the caller set it, empty included)
SKIP=${PVRDMA_BED_SKIP:-}
PORT=13400

want() {
    printf '%s' "$1" | grep -qE -- "$ONLY" &&
        { [ -z "$SKIP" ] || ! printf '%s' "$1" | grep -qE -- "$SKIP"; }
}

# ucx_pair NAME TIMEOUT ENV ARGS...: ucx_perftest server on node2 (over ssh),
# client on node1; ENV (e.g. "UCX_TLS=pvrdma") is set on both sides.  The
# client is retried while the server is not listening yet.
ucx_pair() {
    local name=$1 t=$2 env=$3 log i rc=1
    shift 3
    log=$(log_name "$name")
    PORT=$((PORT + 1))
    ssh node2 "env $PRELOAD $env timeout $t ucx_perftest -p $PORT" \
        >"$log.server" 2>&1 &
    local spid=$!
    for i in $(seq 1 30); do
        sleep 2
        timeout -k 5 "$t" env "$PRELOAD" $env ucx_perftest node2 -p "$PORT" \
            "$@" >"$log" 2>&1
        rc=$?
        grep -qiE "connect\(\) failed|connection refused" "$log" || break
    done
    wait "$spid" 2>/dev/null
    return $rc
}

# perf_check NAME TIMEOUT ENV ARGS...: the run finishes and prints a result.
perf_check() {
    local name=$1 t=$2 log rc res
    want "$name" || return 0
    ucx_pair "$@"
    rc=$?
    log=$(log_name "$name")
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        fail "$name" "timed out after ${t}s (log: $log)"
    elif [ $rc != 0 ]; then
        fail "$name" "exit $rc: $(grep -v '^ *$' "$log" | tail -n 3 | tr '\n' ' ' | cut -c1-300) (log: $log)"
    elif res=$(grep -E '^Final:' "$log" | tail -n 1) && [ -n "$res" ]; then
        pass "$name: $(echo "$res" | tr -s ' ' | cut -c1-160)"
    else
        fail "$name" "no final result (log: $log)"
    fi
}

# mpi_check_run (tests/bed/lib.sh) skips the checks that PVRDMA_BED_ONLY excludes.
want_check() { want "$1"; }
