#!/bin/bash
# Runs on node1 of a 2-guest bed: connection set-up of all pairs at 2 x 8
# ranks (mpi_check --quick allpairs: every rank connects to its 15 peers and
# exchanges a few small messages, every byte checked) over both transports,
# for the installed plugins and for a reference build given by
#   SETUP_REF_BTL_PATH  an Open MPI component directory holding the
#                       reference mca_btl_pvrdma.so (and links to the rest)
#   SETUP_REF_UCT_LIB   the reference libuct_pvrdma.so
# alternating, SETUP_REPS times (default 3).  Prints one line per run:
#   "setup VARIANT TRANSPORT REP: allpairs S s, MPI_Init I s".
# Used for issue 37 (the MAC's cost at set-up); see docs/results.
. "$(dirname "$0")/../../tests/bed/lib.sh"
DEV=$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')
run() {
    local variant=$1 t=$2 rep=$3 log args s i
    log=$LOGDIR/setup-$variant-$t-$rep.log
    if [ "$t" = btl ]; then
        args=(--mca pml ob1 --mca btl pvrdma,self --mca btl_pvrdma_if_include "$DEV")
        [ "$variant" = ref ] && args+=(--mca mca_base_component_path "$SETUP_REF_BTL_PATH")
    else
        if [ "$variant" = ref ]; then
            PVRDMA_UCT_LIB=$SETUP_REF_UCT_LIB mpi_ucx_args args pvrdma,self "$DEV:1"
        else
            mpi_ucx_args args pvrdma,self "$DEV:1"
        fi
    fi
    timeout -k 10 600 "${MPIRUN[@]}" -np 16 --map-by node --oversubscribe "${args[@]}" \
        "$MPI_TESTS/mpi_check" --quick allpairs >"$log" 2>&1
    s=$(sed -nE 's/^ok - allpairs \(([0-9.]+) s\)$/\1/p' "$log")
    i=$(sed -nE 's/.*MPI_Init took ([0-9.]+) s on the slowest.*/\1/p' "$log" | head -n 1)
    if [ -n "$s" ]; then
        pass "setup $variant $t $rep: allpairs $s s, MPI_Init ${i:-?} s"
    else
        fail "setup $variant $t $rep" "no allpairs time (log: $log)"
    fi
}
for rep in $(seq 1 "${SETUP_REPS:-3}"); do
    for t in btl ucx; do
        run ref "$t" "$rep"
        run current "$t" "$rep"
    done
done
bed_summary
