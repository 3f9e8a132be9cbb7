#!/bin/bash
# dev: metered mpi_check on the tier: the BTL at ob1 pipeline depths 64 and 32, pml ucx (hold rule, issue 38);
# plus wall times of a few steps (nested norandmaps A/B between two boots)
. /work/main/tests/bed/lib.sh
DEV=vmw_pvrdma0
METER=/work/main/scripts/testbed/pvrdma/meter
MDIR=$TB_OUT/meter
mkdir -p "$MDIR"
show() { for f in "$MDIR"/$1.*; do for k in 1 2; do echo "# $(basename "$f") node$k: $(meter_counts "$f" node$k)"; done; done; }
tm() { local t0=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "# time $(echo "$(date +%s.%N) - $t0" | bc) s: $*"; }
tm ssh node2 true
tm ssh node2 true
tm "${MPIRUN[@]}" -np 2 --map-by node hostname
tm "${MPIRUN[@]}" -np 2 --map-by node hostname
t0=$(date +%s)
for pd in ${DEPTHS:-64 32}; do
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-pd$pd" mpi_check_run "btl metered depth $pd" 400 \
        -np 2 --map-by node --mca pml ob1 --mca btl pvrdma,self \
        --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" --mca pml_ob1_send_pipeline_depth "$pd" \
        --mca btl_pvrdma_idle_spin 100000 --mca btl_pvrdma_idle_poll_interval 10000 --mca btl_base_verbose 10 -- metered
    show btl-pd$pd
    grep -h "send_holds" "$TB_OUT"/tests/logs/*/btl-metered-depth-$pd* 2>/dev/null | head -2
    echo "# elapsed $(( $(date +%s) - t0 )) s"
done
mpi_ucx_args MUCX pvrdma,self "$DEV:1"
MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx" mpi_check_run "ucx metered" 400 \
    -np 2 --map-by node "${MUCX[@]}" -x UCX_PVRDMA_IDLE_SPIN=100ms -x UCX_PVRDMA_IDLE_POLL_INTERVAL=10ms -- metered
show ucx
echo "# elapsed $(( $(date +%s) - t0 )) s"
bed_summary
