#!/bin/bash
# Runs on node1 of a 2-guest bed (scripts/bench/osc): one-sided MPI latency
# (tests/mpi/osc_lat: 8 B put + flush, get + flush, fetch-and-op + flush,
# compare-and-swap + flush) over every path in ONE bed session, so the rows
# are side by side, and raw ib_send_lat / ib_atomic_lat as the floor.
# Writes $TB_OUT/osc/results.md and the logs next to it.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/bed/lib.sh"
. "$TOP/tests/ucx/ucx_lib.sh"
LOGDIR=$TB_OUT/osc
mkdir -p "$LOGDIR"
RES=$LOGDIR/results.md
mpi_ucx_args UCX_OURS pvrdma,self rxe0:1 ucx
mpi_ucx_args UCX_STOCK rc_verbs,ud_verbs,self rxe0:1 ucx

{
    echo "| path | osc | put+flush | get+flush | fetch_and_op+flush | compare_and_swap+flush |"
    echo "|---|---|---|---|---|---|"
} >"$RES"
# row NAME OSC MPIRUN-ARGS...: one osc_lat run, medians in microseconds
row() {
    local name=$1 osc=$2 log cells="" op v
    shift 2
    log=$LOGDIR/$(echo "$name" | tr -c 'A-Za-z0-9\n' _).log
    timeout -k 5 600 "${MPIRUN[@]}" -np 2 --map-by node "$@" "$TOP/tests/mpi/osc_lat" \
        --iters 200 >"$log" 2>&1
    grep -q '^osc_lat: ok' "$log" || { echo "| $name | $osc | failed: $(tail -n 2 "$log" | tr '\n' ' ' | cut -c1-120) | | | |" >>"$RES"; return; }
    for op in put+flush get+flush fetch_and_op+flush compare_and_swap+flush; do
        v=$(awk -v op="$op" '$1 == "osc_lat" && $2 == op { print $6 }' "$log")
        cells+=" ${v:-n/a} |"
    done
    echo "| $name | $osc |$cells" >>"$RES"
}
row "btl pvrdma (defaults: one-sided module)" "rdma" --mca pml ob1 --mca btl pvrdma,self \
    --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES"
row "btl pvrdma, btl_pvrdma_atomics off" "pt2pt" --mca pml ob1 --mca btl pvrdma,self \
    --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" --mca btl_pvrdma_atomics off
row "pml ucx, UCX_TLS=pvrdma" "ucx" "${UCX_OURS[@]}"
row "pml ucx, stock rc_verbs,ud_verbs" "ucx" "${UCX_STOCK[@]}"
row "btl tcp" "pt2pt" --mca pml ob1 --mca btl tcp,self --mca osc pt2pt
# the floor: raw verbs on the same device, same 2 guests
log=$LOGDIR/ib_send_lat.log
perftest_pair "$log" ib_send_lat -d rxe0 -s 8 -n 1000 -F &&
    echo "raw ib_send_lat 8 B (half round trip, typical): $(perftest_field "$log" 5) us" >>"$RES"
log=$LOGDIR/ib_atomic_lat.log
perftest_pair "$log" ib_atomic_lat -d rxe0 -n 1000 -F &&
    echo "raw ib_atomic_lat fetch-and-add (round trip, typical): $(perftest_field "$log" 5) us" >>"$RES"
cat "$RES"
