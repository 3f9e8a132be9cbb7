#!/bin/bash
# The bed with 4 guests: every node reachable by mpirun.
. "$(dirname "$0")/lib.sh"
name="mpirun btl tcp,self across 4 guests"
check "$name" 240 "${MPIRUN[@]}" -np 4 --map-by node --mca btl tcp,self hostname
for i in 1 2 3 4; do
    grep -qx "node$i" "$(log_name "$name")" && pass "node$i answered" || fail "node$i answered" "missing from output"
done
bed_summary
