#!/bin/bash
# dev: metered MPI_Alltoall of 8 ranks on the tier (issue 38), both transports, twice
. /work/main/tests/bed/lib.sh
DEV=vmw_pvrdma0
METER=/work/main/scripts/testbed/pvrdma/meter
MDIR=$TB_OUT/meter
mkdir -p "$MDIR"
show() { for f in "$MDIR"/$1.*; do for k in 1 2; do echo "# $(basename "$f") node$k: $(meter_counts "$f" node$k)"; done; done; }
t0=$(date +%s)
mpi_ucx_args MUCX pvrdma,self "$DEV:1"
for r in 1 2; do
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-a2a$r" mpi_check_run "btl 2x4 metered alltoall $r" 600 \
        -np 8 --map-by node --oversubscribe --mca pml ob1 --mca btl pvrdma,self \
        --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" -- metered_a2a
    show btl-a2a$r
    echo "# elapsed $(( $(date +%s) - t0 )) s"
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx-a2a$r" mpi_check_run "pml ucx 2x4 metered alltoall $r" 600 \
        -np 8 --map-by node --oversubscribe "${MUCX[@]}" -- metered_a2a
    show ucx-a2a$r
    echo "# elapsed $(( $(date +%s) - t0 )) s"
done
# without send coalescing (one WR list per send call, the code before issue 38)
MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-a2a-nc" mpi_check_run "btl 2x4 metered alltoall, no coalescing" 600 \
    -np 8 --map-by node --oversubscribe --mca pml ob1 --mca btl pvrdma,self \
    --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" --mca btl_pvrdma_send_coalesce 0 -- metered_a2a
show btl-a2a-nc
MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx-a2a-nc" mpi_check_run "pml ucx 2x4 metered alltoall, no coalescing" 600 \
    -np 8 --map-by node --oversubscribe "${MUCX[@]}" -x UCX_PVRDMA_TX_COALESCE=n -- metered_a2a
show ucx-a2a-nc
echo "# elapsed $(( $(date +%s) - t0 )) s"
bed_summary
