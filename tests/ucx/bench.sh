#!/bin/bash
# Benchmark of the UCT transport "pvrdma" against stock UCX rc_verbs and raw
# perftest, in one bed session, across 2 guests:
#   scripts/testbed/tb run --hosts 2 --timeout 1500 -- bash tests/ucx/bench.sh
# Prints a markdown table (also written to $TB_OUT/ucx-bench.md).  Each
# measurement is repeated (PVRDMA_BENCH_REPS, default 3) alternating the transports
# and the median is reported: the bed is an emulator shared with other work,
# so only ratios measured side by side mean anything.
. "$(dirname "$0")/../bed/lib.sh"
. "$(dirname "$0")/ucx_lib.sh"

REPS=${PVRDMA_BENCH_REPS:-3}
OUTMD=${TB_OUT:-/tmp}/ucx-bench.md

# final_field LOG N: field N of the "Final:" line of a ucx_perftest log
final_field() { awk -v n="$2" '/^Final:/ { v = $n } END { print v }' "$1"; }

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

# run_uct KEY TL ARGS...: one ucx_perftest run, appends the value to $KEY.vals
# (am_lat: typical latency in us; bw tests: overall bandwidth in MB/s)
run_uct() {
    local key=$1 tl=$2 field log
    shift 2
    case $key in *lat*) field=3 ;; *) field=7 ;; esac
    log=$(log_name "bench $key $tl")
    if ucx_pair "bench $key $tl" 300 "" -x "$tl" -d "$DEV" "$@"; then
        final_field "$log" "$field" >>"$LOGDIR/$key.$tl.vals"
    else
        echo "bench $key $tl failed (log: $log)" >&2
    fi
}

run_raw() {  # KEY FIELD TOOL ARGS...
    local key=$1 field=$2 tool=$3 log
    shift 3
    log=$(log_name "bench $key raw")
    if perftest_pair "$log" "$tool" "$@"; then
        perftest_field "$log" "$field" >>"$LOGDIR/$key.raw.vals"
    else
        echo "bench $key raw failed (log: $log)" >&2
    fi
}

rm -f "$LOGDIR"/*.vals
for rep in $(seq 1 "$REPS"); do
    for tl in pvrdma rc_verbs; do
        run_uct am_lat "$tl" -t am_lat -n 2000 -w 200
        run_uct put_bw "$tl" -t put_bw -D zcopy -s 65536 -n 300 -w 20
        run_uct get_bw "$tl" -t get -D zcopy -s 65536 -n 300 -w 20
    done
    run_raw am_lat 5 ib_send_lat -d rxe0 -s 8 -n 1000 -F
    run_raw put_bw 4 ib_write_bw -d rxe0 -s 65536 -n 300 -F
    run_raw get_bw 4 ib_read_bw -d rxe0 -s 65536 -n 300 -F
done

val() { [ -f "$LOGDIR/$1.$2.vals" ] && median <"$LOGDIR/$1.$2.vals" || echo "n/a"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }

{
    echo "| test (2 guests, rxe0) | pvrdma | rc_verbs | raw perftest | pvrdma / rc_verbs |"
    echo "|---|---|---|---|---|"
    for key in am_lat put_bw get_bw; do
        p=$(val "$key" pvrdma) r=$(val "$key" rc_verbs) w=$(val "$key" raw)
        case $key in
            am_lat) unit="us, 8 B, typical (lower is better)" ;;
            put_bw) unit="MB/s, 64 KiB zcopy" ;;
            get_bw) unit="MB/s, 64 KiB zcopy" ;;
        esac
        echo "| $key ($unit) | $p | $r | $w | $(ratio "$p" "$r") |"
    done
    echo
    echo "median of $REPS alternating runs; raw: ib_send_lat typical / ib_write_bw / ib_read_bw average"
} | tee "$OUTMD"

for key in am_lat put_bw get_bw; do
    [ "$(val "$key" pvrdma)" != n/a ] && pass "bench $key pvrdma measured" ||
        fail "bench $key pvrdma measured" "no result (logs in $LOGDIR)"
done
bed_summary
