#!/bin/bash
# dev: metered mpi_check on the tier: BTL with the package's param file, UCX coalescing off/on
. /work/main/tests/bed/lib.sh
DEV=vmw_pvrdma0
METER=/work/main/scripts/testbed/pvrdma/meter
MDIR=$TB_OUT/meter
mkdir -p "$MDIR"
show() { for f in "$MDIR"/$1.*; do for k in 1 2; do echo "# $(basename "$f") node$k: $(meter_counts "$f" node$k)"; done; done; }
MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-conf" mpi_check_run "btl metered conf" 400 \
    -np 2 --map-by node --mca pml ob1 --mca btl pvrdma,self \
    --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" \
    --mca btl_pvrdma_idle_spin 100000 --mca btl_pvrdma_idle_poll_interval 10000 --mca btl_base_verbose 10 -- metered
show btl-conf
mpi_ucx_args MUCX pvrdma,self "$DEV:1"
for co in n y; do
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx-$co" mpi_check_run "ucx metered $co" 400 \
        -np 2 --map-by node "${MUCX[@]}" -x UCX_PVRDMA_IDLE_SPIN=100ms -x UCX_PVRDMA_IDLE_POLL_INTERVAL=10ms \
        -x UCX_PVRDMA_TX_COALESCE=$co -- metered
    show ucx-$co
done
bed_summary
