#!/bin/bash
# The bed with 4 guests: every node reachable by mpirun, then (same boot)
# 4 x 4 ranks with every rank connected to all 15 others over both transports
# (tests/bed/scale.sh; SCALE_RPN=8 SCALE_BTL_RPN=8 for 4 x 8).
. "$(dirname "$0")/lib.sh"
name="mpirun btl tcp,self across 4 guests"
check "$name" 240 "${MPIRUN[@]}" -np 4 --map-by node --mca btl tcp,self hostname
for i in 1 2 3 4; do
    grep -qx "node$i" "$(log_name "$name")" && pass "node$i answered" || fail "node$i answered" "missing from output"
done
# many peers per rank over both transports (its checks count as ours)
bash "$(dirname "$0")/scale.sh" || BED_FAILED=1
bed_summary
