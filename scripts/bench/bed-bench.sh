#!/bin/bash
# Runs on node1 of a 2-guest bed (scripts/bench/run): every benchmark of the
# comparison in ONE bed session, so the ratios are side by side. Writes
# $TB_OUT/bench/results.txt (key value) and the logs next to it.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/bed/lib.sh"
. "$TOP/tests/ucx/ucx_lib.sh"
LOGDIR=$TB_OUT/bench
mkdir -p "$LOGDIR"
RES=$LOGDIR/results.txt
: >"$RES"
put() { echo "$1 ${2:-n/a}" >>"$RES"; echo "bench: $1 ${2:-n/a}"; }
REPS=${BENCH_REPS:-3}

. "$TOP/scripts/bench/lib.sh"   # median

# Raw verbs (perftest): the floor every transport is measured against.
lat=() bw=()
for i in $(seq 1 "$REPS"); do
    log=$LOGDIR/ib_send_lat.$i.log
    perftest_pair "$log" ib_send_lat -d rxe0 -s 8 -n 1000 -F && lat+=("$(perftest_field "$log" 5)")
    log=$LOGDIR/ib_write_bw.$i.log
    perftest_pair "$log" ib_write_bw -d rxe0 -s 1048576 -n 200 -F && bw+=("$(perftest_field "$log" 4)")
done
put raw_lat_8_us "$(median "${lat[@]}")"
put raw_bw_1m_MBps "$(median "${bw[@]}")"

# MPI ping-pong: pvrdma BTL, TCP BTL, and openib (which Debian's Open MPI
# cannot run on RoCE: no rdmacm CPC) over ob1, across the two guests.
pingpong() {  # NAME BTL-LIST: 8 B latency and 1 MiB bandwidth, separate runs
    local name=$1 btl=$2 l=() b=() i log
    local run=("${MPIRUN[@]}" -np 2 --map-by node --mca pml ob1 --mca btl "$btl" "$TOP/tests/mpi/pingpong")
    for i in $(seq 1 "$REPS"); do
        log=$LOGDIR/mpi_$name.lat.$i.log
        timeout 300 "${run[@]}" --min 8 --max 8 --iters 1000 --bw-iters 1 >"$log" 2>&1 &&
            l+=("$(awk '$1 == "size" && $2 == 8 { print $4 }' "$log")")
        log=$LOGDIR/mpi_$name.bw.$i.log
        timeout 300 "${run[@]}" --min 1048576 --max 1048576 --iters 2 --bw-iters 4 >"$log" 2>&1 &&
            b+=("$(awk '$1 == "size" && $2 == 1048576 { print $6 }' "$log")")
    done
    put "mpi_${name}_lat_8_us" "$(median "${l[@]}")"
    put "mpi_${name}_bw_1m_MBps" "$(median "${b[@]}")"
}
pingpong pvrdma pvrdma,self
pingpong tcp tcp,self
pingpong openib openib,self

# UCT level: this project's pvrdma against stock rc_verbs on the same device.
# ucx_perftest's Final line: iterations, latency 50%/avg/overall (us),
# bandwidth avg/overall (MB/s), message rate avg/overall.
# Rep by rep, each test once per transport back to back, so drifting machine
# load (other VMs on the 2-core host) hits both transports alike; every other
# rep rc_verbs goes first, so that neither always runs first.  Besides the
# medians, the geometric mean of the rep-by-rep ratios pvrdma/rc_verbs: each
# ratio compares two runs seconds apart, so machine drift cancels in it.
declare -A UCT_R=()   # [TL_TEST.REP] = that run's value
uct_once() {  # REP TL TEST SIZE FIELD ITERS DATA-LAYOUT WARMUP-ITERS
    local log test=$3
    [ "$test" = get_bw ] && test="get"   # ucx_perftest's name of the GET bandwidth test
    ucx_pair "uct_$2_$3.$1" 120 "" -t "$test" -x "$2" -d "$DEV" -D "$7" -s "$4" -n "$6" -w "$8" || return 0
    log=$(log_name "uct_$2_$3.$1")
    UCT_R[$2_$3.$1]=$(awk -v f="$5" '/^Final:/ { print $f }' "$log" | tail -n 1)
    # latency tests: the typical (50th percentile) value too, less noisy
    [ "$5" = 4 ] && UCT_R[$2_$3_typ.$1]=$(awk '/^Final:/ { print $3 }' "$log" | tail -n 1)
    return 0
}
paired_ratio() {  # TEST: geometric mean over the reps where both ran
    local i
    for i in $(seq 1 "$REPS"); do
        echo "${UCT_R[pvrdma_$1.$i]:-} ${UCT_R[rc_verbs_$1.$i]:-}"
    done | awk '$1 + 0 > 0 && $2 + 0 > 0 { s += log($1 / $2); n++ }
                END { if (n) printf "%.3f\n", exp(s / n) }'
}
for i in $(seq 1 "$REPS"); do
    tls="pvrdma rc_verbs"
    [ $((i % 2)) = 0 ] && tls="rc_verbs pvrdma"
    # test by test, the two transports right after each other: the pairs
    # that are compared run seconds apart
    for tl in $tls; do uct_once "$i" "$tl" am_lat 8 4 5000 short 100; done
    # 64 KiB: large RDMA READs stall for minutes on rxe under emulation
    for tl in $tls; do uct_once "$i" "$tl" put_bw 65536 7 200 zcopy 20; done
    for tl in $tls; do uct_once "$i" "$tl" get_bw 65536 7 200 zcopy 20; done
done
for tl in pvrdma rc_verbs; do
    for t in am_lat am_lat_typ put_bw get_bw; do
        # shellcheck disable=SC2046 # one value per rep; failed runs left none
        put "uct_${tl}_$t" "$(median $(for i in $(seq 1 "$REPS"); do echo "${UCT_R[${tl}_$t.$i]:-}"; done))"
    done
done
for t in am_lat am_lat_typ put_bw get_bw; do
    put "uct_paired_$t" "$(paired_ratio "$t")"
done
