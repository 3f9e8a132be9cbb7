#!/bin/bash
# The connection budget on the nested tier (QEMU's PVRDMA model, the real
# vmw_pvrdma driver and provider; send/recv-only connections), issue 36:
# both transports' budget jobs at 2 x 4 with a budget of 2, then the cost
# of a reconnect over pml ucx (mpi_check reconnect, budget 1 against the
# default).  Run: scripts/testbed/tb run --pvrdma --hosts 2 --out DIR -- bash THIS
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
DEV=$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')
env SCALE_DEV="$DEV" SCALE_RPN=4 SCALE_BTL_RPN=4 SCALE_BUDGET=2 \
    SCALE_ONLY="budget ucxbudget" SCALE_RC_TIMEOUT=19 bash "$TOP/tests/bed/scale.sh"
. "$TOP/tests/bed/lib.sh"
mpi_ucx_args UCX pvrdma,self "$DEV:1"
for b in 1 auto; do
    name="reconnect ucx budget $b"
    mpi_check_run "$name" 900 -np 4 --map-by node --oversubscribe "${UCX[@]}" -x UCX_LOG_LEVEL=diag \
        -x "UCX_PVRDMA_MAX_CONNECTIONS=$b" -x UCX_PVRDMA_TIMEOUT=19 -- reconnect
    log=$(log_name "$name")
    grep -h "reconnect: first" "$log"
    echo "closes reopens refusals overruns: $(counters_sum iface_close "conn_closes conn_reopens conn_close_refusals conn_overruns" "$log")"
done
bed_summary
