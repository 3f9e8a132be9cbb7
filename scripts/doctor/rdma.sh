# shellcheck shell=bash
# pvrdma-doctor: reading RDMA devices, ports and GID tables from sysfs.
# Only bash builtins and sysfs, so these functions are also sent to a --peer
# over ssh (declare -f) and work there without the doctor installed.
# $SYS is the sysfs root (/sys; a fixture tree in tests).

# rd FILE: first line of FILE, empty when missing or unreadable (a
# gid_attrs file of an empty GID entry fails with EINVAL).
rd() { local l=""; { read -r l <"$1"; } 2>/dev/null; printf '%s' "$l"; }

# ib_devices: names of the RDMA devices, one a line.
ib_devices() {
    local d
    for d in "$SYS"/class/infiniband/*; do
        [ -e "$d" ] && echo "${d##*/}"
    done
}

# pci_addr DEV: PCI address of DEV's function, empty for virtual devices (rxe).
pci_addr() {
    local p
    [ -e "$SYS/class/infiniband/$1/device" ] || return 0
    p=$(cd -P "$SYS/class/infiniband/$1/device" 2>/dev/null && pwd)
    p=${p##*/}
    [[ $p == *:*:*.* ]] && printf '%s' "$p"
}

# is_pvrdma DEV: true for a VMware PVRDMA function (15ad:0820) or a
# vmw_pvrdma device name.
is_pvrdma() {
    [[ $1 == vmw_pvrdma* ]] && return 0
    [ "$(rd "$SYS/class/infiniband/$1/device/vendor")" = 0x15ad ] &&
        [ "$(rd "$SYS/class/infiniband/$1/device/device")" = 0x0820 ]
}

# pvrdma_pci_functions: PCI functions 15ad:0820, bound to a driver or not.
pvrdma_pci_functions() {
    local f
    for f in "$SYS"/bus/pci/devices/*; do
        [ -e "$f/vendor" ] || continue
        [ "$(rd "$f/vendor")" = 0x15ad ] && [ "$(rd "$f/device")" = 0x0820 ] && echo "${f##*/}"
    done
}

# dev_driver DEV: kernel driver of DEV (vmw_pvrdma, rxe, siw, mlx5_core, ...).
dev_driver() {
    local p
    if [ -e "$SYS/class/infiniband/$1/device/driver" ]; then
        p=$(cd -P "$SYS/class/infiniband/$1/device/driver" 2>/dev/null && pwd)
        printf '%s' "${p##*/}"
    elif is_pvrdma "$1"; then printf vmw_pvrdma
    else
        case $1 in
            rxe*) printf rxe ;;
            siw*) printf siw ;;
            *) printf unknown ;;
        esac
    fi
}

# dev_ports DEV: port numbers of DEV.
dev_ports() {
    local p
    for p in "$SYS/class/infiniband/$1"/ports/*; do
        [ -e "$p" ] && echo "${p##*/}"
    done
}

# port_state DEV PORT: "ACTIVE", "DOWN", ... (the word after "N: ").
port_state() { local s; s=$(rd "$SYS/class/infiniband/$1/ports/$2/state"); printf '%s' "${s#*: }"; }
port_phys_state() { local s; s=$(rd "$SYS/class/infiniband/$1/ports/$2/phys_state"); printf '%s' "${s#*: }"; }
link_layer() { rd "$SYS/class/infiniband/$1/ports/$2/link_layer"; }

# port_netdev DEV PORT: the Ethernet netdev paired with a RoCE port.
declare -A NETDEV_CACHE=()
port_netdev() {
    local dev=$1 port=$2 n="" pci f
    # Asked by several checks; rdma(8) is a fork each time.
    [ -n "${NETDEV_CACHE[$dev/$port]:-}" ] && { printf '%s' "${NETDEV_CACHE[$dev/$port]}"; return; }
    if [ "$SYS" = /sys ] && command -v rdma >/dev/null 2>&1; then
        n=$(rdma link show "$dev/$port" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
    fi
    [ -n "$n" ] || n=$(rd "$SYS/class/infiniband/$dev/ports/$port/gid_attrs/ndevs/0")
    [ -n "$n" ] || n=$(rd "$SYS/class/infiniband/$dev/parent")
    if [ -z "$n" ]; then
        # PVRDMA is function 1 of the slot whose function 0 is its vmxnet3.
        pci=$(pci_addr "$dev")
        if [ -n "$pci" ]; then
            for f in "$SYS/bus/pci/devices/${pci%.*}.0/net"/*; do
                [ -e "$f" ] && { n=${f##*/}; break; }
            done
        fi
    fi
    [ -n "$n" ] && NETDEV_CACHE[$dev/$port]=$n
    printf '%s' "$n"
}

# gid_show GID: sysfs GID text, IPv4-mapped ones as ::ffff:a.b.c.d.
gid_show() {
    local g=$1
    if [[ $g == 0000:0000:0000:0000:0000:ffff:* ]]; then
        local h=${g:30:4}${g:35:4}
        printf '::ffff:%d.%d.%d.%d' $((16#${h:0:2})) $((16#${h:2:2})) $((16#${h:4:2})) $((16#${h:6:2}))
    else
        printf '%s' "$g"
    fi
}

# gid_table DEV PORT: "INDEX GID TYPE NETDEV" for every non-empty GID entry;
# TYPE is v1, v2 or IB (RoCE v1 reads "IB/RoCE v1" in sysfs). Tables have
# up to 1024 entries: read them without a fork per entry.
gid_table() {
    local dir="$SYS/class/infiniband/$1/ports/$2" i g t n ll=""
    { read -r ll <"$dir/link_layer"; } 2>/dev/null
    for ((i = 0; ; i++)); do
        [ -e "$dir/gids/$i" ] || break
        g=""; { read -r g <"$dir/gids/$i"; } 2>/dev/null
        [ -z "$g" ] || [ "$g" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
        t=""; { read -r t <"$dir/gid_attrs/types/$i"; } 2>/dev/null
        case $t in
            *v2*) t=v2 ;;
            *v1*) t=v1 ;;
            "") [ "$ll" = Ethernet ] && t=v1 || t=IB ;;
            *) t=IB ;;
        esac
        n=""; { read -r n <"$dir/gid_attrs/ndevs/$i"; } 2>/dev/null
        echo "$i $g $t ${n:--}"
    done
}

# gid_pick DEV PORT: the entry our transports choose, same order as
# pvrdma_common_gid_choose(): RoCE v2 IPv4-mapped, RoCE v2 not link-local,
# RoCE v1 IPv4-mapped, RoCE v1 any, anything else; lowest index per tier.
# Prints "TIER INDEX GID TYPE NETDEV"; nothing when the table is empty.
gid_pick() {
    local i g t n tier best="" best_tier=9
    while read -r i g t n; do
        if [ "$t" = v2 ] && [[ $g == 0000:0000:0000:0000:0000:ffff:* ]]; then tier=1
        elif [ "$t" = v2 ] && [[ $g != fe80:* ]]; then tier=2
        elif [ "$t" = v1 ] && [[ $g == 0000:0000:0000:0000:0000:ffff:* ]]; then tier=3
        elif [ "$t" = v1 ]; then tier=4
        else tier=5
        fi
        [ "$tier" -lt "$best_tier" ] && { best_tier=$tier; best="$tier $i $g $t $n"; }
    done < <(gid_table "$1" "$2")
    [ -n "$best" ] && echo "$best"
    return 0
}

# pick_port: "DEV PORT" our transports would use on this host: a PVRDMA
# device first, ACTIVE ports first.
pick_port() {
    local d p first="" pv=""
    for d in $(ib_devices); do
        for p in $(dev_ports "$d"); do
            [ -z "$first" ] && first="$d $p"
            if [ "$(port_state "$d" "$p")" = ACTIVE ]; then
                if is_pvrdma "$d"; then echo "$d $p"; return 0; fi
                [ -z "$pv" ] && pv="$d $p"
            fi
        done
    done
    [ -n "$pv" ] && { echo "$pv"; return 0; }
    [ -n "$first" ] && echo "$first"
    return 0
}
