#!/bin/bash
# Many peers per rank (issue #15), run inside node1 by scripts/testbed/tb:
# every rank connects to every other rank over the device and exchanges
# messages with all of them at once (mpi_check allpairs: eager and
# rendezvous sizes, every byte checked), over btl pvrdma and over pml ucx
# with UCX_TLS=pvrdma,self.  Then the per-rank limit of a small device is
# forced with a small completion queue (receives per peer lowered, job
# passes), and a CQ too small for the job must end with a message naming
# the limit, the numbers and the knob, never a bare abort or a hang.
#   SCALE_RPN       ranks per node over pml ucx (default 4; hosts4.sh runs 8)
#   SCALE_BTL_RPN   ranks per node over the BTL (default 4, as hosts4.sh)
#   SCALE_LIMIT_RPN ranks per node of the small-CQ and CQ-too-small runs
#                   (default SCALE_BTL_RPN)
#   SCALE_BTL_WRITE btl_pvrdma_rdma_write for the BTL runs (default off;
#                   hosts4.sh and paper.sh: auto, the BTL's default)
#   SCALE_RC_TIMEOUT RC ACK timeout exponent for both transports' runs
#                   (btl_pvrdma_rc_timeout, UCX_PVRDMA_TIMEOUT; unset: their
#                   defaults)
#   SCALE_CONN_TIMEOUT UCX_PVRDMA_CONN_TIMEOUT of the pml ucx runs (unset:
#                   its default, 30 s; hosts4.sh says why it sets 120s)
#   SCALE_ARGS      mpi_check tests of the btl and ucx runs (default allpairs)
#   SCALE_DEV       device (default: the first one ibv_devices lists)
#   SCALE_BUDGET    btl_pvrdma_max_connections and UCX_PVRDMA_MAX_CONNECTIONS
#                   of the budget runs (default 4)
#   SCALE_ONLY="…"  sections: btl budget ucx ucxbudget smallcq toosmall
#                   (unset: all)
#   SCALE_TIMEOUT   seconds per MPI run (default 900)
#   SCALE_BTL_CONNECT_RETRIES  btl_pvrdma_connect_retries of the btl runs
#                   (default: the BTL's, 120 requests 2 s apart)
#   SCALE_BTL_SQ    btl_pvrdma_send_queue_depth of the btl runs (default:
#                   the BTL's, 256; paper.sh says why it sets 63)
#   SCALE_UCX_TXQ   UCX_PVRDMA_TX_QUEUE_LEN of the pml ucx runs (default:
#                   the transport's, 256; paper.sh sets 63 as for the BTL)
#   SCALE_UCX_RXQ   UCX_PVRDMA_RX_QUEUE_LEN of the pml ucx runs (default:
#                   the transport's, 64; paper.sh says why it sets 16)
#   BED_SSH_ALIVE_COUNT  ServerAlive rounds of node1's ssh masters (lib.sh,
#                   ssh_patience; unset: the bed's 6; paper.sh sets 40)
. "$(dirname "$0")/lib.sh"
watch_nodes
[ -n "${BED_SSH_ALIVE_COUNT:-}" ] && ssh_patience "$BED_SSH_ALIVE_COUNT"

NHOSTS=$(grep -c '^node' "$TB_HOSTFILE")
URPN=${SCALE_RPN:-4}
RPN=${SCALE_BTL_RPN:-4}
NP=$((NHOSTS * RPN))
PEERS=$((NP - 1))
T=${SCALE_TIMEOUT:-900}
DEV=${SCALE_DEV:-$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')}
# all pairs at once, eager and rendezvous sizes (BTL eager limit 8 KiB)
read -r -a ARGS <<<"${SCALE_ARGS:-allpairs}"
RUN=(-np "$NP" --map-by node --oversubscribe)
# Large messages by send/recv copies unless SCALE_BTL_WRITE=on: the copies
# are what QEMU's model forces anyway (the nested tier), and on the rxe bed
# the WRITE rendezvous at 4 x 8 passed only with a 2.1 s ACK timeout
# (SCALE_RC_TIMEOUT=19; with 268 ms one RDMA WRITE now and then was never
# completed nor retried).
BTL=(--mca pml ob1 --mca btl pvrdma,self --mca btl_pvrdma_if_include "$DEV"
     --mca btl_base_verbose 10 --mca btl_pvrdma_rdma_write "${SCALE_BTL_WRITE:-off}")
mpi_ucx_args UCX pvrdma,self "$DEV:1"
if [ -n "${SCALE_RC_TIMEOUT:-}" ]; then
    BTL+=(--mca btl_pvrdma_rc_timeout "$SCALE_RC_TIMEOUT")
    UCX+=(-x "UCX_PVRDMA_TIMEOUT=$SCALE_RC_TIMEOUT")
fi
if [ -n "${SCALE_CONN_TIMEOUT:-}" ]; then
    UCX+=(-x "UCX_PVRDMA_CONN_TIMEOUT=$SCALE_CONN_TIMEOUT")
fi
if [ -n "${SCALE_UCX_TXQ:-}" ]; then
    UCX+=(-x "UCX_PVRDMA_TX_QUEUE_LEN=$SCALE_UCX_TXQ")
fi
if [ -n "${SCALE_UCX_RXQ:-}" ]; then
    UCX+=(-x "UCX_PVRDMA_RX_QUEUE_LEN=$SCALE_UCX_RXQ")
fi
if [ -n "${SCALE_BTL_CONNECT_RETRIES:-}" ]; then
    BTL+=(--mca btl_pvrdma_connect_retries "$SCALE_BTL_CONNECT_RETRIES")
fi
if [ -n "${SCALE_BTL_SQ:-}" ]; then
    BTL+=(--mca btl_pvrdma_send_queue_depth "$SCALE_BTL_SQ")
fi

want() { [ -z "${SCALE_ONLY:-}" ] || [[ " $SCALE_ONLY " == *" $1 "* ]]; }

if [ ! -x "$MPI_TESTS/mpi_check" ]; then
    fail "scale: MPI test programs built" "run 'make -C tests/mpi' before the bed run"
    bed_summary
fi
[ -n "$DEV" ] || { fail "scale: a verbs device" "ibv_devices lists none"; bed_summary; }

# peers_check NAME LOG MIN: every rank's BTL closed with MIN peers connected
# or more (its counters line, btl_base_verbose 10), NP lines in all.
peers_check() {
    local name=$1 log=$2 min=$3 got
    got=$(counters btl_close "peers_max" "$log" |
          awk -v min="$min" '{ n++; if ($1 < min) low++; if (n == 1 || $1 < lo) lo = $1 }
                             END { printf "%d %d %d", n, low, lo }')
    set -- $got
    if [ "${1:-0}" = "$NP" ] && [ "${2:-1}" = 0 ]; then
        pass "$name: all $NP ranks held >= $min peer connections"
    else
        fail "$name: every rank connected to >= $min peers" \
             "${1:-0} of $NP ranks reported; ${2:-?} below $min, fewest ${3:-?} (log: $log)"
    fi
}

# plan_check NAME LOG: what the plan said a connection costs (README quotes
# these lines)
plan_check() {
    local line
    line=$(grep -m1 'btl:pvrdma: .*locked memory:' "$2")
    [ -n "$line" ] && pass "$1: plan printed: ${line##*btl:pvrdma: }" ||
        fail "$1: plan printed" "no 'locked memory' line (log: $2)"
}

# ucx_plan_check NAME LOG: the same for UCX's iface (info level): its plan
# and its locked memory at the job's peers (OMPI_COMM_WORLD_SIZE - 1)
ucx_plan_check() {
    local plan mem
    plan=$(grep -m1 'pvrdma: .*: plan: CQ ' "$2")
    mem=$(grep -m1 "pvrdma: .*locked memory: .* at $PEERS_UCX peers" "$2")
    if [ -n "$plan" ] && [ -n "$mem" ]; then
        pass "$1: plan printed: ${plan##*pvrdma: } / ${mem##*pvrdma: }"
    else
        fail "$1: plan printed" "plan '${plan:-none}', locked memory at $PEERS_UCX peers '${mem:-none}' (log: $2)"
    fi
}

# replay_check NAME LOG: no one replays in these jobs, so a connection
# datagram the BTL refused as older than its sender's replay window was one
# of the job's own, held back until its sender was resolved (numbered per
# destination since 2026-12-03: before, 945 such drops at 4 x 20, each
# resent 2 s later).  A repeated one (seen before) is not counted against
# it: 6 datagrams came twice in one 8 x 20 run on rxe, and dropping
# those is right.
# Nor is one dropped for want of room among those waiting for their sender
# to be resolved (cm_deferred_dropped: the BTL polls no more than fit since
# 2026-12-04; before, 26,406 requests to node1's ranks were dropped in 14
# minutes of an 8 x 20 job, each resent 2 s later).
replay_check() {
    local v r s d
    v=$(counters_sum btl_close "dgram_replayed dgram_superseded cm_deferred_dropped" "$2")
    read -r r s d <<<"$v"
    if [ -n "$s" ] && [ "$s" = 0 ] && [ "${d:-x}" = 0 ]; then
        pass "$1: no connection datagram of the job taken for a replay or dropped unread (${r:-0} repeats dropped)"
    else
        fail "$1: no connection datagram of the job taken for a replay or dropped unread" \
             "${s:-no counters line}: refused as older than the window, of ${r:-?} refused; ${d:-?} dropped waiting for their sender (log: $2)"
    fi
}

name="scale btl ${NHOSTS}x$RPN all pairs"
if want btl; then
    mpi_check_run "$name" "$T" "${RUN[@]}" "${BTL[@]}" -- "${ARGS[@]}"
    log=$(log_name "$name")
    peers_check "$name" "$log" "$PEERS"
    plan_check "$name" "$log"
    replay_check "$name" "$log"
    if [ "${SCALE_BTL_WRITE:-off}" != off ]; then
        # the rendezvous really went by RDMA WRITE (the close lines)
        w=$(counters_sum btl_close "rdma_writes" "$log")
        [ "${w:-0}" -gt 0 ] && pass "$name: rendezvous by RDMA WRITE ($w WRITEs in all)" ||
            fail "$name: rendezvous by RDMA WRITE" "no RDMA WRITE in the counters lines (log: $log)"
    fi
fi

# The connection budget (issue 36): at most SCALE_BUDGET RC QPs per rank,
# so with 31 peers every rank closes idle connections (with the peer's
# agreement) and reopens them many times; every byte of all pairs (eager
# and rendezvous sizes) and of an MPI_Alltoallv is still checked, and the
# ranks' counters must show closes and reopens.  SCALE_BTL_SRQ=0: per-QP
# receive queues, as on PVRDMA devices without SRQs; then a closed QP's
# posted receives must be taken back at its destroy (rx_reclaimed; with an
# SRQ a QP holds none).  Default: the device's choice (an SRQ on rxe): in
# the README test command of 2026-12-01 the pml ucx budget job that follows
# failed twice after the per-QP job (a CLOSE unanswered for 30 s) on a
# machine with 50 % steal, so CI keeps last landing's configuration until
# that is understood (the per-QP job itself passed: 4,128 closes).
BUDGET=${SCALE_BUDGET:-4}
BTL_SRQ=${SCALE_BTL_SRQ:-auto}
name="scale btl ${NHOSTS}x$RPN budget of $BUDGET connections"
if want budget; then
    mpi_check_run "$name" "$T" "${RUN[@]}" "${BTL[@]}" --mca btl_pvrdma_max_connections "$BUDGET" \
        --mca btl_pvrdma_srq "$BTL_SRQ" -- allpairs alltoallv
    log=$(log_name "$name")
    v=$(counters_sum btl_close "conn_closes conn_reopens conn_close_refusals conn_overruns rx_reclaimed rx_stale" "$log")
    read -r closes reopens refusals overruns reclaimed stale <<<"$v"
    replay_check "$name" "$log"
    held=$(counters_max btl_close "peers_max" "$log")
    ranks=$(counters btl_close "conn_budget" "$log" | grep -cx "$BUDGET")
    if [ "${ranks:-0}" = "$NP" ] && [ "${closes:-0}" -gt 0 ] && [ "${reopens:-0}" -gt 0 ]; then
        pass "$name: all $NP ranks at a budget of $BUDGET: $closes connections closed by agreement, $reopens reopened, $refusals refusals, $overruns made over the budget, at most $held QPs held by a rank"
    else
        fail "$name: connections closed and reopened" "$ranks of $NP ranks with budget $BUDGET; closes/reopens/refusals/overruns '${v:-no counters}' (log: $log)"
    fi
    # every close without an SRQ gives its QP's posted receives back
    if [ "$BTL_SRQ" = 0 ]; then
        if [ "${closes:-0}" -gt 0 ] && [ "${reclaimed:-0}" -ge "$closes" ]; then
            pass "$name: closed QPs' receives taken back at once ($reclaimed buffers at $closes closes, $stale late completions dropped)"
        else
            fail "$name: closed QPs' receives taken back at once" "rx_reclaimed '${reclaimed:-missing}' at ${closes:-0} closes (log: $log)"
        fi
    fi
fi

name="scale pml ucx ${NHOSTS}x$URPN all pairs"
if want ucx; then
    mpi_check_run "$name" "$T" -np $((NHOSTS * URPN)) --map-by node --oversubscribe \
        "${UCX[@]}" -x UCX_LOG_LEVEL=info -- "${ARGS[@]}"
    log=$(log_name "$name")
    grep -qF "pvrdma/$DEV" "$log" && pass "$name: UCP endpoints use pvrdma/$DEV" ||
        fail "$name: UCP endpoints use pvrdma/$DEV" "not in UCP's transport report (log: $log)"
    PEERS_UCX=$((NHOSTS * URPN - 1)) ucx_plan_check "$name" "$log"
fi

# The connection budget over pml ucx (issue 36): at most SCALE_BUDGET
# endpoints per rank hold an RC QP, so with every peer in use each rank
# closes idle connections (with the peer's agreement) and reopens them;
# every byte of all pairs (eager and rendezvous sizes) and of an
# MPI_Alltoallv is checked, UCP must have chosen our transport, and every
# rank's iface must report closes and reopens (its counters line is at
# diag level once the budget closed one; info prints UCP's report too).
name="scale pml ucx ${NHOSTS}x$URPN budget of $BUDGET connections"
if want ucxbudget; then
    UNP=$((NHOSTS * URPN))
    mpi_check_run "$name" "$T" -np "$UNP" --map-by node --oversubscribe \
        "${UCX[@]}" -x UCX_LOG_LEVEL=info -x "UCX_PVRDMA_MAX_CONNECTIONS=$BUDGET" \
        -- allpairs alltoallv
    log=$(log_name "$name")
    grep -qF "pvrdma/$DEV" "$log" && pass "$name: UCP endpoints use pvrdma/$DEV" ||
        fail "$name: UCP endpoints use pvrdma/$DEV" "not in UCP's transport report (log: $log)"
    PEERS_UCX=$((UNP - 1)) ucx_plan_check "$name" "$log"
    grep -q "pvrdma: .*: plan: .*budget $BUDGET connections (UCX_PVRDMA_MAX_CONNECTIONS)" "$log" &&
        pass "$name: the plan line says the budget and why" ||
        fail "$name: the plan line says the budget and why" "no 'budget $BUDGET connections (UCX_PVRDMA_MAX_CONNECTIONS)' (log: $log)"
    v=$(counters_sum iface_close "conn_closes conn_reopens conn_close_refusals conn_overruns conn_closes_agreed reqs_busy busy_heard" "$log")
    read -r closes reopens refusals overruns agreed rbusy hbusy <<<"$v"
    held=$(counters_max iface_close "eps_max" "$log")
    ifaces=$(counters iface_close "conn_budget" "$log" | grep -cx "$BUDGET")
    if [ "${ifaces:-0}" -ge "$UNP" ] && [ "${closes:-0}" -gt 0 ] && [ "${reopens:-0}" -gt 0 ]; then
        # busy: requests a peer could not take yet (no CQ entries), said so
        pass "$name: $ifaces ifaces of $UNP ranks at a budget of $BUDGET: $closes connections closed by agreement ($agreed agreed by peers), $reopens reopened, $refusals refusals, $overruns made over the budget, at most $held endpoints with a QP in a rank; $rbusy requests answered busy ($hbusy heard)"
    else
        fail "$name: connections closed and reopened" "$ifaces ifaces of $UNP ranks with budget $BUDGET; closes/reopens/refusals/overruns/agreed '${v:-no counters}' (log: $log)"
    fi
fi

# The same per-rank limit as on a device whose CQ holds few peers: per-QP
# receive queues and a CQ of PEERS x 64/3 entries (a quarter for sends)
# leave 16 receive entries per peer, fewer than the 64 each would get.
RPN=${SCALE_LIMIT_RPN:-$RPN}
NP=$((NHOSTS * RPN))
PEERS=$((NP - 1))
RUN=(-np "$NP" --map-by node --oversubscribe)
SMALL_CQ=$((PEERS * 64 / 3))
# ... and one of PEERS x 16/3 holds only half the peers at the floor of 8.
TINY_CQ=$((PEERS * 16 / 3 > 16 ? PEERS * 16 / 3 : 16))
name="scale btl ${NHOSTS}x$RPN small CQ"
if want smallcq; then
    mpi_check_run "$name" "$T" "${RUN[@]}" "${BTL[@]}" --mca btl_pvrdma_srq 0 \
        --mca btl_pvrdma_cq_depth "$SMALL_CQ" -- "${ARGS[@]}"
    log=$(log_name "$name")
    peers_check "$name" "$log" "$PEERS"
    grep -q 'receives per peer lowered to fit the CQ' "$log" &&
        pass "$name: receives per peer lowered to fit the CQ" ||
        fail "$name: receives per peer lowered to fit the CQ" "no such plan line (log: $log)"
    plan_check "$name" "$log"
    replay_check "$name" "$log"
fi

# A CQ that cannot hold every peer even at 8 receives each: the job must
# stop with the limit, the numbers and the knob.
name="scale btl ${NHOSTS}x$RPN CQ too small"
if want toosmall; then
    check_fails "$name: ends naming the CQ limit and knob" "$T" \
"completion queue full: its [0-9]+ entries are [0-9]+ send WRs in flight
peer [0-9]+ needs [0-9]+ more \(job: $PEERS peers\)
btl_pvrdma_cq_depth" \
        "${MPIRUN[@]}" "${RUN[@]}" "${BTL[@]}" --mca btl_pvrdma_srq 0 \
        --mca btl_pvrdma_cq_depth "$TINY_CQ" "$MPI_TESTS/mpi_check" "${ARGS[@]}"
fi
bed_summary
