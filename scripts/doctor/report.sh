# shellcheck shell=bash
# pvrdma-doctor: recording check results and printing them (text or JSON).
# Sourced by scripts/pvrdma-doctor.

R_CHECK=() R_STATUS=() R_SEEN=() R_REMEDY=()
N_PASS=0 N_WARN=0 N_FAIL=0

# result STATUS CHECK SEEN [REMEDY]: record one check; in text mode print it
# at once, so a slow check (ompi_info, perftest) shows progress.
result() {
    local status=$1 check=$2 seen=$3 remedy=${4:-}
    R_STATUS+=("$status") R_CHECK+=("$check") R_SEEN+=("$seen") R_REMEDY+=("$remedy")
    case $status in
        PASS) N_PASS=$((N_PASS + 1)) ;;
        WARN) N_WARN=$((N_WARN + 1)) ;;
        *)    N_FAIL=$((N_FAIL + 1)) ;;
    esac
    [ "$OPT_JSON" = 1 ] && return 0
    printf '%-4s  %s: %s\n' "$status" "$check" "$seen"
    # A PASS may carry a hint; WARN and FAIL always say what to do.
    [ -n "$remedy" ] && printf '      remedy: %s\n' "$remedy"
    return 0
}

# say MSG: progress and --fix actions go to stderr, never into the results.
say() { echo "pvrdma-doctor: $*" >&2; }

# json_str STRING: STRING as a JSON string literal (RFC 8259 escapes).
json_str() {
    local s=$1 out="" c i
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/\\n}
    s=${s//$'\t'/\\t}
    s=${s//$'\r'/\\r}
    # Any other control character (rare: tool output) as \u00XX.
    if [[ $s == *[$'\x01'-$'\x1f\x7f']* ]]; then
        local LC_ALL=C
        for ((i = 0; i < ${#s}; i++)); do
            c=${s:i:1}
            if [[ $c == [$'\x01'-$'\x1f\x7f'] ]]; then
                printf -v c '\\u%04x' "'$c"
            fi
            out+=$c
        done
        s=$out
    fi
    printf '"%s"' "$s"
}

# report_json: all results as a JSON array of {check, status, seen, remedy}.
report_json() {
    local i n=${#R_CHECK[@]}
    printf '[\n'
    for ((i = 0; i < n; i++)); do
        printf '  {"check": %s, "status": %s, "seen": %s, "remedy": %s}' \
            "$(json_str "${R_CHECK[i]}")" "$(json_str "${R_STATUS[i]}")" \
            "$(json_str "${R_SEEN[i]}")" "$(json_str "${R_REMEDY[i]}")"
        [ $((i + 1)) -lt "$n" ] && printf ','
        printf '\n'
    done
    printf ']\n'
}

report_summary() {
    [ "$OPT_JSON" = 1 ] && { report_json; return; }
    echo "pvrdma-doctor: $N_PASS PASS, $N_WARN WARN, $N_FAIL FAIL"
}
