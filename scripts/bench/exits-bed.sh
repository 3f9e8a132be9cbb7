#!/bin/bash
# Runs on nested node1 of a 2-node `tb run --pvrdma` session (scripts/bench/
# exits): what each transport costs the hypervisor, counted by the bed's
# meter (scripts/testbed/pvrdma/meter: QEMU's pvrdma device model counts the
# doorbells and device commands of a span). Every row in ONE session.
# Writes $TB_OUT/exits/results.txt: "ROW KIND KEY VALUE" lines, where KIND is
# lat8 (8 B ping-pong, per message), bw64k / bw1m (streaming, per message),
# idle (a rank waiting 1 s in MPI_Recv), run (a whole run: device commands),
# or "why" (the row could not run: VALUE is the error).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/bed/lib.sh"
. "$TOP/tests/ucx/ucx_lib.sh"
DEV=vmw_pvrdma0
LOGDIR=$TB_OUT/exits
METER=$TOP/scripts/testbed/pvrdma/meter
mkdir -p "$LOGDIR/spans"
RES=$LOGDIR/results.txt
: >"$RES"
put() { echo "$*" >>"$RES"; echo "exits: $*"; }
# PVRDMA_EXITS_ONLY="raw btl ..." (scripts/bench/exits --only): these
# sections only (raw btl ucx ucxstock openib idle foam foamidle foamspin foamnoarm foamfixed uct)
only() { [ -z "${PVRDMA_EXITS_ONLY:-}" ] || [[ " $PVRDMA_EXITS_ONLY " == *" $1 "* ]]; }

# per_msg ROW KIND FILE MSGS: the span's counts per message, per node
per_msg() {
    local row=$1 kind=$2 f=$3 n=$4 k key
    [ -s "$f" ] || { put "$row" "$kind" why "no counts ($f)"; return; }
    for k in 1 2; do
        for key in doorbell.qp.send doorbell.qp.recv doorbell.qp.srq doorbell.cq.poll doorbell.cq.arm 'command.*'; do
            put "$row" "$kind" "node$k.${key%.\*}" "$(meter_count "$f" "node$k" "$key" | awk -v n="$n" '{ printf "%.4f", $1 / n }')"
        done
    done
    put "$row" "$kind" msgs "$n"
    put "$row" "$kind" seconds "$(meter_count "$f" node1 seconds)"
}

# cm_dropped: what the bed's MAD relay dropped, when RDMA-CM was tried (the
# outer hosts' madmux logs in the run directory: madmux.c)
cm_dropped() {
    local n
    n=$(cat /run/tb/madmux.node*.log 2>/dev/null | grep -c 'dropped an outgoing MAD, class 0x07')
    [ "$n" -gt 0 ] || return 1
    echo "RDMA-CM cannot connect on this bed: the bed's MAD relay (madmux, standing in for QEMU's rdmacm-mux) dropped $n CM MADs ($(cat /run/tb/madmux.node*.log | grep -o '(CM [A-Za-z]*)' | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $3, $1 }' | tr -d ')')); RDMA-CM is openib's only connection scheme on RoCE. A bed limit: ESXi's PVRDMA carries CM MADs"
}

# why ROW LOG KIND: the first error line of a run that failed (or its end)
why() {
    local w
    if [ "$1" = openib ] && w=$(cm_dropped); then
        put "$1" "$3" why "$w"
        return
    fi
    # the transport's own words first (openib: which CPCs it tried), then
    # any error line (ORTE's show_help lines are noise)
    w=$({ grep -A8 -m1 'No OpenFabrics connection schemes' "$2" | grep -m1 'CPCs attempted' |
            sed 's/^ */openib: no connection scheme for the port (/; s/$/)/'
          grep -m1 -E 'Fatal|unhandled|not available|unreachable' "$2"
          grep -v ORTE_ERROR_LOG "$2" | grep -m1 -iE 'error|failed|abort'; } | head -n 1 | cut -c1-200 | tr -s ' ')
    put "$1" "$3" why "${w:-did not finish within its time limit ($(tail -n 1 "$2" | cut -c1-120))}"
}

# --- raw verbs: perftest, the floor ------------------------------------------
# One WR per call on each side; a whole run is metered (set-up included), so
# per message the set-up's few commands are spread over the messages.
for t in "lat8 ib_send_lat -s 8 -n 1000 1000" "bw64k ib_send_bw -s 65536 -n 200 200" "bw1m ib_send_bw -s 1048576 -n 50 50"; do
    only raw || break
    set -- $t
    kind=$1 tool=$2 n=${!#}
    log=$LOGDIR/raw.$kind.log
    if "$METER" --label "raw $kind" --out "$LOGDIR/spans/raw.$kind" -- \
            bash -c "$(declare -f perftest_pair); perftest_pair $log $tool -d $DEV -I 0 $3 $4 $5 $6" 2>/dev/null; then
        per_msg raw "$kind" "$LOGDIR/spans/raw.$kind" "$n"
    else
        put raw "$kind" why "$(tail -n 2 "$log" | tr '\n' ' ' | cut -c1-200)"
    fi
done

# --- MPI: tests/mpi/pingpong with spans around its timed loops ---------------
# 8 B: 1000 round trips (1000 messages each way); 64 KiB and 1 MiB: windows
# of 16 one way, each acknowledged by 1 byte; then a 1 s idle wait.
mpi_ucx_args UCX_OURS pvrdma,self "$DEV:1"
mpi_ucx_args UCX_STOCK rc_verbs,ud_verbs,self "$DEV:1"
mpi_row() {  # ROW MPIRUN-ARGS...
    local row=$1 log size args
    shift
    args=("$@")
    local sec=$row
    [ "$row" = "${row%-idle*}" ] || sec=idle
    only "$sec" || return 0
    log=$LOGDIR/mpi_$row.log
    rm -f "$LOGDIR/spans/$row".*
    timeout -k 10 "${ROW_TIMEOUT:-400}" "${MPIRUN[@]}" -np 2 --map-by node "$@" "$TOP/tests/mpi/pingpong" \
        --min 8 --max 8 --iters 1000 --bw-iters 1 --idle 1 \
        --span-cmd "$METER span $LOGDIR/spans/$row" >"$log" 2>&1 || { why "$row" "$log" lat8; return; }
    per_msg "$row" lat8 "$LOGDIR/spans/$row.lat.8" 1000
    per_msg "$row" idle "$LOGDIR/spans/$row.idle.1" \
        "$(awk '$1 == "idle_wait_s" { print $2 }' "$log")"
    # the idle-wait rows: the ping-pong and the wait only
    [ "$row" = "${row%-idle*}" ] || return 0
    # 64 KiB: 2 windows of 16; 1 MiB: 2 windows of 4 (4 MiB windows); one
    # job per size (the sizes between would cost minutes on this tier)
    for size in 65536:bw64k:32 1048576:bw1m:8; do
        set -- "${size%%:*}" "$(echo "$size" | cut -d: -f2)" "${size##*:}"
        log=$LOGDIR/mpi_$row.$2.log
        timeout -k 10 300 "${MPIRUN[@]}" -np 2 --map-by node "${args[@]}" "$TOP/tests/mpi/pingpong" \
            --min "$1" --max "$1" --iters 2 --bw-iters 2 --window-bytes 4194304 \
            --span-cmd "$METER span $LOGDIR/spans/$row" >"$log" 2>&1 || { why "$row" "$log" "$2"; continue; }
        per_msg "$row" "$2" "$LOGDIR/spans/$row.bw.$1" "$3"
    done
}
mpi_row btl --mca pml ob1 --mca btl pvrdma,self
mpi_row ucx "${UCX_OURS[@]}"
# Stock UCX as an expert would make it run on PVRDMA: UD's DGID check off
# (non-Mellanox RoCE), eager only (its rendezvous needs RDMA READ, which this
# device cannot initiate, and WRITE, which QEMU's model turns into SENDs).
mpi_row ucxstock "${UCX_STOCK[@]}" -x UCX_RNDV_THRESH=inf
# Open MPI's openib, the paper's transport, with the arguments of the
# harness's profile (validation/transports/openib.conf: the rdmacm build of
# scripts/build-openib-rdmacm.sh when it is there, else Debian's, whose
# failure the row quotes).  QEMU's model turns every RDMA WRITE into a SEND,
# so here openib runs sends only (its eager RDMA and RDMA rendezvous off,
# as our transports' probe decides by itself), in this row and in the
# OpenFOAM row below alike (OMPI_MCA_ reaches every rank); with them the 8 B
# ping-pong hung.
export OMPI_MCA_btl_openib_use_eager_rdma=0 OMPI_MCA_btl_openib_flags=1
mapfile -t OPENIB < <(. "$TOP/validation/transports/openib.conf"; printf '%s\n' "${mpirun_args[@]}")
# On this tier openib did not get through connection set-up until
# 2026-12-06.  Its only connection scheme on RoCE is RDMA-CM; since
# 2026-12-01 the bed relays the CM MADs (madmux.c; the tier suite connects
# ib_send_lat -R through it), and openib's ConnectRequest reached the peer,
# but QEMU's model rejected a work request ("Invalid lkey 0x7fff", "Table
# MR, invalid handle 32767", "Table CQE_CTX, invalid handle 512") and the
# peer never answered.  That request is openib's own SRQ probe
# (check_if_device_support_modify_srq, Open MPI 4.1.4): two receives on a
# dummy SRQ whose SGE lkey is never set (stack garbage).  The try with
# btl_openib_receive_queues P,65536,32,16,8 did not avoid it: mpirun joins
# a parameter given twice with commas, so the profile's shared queues
# stayed.  The profile now uses per-peer queues only on vmw_pvrdma
# (validation/transports/openib.conf).  Then at t2np4 (2026-12-06) node2's
# ranks failed with "Failed to reg mr!" and the run waited for its 900 s
# limit: openib registers each rdmacm connection's CTS buffer (~200 bytes)
# straight from malloc(), and QEMU's model refused a region that crosses
# one page more than its length rounds up to ("Invalid nchunks/length"),
# which a real device registers; the bed's QEMU carries
# qemu-mr-page-span.patch since (tests/fabric/mr_span checks it).  Its rows
# run like the others now.
ROW_TIMEOUT=180 mpi_row openib "${OPENIB[@]}"   # (180 s: rdmacm's connect has long given up or got through by then)
# The idle wait (issue 19) as it was before it calibrated itself: a fixed
# 50 us between polls (idle poll scale 0). The default rows above back off to
# 16 x the measured empty poll (~2 ms on this tier, where a poll takes ~125
# us; on a host the 50 us floor rules)
mpi_row btl-idlefixed --mca pml ob1 --mca btl pvrdma,self --mca btl_pvrdma_idle_poll_scale 0
mpi_row ucx-idlefixed "${UCX_OURS[@]}" -x UCX_PVRDMA_IDLE_POLL_SCALE=0

# --- UCT: ucx_perftest am_lat / am_bw over uct pvrdma ------------------------
# A whole run is metered; two lengths, so that the difference is the steady
# state per message (set-up and warm-up cancel).
uct_row() {  # KIND TEST SIZE DATA-LAYOUT
    local kind=$1 test=$2 size=$3 layout=$4 n f a b
    for n in 200 1200; do
        f=$LOGDIR/spans/uct.$kind.$n
        "$METER" --label "uct $kind $n" --out "$f" -- bash -c \
            "$(declare -f ucx_pair log_name); PORT=$((13800 + n)) LOGDIR=$LOGDIR PRELOAD=$PRELOAD ucx_pair uct.$kind.$n 300 '' -t $test -x pvrdma -d $DEV:1 -s $size -D $layout -n $n -w 0" \
            2>/dev/null || { put uct "$kind" why "ucx_perftest -t $test failed ($(log_name "uct.$kind.$n"))"; return; }
    done
    for k in 1 2; do
        for key in doorbell.qp.send doorbell.qp.recv doorbell.cq.poll doorbell.cq.arm 'command.*'; do
            a=$(meter_count "$LOGDIR/spans/uct.$kind.200" "node$k" "$key")
            b=$(meter_count "$LOGDIR/spans/uct.$kind.1200" "node$k" "$key")
            put uct "$kind" "node$k.${key%.\*}" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", (b - a) / 1000 }')"
        done
    done
    put uct "$kind" msgs 1000
}
# --- OpenFOAM: the validation harness's cases, each transport side by side ---
# PVRDMA_EXITS_CASES (default t2np2; t2np4 puts 2 ranks on each node, ranks
# that share a VM and wait on each other), PVRDMA_EXITS_REPS runs of each
# (default 1): rep by rep, every transport once, so machine drift hits all
# rows alike (the harness's --repeat).  The cases were built on the machine
# by scripts/bench/exits (the guests' root is read-only and emulated); each
# mpirun runs under the meter through the harness's VALIDATION_RUN_WRAPPER.
FOAM_CASES=${PVRDMA_EXITS_CASES:-t2np2} FOAM_REPS=${PVRDMA_EXITS_REPS:-1}
cat >"$LOGDIR/foam-meter.sh" <<EOS
#!/bin/bash
exec "$METER" --label "\${EXITS_KIND:-foam} \$VALIDATION_RUN_ID" --out "$LOGDIR/spans/\${EXITS_KIND:-foam}.\$VALIDATION_RUN_ID" -- "\$@"
EOS
# foam: every transport at its defaults; foamidle: the BTL again with the
# idle wait's fixed 50 us interval, the default before it calibrated itself;
# foamspin: the BTL with the idle spin unpaced (spin scale 1, the default
# before issue 38's pacing); foamnoarm: the BTL polling through its whole
# wait (btl_pvrdma_idle_arm 0, the default before the armed wait);
# foamfixed: the BTL with the spin's fixed pace (btl_pvrdma_idle_spin_adapt
# 0, the default before it followed its finds), side by side with the
# defaults (OMPI_MCA_
# reaches every rank; a UCX_ variable would need -x, which the harness's
# transport profile owns, and mca_base_env_list beside -x is refused)
# (openib only when its ping-pong ran: otherwise the OpenFOAM run would wait
# for the same connection until its time limit; 2026-12-06 a ping-pong that
# timed out left a process in the nested kernel's rdma_destroy_id, and the
# next OpenFOAM run on that node never ended)
# (PVRDMA_EXITS_FOAM: the foam rows' transports; stock UCX's t2np4 never
# got through start-up in 900 s, 2026-11-29)
foam_list=${PVRDMA_EXITS_FOAM:-pvrdma,pvrdma-ucx,ucx-stock}
grep -qE '^openib lat8 ' "$RES" && ! grep -qE '^openib lat8 why' "$RES" && foam_list=$foam_list,openib
foam_runs=()
for run in "foam:$foam_list" foamidle:pvrdma foamspin:pvrdma foamnoarm:pvrdma foamfixed:pvrdma; do
    only "${run%%:*}" && foam_runs+=("$run")
done
# A warm-up run of each case first, not counted: the session's first
# OpenFOAM run took 20-40 % longer than the same row's later ones
# (2026-12-06: 41-50 s against 31-37 s at t2np2), whichever row it was
# (the guests' page cache, OpenFOAM's libraries read over the emulated disk)
if [ ${#foam_runs[@]} -gt 0 ]; then
  for c in ${FOAM_CASES//,/ }; do
    rph=$(awk -v c="$c" '$1 == c { print int($3 / $2); exit }' "$TOP/validation/cases.conf")
    out=$LOGDIR/warmup.$c
    mkdir -p "$out"
    [ -e "$out/cases" ] || ln -s "$TB_OUT/exits/foam/cases" "$out/cases"
    timeout 1200 "$TOP/validation/run_weak_scaling.sh" --bed-inner --out "$out" --cases "$c" \
        --transports pvrdma --ranks-per-host "${rph:-1}" --run-timeout 900 \
        --hostfile /run/tb/hostfile >"$out.log" 2>&1 ||
        echo "exits: the warm-up run of $c failed (log: $out.log); the counted runs follow" >&2
  done
fi
for rep in $(seq 1 "$FOAM_REPS"); do
  for c in ${FOAM_CASES//,/ }; do
    # the case's ranks per node (t2np2: 1, t2np4: 2), as validation/cases.conf has them
    rph=$(awk -v c="$c" '$1 == c { print int($3 / $2); exit }' "$TOP/validation/cases.conf")
    for run in ${foam_runs[@]+"${foam_runs[@]}"}; do
        kind=${run%%:*} out=$LOGDIR/${run%%:*}.$rep.$c
        mkdir -p "$out"
        [ -e "$out/cases" ] || ln -s "$TB_OUT/exits/foam/cases" "$out/cases"
        # the harness names its runs CASE-TRANSPORT-1 (one repeat per call)
        ( export EXITS_KIND=$kind.$rep
          [ "$kind" = foamidle ] && export OMPI_MCA_btl_pvrdma_idle_poll_scale=0
          [ "$kind" = foamspin ] && export OMPI_MCA_btl_pvrdma_idle_spin_scale=1
          [ "$kind" = foamnoarm ] && export OMPI_MCA_btl_pvrdma_idle_arm=0
          [ "$kind" = foamfixed ] && export OMPI_MCA_btl_pvrdma_idle_spin_adapt=0
          VALIDATION_RUN_WRAPPER="bash $LOGDIR/foam-meter.sh" timeout 3600 "$TOP/validation/run_weak_scaling.sh" \
            --bed-inner --out "$out" --cases "$c" --transports "${run#*:}" \
            --ranks-per-host "${rph:-1}" --run-timeout 900 --hostfile /run/tb/hostfile >"$out.log" 2>&1 )
    done
  done
done
# results: "ROW foam.CASE.REP KEY VALUE" (KEY all.*: both nodes' counts;
# seconds; steps: the solver's time steps, from its log)
for rep in $(seq 1 "$FOAM_REPS"); do
  for c in ${FOAM_CASES//,/ }; do
    for t in pvrdma:btl pvrdma-ucx:ucx ucx-stock:ucxstock openib:openib pvrdma:btl-idlefixed pvrdma:btl-spin1 pvrdma:btl-noarm pvrdma:btl-fixedpace; do
        row=${t#*:} kind=foam
        [ "$row" = btl-idlefixed ] && kind=foamidle
        [ "$row" = btl-noarm ] && kind=foamnoarm
        [ "$row" = btl-fixedpace ] && kind=foamfixed
        [ "${row%-spin1}" = "$row" ] || kind=foamspin
        csv=$LOGDIR/$kind.$rep.$c/results.csv
        [ -s "$csv" ] || continue
        k=foam.$c.$rep
        # openib left out of the runs: its ping-pong row says why
        if [ "$row" = openib ] && [ "${foam_list%openib}" = "$foam_list" ]; then
            put openib "$k" why "$(awk '$1 == "openib" && $2 == "lat8" && $3 == "why" { $1 = $2 = $3 = ""; print substr($0, 4); exit }' "$RES")"
            continue
        fi
        # the harness's row of the run (fields as its results.csv has them:
        # 9 status, 10 seconds, 13 reason, 14 log)
        line=$(awk -F, -v c="$c" -v t="${t%%:*}" '$1 == c && $6 == t { print; exit }' "$csv")
        [ -n "$line" ] || continue
        IFS=, read -r -a fld <<<"$line"
        f=$LOGDIR/spans/$kind.$rep.$c-${t%%:*}-1
        if [ "${fld[8]}" != ok ] || [ ! -s "$f" ]; then
            put "$row" "$k" why "${fld[8]}: ${fld[12]:-}"
            continue
        fi
        for key in doorbell.qp.send doorbell.qp.recv doorbell.qp.srq doorbell.cq.poll doorbell.cq.arm 'command.*'; do
            put "$row" "$k" "all.${key%.\*}" $(( $(meter_count "$f" node1 "$key") + $(meter_count "$f" node2 "$key") ))
        done
        put "$row" "$k" seconds "${fld[9]}"
        put "$row" "$k" steps "$(grep -c '^Time = ' "${fld[13]}" 2>/dev/null)"
        put "$row" "$k" msgs 1
    done
  done
done

if only uct; then
    uct_row lat8 am_lat 8 short
    # (on this tier the transport offers AMs of at most 1 KiB, the port's max_msg_sz)
    uct_row bw1k am_bw 1024 bcopy
fi
# The nested QEMUs' own output beside the rows' logs: a row that failed on
# a command the device model refused has its reason only there (openib's
# "Failed to reg mr!" was QEMU's "Invalid nchunks/length", 2026-12-06)
for f in /run/tb/qemu.nested*.log; do [ -e "$f" ] && cp "$f" "$LOGDIR/"; done
echo "exits: done"
