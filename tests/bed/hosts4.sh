#!/bin/bash
# The bed with 4 guests: every node reachable by mpirun, then (same boot)
# the all-to-all of tests/bed/scale.sh over both transports at 4 x 8 ranks
# with a connection budget of 4 (SCALE_RPN / SCALE_BTL_RPN change the ranks
# per node).  The all pairs without a budget (scale.sh sections btl and
# ucx: every rank connected to all 31 others at once) are not run here
# since the budget jobs took their place (CI's time: ucx 2026-11-29, btl
# 2026-12-02): the budget jobs exchange the same all pairs, and at its peak
# a rank held 28-31 connections; 15 peers at once without a budget run on
# the nested tier, 31 in tests/run --only extended (SCALE_ONLY="btl ucx")
# and paper.sh.
#
# The scale runs use an RC ACK timeout of 2.1 s (exponent 19) instead of the
# transports' 268 ms: with 32 ranks on four 1-vCPU emulated guests an ACK
# often takes longer than 268 ms, and each such wait made rxe resend what had
# arrived (2026-11-25, 4 x 8: ~21,000 retries and ~23,000 duplicate requests
# per node, 164 sequence NAKs); in that resend path rxe then handed both
# transports impossible receives (a 65537-byte MPI message received as 73416
# bytes over the BTL, UCP's 'remaining=137 length=8176' assertion and a
# 'remote invalid request' NAK over pml ucx).  With 19: ~1,200-1,700
# retries per node.  A real PVRDMA fabric answers in microseconds; the
# transports' defaults stay.
#
# The BTL runs at 4 x 8 too, with its defaults: the RDMA WRITE rendezvous
# (issue 34: users run it; copies are what the nested tier tests).  Before
# the stall kick it passed 2 of 3 runs at 4 x 8: on a few QPs one
# unsignalled SEND never reached its peer, QPs in RTS at both ends, rxe
# neither resent nor failed it (docs/limits.md); with the kick
# (btl_pvrdma_stall_kick) 8 of 8 runs passed (2026-11-25: copies 6, WRITE
# rendezvous 2).  The small-CQ and
# CQ-too-small runs stay at 4 x 4 (SCALE_LIMIT_RPN): they test the CQ plan
# and its error, the same at any size.
. "$(dirname "$0")/lib.sh"
export SCALE_RPN=${SCALE_RPN:-8} SCALE_BTL_RPN=${SCALE_BTL_RPN:-8}
export SCALE_LIMIT_RPN=${SCALE_LIMIT_RPN:-4}
export SCALE_ONLY=${SCALE_ONLY:-budget ucxbudget smallcq toosmall}
export SCALE_RC_TIMEOUT=${SCALE_RC_TIMEOUT:-19} SCALE_BTL_WRITE=${SCALE_BTL_WRITE:-auto}
# A job's own limit well inside the suite's 1800 s (tests/run): each budget
# job took 100-150 s with one bed, up to 460 s with two beds on the 2 cores
# (2026-12-02), and with scale.sh's 900 s a hung
# one ran the suite into tb's timeout in CI (stop 53) with no check saying
# which job or where its ranks were; now the job fails by name with
# stack_digest's line.
export SCALE_TIMEOUT=${SCALE_TIMEOUT:-600}
# UCX_PVRDMA_CONN_TIMEOUT 120 s instead of 30 s for the pml ucx jobs: with
# 8 ranks polling on each 1-vCPU emulated guest, rxe's UD sends (done in
# softirq context, which those ranks starve) completed with gaps of up to
# 24 s, every rank's 64 UD send slots stayed full and 32-855 connection
# messages per rank were never sent; connections then timed out with their
# peers alive (2026-12-02: 7 of 8 runs with two beds on the 2 cores; now and
# then with one, as in CI).  With 120 s two beds passed (results/
# 2026-12-02-ud-send-slots.md).  A real PVRDMA device
# sends a datagram in microseconds; the transport's default stays.
export SCALE_CONN_TIMEOUT=${SCALE_CONN_TIMEOUT:-120s}
name="mpirun btl tcp,self across 4 guests"
check "$name" 240 "${MPIRUN[@]}" -np 4 --map-by node --mca btl tcp,self hostname
for i in 1 2 3 4; do
    grep -qx "node$i" "$(log_name "$name")" && pass "node$i answered" || fail "node$i answered" "missing from output"
done
# many peers per rank over both transports (its checks count as ours)
bash "$(dirname "$0")/scale.sh" || BED_FAILED=1
# (the BTL's 4 hosts x 2 ranks, mpi_check's whole list at 8 ranks, moved to
# tests/bed/extended.sh on 2026-12-02: 59 s of a slow CI machine's run; the
# 4 x 8 jobs above cross the same guests with same-host pairs on the device)
# an eavesdropper's replays from a guest outside the job (issue 37)
bash "$(dirname "$0")/replay.sh" || BED_FAILED=1
bed_summary
