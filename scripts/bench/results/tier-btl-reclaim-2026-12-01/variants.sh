#!/bin/bash
# The BTL reconnect on the nested tier (2026-12-01) with one knob changed at a
# time, budget 2: the CM poll gate (cm_poll_interval 1), the idle wait off,
# per-QP receive queues (srq 0), and the defaults.
# Run: scripts/testbed/tb run --pvrdma --hosts 2 --out DIR -- bash THIS
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
. "$TOP/tests/bed/lib.sh"
DEV=$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')
BTL=(--mca pml ob1 --mca btl pvrdma,self --mca btl_pvrdma_if_include "$DEV"
     --mca btl_base_verbose 10 --mca btl_pvrdma_rc_timeout 19 --mca btl_pvrdma_max_connections 2)
for v in "cm1:--mca btl_pvrdma_cm_poll_interval 1" "idleoff:--mca btl_pvrdma_idle_wait off" "srq0:--mca btl_pvrdma_srq 0" "default:"; do
    name="reconnect btl ${v%%:*}"
    read -r -a extra <<<"${v#*:}"
    mpi_check_run "$name" 900 -np 4 --map-by node --oversubscribe "${BTL[@]}" "${extra[@]}" -- reconnect
    log=$(log_name "$name")
    echo "$name: $(grep -h "reconnect: first" "$log")"
    echo "closes reopens refusals overruns reclaimed stale: $(counters_sum btl_close "conn_closes conn_reopens conn_close_refusals conn_overruns rx_reclaimed rx_stale" "$log")"
done
bed_summary
