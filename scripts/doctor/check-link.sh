# shellcheck shell=bash
# pvrdma-doctor: the GID our transports will pick, and RoCE MTU vs netdev MTU.

# Linux's RoCE drivers leave this much of the netdev MTU for headers
# (iboe_get_mtu(): GRH 40 + UDP 8 + BTH 12 + largest extended header 32 +
# ICRC 4 = 96): the RoCE MTU must fit in the netdev MTU minus these.
ROCE_HDR_BYTES=96

check_gid() {
    local dev=$1 port=$2 name="GID $1:$2" tier idx gid type nd table="" i g t n
    while read -r i g t n; do
        [ "$t" = IB ] && t=IB || t="RoCE $t"
        table+="${table:+, }$i $t $(gid_show "$g") ($n)"
    done < <(gid_table "$dev" "$port")
    read -r tier idx gid type nd < <(gid_pick "$dev" "$port")
    local pnd
    pnd=$(port_netdev "$dev" "$port")
    if [ -z "${tier:-}" ]; then
        result FAIL "$name" "GID table empty" \
            "bring ${pnd:-the paired netdev} up and give it an IP address: ip link set ${pnd:-NETDEV} up; ip addr add ADDR/PREFIX dev ${pnd:-NETDEV}"
        return
    fi
    local pick="index $idx: RoCE $type $(gid_show "$gid") on ${nd}"
    [ "$type" = IB ] && pick="index $idx: IB $(gid_show "$gid")"
    local why="our transports pick $pick (override: --mca btl_pvrdma_gid_index N); table: $table"
    case $tier in
        1) result PASS "$name" "$why" ;;
        3) result WARN "$name" "RoCE v1 only: $why" \
               "fine within one L2 segment; RoCE v1 is not routable: for RoCE v2 set the adapter's Device Protocol to RoCE v2 (VM settings) and check the host NIC supports it" ;;
        *)
            if [ "$(link_layer "$dev" "$port")" = Ethernet ]; then
                result WARN "$name" "no IPv4-mapped GID on ${pnd:-the netdev}: $why" \
                    "give ${pnd:-NETDEV} the IPv4 address peers reach (ip addr add ADDR/PREFIX dev ${pnd:-NETDEV}); a link-local GID only works within one L2 segment"
            else
                result PASS "$name" "InfiniBand port: $why"
            fi ;;
    esac
}

# active_mtu DEV PORT: the port's active MTU in bytes (ibv_devinfo; sysfs
# does not have it).
active_mtu() {
    timeout 30 $IBV_DEVINFO -d "$1" -i "$2" 2>/dev/null |
        awk '$1 == "active_mtu:" { print $2; exit }'
}

check_mtu() {
    local dev=$1 port=$2 name="MTU $1:$2" am nd nm room hint=""
    [ "$(link_layer "$dev" "$port")" = Ethernet ] || { result PASS "$name" "InfiniBand port: no netdev MTU involved"; return; }
    am=$(active_mtu "$dev" "$port")
    nd=$(port_netdev "$dev" "$port")
    nm=$(rd "$SYS/class/net/$nd/mtu")
    if [ -z "$am" ] || [ -z "$nm" ]; then
        result WARN "$name" "cannot compare: active_mtu ${am:-unknown} (ibv_devinfo), netdev ${nd:-?} MTU ${nm:-unknown}" \
            "apt-get install ibverbs-utils; check ip link show ${nd:-NETDEV}"
        return
    fi
    room=$((nm - ROCE_HDR_BYTES))
    if [ "$am" -gt "$room" ]; then
        result FAIL "$name" "RoCE active_mtu $am does not fit $nd MTU $nm (needs >= $((am + ROCE_HDR_BYTES)) with $ROCE_HDR_BYTES B of RoCE headers): frames get dropped" \
            "ip link set dev $nd mtu $((am + ROCE_HDR_BYTES > 1500 ? am + ROCE_HDR_BYTES : 1500)) (same MTU on every VM, the distributed switch and the physical switch)"
        return
    fi
    if [ "$nm" -ge 9000 ] && [ "$am" -le 1024 ]; then
        hint="; jumbo frames on $nd but RoCE uses $am$(is_pvrdma "$dev" && echo " (PVRDMA's MTU is set by the ESXi host)"): jumbo frames must be set on every VM, the distributed switch and the physical switch alike (check with --peer)"
    fi
    if [ "$am" -lt 1024 ]; then
        result WARN "$name" "RoCE active_mtu only $am ($nd MTU $nm)$hint" \
            "raise $nd MTU to >= 1500 (ip link set dev $nd mtu 1500) so the RoCE MTU can be 1024"
        return
    fi
    result PASS "$name" "active_mtu $am fits $nd MTU $nm (RoCE headers $ROCE_HDR_BYTES B)$hint"
}
