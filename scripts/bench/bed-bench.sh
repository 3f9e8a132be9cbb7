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

# Raw verbs in both directions at once, and SEND (the receiver polls, as an
# MPI rank waiting in MPI_Waitall does; WRITE leaves it idle).
bb=() sb=()
for i in $(seq 1 "$REPS"); do
    log=$LOGDIR/ib_write_bw_bidir.$i.log
    perftest_pair "$log" ib_write_bw -d rxe0 -s 1048576 -n 200 -F -b && bb+=("$(perftest_field "$log" 4)")
    log=$LOGDIR/ib_send_bw.$i.log
    perftest_pair "$log" ib_send_bw -d rxe0 -s 1048576 -n 200 -F && sb+=("$(perftest_field "$log" 4)")
done
# ib_write_bw -b prints the sum of both directions
put raw_bibw_1m_MBps "$(median "${bb[@]}" | awk '{ print $1 / 2 }')"
put raw_send_bw_1m_MBps "$(median "${sb[@]}")"

# MPI across the two guests (tests/mpi/pingpong, every byte checked): 8 B
# half round trip; 256 KiB-4 MiB streaming one direction and both directions
# at once (windows capped at 4 MiB, so each size moves the same bytes).
# pvrdma: btl pvrdma (ob1); ucx: pml ucx over UCX_TLS=pvrdma; ucxstock: pml
# ucx over stock rc_verbs/ud_verbs (what a user runs without us); tcp; openib
# with rdmacm (below).
declare -A MPI_R=() MPI_TO=()   # [NAME_KEY] = the values of the reps / runs that timed out
mpi_rows() {  # NAME TIMEOUT MPIRUN-ARGS...
    local name=$1 t=$2 log dir key rc v
    shift 2
    local run=("${MPIRUN[@]}" -np 2 --map-by node "$@" "$TOP/tests/mpi/pingpong")
    log=$LOGDIR/mpi_$name.lat.$i.log
    timeout -k 5 300 "${run[@]}" --min 8 --max 8 --iters 1000 --bw-iters 1 >"$log" 2>&1 &&
        MPI_R[${name}_lat_8_us]+=" $(awk '$1 == "size" && $2 == 8 { print $4 }' "$log")"
    for dir in bw bibw; do
        log=$LOGDIR/mpi_$name.$dir.$i.log
        timeout -k 5 "$t" "${run[@]}" --min 262144 --max 4194304 --iters 2 --bw-iters 2 \
            --window-bytes 4194304 $([ $dir = bibw ] && echo --bidir) >"$log" 2>&1
        rc=$?
        grep -q "^# ERROR" "$log" && { echo "bench: mpi $name $dir: data corrupted ($log)"; continue; }
        for key in 262144:256k 1048576:1m 4194304:4m; do
            v=$(awk -v n="${key%:*}" '$1 == "size" && $2 == n { print $6 }' "$log")
            MPI_R[${name}_${dir}_${key#*:}_MBps]+=" $v"
            # a size the time limit cut off: the table says so
            [ -z "$v" ] && [ "$rc" = 124 ] && MPI_TO[${name}_${dir}_${key#*:}_MBps]=">${t}s"
        done
    done
}
mpi_ucx_args UCX_OURS pvrdma,self rxe0:1
mpi_ucx_args UCX_STOCK rc_verbs,ud_verbs,self rxe0:1
for i in $(seq 1 "$REPS"); do
    mpi_rows pvrdma 400 --mca pml ob1 --mca btl pvrdma,self
    mpi_rows ucx 400 "${UCX_OURS[@]}"
    mpi_rows tcp 400 --mca pml ob1 --mca btl tcp,self
done
# Stock UCX once, with a shorter limit: its rendezvous (RDMA READ) takes
# seconds per MiB on this bed, so more runs would only add timeouts.
i=1
mpi_rows ucxstock 150 "${UCX_STOCK[@]}"
# openib as the harness runs it (validation/transports/openib.conf): the
# rdmacm build of scripts/build-openib-rdmacm.sh, RoCE's only connection
# scheme for openib (Debian's has none: then the row fails at once, n/a)
mapfile -t OPENIB < <(. "$TOP/validation/transports/openib.conf"; printf '%s\n' "${mpirun_args[@]}")
mpi_rows openib 300 "${OPENIB[@]}"
for name in pvrdma ucx ucxstock tcp openib; do
    for key in lat_8_us bw_256k_MBps bw_1m_MBps bw_4m_MBps bibw_256k_MBps bibw_1m_MBps bibw_4m_MBps; do
        # shellcheck disable=SC2086 # one value per rep
        v=$(median ${MPI_R[${name}_$key]:-})
        put "mpi_${name}_$key" "${v:-${MPI_TO[${name}_$key]:-n/a}}"
    done
done

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
