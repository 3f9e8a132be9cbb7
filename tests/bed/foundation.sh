#!/bin/bash
# Foundation checks across 2 guests: the bed's RDMA, raw verbs between hosts,
# mpirun over TCP, and both plugins loading where users load them.
. "$(dirname "$0")/lib.sh"

check_output "rxe0 ACTIVE on node1" 30 'PORT_ACTIVE' ibv_devinfo -d rxe0
check_output "rxe0 ACTIVE on node2" 60 'PORT_ACTIVE' ssh node2 ibv_devinfo -d rxe0

log=$(log_name ib_send_lat)
if perftest_pair "$log" ib_send_lat -d rxe0 -s 8 -n 500 -F; then
    lat=$(perftest_field "$log" 5)
    [ -n "$lat" ] && pass "ib_send_lat 8 B across guests: typical $lat us" ||
        fail "ib_send_lat across guests" "no result row (log: $log)"
else
    fail "ib_send_lat across guests" "perftest failed (log: $log)"
fi
log=$(log_name ib_write_bw)
if perftest_pair "$log" ib_write_bw -d rxe0 -s 1048576 -n 100 -F; then
    bw=$(perftest_field "$log" 4)
    [ -n "$bw" ] && pass "ib_write_bw 1 MiB across guests: $bw MB/s" ||
        fail "ib_write_bw across guests" "no result row (log: $log)"
else
    fail "ib_write_bw across guests" "perftest failed (log: $log)"
fi

check_output "mpirun btl tcp,self across 2 guests" 120 'node1' \
    "${MPIRUN[@]}" -np 2 --map-by node --mca btl tcp,self hostname
grep -q node2 "$(log_name "mpirun btl tcp,self across 2 guests")" &&
    pass "mpirun reached node2" || fail "mpirun reached node2" "node2 missing in hostname output"

check_output "BTL pvrdma listed by ompi_info" 60 'MCA btl: pvrdma' ompi_info --param btl pvrdma --level 9
check_output "BTL pvrdma parameters listed" 60 'btl_pvrdma_if_include' ompi_info --param btl pvrdma --level 9
uct_name="UCT md/transport pvrdma on rxe0:1 (ucx_info -d)"
if [ ! -f "$PVRDMA_UCT_LIB" ]; then
    fail "$uct_name" "$PVRDMA_UCT_LIB is not installed"
elif check "$uct_name: ucx_info runs" 60 env LD_PRELOAD="$PVRDMA_UCT_LIB" ucx_info -d; then
    ucx_lists "$(log_name "$uct_name: ucx_info runs")" pvrdma pvrdma rxe0:1 &&
        pass "$uct_name" || fail "$uct_name" "no md of component pvrdma with transport pvrdma on device rxe0:1 listed"
fi
bed_summary
