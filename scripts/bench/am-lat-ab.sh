#!/bin/bash
# UCT am_lat A/B on node1 of a 2-guest bed: pvrdma with its defaults and with
# credits returned by WRITE only (UCX_PVRDMA_CREDIT_IMM=n) against stock
# rc_verbs, round by round back to back (drifting machine load hits every
# configuration alike), every other round in reverse order (so that no
# configuration always runs first or last in a round).
#   scripts/testbed/tb run --hosts 2 -- bash scripts/bench/am-lat-ab.sh
# (TB_PASS_ENV="AB_ROUNDS AB_ITERS" passes these two into the bed)
# AB_ROUNDS (5) rounds of AB_ITERS (3000) iterations; prints one "AB" line
# per run (ucx_perftest's Final line) and the medians per configuration.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/bed/lib.sh"
. "$TOP/tests/ucx/ucx_lib.sh"
. "$TOP/scripts/bench/lib.sh"   # median
N=${AB_ITERS:-3000} ROUNDS=${AB_ROUNDS:-5}
CONFIGS=("pvrdma|" "pvrdma|UCX_PVRDMA_CREDIT_IMM=n" "rc_verbs|")
RES=$(log_name am-lat-ab)
: >"$RES"
for round in $(seq 1 "$ROUNDS"); do
    order=("${!CONFIGS[@]}")
    [ $((round % 2)) = 0 ] && mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
    for i in "${order[@]}"; do
        tl=${CONFIGS[$i]%%|*} env=${CONFIGS[$i]#*|}
        ucx_pair "ab_${i}_$round" 120 "$env" -t am_lat -x "$tl" -d "$DEV" -D short -s 8 -n "$N" -w 100
        echo "AB $round $tl [$env] $(grep '^Final:' "$(log_name "ab_${i}_$round")" | tail -n 1)" | tee -a "$RES"
    done
done
# medians per configuration (Final: iterations, latency 50%ile, average, ...)
final_fields() {  # N: field N after "Final:" of every row in $rows
    echo "$rows" | awk -v n="$1" '{ for (j = 1; j <= NF; j++) if ($j == "Final:") print $(j + n) }'
}
for c in "${CONFIGS[@]}"; do
    tl=${c%%|*} env=${c#*|}
    rows=$(grep -F "AB " "$RES" | grep -F " $tl [$env] ")
    # shellcheck disable=SC2046 # one number per line
    echo "median $tl [$env]: typical $(median $(final_fields 2)) us, average $(median $(final_fields 3)) us"
done
