# shellcheck shell=bash
# Helpers for bed test scripts (run inside node1 by scripts/testbed/tb).
# Every check prints exactly one line: "ok - NAME" or "not ok - NAME: reason";
# tests/run counts those lines. Logs of each check go to $TB_OUT/logs/.
set -u
LOGDIR=${TB_OUT:-/tmp}/logs/$(basename "${0%.sh}")
mkdir -p "$LOGDIR"
PVRDMA_UCT_LIB=${PVRDMA_UCT_LIB:-/usr/lib/x86_64-linux-gnu/ucx/libuct_pvrdma.so.0}
MPIRUN=(mpirun --allow-run-as-root --hostfile "$TB_HOSTFILE")
BED_FAILED=0

# mpi_ucx_args ARRAY TLS DEV [OSC]: sets ARRAY to the mpirun arguments that
# run Open MPI's pml ucx over the UCX transports TLS on DEV ("rxe0:1") and
# over nothing else: btl self only; osc OSC (default ^ucx: osc ucx off; the
# one-sided checks pass "ucx").
# pml_ucx_tls/devices "any": Open MPI 4.1 enables pml ucx by default only for
# mlx devices and the rc/ud/dc transports.  Our module is preloaded only when
# TLS names pvrdma, so the stock rows run stock UCX.  ud_verbs on RoCE that
# is not Mellanox needs UCX_UD_ETH_DGID_CHECK=n (UCX before 1.19 compares the
# GID a datagram came from with one it computed from the MAC).
# The parameter files Open MPI reads under `module load pvrdma-mpi/btl`
# (modulefiles/btl.in): the package's file between the user's and Debian's.
BTL_MODULE_PARAM_FILES=$HOME/.openmpi/mca-params.conf,/usr/share/pvrdma-mpi/btl-mca-params.conf,/etc/openmpi/openmpi-mca-params.conf
mpi_ucx_args() {
    local -n _args=$1
    _args=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
           --mca btl self --mca osc "${4:-^ucx}"
           -x "UCX_TLS=$2" -x "UCX_NET_DEVICES=$3" -x UCX_WARN_UNUSED_ENV_VARS=n)
    case ,$2, in *,pvrdma,*) _args+=(-x "LD_PRELOAD=$PVRDMA_UCT_LIB") ;; esac
    # our transport's knobs set for the whole run (the tier's idle wait)
    local v
    for v in $(compgen -e | grep '^UCX_PVRDMA_'); do _args+=(-x "$v"); done
    case ,$2, in *,ud_verbs,*) _args+=(-x UCX_UD_ETH_DGID_CHECK=n) ;; esac
}

# What the node watcher (watch_nodes) did; fail() quotes it, so a check the
# watcher ended says so even when its node answers again afterwards.
BED_WATCH_LOG=$LOGDIR/bed-watch.log
rm -f "$BED_WATCH_LOG"

pass() { echo "ok - $1"; }
fail() {
    local lost watched=""
    if [ -s "$BED_WATCH_LOG" ]; then
        watched=" [$(tail -n 1 "$BED_WATCH_LOG")]"
        rm -f "$BED_WATCH_LOG"
    fi
    echo "not ok - $1: $2$watched"
    BED_FAILED=1
    [ "${BED_LOST_NODE_CHECK:-1}" = 1 ] || return 0
    lost=$(lost_node) || return 0
    echo "not ok - bed: $lost stopped answering (no ssh) by the end of the check above; the suite stops here, every later check would wait on it"
    exit 3
}

# all_nodes: the bed's nodes, from the hostfile; other_nodes: all but this one.
all_nodes() { awk '/^node/ { print $1 }' "$TB_HOSTFILE"; }
other_nodes() { awk -v me="$(hostname)" '/^node/ && $1 != me {print $1}' "$TB_HOSTFILE"; }

# (BED_LOST_NODE_CHECK=0: a suite that takes links down on purpose.)
# lost_node: prints the first other node that does not answer ssh (twice,
# BED_LOST_SSH_TIMEOUT s each, default 45: a session through node1's master
# connection to a dead node waits for that, not for ConnectTimeout) and
# succeeds; fails when all answer.  A failed check may be a node that went
# silent (a guest stalled or its network died): then every later check
# fails too, each after its own timeout.  tb keeps the consoles.
lost_node() {
    local n t=${BED_LOST_SSH_TIMEOUT:-45}
    for n in $(other_nodes); do
        timeout "$t" ssh -o ConnectTimeout=20 "$n" true 2>/dev/null ||
            timeout "$t" ssh -o ConnectTimeout=20 "$n" true 2>/dev/null ||
            { echo "$n"; return 0; }
    done
    return 1
}

# watch_nodes: from now on, a node that stops answering TCP on port 22 for 6
# rounds in a row (about two and a half minutes) and then ssh twice (lost_node)
# ends the running check (its `timeout` is signalled), so the fail() that follows finds the lost node
# without first waiting out a long timeout (up to 15 minutes).  For suites
# that never take a node's network down on purpose.  BED_WATCH_PERIOD (s,
# default 20) is the round, BED_WATCH_MISSES (default 6) the rounds; the
# bed's own self-test uses a short round, tests/bed/paper.sh many rounds.
watch_nodes() {
    (
        misses=0
        while sleep "${BED_WATCH_PERIOD:-20}"; do
            if node=$(unreachable_node); then misses=$((misses + 1)); else misses=0; fi
            [ "$misses" -ge "${BED_WATCH_MISSES:-6}" ] || continue
            misses=0
            # ssh must fail too (twice, lost_node): under the 4 x 8 load (32
            # busy ranks on four emulated vCPUs, the prober's among them) a
            # live guest missed the handshake for a minute, and ending that
            # check failed a CI run (2026-11-26)
            node=$(lost_node) || continue
            echo "$(date +%T): $node did not answer on port 22 for ${BED_WATCH_MISSES:-6} rounds of ${BED_WATCH_PERIOD:-20} s nor to ssh; the bed watcher ended the running check" >>"$BED_WATCH_LOG"
            pkill -TERM -x timeout
        done
    ) </dev/null >/dev/null 2>&1 &
    BED_WATCHER=$!
    trap 'kill "$BED_WATCHER" 2>/dev/null' EXIT
}

# unreachable_node: prints the first other node whose sshd port does not
# accept a TCP connection within 10 s; fails when all do.  (The kernel
# answers the handshake: cheap for a guest under emulation.)
unreachable_node() {
    local n
    for n in $(other_nodes); do
        timeout 10 bash -c "exec 3<>/dev/tcp/$n/22" 2>/dev/null || { echo "$n"; return 0; }
    done
    return 1
}

# log_name NAME: a file name for a check's log.
log_name() { echo "$LOGDIR/$(printf '%s' "$1" | tr -c 'A-Za-z0-9_.-' '_').log"; }


# The MPI test programs (built on the machine before the bed run: the tree
# is read-only in the guests).
MPI_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../mpi" && pwd)

# bed_program BIN WHAT: BIN, a test program of tests/fabric or tests/ucx
# built on the host by scripts/setup.sh (make -C its directory), is there
# and up to date with its sources (make -q: nothing written; a stale one
# would test old code); otherwise check "WHAT: ..." fails with the remedy.
bed_program() {
    local bin=$1 dir
    dir=$(dirname "$bin")
    [ -x "$bin" ] && make -s -q -C "$dir" "$(basename "$bin")" >/dev/null 2>&1 && return 0
    fail "$2: $(basename "$bin") built and up to date" \
        "$bin is missing or older than its sources: run make -C $dir on the host (scripts/setup.sh does)"
    return 1
}
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/bench/lib.sh"   # median

# dump_stacks: the threads of every mpi_check on every node, as gdb sees
# them (a hung job's last word: which lock, which call).  The nodes dump at
# once (each into a file of its own, printed node by node), and all of it
# ends after DUMP_STACKS_S (default 240) seconds: gdb under emulation takes
# 30-90 s a process, and one node after another (8 ranks each) outlasted
# the suite's own timeout in CI (stop 53: hosts4 ended by tb, no check
# named).
dump_stacks() {
    local n dir cmd='for p in $(pgrep -x mpi_check); do echo "--- $(hostname) pid $p"; timeout 90 gdb -p "$p" -batch -nx -ex "thread apply all bt" 2>&1 | grep -E "^(Thread|#)"; done'
    dir=$(mktemp -d)
    for n in $(all_nodes); do
        if [ "$n" = "$(hostname)" ]; then
            timeout "${DUMP_STACKS_S:-240}" bash -c "$cmd" >"$dir/$n" 2>&1 &
        else
            timeout "${DUMP_STACKS_S:-240}" ssh "$n" "$cmd" >"$dir/$n" 2>&1 &
        fi
    done
    wait
    for n in $(all_nodes); do cat "$dir/$n"; done
    rm -rf "$dir"
}

# stack_digest LOG: dump_stacks' main threads in LOG, one line: how many
# ranks were in the same place (the innermost mpi_check function < the MPI
# call < the innermost frame of ours, else frame #0).  CI keeps no logs: this
# line is what is left there of a hang.
stack_digest() {
    awk '
        function flush() {
            if (seen) n[where " < " mpi " < " (own != "" ? own : top)]++
            seen = 0; main = 0
        }
        /^--- / { flush(); next }
        /^Thread 1 / { main = 1; seen = 1; where = "?"; mpi = "?"; own = ""; top = ""; next }
        /^Thread / { main = 0; next }
        main && /^#/ {
            fn = $0
            sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, "", fn)
            sub(/ .*/, "", fn)
            if (top == "") top = fn
            if (own == "" && fn ~ /^(mca_btl_pvrdma_|uct_pvrdma_|pvrdma_common_)/) own = fn
            if (fn ~ /^P?MPI_/) mpi = fn
            if (where == "?" && fn ~ /^(test_|exchange_|check_|run$)/) where = fn
        }
        END {
            flush()
            for (k in n) printf "%s%dx %s", (c++ ? "; " : ""), n[k], k
            if (!c) printf "no stacks dumped"
        }' "$1" | cut -c1-700
}

# run_dumping T LOG CMD...: CMD (an mpirun) with its output in LOG; if it
# still runs after T seconds, dump_stacks goes into LOG before it is ended
# (TERM, then KILL 10 s later), and the status is 124, as timeout(1)'s.
run_dumping() {
    local t=$1 log=$2 pid w rc
    shift 2
    # appending (O_APPEND): the dump below goes to the end of LOG while the
    # job still writes; with ">" the job's next lines went over it at its
    # own offset (8 x 20 over UCX, 2026-12-06: a hung MPI_Finalize's
    # keepalive lines kept coming and no stack was left in the log)
    : >"$log"
    "$@" >>"$log" 2>&1 &
    pid=$!
    # the watcher ends by itself within a second of the job (killing it
    # made bash print "Terminated" after every run).  T is seconds of the
    # clock, not a count of sleeps: in a guest with 20 busy ranks per vCPU
    # 3,000 of them outlasted the bed's own timeout (8 x 20, 2026-12-04)
    (
        local end=$((SECONDS + t))
        while [ "$SECONDS" -lt "$end" ]; do
            sleep 1
            kill -0 "$pid" 2>/dev/null || exit 0
        done
        touch "$log.hung"
        echo "=== still running after ${t}s: the threads of every mpi_check (gdb)" >>"$log"
        dump_stacks >>"$log" 2>&1
        kill -TERM "$pid" 2>/dev/null
        sleep 10
        kill -KILL "$pid" 2>/dev/null
    ) &
    w=$!
    wait "$pid"
    rc=$?
    wait "$w" 2>/dev/null
    if [ -e "$log.hung" ]; then
        rm -f "$log.hung"
        rc=124
    fi
    return $rc
}

# ssh_patience COUNT: this node's ssh masters to the other nodes (through
# which mpirun's daemons run, guest-init) give a silent peer COUNT rounds of
# ServerAlive's 30 s instead of the bed's 6 before they end, and are
# restarted with it (no session may be running through them).  At 8 x 20 a
# live guest's ssh went unanswered for 3 minutes while every other guest
# sent it RDMA traffic (run 9, 2026-12-04: its heartbeat kept time, the
# master ended, mpirun took the node's daemon for lost and aborted the
# job): the bed's switch drops what a busy guest's QEMU cannot read, RC
# resends at a fixed interval and TCP backs off.  The watcher
# (watch_nodes) still ends a check whose node stopped answering.
# scale.sh calls it when BED_SSH_ALIVE_COUNT is set (paper.sh: 40).
ssh_patience() {
    local n count=$1
    sed -i "s/^\( *ServerAliveCountMax\) .*/\1 $count/" /root/.ssh/config
    for n in $(other_nodes); do
        ssh -O exit "$n" >/dev/null 2>&1
        ssh -f -N -o ControlMaster=yes -o ControlPersist=no "$n" </dev/null >/dev/null 2>&1 ||
            echo "# ssh_patience: no new ssh master to $n: its sessions connect one by one"
    done
}

# rxe_counters_dump: every node's SoftRoCE counters (the hw_counters of each
# port), one line per node and port, cumulative since the guest booted:
# what rxe itself did under the jobs (retries, duplicate requests, sequence
# NAKs, send errors).  The WRITE failures that ended 4 x 20 and 8 x 20 runs
# came with rxe resending through a starved guest's TX stalls (limits.md);
# these lines say how much resending there was.  BED_RXE_COUNTERS=1 makes
# mpi_check_run append them to each job's log (paper.sh sets it).
rxe_counters_dump() {
    local n cmd='for d in /sys/class/infiniband/*/ports/*/hw_counters; do [ -d "$d" ] || continue; p=${d%/hw_counters}; printf "%s %s:%s" "$(hostname)" "$(basename "${p%/ports/*}")" "${p##*/}"; for f in "$d"/*; do printf " %s=%s" "${f##*/}" "$(cat "$f")"; done; echo; done'
    for n in $(all_nodes); do
        if [ "$n" = "$(hostname)" ]; then
            bash -c "$cmd"
        else
            timeout 60 ssh "$n" "$cmd"
        fi
    done 2>/dev/null | sed 's/^/rxe counters since boot: /'
}

# BED_RANK_NICE N: mpi_check_run starts the ranks under `nice -n N`.  Where
# a job puts many busy ranks on one emulated vCPU (the paper's 20 per guest),
# the guest's own work (ksoftirqd, which runs SoftRoCE's and virtio-net's
# deferred packet processing, Open MPI's orted, sshd) must not wait behind
# them for its fair 1/21 share: that starvation is what stalled 4 x 20 and
# 8 x 20 (limits.md).  A real VM has no such need (one rank per vCPU).
# mpi_check_run PREFIX TIMEOUT MPIRUN-ARGS... -- PROGRAM-ARGS...
# Runs tests/mpi/mpi_check; each of its "ok - X" / "not ok - X: why" lines
# becomes a check "PREFIX: X"; the run's exit status is one more check.  A
# run still going after TIMEOUT has every rank's threads dumped (gdb) into
# its log before it is ended (run_dumping).
# A suite that selects checks by name defines want_check NAME.
mpi_check_run() {
    local prefix=$1 t=$2 log rc line margs=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do margs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    if declare -F want_check >/dev/null && ! want_check "$prefix"; then return 0; fi
    log=$(log_name "$prefix")
    local wrap=()
    [ -n "${BED_RANK_NICE:-}" ] && wrap=(nice -n "$BED_RANK_NICE")
    run_dumping "$t" "$log" "${MPIRUN[@]}" "${margs[@]}" "${wrap[@]}" "$MPI_TESTS/mpi_check" "$@"
    rc=$?
    while IFS= read -r line; do
        case $line in
            "ok - "*) pass "$prefix: ${line#ok - }" ;;
            "not ok - "*) line=${line#not ok - }
                          fail "$prefix: ${line%%:*}" "${line#*: } (log: $log)" ;;
        esac
    done < <(grep -E '^(not )?ok - ' "$log")
    line=$(grep -m1 '^mpi_check: MPI_Init took' "$log") && echo "# $prefix: ${line#mpi_check: }"
    [ -n "${BED_RXE_COUNTERS:-}" ] && rxe_counters_dump >>"$log"
    if [ $rc = 0 ]; then pass "$prefix: run exits 0"
    elif [ $rc = 124 ]; then fail "$prefix: run" "timed out after ${t}s; where the ranks' main threads were: $(stack_digest "$log") (every thread in the log: $log)"
    elif line=$(all_finalized_wo_sync "$log"); then
        pass "$prefix: run exits 0 but for Open MPI's exit-without-sync race (all $line ranks finalized, then mpirun called one 'exiting improperly': open-mpi/ompi#7833)"
    else fail "$prefix: run" "exit $rc: $(mpirun_cause "$log") (log: $log)"
    fi
}

# all_finalized_wo_sync LOG: true (printing the job's size) when mpirun's
# only complaint is a rank "exiting improperly" (exit without finalize)
# although every rank printed mpi_check's line after MPI_Finalize returned
# and none printed an error (RANK_ERROR_RE, below) or was signalled: Open
# MPI's runtime lost the race between the rank's exit and its finalize
# notice (open-mpi/ompi#7833; UCX's own CI works around it too).  A rank
# that really ended early prints no line.
all_finalized_wo_sync() {
    local n total
    grep -q 'exiting improperly' "$1" || return 1
    grep -qE "^not ok - |$RANK_ERROR_RE|Caught signal|exited on signal" "$1" && return 1
    total=$(grep -m1 -oE 'mpi_check: rank [0-9]+ of [0-9]+ finalized' "$1" | awk '{ print $5 }')
    n=$(grep -oE 'mpi_check: rank [0-9]+ of [0-9]+ finalized' "$1" | sort -u | wc -l)
    [ -n "$total" ] && [ "$n" = "$total" ] && echo "$total"
}

# mpirun_cause LOG: why an mpirun ended badly, in one line: the first errors
# a rank printed itself (UCX's "Fatal:" / "ERROR", an assertion, the BTL's
# errors, a kill), then the first line that names a rank's end (mpirun's
# own report, a caught signal) with the line after it, else the log's last
# 4 lines.  CI's logs go with its clone: this line is all that is left of a
# failure there.  RANK_ERROR_RE: the errors a rank prints itself.
RANK_ERROR_RE=' Fatal: | ERROR |Assertion|btl:pvrdma:.*(error|failed)|[Ss]egmentation fault|oom-kill|Killed'
mpirun_cause() {
    local own why
    own=$(grep -m2 -E "$RANK_ERROR_RE" "$1")
    why=$(grep -m1 -A1 -E 'mpirun (noticed|has exited|detected)|Caught signal|exited on signal' "$1")
    [ -n "$own$why" ] || why=$(grep -vE '^(not )?ok - ' "$1" | tail -n 4)
    printf '%s\n%s' "$own" "$why" | tr '\n' ' ' | sed -E 's/-{3,}//g; s/ +/ /g' | cut -c1-600
}

# relay_job NAME LOG STATUS: the job's own "ok"/"not ok" lines as checks
# "NAME: ...", and its exit status as one more (in this shell, so a failure
# counts in the suite's status)
relay_job() {
    local name=$1 log=$2 rc=$3 l
    while IFS= read -r l; do
        case $l in
            "ok - "*) pass "$name: ${l#ok - }" ;;
            *) l=${l#not ok - }; fail "$name: ${l%%:*}" "${l#*: } (log: $log)" ;;
        esac
    done < <(grep -E '^(not )?ok - ' "$log")
    [ "$rc" = 0 ] && pass "$name: job exits 0" ||
        fail "$name: job" "exit $rc: $(mpirun_cause "$log") (log: $log)"
}

# check NAME TIMEOUT CMD...: passes when CMD exits 0 within TIMEOUT seconds.
check() {
    local name=$1 t=$2 log rc
    shift 2
    log=$(log_name "$name")
    timeout -k 10 "$t" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then pass "$name"
    elif [ $rc = 124 ]; then fail "$name" "timed out after ${t}s (log: $log)"
    else fail "$name" "exit $rc: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300) (log: $log)"
    fi
    return $rc
}

# check_output NAME TIMEOUT REGEX CMD...: CMD exits 0 and its output matches REGEX (grep -E).
check_output() {
    local name=$1 t=$2 re=$3 log rc
    shift 3
    log=$(log_name "$name")
    timeout -k 10 "$t" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc != 0 ]; then fail "$name" "exit $rc: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300) (log: $log)"
    elif grep -qE -- "$re" "$log"; then pass "$name"
    else fail "$name" "output does not match /$re/ (log: $log)"
    fi
}

# check_fails NAME TIMEOUT REGEXES CMD...: CMD must fail (non-zero, not a
# timeout) and its output must match every line of REGEXES (grep -E, one
# regex per line): how bad input is expected to end.  Name the specific
# reason and the offending value, so a catch-all message or another error's
# help text does not pass.
check_fails() {
    local name=$1 t=$2 res=$3 log rc re
    shift 3
    log=$(log_name "$name")
    timeout -k 10 "$t" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then fail "$name" "succeeded but should have failed (log: $log)"; return
    elif [ $rc = 124 ] || [ $rc = 137 ]; then fail "$name" "hung: timed out after ${t}s (log: $log)"; return
    fi
    while IFS= read -r re; do
        [ -z "$re" ] || grep -qE -- "$re" "$log" ||
            { fail "$name" "failed (exit $rc) without the expected message /$re/ (log: $log)"; return; }
    done <<<"$res"
    pass "$name"
}

# The counts the transports print when they close: one machine-readable
# line per close (common/pvrdma_counters.h), "pvrdma counters: event=E
# dev=D port=P key=value ...": event btl_close (the BTL, one per rank, at
# btl_base_verbose 10), iface_close (UCX, one per iface, UCX_LOG_LEVEL=debug,
# or diag when something went wrong) and chan_close (UCX, one per passive
# channel destroyed, debug).  Tests read keys, never the wording of the
# lines for people; tests/unit/check-counter-keys fails when a key read here
# is not printed by a plugin, so always pass the keys as a literal "...".
# counters EVENT_RE "KEY..." LOG...: for every counters line of an event
# matching EVENT_RE (ERE) in the LOGs ("-": stdin), the KEYs' values on one
# line.  A line that lacks one of the KEYs (or has a non-numeric value) is
# left out and named on stderr, so a renamed key makes the caller's check
# fail for want of lines instead of comparing a placeholder.
counters() {
    local ev=$1 keys=$2
    shift 2
    grep -hE -- "pvrdma counters: event=($ev) " "$@" 2>/dev/null |
        awk -v keys="$keys" '{
            split("", v)
            for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) v[kv[1]] = kv[2]
            n = split(keys, k, " "); out = ""; bad = ""
            for (i = 1; i <= n; i++) {
                if (!(k[i] in v) || v[k[i]] !~ /^[0-9]+$/) bad = bad " " k[i]
                out = out (i > 1 ? " " : "") v[k[i]]
            }
            if (bad != "") print "counters: missing" bad " in: " $0 > "/dev/stderr"
            else print out }'
}
# counters_sum EVENT_RE "KEY..." LOG...: the KEYs summed over those lines
# (one line; nothing, and status 1, when there is no line).
counters_sum() {
    counters "$@" | awk '{ for (i = 1; i <= NF; i++) s[i] += $i; n = NF }
                         END { if (!NR) exit 1
                               for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), s[i]; print "" }'
}
# counters_max EVENT_RE "KEY" LOG...: the largest value of one KEY.
counters_max() { counters "$@" | sort -n | tail -n 1; }

# transport_ops LOG...: "lines W LW R LR A E" over the close lines of both
# plugins (counts summed, largest the maximum); fails when there is none.
transport_ops() {
    counters 'btl_close|iface_close' "rdma_writes rdma_write_max rdma_reads rdma_read_max cq_arms cq_events" "$@" |
        awk '{ n++; w += $1; if ($2 > lw) lw = $2; r += $3; if ($4 > lr) lr = $4; a += $5; e += $6 }
             END { if (!n) exit 1; print n, w, lw + 0, r, lr + 0, a, e }'
}

# check_ops NAME CONDITION LOG...: the mode NAME claims is proven by the
# transports' counts: CONDITION is an awk test of w lw r lr a e (WRITEs,
# largest WRITE, READs, largest READ, CQ arms, CQ events, all ranks summed).
check_ops() {
    local name=$1 cond=$2 ops
    shift 2
    if ! ops=$(transport_ops "$@"); then
        fail "$name" "no transport counts in $* (no pvrdma counters line)"
    elif echo "$ops" | awk "{ w = \$2; lw = \$3; r = \$4; lr = \$5; a = \$6; e = \$7; exit !($cond) }"; then
        pass "$name: $(echo "$ops" | awk '{ printf "%d WRITEs (largest %d B), %d READs (largest %d B), %d CQ arms, %d CQ events over %d closes", $2, $3, $4, $5, $6, $7, $1 }')"
    else
        fail "$name" "counts $(echo "$ops" | awk '{ printf "W=%d LW=%d R=%d LR=%d A=%d E=%d", $2, $3, $4, $5, $6, $7 }') do not satisfy '$cond' (logs: $*)"
    fi
}

# perftest_pair LOG TOOL ARGS...: server on node2, client on node1 (retrying
# until the server listens: starting it over ssh is slow under emulation).
perftest_pair() {
    local log=$1 tool=$2 i rc=1
    shift 2
    ssh node2 "timeout 120 $tool $*" >"$log.server" 2>&1 &
    local spid=$!
    for i in $(seq 1 40); do
        sleep 1
        timeout 120 "$tool" "$@" node2 >"$log" 2>&1 && { rc=0; break; }
        grep -q "Couldn't connect" "$log" || break
    done
    wait "$spid" 2>/dev/null
    return $rc
}

# Field N (1-based) of the first result row (a line starting with the size) of a perftest log.
perftest_field() { awk -v n="$2" '$1 ~ /^[0-9]+$/ && NF >= n { print $n; exit }' "$1"; }

# meter_count FILE NODE KEY: a count of a meter file (scripts/testbed/pvrdma/
# meter, "nodeK KEY N" lines); KEY may end in * (the sum of those keys); 0
# when absent.
meter_count() {
    awk -v n="$2" -v k="$3" '
        $1 == n && (k ~ /\*$/ ? index($2, substr(k, 1, length(k) - 1)) == 1 : $2 == k) { s += $3 }
        END { print s + 0 }' "$1" 2>/dev/null || echo 0
}

# meter_counts FILE NODE: NODE's "SEND RECV SRQ COMMANDS POLLS" in a span
# (doorbell.qp.send, .qp.recv, .qp.srq, command.*, doorbell.cq.poll): one
# pass over the file (an awk start and a 9p read cost seconds in the nested
# guest)
meter_counts() {
    awk -v n="$2" '$1 == n {
            if ($2 == "doorbell.qp.send") s += $3
            else if ($2 == "doorbell.qp.recv") r += $3
            else if ($2 == "doorbell.qp.srq") q += $3
            else if (index($2, "command.") == 1) c += $3
            else if ($2 == "doorbell.cq.poll") p += $3 }
        END { printf "%d %d %d %d %d\n", s, r, q, c, p }' "$1" 2>/dev/null || echo "0 0 0 0 0"
}

bed_summary() { exit "$BED_FAILED"; }

# coalesced_check NAME EVENT LOG: sends went as WR lists (issue 38): the
# counters line(s) of EVENT (btl_close, iface_close) in LOG have at least
# 1.1 send WRs per ibv_post_send (doorbell); without coalescing they are
# equal
coalesced_check() {
    local name=$1 v posts wrs
    if v=$(counters_sum "$2" "send_posts send_wrs" "$3") && read -r posts wrs <<<"$v" &&
        [ "$posts" -gt 0 ] && [ "$((wrs * 10))" -ge "$((posts * 11))" ]; then
        pass "$name: $wrs send WRs in $posts ibv_post_send calls (doorbells)"
    else
        fail "$name (send WRs >= 1.1 x doorbells)" "send_posts send_wrs: ${v:-none} (log: $3)"
    fi
}

# latency_guard NAME "OFF ARGS" "ON ARGS" MPIRUN_ARGS...: 8 B ping-pong
# (tests/mpi/pingpong, 200 round trips, its median) with a change off and
# on, alternately, three times each, in this session: fails only if the
# median of "on" is more than 2 x that of "off" (a gross regression, not
# the bed's noise: on a slow machine 8 B runs of one setting spanned 721-
# 1,494 us in one session, 2026-11-28, and two runs each gave 1.68 once;
# with medians of three, pml ucx gave 1.56 in a clean-clone run on
# 2026-12-02: on 1,010-5,187 us, off 635-944 us, where 1.5 was the bound)
latency_guard() {
    local name=$1 off=$2 on=$3 k glog r offs ons lats=()
    shift 3
    for k in "$off" "$on" "$off" "$on" "$off" "$on"; do
        glog=$(log_name "$name ${k##* }")
        # shellcheck disable=SC2086 # OFF / ON are argument lists
        timeout -k 10 120 "${MPIRUN[@]}" -np 2 --map-by node "$@" $k "$MPI_TESTS/pingpong" \
            --min 8 --max 8 --iters 200 --bw-iters 1 >"$glog" 2>&1
        lats+=("$(awk '$1 == "size" && $2 == 8 { print $4 }' "$glog")")
    done
    offs="${lats[0]}, ${lats[2]}, ${lats[4]}" ons="${lats[1]}, ${lats[3]}, ${lats[5]}"
    # every run must give a latency (median() would skip a missing one)
    for k in "${lats[@]}"; do [[ $k =~ ^[0-9.]+$ ]] || r=missing; done
    if [ "${r:-}" = missing ] ||
        ! r=$(awk -v a="$(median "${lats[0]}" "${lats[2]}" "${lats[4]}")" \
                  -v b="$(median "${lats[1]}" "${lats[3]}" "${lats[5]}")" \
                  'BEGIN { if (a <= 0 || b <= 0) exit 1; printf "%.2f", b / a }'); then
        fail "$name: 8 B half round trip on / off" "a run gave no latency: on $ons / off $offs us (last log: $glog)"
    elif awk -v r="$r" 'BEGIN { exit !(r <= 2.0) }'; then
        pass "$name: 8 B half round trip on / off (medians of 3): $r ($ons us / $offs us)"
    else
        fail "$name: 8 B half round trip on at most 2 x off (medians of 3)" "ratio $r ($ons us / $offs us)"
    fi
}

# ucx_lists LOG COMPONENT TL DEV: true when `ucx_info -d` output in LOG has a
# memory domain of component COMPONENT with transport TL on device DEV.
ucx_lists() {
    awk -v comp="$2" -v tl="$3" -v dev="$4" '
        /^# Memory domain:/ { incomp = 0 }
        /^#  *Component:/   { incomp = ($3 == comp) }
        /^#  *Transport:/   { intl = incomp && ($3 == tl) }
        /^#  *Device:/      { if (intl && $3 == dev) found = 1 }
        END { exit !found }' "$1"
}
