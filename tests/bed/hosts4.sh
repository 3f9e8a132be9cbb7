#!/bin/bash
# The bed with 4 guests: every node reachable by mpirun, then (same boot)
# 4 x 8 ranks with every rank connected to all 31 others over both transports
# (tests/bed/scale.sh; SCALE_RPN / SCALE_BTL_RPN change the ranks per node).
#
# The scale runs use an RC ACK timeout of 2.1 s (exponent 19) instead of the
# transports' 268 ms: with 32 ranks on four 1-vCPU emulated guests an ACK
# often takes longer than 268 ms, and each such wait made rxe resend what had
# arrived (2026-11-25, 4 x 8: ~21,000 retries and ~23,000 duplicate requests
# per node, 164 sequence NAKs); in that resend path rxe then handed both
# transports impossible receives (a 65537-byte MPI message received as 73416
# bytes over the BTL, UCP's 'remaining=137 length=8176' assertion and a
# 'remote invalid request' NAK over pml ucx).  With 19: ~1,700 retries per
# node and both transports passed, the BTL with its RDMA WRITE rendezvous
# too (which at 268 ms had stalled in 7 of 7 runs: one WRITE rxe neither
# completed nor retried).  A real PVRDMA fabric answers in microseconds; the
# transports' defaults stay.
. "$(dirname "$0")/lib.sh"
export SCALE_RPN=${SCALE_RPN:-8} SCALE_BTL_RPN=${SCALE_BTL_RPN:-8}
export SCALE_RC_TIMEOUT=${SCALE_RC_TIMEOUT:-19} SCALE_BTL_WRITE=${SCALE_BTL_WRITE:-on}
name="mpirun btl tcp,self across 4 guests"
check "$name" 240 "${MPIRUN[@]}" -np 4 --map-by node --mca btl tcp,self hostname
for i in 1 2 3 4; do
    grep -qx "node$i" "$(log_name "$name")" && pass "node$i answered" || fail "node$i answered" "missing from output"
done
# many peers per rank over both transports (its checks count as ours); the
# small-CQ runs (per-QP receives, lowered to 16 per peer) at 4 x 4: at 4 x 8
# one stalled (2026-11-25: on a few QPs one unsignalled SEND never reached
# its peer, QPs in RTS at both ends, rxe neither resent nor failed it, see
# README Limits)
SCALE_ONLY="btl ucx" bash "$(dirname "$0")/scale.sh" || BED_FAILED=1
SCALE_ONLY="smallcq toosmall" SCALE_BTL_RPN=4 bash "$(dirname "$0")/scale.sh" || BED_FAILED=1
bed_summary
