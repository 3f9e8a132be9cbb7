# shellcheck shell=bash
# pvrdma-doctor --peer HOST: netdev MTUs on both sides, a path MTU probe
# without fragmentation, and a short ib_send_bw / ib_send_lat run.

SSH=(ssh -o BatchMode=yes -o ConnectTimeout=15)

# peer_sh CMD: run CMD on the peer (bash), with our sysfs helpers defined
# there, so the peer needs neither the doctor nor anything but bash.
peer_sh() {
    local prog
    prog="SYS=/sys
$(declare -f rd ib_devices pci_addr is_pvrdma dev_ports port_state link_layer gid_table gid_pick pick_port)
$1"
    # The program goes on stdin: no quoting through the remote login shell.
    timeout "${PEER_SH_TIMEOUT:-60}" "${SSH[@]}" -- "$PEER" bash -s <<<"$prog"
}

# ping_ok SIZE: an ICMP echo of SIZE payload bytes, DF set, comes back.
ping_ok() { timeout 10 ping -M 'do' -s "$1" -c 1 -W 3 "$PEER_IP" >/dev/null 2>&1; }

# peer_resolve: PEER_IP, and the local netdev, source address and MTU
# of the route to it.
peer_resolve() {
    local route
    PEER_IP=$(getent ahostsv4 "$PEER" 2>/dev/null | awk '{ print $1; exit }')
    if [ -z "$PEER_IP" ]; then
        result FAIL "peer $PEER" "cannot resolve $PEER to an IPv4 address" "use an address or add $PEER to /etc/hosts / DNS"
        return 1
    fi
    route=$(ip -o route get "$PEER_IP" 2>/dev/null)
    LOCAL_NETDEV=$(sed -n 's/.* dev \([^ ]*\).*/\1/p' <<<"$route")
    LOCAL_SRC=$(sed -n 's/.* src \([^ ]*\).*/\1/p' <<<"$route")
    LOCAL_MTU=$(rd "/sys/class/net/$LOCAL_NETDEV/mtu")
}

check_peer_ssh() {
    local name="peer $PEER"
    PEER_SSH=0
    # One ssh round trip for everything the later checks need from the peer:
    # line 1 its netdev and MTU on the route back, line 2 its port and GID.
    PEER_INFO=$(PEER_SH_TIMEOUT=25 peer_sh 'r=$(ip -o route get '"$LOCAL_SRC"')
        d=$(sed -n "s/.* dev \([^ ]*\).*/\1/p" <<<"$r"); echo "$d $(rd /sys/class/net/$d/mtu)"
        read -r d p < <(pick_port); [ -n "$d" ] && echo "$d $p $(gid_pick "$d" "$p")"; true' 2>/dev/null)
    if [ $? = 0 ] && [ -n "$PEER_INFO" ]; then
        PEER_SSH=1
        result PASS "$name" "$PEER is $PEER_IP; ssh without prompts works"
    else
        result WARN "$name" "$PEER is $PEER_IP; ssh $PEER (BatchMode) fails: cannot compare MTUs or start ib_send_bw there" \
            "set up key-based ssh: ssh-keygen; ssh-copy-id $PEER (mpirun needs it too)"
    fi
    return 0
}

# Jumbo frames set on one side only are the classic RoCE/TCP black hole.
check_peer_mtu() {
    local name="netdev MTU vs $PEER" ldev=$LOCAL_NETDEV lmtu=$LOCAL_MTU pout pdev pmtu
    if [ "$PEER_SSH" != 1 ]; then return 0; fi
    pout=$(head -n 1 <<<"$PEER_INFO")
    read -r pdev pmtu <<<"$pout"
    if [ -z "${pmtu:-}" ]; then
        result WARN "$name" "cannot read $PEER's MTU (ssh output: ${pout:-none})" "run ip link show on $PEER"
    elif [ "$pmtu" != "$lmtu" ]; then
        result FAIL "$name" "MTU differs: $(hostname) $ldev $lmtu, $PEER $pdev $pmtu (jumbo frames on one side only?)" \
            "use one MTU everywhere: ip link set dev $ldev mtu $pmtu here (or raise $PEER and the distributed/physical switches to $lmtu)"
    else
        result PASS "$name" "$(hostname) $ldev $lmtu = $PEER $pdev $pmtu"
    fi
}

check_path_mtu() {
    local name="path MTU to $PEER" mtu=${LOCAL_MTU:-1500} lo hi mid size out
    if ! command -v ping >/dev/null 2>&1; then
        result WARN "$name" "ping not installed: cannot probe without fragmentation" "apt-get install iputils-ping"
        return
    fi
    size=$((mtu - 28))   # IPv4 20 + ICMP 8 headers
    [ "$size" -gt 65507 ] && size=65507 mtu=65535
    if out=$(timeout 10 ping -M 'do' -s "$size" -c 1 -W 3 "$PEER_IP" 2>&1); then
        result PASS "$name" "$mtu-byte packets reach $PEER unfragmented (ping -M do -s $size)"
        return
    fi
    if grep -qi -E 'permitted|socket' <<<"$out"; then
        result WARN "$name" "ping is not allowed for $(id -un): $(head -n 1 <<<"$out")" "run the doctor as root for this probe"
        return
    fi
    if ! ping_ok 28; then
        result FAIL "$name" "$PEER ($PEER_IP) does not answer ping at all" "check the network between the VMs (same port group/VLAN, firewall)"
        return
    fi
    local known
    known=$(sed -n 's/.*message too long, mtu=\([0-9]*\).*/\1/p' <<<"$out" | head -n 1)
    if [ -n "$known" ]; then
        # The kernel already knows a smaller path MTU (route MTU, or an ICMP
        # "fragmentation needed" from a hop).
        lo=$((known - 28))
    else
        # Largest size that gets through: bisect (at most ~11 probes).
        lo=28 hi=$size
        while [ $((hi - lo)) -gt 8 ]; do
            mid=$(((lo + hi) / 2))
            if ping_ok "$mid"; then lo=$mid; else hi=$mid; fi
        done
    fi
    result FAIL "$name" "only packets up to about $((lo + 28)) bytes reach $PEER unfragmented, local MTU $mtu (a VM, the distributed switch or a physical switch on the path has a smaller MTU; TCP, ssh included, stalls on such a path too)" \
        "set the same MTU on both VMs, the distributed switch (Configure > Properties > Advanced > MTU) and the physical switch ports, or lower this MTU: ip link set dev ${LOCAL_NETDEV:-DEV} mtu $((lo + 28))"
}

# perftest_run NAME TOOL ARGS...: server on the peer over ssh, client here
# (retried while the server is not listening yet). Output in PERF_OUT.
perftest_run() {
    local tool=$1 i rc=1 spid
    shift
    local sargs="-d $PEER_DEV -i $PEER_PORT -x $PEER_GID $*"
    "${SSH[@]}" -n -- "$PEER" "timeout 60 $tool $sargs" >"$TMPD/$tool.server" 2>&1 &
    spid=$!
    for i in $(seq 1 20); do
        sleep 1
        PERF_OUT=$(timeout 60 "$tool" -d "$LOCAL_DEV" -i "$LOCAL_PORT" -x "$LOCAL_GID" "$@" "$PEER_IP" 2>&1) && { rc=0; break; }
        grep -q "Couldn't connect" <<<"$PERF_OUT" || break
    done
    [ $rc = 0 ] || kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    [ $rc = 0 ] || PERF_OUT+=" server: $(tail -n 3 "$TMPD/$tool.server" | tr '\n' ' ')"
    return $rc
}

# Result rows of perftest start with the message size.
perftest_field() { awk -v n="$2" '$1 ~ /^[0-9]+$/ && NF >= n { print $n; exit }' <<<"$1"; }

check_perftest() {
    local sel ptier ltier ltype ptype lgid pgid
    if ! command -v ib_send_bw >/dev/null 2>&1; then
        result WARN "ib_send_bw/ib_send_lat $PEER" "perftest not installed" "apt-get install perftest"
        return
    fi
    if [ "$PEER_SSH" != 1 ]; then
        result WARN "ib_send_bw/ib_send_lat $PEER" "skipped: no ssh to $PEER" \
            "set up key-based ssh, or by hand: on $PEER ib_send_bw -x GID_INDEX; here ib_send_bw -x GID_INDEX $PEER"
        return
    fi
    read -r LOCAL_DEV LOCAL_PORT < <(pick_port)
    read -r ltier LOCAL_GID lgid ltype _ < <(gid_pick "$LOCAL_DEV" "$LOCAL_PORT")
    sel=$(sed -n 2p <<<"$PEER_INFO")
    read -r PEER_DEV PEER_PORT ptier PEER_GID pgid ptype _ <<<"$sel"
    if [ -z "${LOCAL_GID:-}" ] || [ -z "${PEER_GID:-}" ]; then
        result FAIL "ib_send_bw/ib_send_lat $PEER" "no usable port/GID: here ${LOCAL_DEV:-none} GID ${LOCAL_GID:-none}, $PEER ${PEER_DEV:-none} GID ${PEER_GID:-none}" \
            "fix the port/GID checks above on both hosts (run pvrdma-doctor on $PEER)"
        return
    fi
    local pair="$LOCAL_DEV:$LOCAL_PORT GID $LOCAL_GID (RoCE $ltype) <-> $PEER $PEER_DEV:$PEER_PORT GID $PEER_GID (RoCE $ptype)"
    if [ "$ltype" != "$ptype" ]; then
        result FAIL "ib_send_bw/ib_send_lat $PEER" "GID types differ: $pair" \
            "use the same RoCE version on both VMs (adapter Device Protocol), or pick GIDs of one type (--mca btl_pvrdma_gid_index N)"
        return
    fi
    if perftest_run ib_send_bw -s 65536 -n 20 -F; then
        result PASS "ib_send_bw $PEER" "65536 B x 20: $(perftest_field "$PERF_OUT" 4) MB/s average ($pair)"
    else
        result FAIL "ib_send_bw $PEER" "failed ($pair): $(tail -n 4 <<<"$PERF_OUT" | tr '\n' ' ' | cut -c1-400)" \
            "check both ports ACTIVE and GIDs (above, and pvrdma-doctor on $PEER); on ESXi: vmknic tagged (Net.PVRDMAVmknic) and firewall ruleset pvrdma enabled on both hosts"
        return
    fi
    if perftest_run ib_send_lat -s 8 -n 100 -F; then
        result PASS "ib_send_lat $PEER" "8 B x 100: typical $(perftest_field "$PERF_OUT" 5) us"
    else
        result FAIL "ib_send_lat $PEER" "failed ($pair): $(tail -n 4 <<<"$PERF_OUT" | tr '\n' ' ' | cut -c1-400)" \
            "check both ports ACTIVE and GIDs; rerun by hand: ib_send_lat -x $PEER_GID on $PEER, ib_send_lat -x $LOCAL_GID $PEER here"
    fi
}

check_peer_all() {
    local fails
    peer_resolve || return 0
    fails=$N_FAIL
    # The ping probe first: it is quick, and explains an ssh that hangs.
    check_path_mtu
    check_peer_ssh
    check_peer_mtu
    if [ "$N_FAIL" != "$fails" ]; then
        # RoCE frames would be dropped on that path: perftest would only
        # hang until its timeouts.
        result WARN "ib_send_bw/ib_send_lat $PEER" "skipped: the MTU checks with $PEER failed" \
            "fix the MTU first, then run pvrdma-doctor --peer $PEER again"
        return 0
    fi
    check_perftest
}
