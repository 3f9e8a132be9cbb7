#!/bin/bash
# Foundation checks across 2 guests: the bed's RDMA, raw verbs between hosts,
# mpirun over TCP, both plugins loading where users load them, and both
# transports selected the way users select them: `module load
# pvrdma-mpi/btl` or `pvrdma-mpi/ucx` and a plain mpirun (the machine's
# installed packages and modulefiles are the guests').
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

# --- the transports selected by the environment modules only ----------------
# After `module load pvrdma-mpi/M` the integrity test runs with no transport
# option on the mpirun line (only the bed's hostfile and root permission).
# Proof of the transport, as in the btl and ucx suites, from verbosity set in
# the environment: btl_base_verbose (OMPI_MCA_*, mpirun forwards it) shows
# which BTL carries the traffic to node2; UCX_LOG_LEVEL=info makes UCP on
# node1 report the transport of each endpoint.  That node2's rank got the
# preload and UCX_TLS (which mpirun does not forward by itself) is checked
# from its own environment.
modinit=""
for f in /usr/share/modules/init/bash /usr/share/lmod/lmod/init/bash; do
    [ -f "$f" ] && { modinit=$f; break; }
done
if [ -z "$modinit" ]; then
    fail "module: a module system on the guests" "neither Environment Modules nor Lmod installed (scripts/setup.sh installs environment-modules)"
else
    set +u; . "$modinit"; set -u
    for m in btl ucx; do
        set +u; module load "pvrdma-mpi/$m" >"$LOGDIR/module-load-$m.log" 2>&1; rc=$?; set -u
        if [ $rc != 0 ] || [[ " ${LOADEDMODULES:-} " != *"pvrdma-mpi/$m"* ]]; then
            fail "module load pvrdma-mpi/$m" "exit $rc: $(tail -n 2 "$LOGDIR/module-load-$m.log" | tr '\n' ' ')"
            continue
        fi
        pass "module load pvrdma-mpi/$m ($(env | grep -E '^(OMPI_MCA_pml|OMPI_MCA_btl|UCX_TLS)=' | sort | paste -sd' ' -))"
        name="module pvrdma-mpi/$m: mpi_check 2x1, plain mpirun"
        if [ $m = btl ]; then
            OMPI_MCA_btl_base_verbose=10 mpi_check_run "$name" 900 -np 2 --map-by node -- --quick
            log=$(log_name "$name")
            grep -q 'Using pvrdma btl for send to .* on node node2' "$log" && grep -q 'btl:pvrdma: connected to node2' "$log" &&
                pass "module pvrdma-mpi/btl: traffic to node2 went over btl pvrdma" ||
                fail "module pvrdma-mpi/btl: traffic to node2 went over btl pvrdma" "no 'Using pvrdma btl ... node2'/'connected to node2' (log: $log)"
        else
            uct_name="module pvrdma-mpi/ucx: ucx_info -d lists transport pvrdma on rxe0:1"
            if check "$uct_name: ucx_info runs" 60 ucx_info -d; then
                ucx_lists "$(log_name "$uct_name: ucx_info runs")" pvrdma pvrdma rxe0:1 &&
                    pass "$uct_name" || fail "$uct_name" "not listed with the module's preload"
            fi
            check_output "module pvrdma-mpi/ucx: node2's rank gets LD_PRELOAD and UCX_TLS" 120 \
                "^node2 UCX_TLS=pvrdma,sm,self LD_PRELOAD=[^ ]*libuct_pvrdma[.]so[.]0" \
                "${MPIRUN[@]}" -np 2 --map-by node sh -c 'echo "$(hostname) UCX_TLS=$UCX_TLS LD_PRELOAD=$LD_PRELOAD"'
            UCX_LOG_LEVEL=info mpi_check_run "$name" 900 -np 2 --map-by node -- --quick
            log=$(log_name "$name")
            grep -qF "pvrdma/rxe0:1" "$log" && pass "module pvrdma-mpi/ucx: UCP endpoints use pvrdma/rxe0:1" ||
                fail "module pvrdma-mpi/ucx: UCP endpoints use pvrdma/rxe0:1" "not in UCP's transport report (log: $log)"
        fi
        set +u; module unload "pvrdma-mpi/$m" >/dev/null 2>&1; set -u
        [ -z "${UCX_TLS:-}${OMPI_MCA_pml:-}" ] && pass "module unload pvrdma-mpi/$m" ||
            fail "module unload pvrdma-mpi/$m" "left OMPI_MCA_pml=${OMPI_MCA_pml:-} UCX_TLS=${UCX_TLS:-}"
    done
fi
bed_summary
