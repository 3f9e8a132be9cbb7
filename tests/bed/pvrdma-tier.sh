#!/bin/bash
# The --pvrdma tier itself, run inside nested node1 by
#   scripts/testbed/tb run --pvrdma --hosts 2 -- tests/bed/pvrdma-tier.sh
# Checks that each node's only RDMA device is a real vmw_pvrdma device (driver
# and rdma-core provider) with the limits this project designs for, that the
# nodes reach each other, and measures raw verbs (send/recv) between two nested nodes.
# Numbers and `ibv_devinfo -v` go to $TB_OUT/logs/pvrdma-tier/.
# PVRDMA_TIER_DATA=0 / PVRDMA_TIER_SCALE=0 leave out the MPI data checks / the
# many-peers runs (PVRDMA_TIER_SCALE_RPN ranks per node, default 8); tb passes
# PVRDMA_* into the guests.
# PVRDMA_TIER_PARTS: core (the default, CI's run: devices, raw verbs and the
# meter, ud_recover, pvrdma-doctor, the BTL and UCX data sections, the
# metered jobs), extra (tests/bed/extended-tier.sh, tests/run --only
# extended-tier: ib_send_bw, the BTL's one-sided section, the 2 x 8 scale
# runs) or all.  On a CI machine 2.5 x slower than the usual one every MPI
# job on the nested nodes cost 1.5-3 minutes, and the whole tier did not fit.
. "$(dirname "$0")/lib.sh"
PARTS=${PVRDMA_TIER_PARTS:-core}
case $PARTS in core|extra|all) ;; *) fail "tier: PVRDMA_TIER_PARTS" "must be core, extra or all, got '$PARTS'"; bed_summary ;; esac
part() { [ "$PARTS" = all ] || [ "$PARTS" = "$1" ]; }
# data_part PART: the MPI data checks of PART run (2 nodes, PVRDMA_TIER_DATA)
data_part() { [ "$TB_HOSTS" -ge 2 ] && [ "${PVRDMA_TIER_DATA:-1}" = 1 ] && part "$1"; }
DEV=vmw_pvrdma0

devinfo=$(log_name devinfo-v)
ibv_devinfo -v -d "$DEV" >"$devinfo" 2>&1
field() { awk -v k="$1:" '$1 == k { print $2; exit }' "$devinfo"; }

devs=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
[ "$devs" = "$DEV " ] && pass "only RDMA device is $DEV" || fail "only RDMA device is $DEV" "found: $devs"
[ "$(basename "$(readlink /sys/class/infiniband/$DEV/device/driver)")" = vmw_pvrdma ] &&
    pass "driven by the vmw_pvrdma kernel driver" || fail "driven by the vmw_pvrdma kernel driver" "driver: $(readlink /sys/class/infiniband/$DEV/device/driver)"
[ "$(field vendor_part_id)" = 2080 ] && pass "vendor_part_id 2080 (PVRDMA)" || fail "vendor_part_id 2080 (PVRDMA)" "got $(field vendor_part_id) (log: $devinfo)"
[ "$(field state)" = PORT_ACTIVE ] && pass "port ACTIVE" || fail "port ACTIVE" "state $(field state)"
[ "$(field link_layer)" = Ethernet ] && pass "link layer Ethernet" || fail "link layer Ethernet" "got $(field link_layer)"
[ "$(field max_sge)" = 4 ] && pass "max_sge 4" || fail "max_sge 4" "got $(field max_sge)"
[ "$(field max_qp_rd_atom)" = 0 ] && pass "max_qp_rd_atom 0 (no RDMA READ initiator)" || fail "max_qp_rd_atom 0 (no RDMA READ initiator)" "got $(field max_qp_rd_atom)"

for i in $(seq 2 "$TB_HOSTS"); do
    check "ssh node$i reaches the nested guest" 180 ssh "node$i" "ls /sys/class/infiniband | grep -qx $DEV"
done

check_output "mpirun over TB_HOSTFILE reaches every nested node" 240 "node$TB_HOSTS" \
    "${MPIRUN[@]}" -np "$TB_HOSTS" --map-by node --mca btl tcp,self hostname

# The hypervisor-side meter (issue 19, scripts/testbed/pvrdma/meter): the
# bed's QEMU counts every doorbell and device command; a span is the
# difference of its counters at both ends.
METER=$(cd "$(dirname "$0")/../.." && pwd)/scripts/testbed/pvrdma/meter
MDIR=$TB_OUT/meter
mkdir -p "$MDIR"
if [ "$TB_HOSTS" -ge 2 ] && part core; then
    lat=$(log_name ib_send_lat)
    # max_inline_data is 0 on PVRDMA: -I 0 so perftest never asks for inline.
    # Metered (counters in the device model: no cost to the guest); its
    # counts are known: each side posts one send and one receive per
    # message, one WR per call.
    if timeout -k 10 260 "$METER" --label "ib_send_lat 8 B x 200" --out "$MDIR/ib_send_lat" -- \
            bash -c "$(declare -f perftest_pair); perftest_pair $lat ib_send_lat -d $DEV -I 0 -s 8 -n 200" 2>/dev/null; then
        pass "ib_send_lat node1<->node2 on $DEV (metered): typical $(perftest_field "$lat" 5) us (min $(perftest_field "$lat" 3))"
        for k in 1 2; do
            read -r s r _ _ p < <(meter_counts "$MDIR/ib_send_lat" "node$k")
            if [ "$s" -ge 200 ] && [ "$s" -le 202 ] && [ "$r" -ge 200 ] && [ "$r" -le 202 ]; then
                pass "meter: ib_send_lat -n 200 rang $s send and $r recv doorbells on node$k ($p CQ polls)"
            else
                fail "meter: ib_send_lat -n 200 rang 200 send and 200 recv doorbells on node$k" "counted $s and $r ($MDIR/ib_send_lat)"
            fi
        done
    else
        fail "ib_send_lat node1<->node2 on $DEV (metered)" "$(tail -n 3 "$lat" | tr '\n' ' ') (log: $lat; meter: $MDIR/ib_send_lat)"
    fi
fi
# RDMA-CM between the nested nodes (issue 38: openib's only connection
# scheme on RoCE): the connection manager's MADs go from the guest's QP1
# through QEMU's mad-chardev to the outer host's madmux, which relays them
# over UDP to the peer's madmux and into its guest.  perftest -R connects
# its QPs with rdma_cm; the server may not listen yet on the first try
# (perftest_pair retries "Couldn't connect" only).  In the extra part
# since 2026-12-02 (CI's time): only the openib row of scripts/bench/exits
# needs it, and that row runs only by name (--only openib).
if [ "$TB_HOSTS" -ge 2 ] && part extra; then
    cm=$(log_name rdma_cm_send_lat)
    ok=0
    ssh node2 "timeout 150 ib_send_lat -d $DEV -R -I 0 -s 8 -n 50" >"$cm.server" 2>&1 &
    spid=$!
    for i in $(seq 1 12); do
        sleep 5
        timeout 60 ib_send_lat -d "$DEV" -R -I 0 -s 8 -n 50 node2 >"$cm" 2>&1 && { ok=1; break; }
    done
    wait "$spid" 2>/dev/null
    relayed=$(cat /run/tb/madmux.node*.log 2>/dev/null | grep -o 'relayed an incoming MAD.*(CM [A-Za-z]*)' |
              grep -o '(CM [A-Za-z]*)' | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $3, $1 }' | tr -d ')')
    if [ "$ok" = 1 ] && [ -n "$(perftest_field "$cm" 5)" ] &&
       [[ $relayed == *ConnectRequest* && $relayed == *ConnectReply* && $relayed == *ReadyToUse* ]]; then
        pass "RDMA-CM connects node1<->node2 through the bed's MAD relay: ib_send_lat -R typical $(perftest_field "$cm" 5) us; CM MADs relayed: $relayed"
    else
        fail "RDMA-CM connects node1<->node2 through the bed's MAD relay" "ib_send_lat -R: $(tail -n 2 "$cm" | tr '\n' ' '); relayed: ${relayed:-none} (log: $cm; madmux logs in the run directory)"
    fi
fi
if [ "$TB_HOSTS" -ge 2 ] && part extra; then
    # ib_send_bw, not ib_write_bw: QEMU's device model posts every send WR to
    # the backend as IBV_WR_SEND (hw/rdma/rdma_backend.c), so an RDMA WRITE
    # arrives as a SEND and, with no receive posted, RNR-retries forever.
    bw=$(log_name ib_send_bw)
    # once more when perftest could not calibrate its clock ("Correlation
    # coefficient r^2 < 0.9", "Can't produce a report": the nested guest's
    # emulated TSC under load; the transfer itself went through)
    for try in 1 2; do
        timeout -k 10 300 bash -c "$(declare -f perftest_pair); perftest_pair $bw ib_send_bw -d $DEV -s 65536 -n 100" && break
        grep -q "Can't produce a report" "$bw" || break
        echo "# ib_send_bw: perftest could not calibrate its clock (try $try): $(grep -m1 'Correlation' "$bw")"
    done
    if [ -n "$(perftest_field "$bw" 4)" ]; then
        pass "ib_send_bw node1->node2 on $DEV: 64 KiB avg $(perftest_field "$bw" 4) MB/s"
    else
        fail "ib_send_bw node1->node2 on $DEV" "$(tail -n 3 "$bw" | tr '\n' ' ') (log: $bw)"
    fi
fi

# The diagnosis tool on a real vmw_pvrdma device: it must call it PVRDMA and pass.
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# The connection QP of both plugins on the real driver and provider (issue
# 41): every datagram length up to the MTU leaves it working
# (tests/fabric/ud_recover.c -n 0).  Its second step, a QP put into the
# error state and brought back, runs on rxe (stray.sh): QEMU's model
# neither flushes the receives of a QP moved to the error state nor
# reports that state to ibv_query_qp (seen 2026-11-27), so it cannot be
# staged here.
if part core; then
rlog=$(log_name "ud_recover")
if bed_program "$TOP/tests/fabric/ud_recover" "ud_recover on $DEV"; then
    timeout -k 10 120 "$TOP/tests/fabric/ud_recover" -d "$DEV:1" -n 0 >"$rlog" 2>&1
    rrc=$?
    while IFS= read -r l; do
        case $l in
            "ok - "*) pass "ud_recover on $DEV: ${l#ok - }" ;;
            *) fail "ud_recover on $DEV: ${l#not ok - }" "(log: $rlog)" ;;
        esac
    done < <(grep -E '^(not )?ok - ' "$rlog")
    [ $rrc = 0 ] && pass "ud_recover on $DEV: exits 0" ||
        fail "ud_recover on $DEV: exits 0" "exit $rrc: $(tail -n 2 "$rlog" | tr '\n' ' ') (log: $rlog)"
fi
# Registrations that start inside a page, four of them crossing one more
# page than their length rounds up to (tests/fabric/mr_span.c): a real
# device takes any byte range; QEMU's model refused those four ("Invalid
# nchunks/length") until the bed's qemu-mr-page-span.patch, and openib's
# malloc()ed CTS buffer failed with it ("Failed to reg mr!", 2026-12-06).
# On every node: each has its own device model.
if bed_program "$TOP/tests/fabric/mr_span" "mr_span on $DEV"; then
    for n in $(all_nodes); do
        mlog=$(log_name "mr_span.$n")
        timeout -k 10 60 ssh "$n" "$TOP/tests/fabric/mr_span" -d "$DEV" >"$mlog" 2>&1
        mrc=$? nok=$(grep -c ': ok$' "$mlog")
        if [ $mrc = 0 ] && [ "$nok" = 6 ]; then
            pass "mr_span on $n: 6 regions register, the 4 that cross one page more than their length too"
        else
            fail "mr_span on $n: 6 regions register, the 4 that cross one page more than their length too" \
                "exit $mrc, $nok registered: $(grep -v ': ok$' "$mlog" | head -n 3 | tr '\n' ' ') (log: $mlog)"
        fi
    done
fi
dlog=$(log_name "pvrdma-doctor")
# --quick: the Open MPI / UCX plugin checks (ompi_info, ucx_info) do not
# depend on the device, doctor.sh runs them on rxe, and on this nested
# node they took most of the doctor's ~120 s (2026-12-02)
timeout -k 10 180 "$TOP/scripts/pvrdma-doctor" --quick >"$dlog" 2>&1
drc=$?
if [ $drc -le 1 ] && grep -qE '^pvrdma-doctor: [0-9]+ PASS, [0-9]+ WARN, 0 FAIL$' "$dlog"; then
    pass "pvrdma-doctor --quick on a nested node: 0 FAIL (exit $drc)"
else
    fail "pvrdma-doctor --quick on a nested node: 0 FAIL" "exit $drc: $(tail -n 2 "$dlog" | tr '\n' ' ') (log: $dlog)"
fi
grep -qE "$DEV \\(vmw_pvrdma, RoCE, PCI 15ad:0820" "$dlog" &&
    pass "pvrdma-doctor reports $DEV as PVRDMA (driver vmw_pvrdma, PCI 15ad:0820)" ||
    fail "pvrdma-doctor reports $DEV as PVRDMA" "no '$DEV (vmw_pvrdma, RoCE, PCI 15ad:0820' line (log: $dlog)"
fi

# sub_suite EXPECTED CMD...: runs another bed script here; its checks count
# as ours, named "tier: ...".  EXPECTED (one check name per line: a prefix
# followed by ":", " " or the end, or with a final "$" the whole name) must
# each have been reported, so a renamed or filtered-out check cannot vanish; a
# sub-suite that printed nothing, or exited non-zero without a failed check,
# fails too.
sub_suite() {
    local expected=$1 line n=0 nfail=0 rc="" names="" want
    shift
    while IFS= read -r line; do
        case $line in
            "__sub_suite_rc="*) rc=${line#__sub_suite_rc=} ;;
            "ok - "*) echo "ok - tier: ${line#ok - }"; n=$((n + 1)); names+="${line#ok - }"$'\n' ;;
            # a lost node ends the tier too, as tests/run expects it
            "not ok - bed: "*) echo "$line"; exit 3 ;;
            "not ok - "*) echo "not ok - tier: ${line#not ok - }"; BED_FAILED=1
                          n=$((n + 1)); nfail=$((nfail + 1)); names+="${line#not ok - }"$'\n' ;;
        esac
    done < <("$@" 2>&1; echo "__sub_suite_rc=$?")
    if [ "$n" = 0 ]; then
        fail "tier: $*" "printed no checks (status ${rc:-unknown})"
    elif [ "${rc:-1}" != 0 ] && [ "$nfail" = 0 ]; then
        fail "tier: $*" "ended with status ${rc:-unknown} and no failed check"
    fi
    while IFS= read -r want; do
        [ -z "$want" ] || printf '%s' "$names" | awk -v w="$want" '
            BEGIN { exact = w ~ /\$$/; if (exact) w = substr(w, 1, length(w) - 1) }
            exact && $0 == w { found = 1 }
            !exact && index($0, w) == 1 && substr($0, length(w) + 1, 1) ~ /^([: ]|)$/ { found = 1 }
            END { exit !found }' ||
            fail "tier: ${want%\$}" "not reported by the sub-suite (renamed, filtered out or not run)"
    done <<<"$expected"
}

# The transports' data-integrity suites, the same scripts as on rxe, with
# only this device.  Nothing is forced: the transports must find out by
# themselves that RDMA WRITE does not land here (start-up probe) and move
# large messages with send/recv.
# mpi_check's tests but same_host and nb, which at 2 x 1 are p2p again (20-50
# s each of the tier's time on this slow device model); over pml ucx up to
# 256 KiB (UCP's rendezvous starts at 80 KiB there; its send/recv-only path
# moves larger messages at well under 1 MB/s on this model, and the UCP tag
# check below covers 0..1 MiB: UCP's rendezvous and its pipeline; 130 s at 0..4 MiB)
TIER_MPI_TESTS="p2p allpairs flood allreduce alltoall alltoallv bcast dtype ssend"
if data_part core; then
    sub_suite "btl 2x1: p2p
btl 2x1: run exits 0
btl: traffic to node2 went over pvrdma (RC QP connected)
btl 2x1: large messages by send/recv copies (no RDMA op)" \
        env BTL_ONLY="2x1" BTL_QUICK=1 BTL_TESTS="$TIER_MPI_TESTS" bash "$TOP/tests/bed/btl.sh"
    blog=$(dirname "$LOGDIR")/btl/btl_2x1.log
    if grep -q 'RDMA none (send/recv copies)' "$blog" && grep -q 'arrived as a SEND' "$blog"; then
        pass "tier: btl found RDMA WRITE broken by itself and used send/recv copies"
    else
        fail "tier: btl found RDMA WRITE broken by itself" "no probe/'RDMA none' lines (log: $blog)"
    fi
fi
if data_part extra; then
    # one-sided MPI on a device without atomics (issue 40): asked for them,
    # the BTL says why not at start-up; osc pt2pt serves windows (up to 64
    # B here: this model moves a message in ~4 ms)
    sub_suite "btl one-sided: btl_pvrdma_atomics on, device without atomics
btl 2x2 one-sided, atomics off (osc pt2pt): osc
btl 2x2 one-sided, atomics off (osc pt2pt): run exits 0
btl 2x2 one-sided, atomics off: osc pt2pt served the windows" \
        env BTL_ONLY="osc" BTL_OSC_MAX=64 bash "$TOP/tests/bed/btl.sh"
fi
if data_part core; then
    sub_suite "ucp tag 0..1 MiB verified, RDMA READ off (PVRDMA profile)$
ucp tag 0..1 MiB verified, RDMA READ off (PVRDMA profile) (server side)
ucp tag 0..1 MiB verified, RDMA READ off (PVRDMA profile): counts
mpi pml ucx 2x1: p2p
mpi pml ucx 2x1: run exits 0
mpi pml ucx: UCP endpoints use pvrdma/$DEV:1" \
        env PVRDMA_BED_DEV="$DEV:1" \
        PVRDMA_BED_MPI_ARGS="--quick --max-size 262144 $TIER_MPI_TESTS" \
        PVRDMA_BED_TAG_MAX=1048576 \
        PVRDMA_BED_ONLY='^(ucp tag( 0..1 MiB verified, RDMA READ off.*)?|mpi( pml ucx 2x1| pml ucx: UCP.*)?)$' \
        bash "$TOP/tests/bed/ucx.sh"
fi

# What one 8-byte message costs the hypervisor (issue 19): mpi_check
# metered, in jobs of their own over each transport, meters 200 round trips
# between node1 and node2 (200 messages sent and 200 received per node),
# then rank 0 waiting 3 s in MPI_Recv.  These jobs run with the idle wait
# set to spin 100 ms (longer than a round trip here, so the ping-pong never
# backs off), then one poll per 10 ms: each empty poll costs ~125 us here,
# so the default's rate (1 ms spin, a poll per 50 us: scripts/bench/exits')
# would change nothing.  The data jobs above keep the defaults (with these
# knobs the BTL's large-message steps waited up to 10 ms each: p2p took 2x).
IDLE_SPIN_MS=100 IDLE_POLL_MS=10 METERED_N=200
# send_bound_check NAME FILE NODE N BOUND UNIT: NODE's send doorbells in the
# meter's span FILE, per N UNITs (messages, blocks), are at most BOUND
send_bound_check() {
    local name=$1 f=$2 node=$3 n=$4 bound=$5 unit=$6 s p per
    read -r s _ _ _ p < <(meter_counts "$f" "$node")
    per=$(awk -v s="$s" -v n="$n" 'BEGIN { printf "%.3f", s / n }')
    if [ ! -s "$f" ]; then
        fail "meter: $name" "no counts ($f)"
    elif awk -v p="$per" -v b="$bound" 'BEGIN { exit !(p <= b) }'; then
        pass "meter: $name: $per send doorbells per $unit ($s for $n; at most $bound), $p CQ polls"
    else
        fail "meter: $name: at most $bound send doorbells per $unit" "$per ($s for $n, $p CQ polls; $f)"
    fi
}
A2A_BLOCKS=112
# a2a_check TAG WHAT PML: the metered Alltoall job over PML (ob1 with the
# BTL, or ucx) and its send doorbells per block on both nodes (bound 3.5)
a2a_check() {
    local tag=$1 what=$2 k f
    if [ "$3" = ob1 ]; then
        MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-a2a" mpi_check_run "btl 2x4 metered alltoall" 600 \
            -np 8 --map-by node --oversubscribe --mca pml ob1 --mca btl pvrdma,self \
            --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" -- metered_a2a
    else
        MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx-a2a" mpi_check_run "pml ucx 2x4 metered alltoall" 600 \
            -np 8 --map-by node --oversubscribe "${MUCX[@]}" -- metered_a2a
    fi
    f=$MDIR/$tag-a2a.alltoall.65536
    for k in 1 2; do
        send_bound_check "$what, Alltoall of 8 ranks, 64 KiB blocks, node$k" "$f" "node$k" \
            "$A2A_BLOCKS" 3.5 block
    done
}
if data_part core; then
    mpi_ucx_args MUCX pvrdma,self "$DEV:1"
    # the package's parameter file, as `module load pvrdma-mpi/btl` names it
    # (pml_ob1_send_pipeline_depth for the streams below)
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl" mpi_check_run "btl 2x1 metered" 300 \
        -np 2 --map-by node --mca pml ob1 --mca btl pvrdma,self \
        --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" \
        --mca btl_pvrdma_idle_spin $((IDLE_SPIN_MS * 1000)) \
        --mca btl_pvrdma_idle_poll_interval $((IDLE_POLL_MS * 1000)) -- metered
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx" mpi_check_run "pml ucx 2x1 metered" 300 \
        -np 2 --map-by node "${MUCX[@]}" -x "UCX_PVRDMA_IDLE_SPIN=${IDLE_SPIN_MS}ms" \
        -x "UCX_PVRDMA_IDLE_POLL_INTERVAL=${IDLE_POLL_MS}ms" -- metered
    # at most 1 send doorbell and 1/16 recv doorbell per message (receives
    # go back in WR lists), no device command (registration, QP change) in
    # steady state, a few more at the span's edges (a credit return or
    # keepalive probe may fall in it; a transport that reposted or returned
    # credits per message would be at N + N / 16 or more); CQ polls are
    # reported (they follow timing)
    for t in btl:"btl pvrdma" ucx:"pml ucx over uct pvrdma"; do
        f=$MDIR/${t%%:*}.lat.8 what=${t#*:}
        [ -s "$f" ] || { fail "meter: $what, 8 B messages" "no counts ($f): the metered test did not run"; continue; }
        for k in 1 2; do
            read -r s r q c p < <(meter_counts "$f" "node$k")
            r=$((r + q))
            per=$(awk -v s="$s" -v r="$r" -v p="$p" -v n="$METERED_N" 'BEGIN { printf "%.3f send + %.4f recv doorbells per message, %.1f CQ polls", s / n, r / n, p / n }')
            if [ "$s" -le $((METERED_N + 4)) ] && [ "$r" -le $((METERED_N / 16 + 2)) ] && [ "$c" = 0 ]; then
                pass "meter: $what, 8 B messages, node$k: $per, $c device commands"
            else
                fail "meter: $what, 8 B messages, node$k: at most 1 send + 1/16 recv doorbell, 0 commands" "$per, $c device commands ($f)"
            fi
        done
        # Sends as WR lists (issue 38): rank 0 (node1) streams 16 x 64 KiB
        # and 2 x 1 MiB to rank 1 (send/recv copies here: WRITE does not
        # land on this model; 8 KiB fragments), and 8 bursts of 32 x 8 B
        # (MPI_Isend, MPI_Waitall).  One doorbell per fragment or message
        # was 9, 129 and 1 per message over both transports (2026-11-27).
        # 1 MiB: the BTL took 6.0-6.5 with ob1 keeping 64 fragments in
        # flight (the parameter file's pml_ob1_send_pipeline_depth) and
        # short lists held while the wire is busy, then 4.0 in two runs
        # once a queue that grew in one progress turn went as one list of
        # up to 64 (LIST_MAX); pml ucx took 8.5, then 7.0 in two runs with
        # receives reposted and credits returned every 28 of the 38 this
        # model's CQ share gives a peer, not every 19 (2026-11-29); the
        # issue's bound, 2 + 1 per 256 KiB = 6, once a small job's channel
        # gets all 64 receives (its share follows the job's peers,
        # OMPI_COMM_WORLD_SIZE, 2026-12-06).  64 KiB:
        # 2.0 (BTL), 0.75 (ucx); bursts: 0.06 and 0.09.  The bounds (64 KiB
        # 2.25, 1 MiB 5 and 6, bursts 0.125) leave room for a credit
        # return, a keepalive or slower completions, and fail the code
        # before those changes.
        mib=6; [ "${t%%:*}" = btl ] && mib=5
        for m in 65536:16:2.25 1048576:2:$mib burst:256:0.125; do
            IFS=: read -r size n bound <<<"$m"
            if [ "$size" = burst ]; then f=$MDIR/${t%%:*}.burst.8 label="bursts of 32 x 8 B"
            else f=$MDIR/${t%%:*}.stream.$size label="$((size / 1024)) KiB stream"; fi
            send_bound_check "$what, $label" "$f" node1 "$n" "$bound" message
        done
        # rank 0 (node1) waited 3 s in MPI_Recv: the spin (100 ms, at most
        # ~1,000-1,400 polls here) and one poll per 10 ms after it (~300);
        # without the policy ~10,000
        f=$MDIR/${t%%:*}.idle.8
        read -r _ _ _ _ p < <(meter_counts "$f" node1)
        if [ ! -s "$f" ]; then
            fail "meter: $what, a rank waiting 3 s" "no counts ($f)"
        elif [ "$p" -le 3000 ]; then
            pass "meter: $what, a rank waiting 3 s (idle spin ${IDLE_SPIN_MS} ms, then a poll per ${IDLE_POLL_MS} ms): $p CQ polls"
        else
            fail "meter: $what, a rank waiting 3 s rings at most 3000 CQ polls (idle spin ${IDLE_SPIN_MS} ms, poll interval ${IDLE_POLL_MS} ms)" "$p CQ polls ($f)"
        fi
    done
    # The armed wait (issue 38): at the transports' default idle knobs
    # (spin 1 ms, then the back-off, armed after 10 ms of it) a rank that
    # waits arms its CQs once and reads their completion channel, a system
    # call, polling only when the event comes (or every 100 ms, to be safe).  This needs the bed's QEMU
    # patch (qemu-cq-arm-notify.patch: the model armed no CQ for
    # ibv_req_notify_cq(cq, 0)).  Rank 0 waiting 3 s, 2026-12-06: the BTL
    # rang 2,423 CQ polls with btl_pvrdma_idle_arm 0 (the back-off alone, a
    # poll per 16 empty polls' time), 62 and one arm armed after the spin.
    # Bound: 300 CQ polls and at least one arm on node1.
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/btl-armed" mpi_check_run "btl 2x1 metered, default idle wait" 300 \
        -np 2 --map-by node --mca pml ob1 --mca btl pvrdma,self \
        --mca mca_base_param_files "$BTL_MODULE_PARAM_FILES" -- metered
    MPI_CHECK_SPAN_CMD="$METER span $MDIR/ucx-armed" mpi_check_run "pml ucx 2x1 metered, default idle wait" 300 \
        -np 2 --map-by node "${MUCX[@]}" -- metered
    for t in btl:"btl pvrdma" ucx:"pml ucx over uct pvrdma"; do
        f=$MDIR/${t%%:*}-armed.idle.8 what=${t#*:}
        read -r _ _ _ _ p < <(meter_counts "$f" node1)
        a=$(awk '$1 == "node1" && $2 == "doorbell.cq.arm" { a += $3 } END { print a + 0 }' "$f" 2>/dev/null)
        if [ ! -s "$f" ]; then
            fail "meter: $what, a rank waiting 3 s at the default idle wait" "no counts ($f)"
        elif [ "$p" -le 300 ] && [ "${a:-0}" -ge 1 ]; then
            pass "meter: $what, a rank waiting 3 s at the default idle wait: $p CQ polls, $a CQ arms"
        else
            fail "meter: $what, a rank waiting 3 s at the default idle wait rings at most 300 CQ polls and arms its CQ" "$p CQ polls, ${a:-0} CQ arms ($f)"
        fi
    done
    # MPI_Alltoall of 8 ranks (issue 38), 4 per node: 4 rounds of 64 KiB
    # to every peer (8 KiB copy fragments here), every block checked; 3 of
    # a rank's 7 peers share its node and go through the device too.  Per
    # node, 4 ranks x 7 peers x 4 rounds = 112 blocks; one WR per fragment
    # would be 9 send doorbells per block.  Measured 2026-11-29 (two runs,
    # per node): 2.42-2.57 over the BTL and 1.90-2.10 over pml ucx, against
    # 8.0-8.5 and 7.1-7.7 with send coalescing off; the bound is 3.5.
    # (both runs are in the extra part since 2026-12-02: the BTL's took
    # 172 s and the tier 1,468 s of a clean-clone run; the same coalescing
    # code is checked in CI by the 64 KiB stream and the bursts above, and
    # by both suites' pingpong on rxe)
fi
if data_part extra; then
    mpi_ucx_args MUCX pvrdma,self "$DEV:1"
    a2a_check btl "btl pvrdma" ob1
    a2a_check ucx "pml ucx over uct pvrdma" ucx
fi

# The RC ACK timeout of these runs is 2.1 s (exponent 19, as in hosts4):
# 8 busy ranks on a 1-vCPU nested guest under an emulated outer one can
# leave a node's device model unanswered for seconds, and with the 268 ms
# default the whole retry window is ~2 s; a failed QP under pml ucx (no
# error callback) ends the job (CI, 2026-11-26: "ucs_fatal", exit 134).
# Many peers on the real vmw_pvrdma driver and provider (issue #15): every
# rank connects to every other over vmw_pvrdma0 (CQs of at most 4096
# entries, no resize_cq) with both transports.  The BTL's run is the
# per-rank limit of a small device: no SRQ (a real ESXi device may have
# none) and a CQ of PEERS x 64/3 entries, so the plan must lower the
# receives per peer (16 instead of 64) to fit every peer; the BTL's default
# configuration at this scale is the hosts4 suite's (rxe, 4 x 8), and the
# CQ-too-small error is tested there too (the same code on any device; here
# each extra MPI job costs ~3 of CI's minutes).
if [ "$TB_HOSTS" -ge 2 ] && [ "${PVRDMA_TIER_SCALE:-1}" = 1 ] && part extra; then
    R=${PVRDMA_TIER_SCALE_RPN:-8}
    S="scale btl ${TB_HOSTS}x$R small CQ"
    U="scale pml ucx ${TB_HOSTS}x$R"
    sub_suite "$S: allpairs
$S: run exits 0
$S: all
$S: receives per peer lowered to fit the CQ
$S: plan printed
$S: no connection datagram of the job taken for a replay or dropped unread
$U all pairs: allpairs
$U all pairs: run exits 0
$U all pairs: UCP endpoints use pvrdma/$DEV" \
        env SCALE_DEV="$DEV" SCALE_RPN="$R" SCALE_BTL_RPN="$R" SCALE_ONLY="ucx smallcq" \
        SCALE_RC_TIMEOUT="${PVRDMA_TIER_SCALE_RC_TIMEOUT:-19}" \
        bash "$TOP/tests/bed/scale.sh"
fi
bed_summary
