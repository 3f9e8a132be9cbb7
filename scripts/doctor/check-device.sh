# shellcheck shell=bash
# pvrdma-doctor: devices, kernel modules and their load order, port state,
# userspace provider and which libibverbs is loaded.

# The PVRDMA port stays DOWN on some distributions unless vmw_pvrdma is
# loaded after these (seeds 002, 004).
PVRDMA_PRE_MODULES=(ib_umad rdma_cm rdma_ucm)
PVRDMA_PERSIST="persist it: echo 'softdep vmw_pvrdma pre: ib_umad rdma_cm rdma_ucm' > /etc/modprobe.d/pvrdma.conf && update-initramfs -u"
RELOAD_CMD="modprobe ib_umad && modprobe rdma_cm && modprobe rdma_ucm && modprobe -r vmw_pvrdma && modprobe vmw_pvrdma"

# loaded_modules: loaded module names, newest first (/proc/modules order:
# the kernel adds each new module at the head of its list).
loaded_modules() { cut -d' ' -f1 "$MODULES_FILE" 2>/dev/null; }

# module_pos NAME: position in loaded_modules (0 = loaded last), "builtin",
# or empty when not loaded.
module_pos() {
    local i=0 m
    while read -r m; do
        [ "$m" = "$1" ] && { echo "$i"; return; }
        i=$((i + 1))
    done < <(loaded_modules)
    if [ "$SYS" = /sys ] && grep -qs "/$1.ko" "/lib/modules/$(uname -r)/modules.builtin"; then
        echo builtin
    fi
}

# wait_ports_active SECONDS DEV...: wait until every port of DEVs is ACTIVE.
wait_ports_active() {
    local t=$1 i d p ok
    shift
    for ((i = 0; i < t * 2; i++)); do
        ok=1
        for d in "$@"; do
            for p in $(dev_ports "$d"); do
                [ "$(port_state "$d" "$p")" = ACTIVE ] || ok=0
            done
        done
        [ $ok = 1 ] && return 0
        sleep 0.5
    done
    return 1
}

# Decide which devices the later checks look at: the PVRDMA ones if any,
# else every device (rxe on the test bed, a passthrough HCA, ...).
select_targets() {
    local d
    ALL_DEVS=() PV_DEVS=() TARGETS=()
    while read -r d; do
        [ -n "$d" ] || continue
        ALL_DEVS+=("$d")
        is_pvrdma "$d" && PV_DEVS+=("$d")
    done < <(ib_devices)
    if [ ${#PV_DEVS[@]} -gt 0 ]; then TARGETS=("${PV_DEVS[@]}"); else TARGETS=("${ALL_DEVS[@]}"); fi
    # Fill port_netdev's cache here, in this shell: later calls run in $(...).
    NETDEV_CACHE=()
    local p
    for d in "${ALL_DEVS[@]}"; do
        for p in $(dev_ports "$d"); do port_netdev "$d" "$p" >/dev/null; done
    done
}

# describe_dev DEV: "rxe0 (rxe, RoCE, netdev eth0)" for messages.
describe_dev() {
    local d=$1 ll kind extra=""
    ll=$(link_layer "$d" "$(dev_ports "$d" | head -n 1)")
    [ "$ll" = Ethernet ] && kind=RoCE || kind=${ll:-unknown link layer}
    if is_pvrdma "$d"; then
        extra=", PCI 15ad:0820 $(pci_addr "$d"), vendor_part_id 2080"
    fi
    printf '%s (%s, %s%s, netdev %s)' "$d" "$(dev_driver "$d")" "$kind" "$extra" \
        "$(port_netdev "$d" "$(dev_ports "$d" | head -n 1)")"
}

check_devices() {
    local d list="" pci
    select_targets
    for d in "${ALL_DEVS[@]}"; do list+="${list:+; }$(describe_dev "$d")"; done
    if [ ${#ALL_DEVS[@]} = 0 ]; then
        pci=$(pvrdma_pci_functions | tr '\n' ' ')
        if [ -n "$pci" ]; then
            result FAIL devices "no RDMA device, but PVRDMA PCI function(s) ${pci% } present: the vmw_pvrdma driver is not bound" \
                "load it in the right order: $RELOAD_CMD (the kernel needs CONFIG_INFINIBAND_VMWARE_PVRDMA)"
        elif [ -n "$(module_pos rdma_rxe)" ]; then
            result FAIL devices "no RDMA device (rdma_rxe is loaded but has no link)" \
                "SoftRoCE: rdma link add rxe0 type rxe netdev eth0 (use your netdev); for PVRDMA add a PVRDMA adapter to the VM (README: ESXi / vCenter side)"
        else
            result FAIL devices "no RDMA device in $SYS/class/infiniband" \
                "add a network adapter of type PVRDMA to the VM (VM hardware >= 13, distributed port group; README: ESXi / vCenter side), then $RELOAD_CMD; for SoftRoCE tests: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0"
        fi
        return
    fi
    if [ ${#PV_DEVS[@]} -gt 0 ]; then
        result PASS devices "PVRDMA: ${PV_DEVS[*]}; all devices: $list"
        return
    fi
    # Not PVRDMA: fine for the transports (they run on any RoCE port), but
    # say so: the PVRDMA-specific limits and costs do not apply here.
    local usable=() other=() p
    for d in "${ALL_DEVS[@]}"; do
        p=$(dev_ports "$d" | head -n 1)
        if [ "$(link_layer "$d" "$p")" = Ethernet ] && [ "$(port_state "$d" "$p")" = ACTIVE ]; then
            usable+=("$d")
        else
            other+=("$d")
        fi
    done
    local seen="no PVRDMA device"
    [ ${#usable[@]} -gt 0 ] && seen+="; ${usable[*]} $([ ${#usable[@]} = 1 ] && echo is || echo are) usable RoCE (not PVRDMA)"
    [ ${#other[@]} -gt 0 ] && seen+="; ${other[*]}: not usable RoCE now (port not ACTIVE or not Ethernet)"
    result WARN devices "$seen; devices: $list" \
        "for PVRDMA add a network adapter of type PVRDMA to the VM (README: ESXi / vCenter side); the transports also run on other RoCE devices"
}

check_modules() {
    local need=(ib_core ib_uverbs) missing=() m d drv have=()
    for d in "${ALL_DEVS[@]}"; do
        drv=$(dev_driver "$d")
        case $drv in
            vmw_pvrdma) need+=(vmw_pvrdma "${PVRDMA_PRE_MODULES[@]}") ;;
            rxe) need+=(rdma_rxe) ;;
        esac
    done
    [ ${#ALL_DEVS[@]} = 0 ] && [ -n "$(pvrdma_pci_functions)" ] && need+=(vmw_pvrdma "${PVRDMA_PRE_MODULES[@]}")
    # Each name once, in order.
    local seen_list=" " uniq=()
    for m in "${need[@]}"; do
        [[ $seen_list == *" $m "* ]] && continue
        seen_list+="$m "; uniq+=("$m")
    done
    for m in "${uniq[@]}"; do
        if [ -n "$(module_pos "$m")" ]; then have+=("$m"); else missing+=("$m"); fi
    done
    if [ ${#missing[@]} = 0 ]; then
        result PASS "kernel modules" "loaded: ${have[*]}"
    elif [[ " ${missing[*]} " == *" ib_uverbs "* ]] || [[ " ${missing[*]} " == *" ib_core "* ]]; then
        result FAIL "kernel modules" "not loaded: ${missing[*]} (no userspace verbs without ib_uverbs); loaded: ${have[*]:-none}" \
            "modprobe ib_uverbs$( [[ " ${missing[*]} " == *" vmw_pvrdma "* ]] && echo "; then $RELOAD_CMD")"
    elif [[ " ${missing[*]} " == *" vmw_pvrdma "* ]]; then
        result FAIL "kernel modules" "not loaded: ${missing[*]}; loaded: ${have[*]:-none}" "$RELOAD_CMD; $PVRDMA_PERSIST"
    else
        result WARN "kernel modules" "not loaded: ${missing[*]}; loaded: ${have[*]:-none}" \
            "modprobe ${missing[*]}$( [ ${#PV_DEVS[@]} -gt 0 ] && echo "; then modprobe -r vmw_pvrdma && modprobe vmw_pvrdma (it must load after them)")"
    fi
}

# pvrdma_order_problem: empty when vmw_pvrdma was loaded after every
# module of PVRDMA_PRE_MODULES, else what is wrong.
pvrdma_order_problem() {
    local pv m pos bad=() absent=()
    pv=$(module_pos vmw_pvrdma)
    for m in "${PVRDMA_PRE_MODULES[@]}"; do
        pos=$(module_pos "$m")
        if [ -z "$pos" ]; then absent+=("$m")
        elif [ "$pos" != builtin ] && [ "$pv" != builtin ] && [ "$pos" -lt "$pv" ]; then bad+=("$m")
        fi
    done
    [ ${#absent[@]} -gt 0 ] && printf '%s not loaded' "${absent[*]}"
    [ ${#absent[@]} -gt 0 ] && [ ${#bad[@]} -gt 0 ] && printf '; '
    [ ${#bad[@]} -gt 0 ] && printf 'vmw_pvrdma was loaded before %s' "${bad[*]}"
    return 0
}

# reload_pvrdma: the seeds' remedy, with the port re-checked afterwards.
reload_pvrdma() {
    local m
    for m in "${PVRDMA_PRE_MODULES[@]}"; do
        say "--fix: modprobe $m"
        modprobe "$m" || return 1
    done
    say "--fix: modprobe -r vmw_pvrdma && modprobe vmw_pvrdma"
    modprobe -r vmw_pvrdma && modprobe vmw_pvrdma || return 1
    # The devices come back with the same names once the driver has probed.
    sleep 1
    select_targets
    wait_ports_active 20 "${PV_DEVS[@]}"
    return 0
}

check_module_order() {
    local name="module load order" pv problem
    pv=$(module_pos vmw_pvrdma)
    if [ -z "$pv" ]; then
        if [ ${#PV_DEVS[@]} = 0 ] && [ -z "$(pvrdma_pci_functions)" ]; then
            result PASS "$name" "vmw_pvrdma not in use (no PVRDMA device): the load order rule does not apply"
        else
            result FAIL "$name" "PVRDMA hardware present but vmw_pvrdma is not loaded" "$RELOAD_CMD; $PVRDMA_PERSIST"
        fi
        return
    fi
    if [ "$pv" = builtin ]; then
        result PASS "$name" "vmw_pvrdma is built into the kernel"
        return
    fi
    problem=$(pvrdma_order_problem)
    if [ -z "$problem" ]; then
        result PASS "$name" "vmw_pvrdma loaded after ${PVRDMA_PRE_MODULES[*]}"
        return
    fi
    if [ "$OPT_FIX" = 1 ] && [ "$SYS" = /sys ]; then
        if reload_pvrdma; then
            local now
            now=$(pvrdma_order_problem)
            if [ -z "$now" ]; then
                result PASS "$name" "fixed by --fix (was: $problem): vmw_pvrdma reloaded after ${PVRDMA_PRE_MODULES[*]}" \
                    "this lasts until reboot; $PVRDMA_PERSIST"
                return
            fi
            problem="$now (after --fix)"
        else
            problem+="; --fix: modprobe failed"
        fi
    fi
    result FAIL "$name" "$problem: the PVRDMA port may stay DOWN" \
        "$RELOAD_CMD (or pvrdma-doctor --fix); $PVRDMA_PERSIST"
}

# netdev_up NETDEV: administratively up (IFF_UP)?
netdev_up() {
    local f
    f=$(rd "$SYS/class/net/$1/flags")
    [ -n "$f" ] && (( f & 1 ))
}

check_port() {
    local dev=$1 port=$2 name="port state $1:$2" st phys nd ndinfo fixed=""
    st=$(port_state "$dev" "$port")
    phys=$(port_phys_state "$dev" "$port")
    nd=$(port_netdev "$dev" "$port")
    ndinfo="netdev ${nd:-unknown}"
    [ -n "$nd" ] && { netdev_up "$nd" && ndinfo+=" up" || ndinfo+=" DOWN"; }
    if [ "$st" != ACTIVE ] && [ "$OPT_FIX" = 1 ] && [ "$SYS" = /sys ]; then
        if [ -n "$nd" ] && ! netdev_up "$nd"; then
            say "--fix: ip link set $nd up"
            ip link set "$nd" up && fixed="brought $nd up"
            wait_ports_active 15 "$dev"
        fi
        if [ "$(port_state "$dev" "$port")" != ACTIVE ] && is_pvrdma "$dev"; then
            reload_pvrdma && fixed+="${fixed:+, }reloaded vmw_pvrdma after ${PVRDMA_PRE_MODULES[*]}"
        fi
        st=$(port_state "$dev" "$port")
        phys=$(port_phys_state "$dev" "$port")
    fi
    if [ "$st" = ACTIVE ]; then
        if [ -n "$fixed" ]; then
            result PASS "$name" "ACTIVE after --fix ($fixed); $phys, netdev $nd"
        else
            result PASS "$name" "ACTIVE ($phys), $ndinfo"
        fi
        return
    fi
    local remedy
    if [ -n "$nd" ] && ! netdev_up "$nd"; then
        remedy="ip link set $nd up (or pvrdma-doctor --fix)"
        is_pvrdma "$dev" && remedy+="; if it stays DOWN: $RELOAD_CMD"
    elif is_pvrdma "$dev"; then
        remedy="$RELOAD_CMD (or pvrdma-doctor --fix); $PVRDMA_PERSIST; if it stays DOWN check the VM's adapter is connected to the distributed port group"
    elif [ "$(dev_driver "$dev")" = rxe ]; then
        remedy="check $nd has carrier (ip link show $nd); else re-create the link: rdma link delete $dev && rdma link add $dev type rxe netdev $nd"
    else
        remedy="check the link of ${nd:-the port} (cable, switch port, ip link show)"
    fi
    result FAIL "$name" "${st:-unknown} (${phys:-?}), $ndinfo${fixed:+; --fix tried: $fixed}" "$remedy"
}

# provider_lib DRIVER: the provider library file rdma-core installs for
# DRIVER (from the package's file list where dpkg knows it).
provider_lib() {
    local drv=$1 f
    if command -v dpkg >/dev/null 2>&1; then
        f=$(dpkg -L ibverbs-providers 2>/dev/null | grep -E "/lib${drv}-rdmav[0-9]+\.so$" | head -n 1)
        [ -n "$f" ] && [ -e "$f" ] && { echo "$f"; return; }
    fi
    for f in /usr/lib/*/libibverbs/lib"$drv"-rdmav*.so /usr/lib64/libibverbs/lib"$drv"-rdmav*.so \
             /usr/lib/libibverbs/lib"$drv"-rdmav*.so; do
        [ -e "$f" ] && { echo "$f"; return; }
    done
}

# uverbs_node DEV: /dev/infiniband/uverbsN of DEV, empty without ib_uverbs.
uverbs_node() {
    local u
    for u in "$SYS"/class/infiniband_verbs/uverbs*; do
        [ "$(rd "$u/ibdev")" = "$1" ] && { echo "/dev/infiniband/${u##*/}"; return; }
    done
}

check_provider() {
    local dev=$1 name="userspace provider $1" drv pdrv lib node out rc pkgv=""
    drv=$(dev_driver "$dev")
    case $drv in
        vmw_pvrdma) pdrv=vmw_pvrdma ;;
        rxe|rdma_rxe) pdrv=rxe ;;
        mlx5_core) pdrv=mlx5 ;;
        mlx4_core) pdrv=mlx4 ;;
        *) pdrv=$drv ;;
    esac
    lib=$(provider_lib "$pdrv")
    command -v dpkg-query >/dev/null 2>&1 &&
        pkgv=$(dpkg-query -W -f='${Version}' ibverbs-providers 2>/dev/null)
    if [ ! -e "$IBV_DRIVER_DIR/$pdrv.driver" ] || [ -z "$lib" ]; then
        result FAIL "$name" "no userspace provider for $drv: ${IBV_DRIVER_DIR}/$pdrv.driver $([ -e "$IBV_DRIVER_DIR/$pdrv.driver" ] && echo present || echo missing), lib$pdrv-rdmav*.so ${lib:-missing}" \
            "apt-get install --reinstall ibverbs-providers libibverbs1 (rdma-core's provider for $pdrv)"
        return
    fi
    node=$(uverbs_node "$dev")
    if [ -z "$node" ]; then
        result FAIL "$name" "$lib present, but $dev has no uverbs device (ib_uverbs not loaded)" "modprobe ib_uverbs"
        return
    fi
    if [ "$SYS" = /sys ] && { [ ! -r "$node" ] || [ ! -w "$node" ]; }; then
        result FAIL "$name" "$node is not read/writable for $(id -un)" \
            "chmod 0666 $node (the kernel creates it 0666; a udev rule of this system changed it)"
        return
    fi
    if ! command -v "${IBV_DEVINFO%% *}" >/dev/null 2>&1; then
        result WARN "$name" "$lib present (ibverbs-providers ${pkgv:-?}); cannot try it: ibv_devinfo missing" \
            "apt-get install ibverbs-utils"
        return
    fi
    out=$(timeout 30 $IBV_DEVINFO -d "$dev" 2>&1)
    rc=$?
    if [ $rc = 0 ] && grep -q "hca_id:.*$dev" <<<"$out"; then
        result PASS "$name" "$(basename "$lib") (ibverbs-providers ${pkgv:-?}, $IBV_DRIVER_DIR/$pdrv.driver); ibv_devinfo opens $dev via $node"
    else
        result FAIL "$name" "$lib present but ibv_devinfo -d $dev fails: $(head -n 3 <<<"$out" | tr '\n' ' ')" \
            "a different libibverbs may be loaded (see the libibverbs check); apt-get install --reinstall libibverbs1 ibverbs-providers"
    fi
}

# The Mellanox OFED libibverbs is built without the vmw_pvrdma provider and
# shadows rdma-core's when it comes first in the library path (seed 004).
check_libibverbs() {
    local name=libibverbs lib="" real owner="" ver="" mofed=() f tool
    tool=$(command -v ibv_devinfo 2>/dev/null)
    [ -n "$tool" ] && lib=$(ldd "$tool" 2>/dev/null | awk '$1 == "libibverbs.so.1" { print $3; exit }')
    [ -n "$lib" ] || lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libibverbs.so.1" && /x86-64/ { print $NF; exit }')
    command -v ofed_info >/dev/null 2>&1 && mofed+=("ofed_info: $(ofed_info -s 2>/dev/null | head -n 1)")
    for f in /usr/lib64/libibverbs.so.1 /usr/lib64/libibverbs /usr/local/lib/libibverbs.so.1 \
             /opt/mellanox/DEBS /etc/infiniband/info; do
        [ -e "$f" ] && mofed+=("$f")
    done
    if [ -z "$lib" ]; then
        result FAIL "$name" "no libibverbs.so.1 found by the dynamic loader" "apt-get install libibverbs1 ibverbs-providers"
        return
    fi
    real=$(readlink -f "$lib")
    if command -v dpkg >/dev/null 2>&1; then
        # Ask libibverbs1's own file list first: dpkg -S reads every package's.
        if dpkg -L libibverbs1 2>/dev/null | grep -qxF -e "$real" -e "$lib"; then
            owner=libibverbs1
        else
            owner=$(dpkg -S "$real" 2>/dev/null | head -n 1 | cut -d: -f1)
            [ -z "$owner" ] && owner=$(dpkg -S "$lib" 2>/dev/null | head -n 1 | cut -d: -f1)
        fi
        [ -n "$owner" ] && ver=$(dpkg-query -W -f='${Version}' "$owner" 2>/dev/null)
    fi
    local seen="$lib -> $real${owner:+ from $owner $ver}"
    local purge="remove Mellanox OFED (ofed_uninstall.sh, or apt-get purge of its ibverbs-providers ibverbs-utils libibverbs-dev libibverbs1 *mlnx* packages), then apt-get install --reinstall rdma-core libibverbs1 ibverbs-providers"
    if [[ $ver == *mlnx* ]] || [[ $real == /usr/lib64/* ]] || [[ $real == /usr/local/* ]] || [[ $real == /opt/* ]]; then
        result FAIL "$name" "$seen: a Mellanox OFED/non-distribution libibverbs (no vmw_pvrdma provider) is loaded${mofed:+; MOFED traces: ${mofed[*]}}" "$purge"
    elif command -v dpkg >/dev/null 2>&1 && [ -z "$owner" ]; then
        result FAIL "$name" "$seen is not from a Debian package (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}): it shadows rdma-core's" \
            "remove it or drop its directory from LD_LIBRARY_PATH / /etc/ld.so.conf.d; $purge"
    elif [ ${#mofed[@]} -gt 0 ]; then
        result WARN "$name" "$seen (rdma-core), but Mellanox OFED traces exist: ${mofed[*]}" \
            "nothing shadows rdma-core now; remove MOFED so it cannot later: $purge"
    else
        result PASS "$name" "$seen (rdma-core); no Mellanox OFED traces"
    fi
}
