#!/bin/bash
# scripts/pvrdma-doctor on the bed (2 guests, rxe0 = SoftRoCE, not PVRDMA):
# a healthy guest passes; --json is valid JSON; deliberately broken set-ups
# (port down, memlock tiny, MTU mismatch, path MTU black hole, device
# missing) FAIL with the right remedy; --fix repairs the DOWN port; --peer
# runs. The PVRDMA-only logic (device identity, module load order, RoCE v1
# GIDs) is checked against a sysfs fixture built from a PVRDMA device's
# observed attributes, since the bed's kernel has no vmw_pvrdma.  Then, on
# the same boot, peer death over both transports (tests/bed/faults.sh).
. "$(dirname "$0")/lib.sh"
# this suite takes links down on purpose: a failed check is not a lost node
BED_LOST_NODE_CHECK=0
TOP=$(cd "$(dirname "$0")/../.." && pwd)
DOCTOR=$TOP/scripts/pvrdma-doctor
NETDEV=eth0

# doc NAME CMD...: run CMD (a doctor invocation) with a time limit; sets
# DOC_RC and DOC_LOG for the expectations that follow.
doc() {
    DOC_LOG=$(log_name "$1")
    shift
    timeout -k 10 240 "$@" >"$DOC_LOG" 2>&1
    DOC_RC=$?
}
# expect_rc NAME RC: the last doctor run exited with RC.
expect_rc() {
    if [ "$DOC_RC" = "$2" ]; then pass "$1"
    else fail "$1" "exit $DOC_RC, expected $2 (log: $DOC_LOG)"; fi
}
# expect_line NAME REGEX: the last doctor run printed a line matching REGEX.
expect_line() {
    if grep -qE -- "$2" "$DOC_LOG"; then pass "$1"
    else fail "$1" "no line matching /$2/ (log: $DOC_LOG)"; fi
}
# expect_no_fail NAME: no FAIL line in the last run.
expect_no_fail() {
    local f
    f=$(grep -E '^FAIL ' "$DOC_LOG" | head -n 3 | tr '\n' ' ')
    if [ -z "$f" ]; then pass "$1"; else fail "$1" "$f(log: $DOC_LOG)"; fi
}
# json_ok NAME FILE [PYTHON-ASSERTION]: FILE is a JSON array of
# {check, status, seen, remedy} with statuses PASS/WARN/FAIL.
json_ok() {
    local name=$1 file=$2 extra=${3:-True} err
    if err=$(python3 - "$file" "$extra" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert isinstance(r, list) and r, "not a non-empty array"
for e in r:
    assert set(e) == {"check", "status", "seen", "remedy"}, "keys %s" % sorted(e)
    assert e["status"] in ("PASS", "WARN", "FAIL"), e["status"]
    assert all(isinstance(e[k], str) for k in e), "non-string field"
by = {e["check"]: e for e in r}
assert eval(sys.argv[2]), "assertion failed: " + sys.argv[2]
PY
    ); then pass "$name"; else fail "$name" "$(tail -n 1 <<<"$err") (file: $file)"; fi
}
port_active() { grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; }
wait_active() {
    local i
    for i in $(seq 1 60); do port_active && return 0; sleep 0.5; done
    return 1
}
restore_rxe() {
    ip link set "$NETDEV" up
    [ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev "$NETDEV"
    wait_active
}

# --- a healthy guest --------------------------------------------------------
doc healthy "$DOCTOR"
expect_rc "healthy guest: exit 0" 0
expect_no_fail "healthy guest: no FAIL"
expect_line "healthy guest: devices WARN, says rxe0 is RoCE but not PVRDMA" \
    '^WARN  devices: no PVRDMA device; rxe0 is usable RoCE \(not PVRDMA\)'
for c in "kernel modules" "module load order" "port state rxe0:1" libibverbs \
         "userspace provider rxe0" "MTU rxe0:1" memlock "fork safety"; do
    expect_line "healthy guest: PASS $c" "^PASS  $c: "
done
expect_line "healthy guest: GID picks RoCE v2 IPv4-mapped index 1" \
    '^PASS  GID rxe0:1: our transports pick index 1: RoCE v2 ::ffff:10\.77\.0\.1 on eth0'
expect_line "healthy guest: provider is librxe from ibverbs-providers" \
    '^PASS  userspace provider rxe0: librxe-rdmav[0-9]+\.so \(ibverbs-providers'
expect_line "healthy guest: Open MPI plugin PASS or WARN (not installed)" \
    '^(PASS  Open MPI plugin: .*built against Open MPI [0-9.]+, installed [0-9.]+|WARN  Open MPI plugin: .* not installed)'
expect_line "healthy guest: UCX plugin PASS or WARN (not installed)" \
    '^(PASS  UCX plugin: .*transport pvrdma on rxe0:1|WARN  UCX plugin: .* not installed)'
expect_line "healthy guest: summary line" '^pvrdma-doctor: [0-9]+ PASS, [0-9]+ WARN, 0 FAIL$'

doc json "$DOCTOR" --json
expect_rc "--json: exit 0 on a healthy guest" 0
json_ok "--json: valid JSON array of {check,status,seen,remedy}" "$DOC_LOG" \
    'by["port state rxe0:1"]["status"] == "PASS" and by["devices"]["status"] == "WARN"'

doc usage "$DOCTOR" --bogus
expect_rc "bad argument: exit 2" 2

# --- port down (netdev down), then --fix -------------------------------------
ip link set "$NETDEV" down
sleep 1
doc port-down "$DOCTOR" --quick
expect_rc "port down: exit 1" 1
expect_line "port down: port state FAIL" '^FAIL  port state rxe0:1: DOWN .*netdev eth0 DOWN'
expect_line "port down: remedy ip link set eth0 up" '^      remedy: ip link set eth0 up'
doc port-fix "$DOCTOR" --quick --fix
expect_rc "port down --fix: exit 0" 0
expect_line "port down --fix: says what it fixed" '^PASS  port state rxe0:1: ACTIVE after --fix \(brought eth0 up\)'
if port_active; then pass "port down --fix: rxe0 port really ACTIVE"
else fail "port down --fix: rxe0 port really ACTIVE" "$(cat /sys/class/infiniband/rxe0/ports/1/state)"; fi
restore_rxe

# --- memlock, as an unprivileged user (root has CAP_IPC_LOCK: not subject) ---
doc memlock-tiny bash -c "ulimit -l 64 && exec setpriv --reuid=65534 --regid=65534 --clear-groups $DOCTOR --quick"
expect_rc "memlock 64 KiB (user nobody): exit 1" 1
expect_line "memlock 64 KiB: FAIL" '^FAIL  memlock: ulimit -l 64 KiB .*for nobody'
expect_line "memlock 64 KiB: limits.conf remedy" "remedy: for user nobody: add to /etc/security/limits.d/pvrdma.conf the lines 'nobody soft memlock unlimited'"
expect_line "memlock 64 KiB: guest memory reservation hint" 'remedy: .*Reserve all guest memory'
doc memlock-mid bash -c "ulimit -l 1048576 && exec setpriv --reuid=65534 --regid=65534 --clear-groups $DOCTOR --quick"
expect_line "memlock 1 GiB (user nobody): WARN" '^WARN  memlock: ulimit -l 1048576 KiB'
expect_rc "memlock 1 GiB (user nobody): WARN only, exit 0" 0
doc memlock-root bash -c "ulimit -l 64 && exec $DOCTOR --quick"
expect_line "memlock 64 KiB as root: PASS (CAP_IPC_LOCK)" '^PASS  memlock: ulimit -l 64 KiB, but root has CAP_IPC_LOCK'

# --- device missing --------------------------------------------------------
rdma link delete rxe0
doc dev-missing "$DOCTOR" --quick
expect_rc "device missing: exit 1" 1
expect_line "device missing: devices FAIL" '^FAIL  devices: no RDMA device'
expect_line "device missing: remedy rdma link add" 'remedy: SoftRoCE: rdma link add rxe0 type rxe netdev eth0'
doc dev-missing-json "$DOCTOR" --quick --json
json_ok "device missing: --json valid and says FAIL" "$DOC_LOG" 'by["devices"]["status"] == "FAIL"'
restore_rxe && pass "device missing: rxe0 restored" || fail "device missing: rxe0 restored" "not ACTIVE"

# --- with a peer -----------------------------------------------------------
doc peer "$DOCTOR" --quick --peer node2
expect_rc "--peer node2: exit 0" 0
for c in "peer node2" "netdev MTU vs node2" "path MTU to node2" "ib_send_bw node2" "ib_send_lat node2"; do
    expect_line "--peer node2: PASS $c" "^PASS  $c: "
done

# Jumbo frames on one side only.
ip link set "$NETDEV" mtu 4000
doc mtu-mismatch "$DOCTOR" --quick --peer node2
expect_rc "MTU 4000 here, 1500 on node2: exit 1" 1
expect_line "MTU mismatch: FAIL names both MTUs" '^FAIL  netdev MTU vs node2: MTU differs: node1 eth0 4000, node2 eth0 1500'
expect_line "MTU mismatch: remedy sets one MTU" 'remedy: use one MTU everywhere: ip link set dev eth0 mtu 1500'
expect_line "MTU mismatch: local RoCE MTU still fits (PASS)" '^PASS  MTU rxe0:1: active_mtu 2048 fits eth0 MTU 4000'

# Both VMs at 4000 but a hop that drops frames over 1600 bytes (node2's
# ingress stands in for a switch without jumbo frames, as in seed 002).
ssh node2 "ip link set $NETDEV mtu 4000 && tc qdisc add dev $NETDEV handle ffff: ingress &&
    tc filter add dev $NETDEV parent ffff: protocol ip basic match 'meta(pkt_len gt 1600)' action drop" \
    >"$(log_name blackhole-setup)" 2>&1
doc pmtu-blackhole "$DOCTOR" --quick --peer node2
expect_rc "path MTU black hole: exit 1" 1
expect_line "path MTU black hole: FAIL with the largest size that passes" \
    '^FAIL  path MTU to node2: only packets up to about 1[56][0-9][0-9] bytes reach node2 unfragmented, local MTU 4000'
expect_line "path MTU black hole: perftest skipped, not hung" '^WARN  ib_send_bw/ib_send_lat node2: skipped'
# Our MTU first: then ssh's segments to node2 fit under its filter.
ip link set "$NETDEV" mtu 1500
timeout 60 ssh node2 "tc qdisc del dev $NETDEV ingress; ip link set $NETDEV mtu 1500" >/dev/null 2>&1
wait_active

# --- PVRDMA logic on a fixture -------------------------------------------
# A sysfs tree shaped like a guest with vmw_pvrdma0 (PCI 15ad:0820 at
# function 1, vmxnet3 ens192 at function 0) and QEMU-pvrdma-like values
# (RoCE v1 GIDs, active_mtu 1024); /proc/modules in a chosen load order.
FIX=$(mktemp -d /tmp/doctor-fixture.XXXXXX)
make_fixture() {  # GIDTYPES(v1|v1v2) PORTSTATE NETDEV_MTU MODULES...(newest first)
    local types=$1 state=$2 mtu=$3 s=$FIX/sys p
    shift 3
    rm -rf "${FIX:?}"/*
    p=$s/bus/pci/devices/0000:0b:00.1
    mkdir -p "$p" "$s/bus/pci/devices/0000:0b:00.0/net/ens192" "$s/bus/pci/drivers/vmw_pvrdma" \
        "$s/class/infiniband/vmw_pvrdma0/ports/1/gids" "$s/class/infiniband/vmw_pvrdma0/ports/1/gid_attrs/types" \
        "$s/class/infiniband/vmw_pvrdma0/ports/1/gid_attrs/ndevs" "$s/class/net/ens192" \
        "$s/class/infiniband_verbs/uverbs0"
    echo 0x15ad >"$p/vendor"; echo 0x0820 >"$p/device"
    ln -s "$s/bus/pci/drivers/vmw_pvrdma" "$p/driver"
    ln -s "$p" "$s/class/infiniband/vmw_pvrdma0/device"
    echo vmw_pvrdma0 >"$s/class/infiniband_verbs/uverbs0/ibdev"
    local port=$s/class/infiniband/vmw_pvrdma0/ports/1 i=0 g t
    case $state in
        ACTIVE) echo "4: ACTIVE" >"$port/state"; echo "5: LinkUp" >"$port/phys_state" ;;
        *) echo "1: DOWN" >"$port/state"; echo "3: Disabled" >"$port/phys_state" ;;
    esac
    echo Ethernet >"$port/link_layer"
    local gids=(fe80:0000:0000:0000:0250:56ff:fe8a:9fc2 0000:0000:0000:0000:0000:ffff:c0a8:3320)
    for g in "${gids[@]}"; do
        for t in "IB/RoCE v1" "RoCE v2"; do
            [ "$types" = v1 ] && [ "$t" = "RoCE v2" ] && continue
            echo "$g" >"$port/gids/$i"; echo "$t" >"$port/gid_attrs/types/$i"; echo ens192 >"$port/gid_attrs/ndevs/$i"
            i=$((i + 1))
        done
    done
    for ((; i < 6; i++)); do echo 0000:0000:0000:0000:0000:0000:0000:0000 >"$port/gids/$i"; done
    echo "$mtu" >"$s/class/net/ens192/mtu"; echo 0x1003 >"$s/class/net/ens192/flags"
    for i in "$@"; do echo "$i 16384 0 - Live 0x0000000000000000"; done >"$FIX/modules"
    cat >"$FIX/ibv_devinfo" <<EOF
#!/bin/sh
printf 'hca_id:\tvmw_pvrdma0\n\ttransport:\t\t\tInfiniBand (0)\n\tvendor_id:\t\t\t0x15ad\n\tvendor_part_id:\t\t\t2080\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_$state (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t1024 (3)\n\t\t\tlink_layer:\t\tEthernet\n'
EOF
    chmod +x "$FIX/ibv_devinfo"
}
fixture_doc() {  # NAME ARGS...
    local name=$1
    shift
    doc "$name" env PVRDMA_DOCTOR_SYSFS="$FIX/sys" PVRDMA_DOCTOR_MODULES="$FIX/modules" \
        PVRDMA_DOCTOR_IBV_DEVINFO="$FIX/ibv_devinfo" "$DOCTOR" --quick "$@"
}
GOOD_ORDER=(vmw_pvrdma rdma_ucm rdma_cm ib_umad ib_uverbs ib_core vmxnet3)
BAD_ORDER=(rdma_ucm rdma_cm ib_umad vmw_pvrdma ib_uverbs ib_core vmxnet3)

make_fixture v1 ACTIVE 1500 "${GOOD_ORDER[@]}"
# an old guest kernel (RHEL 8's) without RDMAV_FORK_SAFE: fork safety WARNs
export PVRDMA_DOCTOR_KERNEL=4.18.0-477.el8.x86_64
fixture_doc fixture-pvrdma-ok
expect_line "fixture kernel 4.18 without RDMAV_FORK_SAFE: fork safety WARN with the remedy" \
    '^WARN  fork safety: kernel 4\.18\.0-477\.el8\.x86_64 \(before 5\.13\)'
expect_rc "fixture PVRDMA, RoCE v1, right load order: exit 0" 0
expect_line "fixture PVRDMA: devices PASS names vmw_pvrdma0 (15ad:0820)" '^PASS  devices: PVRDMA: vmw_pvrdma0; all devices: vmw_pvrdma0 \(vmw_pvrdma, RoCE, PCI 15ad:0820 0000:0b:00.1, vendor_part_id 2080, netdev ens192\)'
expect_line "fixture PVRDMA: load order PASS" '^PASS  module load order: vmw_pvrdma loaded after ib_umad rdma_cm rdma_ucm'
expect_line "fixture PVRDMA: RoCE v1 only is a WARN picking the IPv4-mapped GID" \
    '^WARN  GID vmw_pvrdma0:1: RoCE v1 only: our transports pick index 1: RoCE v1 ::ffff:192\.168\.51\.32 on ens192'
expect_line "fixture PVRDMA: provider libvmw_pvrdma PASS" '^PASS  userspace provider vmw_pvrdma0: libvmw_pvrdma-rdmav[0-9]+\.so'

make_fixture v1v2 DOWN 1500 "${BAD_ORDER[@]}"
RDMAV_FORK_SAFE=1 fixture_doc fixture-pvrdma-order
unset PVRDMA_DOCTOR_KERNEL
expect_line "fixture kernel 4.18 with RDMAV_FORK_SAFE=1: fork safety PASS" \
    '^PASS  fork safety: kernel 4\.18.* needs fork protection; RDMAV_FORK_SAFE is set'
expect_rc "fixture PVRDMA loaded before ib_umad/rdma_cm/rdma_ucm, port DOWN: exit 1" 1
expect_line "fixture PVRDMA bad order: FAIL names the modules" \
    '^FAIL  module load order: vmw_pvrdma was loaded before ib_umad rdma_cm rdma_ucm'
expect_line "fixture PVRDMA bad order: remedy reloads in order and persists" \
    "remedy: modprobe ib_umad && modprobe rdma_cm && modprobe rdma_ucm && modprobe -r vmw_pvrdma && modprobe vmw_pvrdma .*softdep vmw_pvrdma pre: ib_umad rdma_cm rdma_ucm"
expect_line "fixture PVRDMA port DOWN: FAIL with the reload remedy" '^FAIL  port state vmw_pvrdma0:1: DOWN'
expect_line "fixture PVRDMA v1+v2 GIDs: picks RoCE v2 IPv4-mapped (index 3)" \
    '^PASS  GID vmw_pvrdma0:1: our transports pick index 3: RoCE v2 ::ffff:192\.168\.51\.32'

make_fixture v1v2 ACTIVE 1000 "${GOOD_ORDER[@]}"
fixture_doc fixture-pvrdma-mtu
expect_rc "fixture PVRDMA netdev MTU 1000 < RoCE 1024 + headers: exit 1" 1
expect_line "fixture netdev MTU too small: FAIL with remedy" \
    '^FAIL  MTU vmw_pvrdma0:1: RoCE active_mtu 1024 does not fit ens192 MTU 1000'
fixture_doc fixture-pvrdma-json --json
json_ok "fixture --json valid" "$DOC_LOG" 'by["MTU vmw_pvrdma0:1"]["status"] == "FAIL"'
rm -rf "$FIX"

# peer death over both transports, on this boot (it takes node2's link
# down too): tests/bed/faults.sh; its link cases (the transports' own
# keepalive finds the dead peer), the kill -9 cases (Open MPI's mpirun
# notices first) in tests/run --only extended (CI's time, 2026-12-02)
FAULTS_ONLY=${FAULTS_ONLY:-btl-link ucx-link} bash "$(dirname "$0")/faults.sh" || BED_FAILED=1
# stray and forged datagrams at the connection QPs while jobs run (issue
# 18): tests/bed/stray.sh, on this boot too
bash "$(dirname "$0")/stray.sh" || BED_FAILED=1
bed_summary
