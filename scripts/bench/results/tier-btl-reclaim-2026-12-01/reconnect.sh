#!/bin/bash
# The BTL's reconnect cost after a close destroys the QP at once and takes
# its receives back (2026-12-01), against the default (nothing closed):
# mpi_check reconnect, 4 ranks on 2 nodes, rank 0 talking to ranks 1..3 in
# turn, budget 2 QPs (one peer and the loopback).  Before: 572.6 ms for the
# first round trip after a switch on the nested tier (2026-11-29,
# ../tier-ucx-budget-2026-11-29/reconnect.sh), the 2 s drain deadline.
# Run: scripts/testbed/tb run [--pvrdma] --hosts 2 --out DIR -- bash THIS
# (on the rxe bed the BTL would take an SRQ: RECONNECT_SRQ=0 forces per-QP
# receive queues as on QEMU's model)
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
. "$TOP/tests/bed/lib.sh"
DEV=$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')
BTL=(--mca pml ob1 --mca btl pvrdma,self --mca btl_pvrdma_if_include "$DEV"
     --mca btl_base_verbose 10 --mca btl_pvrdma_rc_timeout 19
     --mca btl_pvrdma_srq "${RECONNECT_SRQ:-auto}")
for b in 2 0; do
    name="reconnect btl budget $b"
    mpi_check_run "$name" 900 -np 4 --map-by node --oversubscribe "${BTL[@]}" \
        --mca btl_pvrdma_max_connections "$b" -- reconnect
    log=$(log_name "$name")
    grep -h "reconnect: first" "$log"
    echo "closes reopens refusals overruns reclaimed stale: $(counters_sum btl_close "conn_closes conn_reopens conn_close_refusals conn_overruns rx_reclaimed rx_stale" "$log")"
done
bed_summary
