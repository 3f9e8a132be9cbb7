#!/bin/bash
# run_weak_scaling.sh: OpenFOAM icoFoam cavityFine weak scaling across MPI
# transports, reported like the VMware PVRDMA study (Table 1, Figures 14-17).
#
# Usage:
#   run_weak_scaling.sh                  local default: the mini ladder on the
#                                        project's test bed (guests as hosts)
#   run_weak_scaling.sh --hostfile FILE  cluster mode (also inside a Slurm job)
# Options:
#   --cases LIST           comma list of cases (validation/cases.conf); paper
#                          cases: n2np40,n4np80,n8np160 (cluster default);
#                          mini ladder n1np1,n2np2,n4np4 (local default)
#   --transports LIST      comma list of profiles: names in validation/transports/
#                          or paths of your own .conf files;
#                          default: pvrdma,pvrdma-ucx,tcp,passthrough
#   --ranks-per-host N     default 20 (cluster), 1 (local bed)
#   --repeat N             runs per case and transport; report min and median
#   --out DIR              results (default ./weak-scaling-out); in cluster mode
#                          it must be on a filesystem every host sees
#   --run-timeout S        limit per mpirun (default 3600 cluster, 900 bed)
#   --pvrdma               local bed only: the PVRDMA, PVRDMA-UCX and TCP columns
#                          run on nested guests whose only RDMA device is a
#                          real vmw_pvrdma0 (tb run --pvrdma), the Passthrough
#                          column runs the same btl pvrdma job on the outer
#                          guests' rxe0, the device vmw_pvrdma0 is backed by
#                          (profile passthrough-bed); two bed sessions
#   --list                 list cases and transports, then exit
#   -h, --help
set -u -o pipefail
VDIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
TOP=$(cd "$VDIR/.." && pwd)
. "$VDIR/lib/case.sh"
. "$VDIR/lib/report.sh"

die() { echo "run_weak_scaling: error: $*" >&2; exit 2; }
say() { echo "run_weak_scaling: $*"; }
usage() { sed -n '2,27s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

CASES="" TRANSPORTS="pvrdma,pvrdma-ucx,tcp,passthrough" RPH="" PVRDMA_TIER=0 REPEAT=1 OUT=./weak-scaling-out
HOSTFILE="" RUN_TIMEOUT="" INNER=0 BED_LABEL=""
while [ $# -gt 0 ]; do
    case $1 in
        --cases) CASES=${2:-}; shift 2 ;;
        --transports) TRANSPORTS=${2:-}; shift 2 ;;
        --ranks-per-host) RPH=${2:-}; shift 2 ;;
        --repeat) REPEAT=${2:-}; shift 2 ;;
        --out) OUT=${2:-}; shift 2 ;;
        --hostfile) HOSTFILE=${2:-}; shift 2 ;;
        --run-timeout) RUN_TIMEOUT=${2:-}; shift 2 ;;
        --pvrdma) PVRDMA_TIER=1; shift ;;
        --bed-inner) INNER=1; shift ;;          # internal: running on the bed's node1
        --bed-label) BED_LABEL=${2:-}; shift 2 ;;
        --list) LIST=1; shift ;;
        -h|--help) usage 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

# --- cases and transports -------------------------------------------------------
case_field() {  # NAME FIELD(2..7)
    awk -v n="$1" -v f="$2" '$1 == n && $1 !~ /^#/ { print $f; found = 1 } END { exit !found }' "$VDIR/cases.conf"
}
all_cases() { awk '$1 !~ /^#/ && NF >= 7 { printf "%s%s", sep, $1; sep = "," }' "$VDIR/cases.conf"; }
all_transports() { ls "$VDIR"/transports/*.conf | xargs -n1 basename | sed 's/\.conf$//' | paste -sd, -; }
# A transport is a profile name (validation/transports/NAME.conf) or the path
# of a site's own profile file.
profile_file() { case $1 in */*|*.conf) echo "$1" ;; *) echo "$VDIR/transports/$1.conf" ;; esac; }
load_profile() {  # NAME: sets column description mpirun_args verify_regex requires
    column="" description="" mpirun_args=() verify_regex="" requires=""
    # shellcheck disable=SC1090
    . "$(profile_file "$1")" || return 1
    [ -n "$column" ] && [ -n "$verify_regex" ] || return 1
}

if [ "${LIST:-0}" = 1 ]; then
    echo "cases (validation/cases.conf):"
    grep -vE '^#|^$' "$VDIR/cases.conf" | awk '{ printf "  %-8s %d hosts, %3d ranks, mesh (%s %s 1), deltaT %s [%s]\n", $1, $2, $3, $4, $5, $6, $7 }'
    echo "transports (validation/transports/):"
    for t in $(all_transports | tr , ' '); do load_profile "$t" && printf '  %-12s %s\n' "$t" "$description"; done
    exit 0
fi

# Mode: cluster when a hostfile or a Slurm allocation is there, else the bed.
if [ -z "$HOSTFILE" ] && [ -n "${SLURM_JOB_NODELIST:-}" ] && [ $INNER = 0 ]; then
    command -v scontrol >/dev/null || die "inside Slurm but scontrol is missing: pass --hostfile"
    mkdir -p "$OUT" && HOSTFILE=$OUT/hostfile.slurm
    scontrol show hostnames "$SLURM_JOB_NODELIST" >"$HOSTFILE" || die "scontrol show hostnames failed"
fi
MODE=cluster
[ -z "$HOSTFILE" ] && MODE=bed
[ $INNER = 1 ] && MODE=inner
if [ -z "$CASES" ]; then
    [ $MODE = cluster ] && CASES=n2np40,n4np80,n8np160 || CASES=n1np1,n2np2,n4np4
fi
[ -n "$RPH" ] || { [ $MODE = cluster ] && RPH=20 || RPH=1; }
[ -n "$RUN_TIMEOUT" ] || { [ $MODE = cluster ] && RUN_TIMEOUT=3600 || RUN_TIMEOUT=900; }

# Every bad input is refused here, before anything runs.
[ $PVRDMA_TIER = 0 ] || [ $MODE = bed ] || [ $MODE = inner ] ||
    die "--pvrdma is for the local test bed (no --hostfile, no Slurm allocation)"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer, got '$REPEAT'"
[[ $RPH =~ ^[1-9][0-9]*$ ]] || die "--ranks-per-host must be a positive integer, got '$RPH'"
[[ $RUN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--run-timeout must be a positive integer, got '$RUN_TIMEOUT'"
for c in ${CASES//,/ }; do
    case_field "$c" 2 >/dev/null || die "unknown case '$c' (known: $(all_cases))"
done
for t in ${TRANSPORTS//,/ }; do
    [ -f "$(profile_file "$t")" ] || die "unknown transport '$t' (known: $(all_transports), or a profile file's path)"
    load_profile "$t" || die "transport profile $(profile_file "$t") is invalid (needs column and verify_regex)"
done
hosts_needed() {  # CASE: hosts for its ranks at RPH ranks per host
    local r; r=$(case_field "$1" 3); echo $(( (r + RPH - 1) / RPH ))
}
MAXH=0
for c in ${CASES//,/ }; do h=$(hosts_needed "$c"); [ "$h" -gt $MAXH ] && MAXH=$h; done
if [ $MODE != bed ]; then
    [ -f "$HOSTFILE" ] || die "hostfile '$HOSTFILE' not found"
    mapfile -t HOSTS < <(awk '$1 !~ /^#/ && NF { print $1 }' "$HOSTFILE" | awk '!seen[$0]++')
    [ ${#HOSTS[@]} -ge $MAXH ] || die "hostfile $HOSTFILE has ${#HOSTS[@]} host(s); cases $CASES need $MAXH at $RPH ranks per host"
else
    [ $MAXH -le 8 ] || die "the local bed carries at most 8 guests; cases $CASES need $MAXH (use --ranks-per-host)"
fi
command -v icoFoam >/dev/null || die "OpenFOAM not found (apt-get install openfoam openfoam-examples)"
[ -d "$CAVITY_TUTORIAL" ] || die "cavity tutorial not found at $CAVITY_TUTORIAL (apt-get install openfoam-examples)"
mkdir -p "$OUT/logs" "$OUT/cases" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

# --- build cases (on the launching machine, natively) ---------------------------
if [ $MODE != inner ]; then
    for c in ${CASES//,/ }; do
        say "preparing case $c (mesh $(case_field "$c" 4)x$(case_field "$c" 5), $(case_field "$c" 3) ranks)"
        build_case "$OUT/cases" "$(case_field "$c" 4)" "$(case_field "$c" 5)" "$(case_field "$c" 6)" "$(case_field "$c" 3)" >/dev/null ||
            die "could not build case $c"
    done
fi

# --- bed mode: boot guests and run this script on node1 -------------------------
bed_session() {  # LABEL TRANSPORTS [--pvrdma]: run TRANSPORTS on node1 of one bed session
    local label=$1 transports=$2 slack=300
    shift 2
    [ $# -gt 0 ] && slack=600   # nested guests boot slower
    say "running ${transports//,/, } on the $label"
    "$TOP/scripts/testbed/tb" run "$@" --hosts "$MAXH" --mem 1536 --out "$OUT" \
        --timeout $(( RUN_TIMEOUT * 3 * $(echo "${CASES//,/ }" | wc -w) * $(echo "${transports//,/ }" | wc -w) * REPEAT + slack )) \
        -- "$VDIR/run_weak_scaling.sh" --bed-inner --out "$OUT" --cases "$CASES" --transports "$transports" \
           --ranks-per-host "$RPH" --repeat "$REPEAT" --run-timeout "$RUN_TIMEOUT" --hostfile /run/tb/hostfile
}
if [ $MODE = bed ]; then
    day=$(date -u +%Y-%m-%d)
    rm -f "$OUT/results.csv"
    rc=0
    if [ $PVRDMA_TIER = 1 ]; then
        # The paper's pair on one machine: the same MPI job inside VMs with a
        # PVRDMA device, and on the device their hypervisor would pass through.
        nested="nested guests on the local test bed: $MAXH KVM guest(s) inside TCG guests, vmw_pvrdma0 backed by rxe0 (tb run --pvrdma), $day"
        outer="local test bed: $MAXH QEMU guest(s) (TCG), SoftRoCE rxe0 (the outer guests of the --pvrdma tier), $day"
        inner_t=$(echo "${TRANSPORTS//,/ }" | tr ' ' '\n' | grep -vx 'passthrough\|passthrough-bed' | paste -sd, -)
        label=""
        if [ -n "$inner_t" ]; then
            bed_session "$nested" "$inner_t" --pvrdma || rc=$?
            label="columns other than Passthrough: $nested"
        fi
        if echo ",$TRANSPORTS," | grep -qE ',passthrough(-bed)?,'; then
            bed_session "$outer" passthrough-bed || rc=$?
            label="Passthrough column: $outer, btl pvrdma directly on rxe0${label:+. $label}"
        fi
    else
        label="local test bed: $MAXH QEMU guest(s) (TCG), SoftRoCE rxe0, $day"
        bed_session "$label" "$TRANSPORTS" || rc=$?
    fi
    [ -f "$OUT/results.csv" ] || die "the bed run produced no results (tb exit $rc)"
    write_report "$OUT" "$label"
    exit $rc
fi

# --- runs -----------------------------------------------------------------------
. "$VDIR/lib/runs.sh"
run_all
if [ $MODE = cluster ]; then
    write_report "$OUT" "cluster: ${HOSTS[*]:0:$MAXH}, $RPH ranks per host, $(date -u +%Y-%m-%d)"
fi
