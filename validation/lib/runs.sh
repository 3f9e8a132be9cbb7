# shellcheck shell=bash
# Running and checking the weak-scaling runs. Sourced by run_weak_scaling.sh
# (uses its CASES TRANSPORTS RPH REPEAT OUT HOSTS RUN_TIMEOUT and helpers).
# Appends one row per run to $OUT/results.csv.

CSV_HEADER="case,hosts,ranks,mesh,deltaT,transport,column,repeat,status,seconds,solver_seconds,signature,reason,log"

# csv_field TEXT: a CSV field; commas become semicolons so plain
# comma-splitting (awk -F,) reads the file.
csv_field() { printf '%s' "${1//,/;}" | tr '\n' ' '; }

# A hostfile with the first N hosts, RPH slots each.
sub_hostfile() {
    local n=$1 f=$OUT/hostfiles/h$1-rph$RPH
    mkdir -p "$OUT/hostfiles"
    printf '%s\n' "${HOSTS[@]:0:$n}" | sed "s/\$/ slots=$RPH/" >"$f"
    echo "$f"
}

# The final solver state: last Courant line and last pressure solve.
solver_signature() {
    { grep -E '^Courant Number' "$1" | tail -n 1; grep -E 'Solving for p,' "$1" | tail -n 1; } |
        md5sum | cut -c1-12
}

fmt_s() { printf '%d:%02d' $(( $1 / 60 )) $(( $1 % 60 )); }

# run_one CASE TRANSPORT REPEAT: one mpirun, checked; appends a CSV row.
run_one() {
    local c=$1 t=$2 r=$3 hosts ranks nx ny dt dir hf log status reason secs solver sig t0 t1 rc why
    hosts=$(hosts_needed "$c") ranks=$(case_field "$c" 3)
    nx=$(case_field "$c" 4) ny=$(case_field "$c" 5) dt=$(case_field "$c" 6)
    dir=$(build_case "$OUT/cases" "$nx" "$ny" "$dt" "$ranks") || return 1
    load_profile "$t"
    log=$OUT/logs/$c-$(basename "${t%.conf}")-$r.log
    status=ok reason="" secs="" solver="" sig=""
    if [ -n "$requires" ] && ! why=$(bash -c "$requires" 2>&1); then
        status=N/A reason="cannot run here: ${why:-requirement not met}"
        echo "$reason" >"$log"
    else
        hf=$(sub_hostfile "$hosts")
        local par=(-parallel)
        [ "$ranks" = 1 ] && par=()
        local root=()
        [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
        t0=$(date +%s.%N)
        # VALIDATION_RUN_WRAPPER: a command (word-split) the mpirun runs
        # under, told which run it is by VALIDATION_RUN_ID (scripts/bench/
        # exits meters each OpenFOAM run with it)
        # shellcheck disable=SC2086
        ( cd "$dir" && VALIDATION_RUN_ID="$c-$(basename "${t%.conf}")-$r" \
              timeout -k 30 "$RUN_TIMEOUT" ${VALIDATION_RUN_WRAPPER:-} mpirun "${root[@]}" --hostfile "$hf" -np "$ranks" \
              -x WM_PROJECT_DIR "${mpirun_args[@]}" icoFoam "${par[@]}" -case "$dir" ) >"$log" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
        solver=$(sed -n 's/^ExecutionTime = \([0-9.e+-]*\) s.*/\1/p' "$log" | tail -n 1)
        if [ $rc = 124 ] || [ $rc = 137 ]; then
            status=FAILED reason="timed out after ${RUN_TIMEOUT}s"
        elif [ $rc != 0 ]; then
            status=FAILED reason="mpirun exit $rc: $(grep -m1 -iE 'error|abort|not found|unable' "$log" | cut -c1-160)"
        elif ! grep -qx 'End' "$log"; then
            status=FAILED reason="log does not end with End"
        elif [ "$hosts" -gt 1 ] && ! grep -qE -- "$verify_regex" "$log"; then
            status=FAILED reason="unverified: no proof in the log that $t carried the traffic (/$verify_regex/)"
        else
            sig=$(solver_signature "$log")
        fi
    fi
    [ "$status" = ok ] || secs=""
    {
        printf '%s,%s,%s,%s,%s,%s,' "$c" "$hosts" "$ranks" "($nx $ny 1)" "$dt" "$(basename "${t%.conf}")"
        printf '%s,%s,%s,%s,%s,%s,' "$(csv_field "$column")" "$r" "$status" "$secs" "$solver" "$sig"
        printf '%s,%s\n' "$(csv_field "$reason")" "$(csv_field "$log")"
    } >>"$OUT/results.csv"
    LAST_STATUS=$status LAST_SECS=$secs LAST_REASON=$reason
}

# Expected seconds for a run: the same case's last ok time, else twice the
# previous case's (the weak-scaling rules double work per rank per level).
estimate() {
    local c=$1 prev=$2 e
    e=$(awk -F, -v c="$c" '$1 == c && $9 == "ok" { v = $10 } END { if (v != "") printf "%d", v }' "$OUT/results.csv")
    [ -z "$e" ] && [ -n "$prev" ] && e=$(awk -F, -v c="$prev" '$1 == c && $9 == "ok" { v = $10 } END { if (v != "") printf "%d", 2 * v }' "$OUT/results.csv")
    echo "${e:-}"
}

run_all() {
    local total=0 i=0 start c t r prev="" est left e
    [ -f "$OUT/results.csv" ] || echo "$CSV_HEADER" >"$OUT/results.csv"
    for c in ${CASES//,/ }; do for t in ${TRANSPORTS//,/ }; do total=$((total + REPEAT)); done; done
    start=$(date +%s)
    for c in ${CASES//,/ }; do
        for t in ${TRANSPORTS//,/ }; do
            for r in $(seq 1 "$REPEAT"); do
                i=$((i + 1))
                est=$(estimate "$c" "$prev")
                say "[$i/$total] $c $t run $r: running (elapsed $(fmt_s $(( $(date +%s) - start )))${est:+, estimate ${est}s})"
                run_one "$c" "$t" "$r"
                left=""
                e=$(estimate "$c" "$prev")
                [ -n "$e" ] && left=", ~$(fmt_s $(( e * (total - i) ))) left"
                say "[$i/$total] $c $t run $r: $LAST_STATUS${LAST_SECS:+ ${LAST_SECS}s}${LAST_REASON:+ ($LAST_REASON)}$left"
            done
        done
        prev=$c
    done
}
