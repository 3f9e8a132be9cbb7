#!/bin/bash
# dev: metered mpi_check on the tier, coalescing off/on side by side
. /work/main/tests/bed/lib.sh
DEV=vmw_pvrdma0
METER=/work/main/scripts/testbed/pvrdma/meter
MDIR=$TB_OUT/meter
mkdir -p "$MDIR"
for v in ${VARIANTS:-off:0 on:1 on16:1:16}; do
    name=${v%%:*}; rest=${v#*:}; co=${rest%%:*}; pd=""
    [ "$rest" != "$co" ] && pd=${rest#*:}
    extra=()
    [ -n "$pd" ] && extra=(--mca pml_ob1_send_pipeline_depth "$pd")
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-$name" mpi_check_run "btl metered $name" 400 \
        -np 2 --map-by node --mca pml ob1 --mca btl pvrdma,self \
        --mca btl_pvrdma_idle_spin 100000 --mca btl_pvrdma_idle_poll_interval 10000 \
        --mca btl_pvrdma_send_coalesce "$co" --mca btl_base_verbose 10 "${extra[@]}" -- metered
    for f in "$MDIR"/btl-$name.*; do
        for k in 1 2; do echo "# $name $(basename "$f") node$k: $(meter_counts "$f" node$k)"; done
    done
done
bed_summary
