#!/bin/bash
# The cost of a reconnect on the nested tier (QEMU's PVRDMA model, the real
# vmw_pvrdma driver and provider), issue 36: mpi_check reconnect, 4 ranks
# on 2 nodes, rank 0 talking to ranks 1..3 in turn; over the BTL with a
# budget of 2 QPs and over pml ucx with a budget of 1 ep, each against its
# default (nothing closed).
# Run: scripts/testbed/tb run --pvrdma --hosts 2 --out DIR -- bash THIS
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
. "$TOP/tests/bed/lib.sh"
DEV=$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')
mpi_ucx_args UCX pvrdma,self "$DEV:1"
BTL=(--mca pml ob1 --mca btl pvrdma,self --mca btl_pvrdma_if_include "$DEV"
     --mca btl_base_verbose 10 --mca btl_pvrdma_rc_timeout 19)
for b in 2 0; do
    name="reconnect btl budget $b"
    mpi_check_run "$name" 900 -np 4 --map-by node --oversubscribe "${BTL[@]}" \
        --mca btl_pvrdma_max_connections "$b" -- reconnect
    log=$(log_name "$name")
    grep -h "reconnect: first" "$log"
    echo "closes reopens refusals overruns: $(counters_sum btl_close "conn_closes conn_reopens conn_close_refusals conn_overruns" "$log")"
done
for b in 1 auto; do
    name="reconnect ucx budget $b"
    mpi_check_run "$name" 900 -np 4 --map-by node --oversubscribe "${UCX[@]}" -x UCX_LOG_LEVEL=diag \
        -x "UCX_PVRDMA_MAX_CONNECTIONS=$b" -x UCX_PVRDMA_TIMEOUT=19 -- reconnect
    log=$(log_name "$name")
    grep -h "reconnect: first" "$log"
    echo "closes reopens refusals overruns: $(counters_sum iface_close "conn_closes conn_reopens conn_close_refusals conn_overruns" "$log")"
done
bed_summary
