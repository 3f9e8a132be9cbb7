#!/bin/bash
# tests/bed/extended.sh: the checks that left CI's run to fit a slow CI
# machine (2026-11-29: a 2-core machine whose bed runs 2.5 x slower than
# the usual one needed about 2.3 hours for the README test command; CI
# allows 90 minutes).  Each covers more ranks or more bytes of a path that
# a CI suite already runs; none is the only test of a code path.  Run it by
# name: tests/run --only extended (4 guests; 358 s on that slow machine,
# 2026-11-29).
#   - btl.sh 4x2osc: one-sided MPI over osc rdma and the BTL at 4 x 2 ranks
#     (CI: the same at 2 x 2, btl suite)
#   - btl.sh 4x2: mpi_check's whole list over the BTL at 4 x 2 ranks (left
#     hosts4 2026-12-02: 59 s of a slow machine's run; CI: the 2 x 2 runs
#     of the btl suite, hosts4's 4 x 8 all-pairs and Alltoallv jobs)
#   - ucx.sh's UCX_EXTENDED_CHECKS: one-sided MPI over osc ucx and pml ucx,
#     4 ranks (2 x 2 on the ucx suite's bed; one per guest on this one;
#     left CI 2026-12-02: 139 s of a slow machine's run; CI:
#     UCT put/get/am over the transport in the ucx suite, one-sided MPI
#     over the BTL in the btl suite)
#   - hosts4.sh with scale.sh's sections btl and ucx: every rank connected
#     to all 31 others at once at 4 x 8, no budget, per transport (CI:
#     hosts4's budget jobs at 4 x 8; the BTL's left CI 2026-12-02)
#   - faults.sh's kill -9 cases (CI: its link-down cases, doctor suite)
. "$(dirname "$0")/lib.sh"
SCALE_ONLY="btl ucx" bash "$(dirname "$0")/hosts4.sh" || BED_FAILED=1
FAULTS_ONLY="btl-kill ucx-kill" bash "$(dirname "$0")/faults.sh" || BED_FAILED=1
BTL_ONLY="4x2 4x2osc" bash "$(dirname "$0")/btl.sh" || BED_FAILED=1
PVRDMA_BED_SKIP='' PVRDMA_BED_ONLY='^mpi( pml ucx 2x2 one-sided.*)?$' \
    bash "$(dirname "$0")/ucx.sh" || BED_FAILED=1
bed_summary
