#!/bin/bash
# The second stack (issue 39) on 2 guests whose userspace is the Debian 13
# root (tb run --root, built by scripts/stack2/root.sh and build.sh): Open MPI
# 5.0 + btl pvrdma selected the way users select it (`module load
# pvrdma-mpi/btl`, a plain mpirun), every byte checked by mpi_check; stock
# UCX 1.18's own verbs transport beside it, for the stack's defaults.
. "$(dirname "$0")/lib.sh"
MPI_TESTS=$TB_PROJECT_DIR/build-stack2/mpi

ver=$(ompi_info --version 2>/dev/null | head -n 1)
[[ $ver == *" v5."* ]] && pass "the guests run Open MPI 5 ($ver, Debian $(cat /etc/debian_version))" ||
    fail "the guests run Open MPI 5" "ompi_info --version says '$ver'"
check_output "BTL pvrdma listed by Open MPI 5's ompi_info" 60 'MCA btl: pvrdma' ompi_info
dep=$(dpkg-query -W -f='${Version} ${Depends}' pvrdma-mpi-btl 2>/dev/null)
[[ $dep == *"libopenmpi40 (= "* ]] && pass "package pvrdma-mpi-btl installed, pinned to Debian 13's Open MPI ($dep)" ||
    fail "package pvrdma-mpi-btl installed, pinned to Debian 13's Open MPI" "dpkg says '$dep'"
# the doctor on this stack: the plugin loads, built against the installed 5.0
log=$(log_name "pvrdma-doctor on Open MPI 5")
pvrdma-doctor >"$log" 2>&1
if grep -qE '^PASS +Open MPI plugin: .*built against Open MPI 5\.[0-9.]+, installed 5\.' "$log" &&
   grep -qE '^pvrdma-doctor: [0-9]+ PASS, [0-9]+ WARN, 0 FAIL' "$log"; then
    pass "pvrdma-doctor on Open MPI 5: $(grep -E '^PASS +Open MPI plugin' "$log" | sed 's/.*(ompi_info: //; s/).*//'); $(tail -n 1 "$log")"
else
    fail "pvrdma-doctor on Open MPI 5" "$(grep -E '^(FAIL|pvrdma-doctor:)' "$log" | tr '\n' ' ') (log: $log)"
fi

set +u; . /usr/share/modules/init/bash; set -u
set +u; module load pvrdma-mpi/btl >"$LOGDIR/module-load.log" 2>&1; rc=$?; set -u
if [ $rc = 0 ] && [ "${OMPI_MCA_btl:-}" = pvrdma,sm,self ] && [ -n "${OMPI_MCA_mca_base_component_path:-}" ]; then
    pass "module load pvrdma-mpi/btl (btl $OMPI_MCA_btl, component path $OMPI_MCA_mca_base_component_path)"
else
    fail "module load pvrdma-mpi/btl" "exit $rc, OMPI_MCA_btl='${OMPI_MCA_btl:-}', component path '${OMPI_MCA_mca_base_component_path:-}': $(tail -n 2 "$LOGDIR/module-load.log" | tr '\n' ' ')"
fi

# 2 x 2 ranks: pvrdma between the guests, sm within each (plain mpirun);
# p2p's messages go up to 4 MiB (rendezvous), all checked byte by byte.
name="Open MPI 5 btl pvrdma 2x2"
OMPI_MCA_btl_base_verbose=10 mpi_check_run "$name" 900 -np 4 --map-by node --oversubscribe -- p2p allpairs alltoallv
log=$(log_name "$name")
grep -q 'Using pvrdma btl for send to .* on node node2' "$log" &&
    pass "$name: traffic to node2 went over btl pvrdma" ||
    fail "$name: traffic to node2 went over btl pvrdma" "no 'Using pvrdma btl ... node2' (log: $log)"
check_ops "$name: rendezvous by RDMA WRITE" 'w > 0 && lw >= 1048576' "$log"
peers=$(counters_max btl_close peers_max "$log")
[ "${peers:-0}" -ge 2 ] && pass "$name: each rank connected to the 2 ranks on the other guest ($peers peers)" ||
    fail "$name: each rank connected to the 2 ranks on the other guest" "peers_max ${peers:-none} (log: $log)"
n=$(grep -c 'bad prefix' "$log")
[ "$n" = 0 ] && pass "$name: no component-path warnings from PMIx" ||
    fail "$name: no component-path warnings from PMIx" "$n 'bad prefix' lines (log: $log)"
set +u; module unload pvrdma-mpi/btl; set -u

# Stock UCX 1.18 over its own rc_verbs on the same guests (our UCX transport
# is not built on this stack yet: docs/stacks.md).  UCX 1.18 wants an
# auxiliary transport for rc_verbs' wire-up ("no auxiliary transport" with
# rc_verbs,self alone): ud_verbs.
mpi_ucx_args uargs rc_verbs,ud_verbs,self rxe0:1
name="Open MPI 5 pml ucx, UCX 1.18 rc_verbs (stock) 2x1"
mpi_check_run "$name" 600 -np 2 --map-by node "${uargs[@]}" -- p2p large
bed_summary
