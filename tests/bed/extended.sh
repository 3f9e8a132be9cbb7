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
. "$(dirname "$0")/lib.sh"
BTL_ONLY=4x2osc bash "$(dirname "$0")/btl.sh" || BED_FAILED=1
bed_summary
