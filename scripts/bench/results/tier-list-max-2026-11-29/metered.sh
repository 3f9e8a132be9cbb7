#!/bin/bash
# dev: metered mpi_check on the tier, twice per transport: BTL list max 64, UCX rx batch 3/4 of the queue (issue 38)
. /work/main/tests/bed/lib.sh
DEV=vmw_pvrdma0
METER=/work/main/scripts/testbed/pvrdma/meter
MDIR=$TB_OUT/meter
mkdir -p "$MDIR"
show() { for f in "$MDIR"/$1.*; do for k in 1 2; do echo "# $(basename "$f") node$k: $(meter_counts "$f" node$k)"; done; done; }
t0=$(date +%s)
mpi_ucx_args MUCX pvrdma,self "$DEV:1"
for r in 1 2; do
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl$r" mpi_check_run "btl metered $r" 400 \
        -np 2 --map-by node --mca pml ob1 --mca btl pvrdma,self \
        --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" \
        --mca btl_pvrdma_idle_spin 100000 --mca btl_pvrdma_idle_poll_interval 10000 -- metered
    show btl$r
    echo "# elapsed $(( $(date +%s) - t0 )) s"
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx$r" mpi_check_run "ucx metered $r" 400 \
        -np 2 --map-by node "${MUCX[@]}" -x UCX_PVRDMA_IDLE_SPIN=100ms -x UCX_PVRDMA_IDLE_POLL_INTERVAL=10ms -- metered
    show ucx$r
    echo "# elapsed $(( $(date +%s) - t0 )) s"
done
bed_summary
