# shellcheck shell=bash
# pvrdma-doctor: locked-memory limit, guest memory reservation, and our
# Open MPI / UCX plugins (installed, loadable, built for the installed version).

RESERVE_HINT="in vSphere also reserve all guest memory (VM > Edit Settings > Memory > Reserve all guest memory (All locked)): PVRDMA pins registered memory on the host"
# Below this a rank cannot register its buffers (MiB).
MEMLOCK_FAIL_MIB=64
SETUP_HINT="install the packages: apt-get install ./pvrdma-mpi-btl_*.deb ./pvrdma-mpi-ucx_*.deb ./pvrdma-mpi-tools_*.deb (scripts/setup.sh --no-run in the pvrdma-mpi source tree builds and installs them)"

# has_cap_ipc_lock: the kernel does not apply RLIMIT_MEMLOCK to memory
# registrations of a process with CAP_IPC_LOCK (ib_umem_get()).
has_cap_ipc_lock() {
    local eff
    eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status 2>/dev/null)
    [ -n "$eff" ] && (( (16#$eff >> 14) & 1 ))
}

check_memlock() {
    local name=memlock soft hard who
    soft=$(ulimit -l) hard=$(ulimit -H -l)
    who=$(id -un 2>/dev/null || id -u)
    local limits="for user $who: add to /etc/security/limits.d/pvrdma.conf the lines '$who soft memlock unlimited' and '$who hard memlock unlimited' (or '*' for everyone), log in again; systemd services: LimitMEMLOCK=infinity; check with ulimit -l"
    if [ "$soft" = unlimited ]; then
        result PASS "$name" "ulimit -l unlimited for $who" "$RESERVE_HINT"
    elif has_cap_ipc_lock; then
        result PASS "$name" "ulimit -l ${soft} KiB, but $who has CAP_IPC_LOCK: the limit does not apply to registrations" "$RESERVE_HINT"
    elif [ "$soft" -lt $((MEMLOCK_FAIL_MIB * 1024)) ]; then
        result FAIL "$name" "ulimit -l ${soft} KiB (hard ${hard}) for $who: too small to register MPI buffers (< $MEMLOCK_FAIL_MIB MiB)" \
            "$limits$( [ "$hard" = unlimited ] && echo "; for this shell only: ulimit -l unlimited"); $RESERVE_HINT"
    else
        result WARN "$name" "ulimit -l ${soft} KiB (hard ${hard}) for $who: registrations beyond it fail" "$limits; $RESERVE_HINT"
    fi
}

# fork() and registered memory: before Linux 5.13 a fork() or system() in a
# rank makes its registered pages copy-on-write and the next write moves
# them away from the device (silently corrupted messages) unless libibverbs
# marks them MADV_DONTFORK (ibv_fork_init; RDMAV_FORK_SAFE=1 turns it on).
# PVRDMA_DOCTOR_KERNEL replaces uname -r (tests).
check_fork_safety() {
    local name="fork safety" rel major minor env=""
    rel=${PVRDMA_DOCTOR_KERNEL:-$(uname -r)}
    major=$(echo "$rel" | sed -nE 's/^([0-9]+)\.([0-9]+).*/\1/p')
    minor=$(echo "$rel" | sed -nE 's/^([0-9]+)\.([0-9]+).*/\2/p')
    [ -n "${RDMAV_FORK_SAFE:-}" ] && env=RDMAV_FORK_SAFE
    [ -z "$env" ] && [ -n "${IBV_FORK_SAFE:-}" ] && env=IBV_FORK_SAFE
    if [ -z "$major" ]; then
        result WARN "$name" "cannot read the kernel version from '$rel'" \
            "export RDMAV_FORK_SAFE=1 (mpirun -x RDMAV_FORK_SAFE=1) if ranks call fork() or system()"
    elif [ "$major" -gt 5 ] || { [ "$major" = 5 ] && [ "$minor" -ge 13 ]; }; then
        result PASS "$name" "kernel $rel copies registered pages at fork(): no protection needed"
    elif [ -n "$env" ]; then
        result PASS "$name" "kernel $rel needs fork protection; $env is set, so libibverbs protects registered memory"
    else
        result WARN "$name" "kernel $rel (before 5.13): a fork() or system() in a rank can corrupt registered memory; the transports call ibv_fork_init by default (btl_pvrdma_fork_init auto, UCX_PVRDMA_FORK_INIT try), which fails when memory was registered first" \
            "export RDMAV_FORK_SAFE=1 in the job (mpirun -x RDMAV_FORK_SAFE=1), or btl_pvrdma_fork_init on / UCX_PVRDMA_FORK_INIT=yes to refuse to run unprotected; or a guest kernel of 5.13 or later"
    fi
}

# Only meaningful on VMware: the reservation is visible through open-vm-tools.
check_memory_reservation() {
    local name="guest memory reservation" res total bal
    [ ${#PV_DEVS[@]} -gt 0 ] || return 0
    if ! command -v vmware-toolbox-cmd >/dev/null 2>&1; then
        result WARN "$name" "cannot see the reservation from inside the guest (vmware-toolbox-cmd missing)" \
            "apt-get install open-vm-tools to check it; $RESERVE_HINT"
        return
    fi
    res=$(vmware-toolbox-cmd stat memres 2>/dev/null | grep -o '^[0-9]*')
    bal=$(vmware-toolbox-cmd stat balloon 2>/dev/null | grep -o '^[0-9]*')
    total=$(awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo)
    if [ -n "$res" ] && [ "$res" -ge "$total" ] && [ "${bal:-0}" = 0 ]; then
        result PASS "$name" "reserved ${res} MB >= guest memory ${total} MB, balloon ${bal:-0} MB"
    else
        result WARN "$name" "reserved ${res:-?} MB, guest memory ${total} MB, balloon ${bal:-?} MB" "$RESERVE_HINT"
    fi
}

# unresolved_libs FILE: shared libraries FILE needs that the loader cannot find.
unresolved_libs() { ldd "$1" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' '; }

check_ompi_plugin() {
    local name="Open MPI plugin" dir so line built inst missing out err
    if ! command -v ompi_info >/dev/null 2>&1; then
        result WARN "$name" "Open MPI is not installed (no ompi_info)" "apt-get install openmpi-bin libopenmpi3, then $SETUP_HINT"
        return
    fi
    dir=$(ompi_info --path pkglibdir 2>/dev/null | awk '{ print $2 }')
    dir=${PVRDMA_OMPI_COMPONENT_DIR:-${dir:-/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3}}
    so=$dir/mca_btl_pvrdma.so
    inst=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9.]*\).*/\1/p' | head -n 1)
    if [ ! -e "$so" ]; then
        result WARN "$name" "$so not installed (Open MPI ${inst:-?})" "$SETUP_HINT"
        return
    fi
    missing=$(unresolved_libs "$so")
    out=$(timeout 60 ompi_info --param btl pvrdma --level 9 2>&1)
    line=$(grep -m 1 'MCA btl: pvrdma' <<<"$out")
    if [ -z "$line" ]; then
        err=$(timeout 60 ompi_info --mca mca_base_component_show_load_errors 1 --param btl pvrdma 2>&1 |
              grep -i -m 2 pvrdma | tr '\n' ' ')
        result FAIL "$name" "$so is installed but Open MPI ${inst:-?} does not load it${missing:+ (unresolved: $missing)}${err:+: $err}" \
            "rebuild and reinstall against the installed Open MPI: $SETUP_HINT"
        return
    fi
    # "MCA btl: pvrdma (MCA v2.1.0, API v3.1.0, Component v4.1.4)": the
    # component version is the Open MPI version its headers came from.
    built=$(sed -n 's/.*Component v\([0-9.]*\).*/\1/p' <<<"$line")
    if [ -n "$inst" ] && [ -n "$built" ] && [ "$built" != "$inst" ]; then
        result FAIL "$name" "$so loads, but was built against Open MPI $built; installed: $inst" \
            "rebuild against the installed Open MPI: $SETUP_HINT"
        return
    fi
    result PASS "$name" "$so loads (ompi_info: ${line#*MCA btl: }); built against Open MPI ${built:-?}, installed ${inst:-?}"
}

# ucx_built_version LIB: the UCX version LIB was compiled against, from a
# version string or the UCX source path kept in its debug information.
ucx_built_version() {
    strings -a "$1" 2>/dev/null | sed -n \
        -e 's/.*built against UCX v\{0,1\}\([0-9][0-9.]*[0-9]\).*/\1/p' \
        -e 's/.*ucx-\([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' | head -n 1
}

check_ucx_plugin() {
    local name="UCX plugin" lib inst built missing out tldevs
    if ! command -v ucx_info >/dev/null 2>&1; then
        result WARN "$name" "UCX is not installed (no ucx_info)" "apt-get install ucx-utils libucx0, then $SETUP_HINT"
        return
    fi
    lib=${PVRDMA_UCT_LIB:-/usr/lib/x86_64-linux-gnu/ucx/libuct_pvrdma.so.0}
    inst=$(ucx_info -v 2>/dev/null | sed -n 's/^# *\(Library \)\{0,1\}[Vv]ersion:\{0,1\} *\([0-9][0-9.]*\).*/\2/p' | head -n 1)
    if [ ! -e "$lib" ]; then
        result WARN "$name" "$lib not installed (UCX ${inst:-?})" "$SETUP_HINT"
        return
    fi
    missing=$(unresolved_libs "$lib")
    built=$(ucx_built_version "$lib")
    # Stock UCX 1.13 only loads the modules named at its build time: the
    # plugin registers itself from its constructor when preloaded.
    # UCX looks at the machine's real devices, whatever $SYS says.
    if ! compgen -G '/sys/class/infiniband/*' >/dev/null; then
        # Without a verbs device UCX lists no md at all: only the preload itself can be tried.
        out=$(LD_PRELOAD="$lib" timeout 60 ucx_info -v 2>&1)
        if grep -q -i 'cannot be preloaded\|error' <<<"$out"; then
            result FAIL "$name" "$lib cannot be preloaded: $(grep -i -m 1 -E 'preload|error' <<<"$out")${missing:+ (unresolved: $missing)}" \
                "rebuild and reinstall against the installed UCX: $SETUP_HINT"
        else
            result WARN "$name" "$lib preloads, built against UCX ${built:-unknown}, installed ${inst:-?}; no RDMA device, so ucx_info -d cannot show md pvrdma" \
                "fix the devices check, then run the doctor again"
        fi
        return
    fi
    out=$(LD_PRELOAD="$lib" timeout 90 ucx_info -d 2>&1)
    # "# Memory domain: rxe0" / "#     Component: pvrdma" ... "#      Transport: pvrdma"
    # / "#         Device: rxe0:1": the md is named after the verbs device.
    tldevs=$(awk '/^# *Transport:/ { intl = ($3 == "pvrdma") }
                  /^# Memory domain:/ { intl = 0 }
                  intl && /^# *Device:/ { printf "%s%s", sep, $3; sep = " " }' <<<"$out")
    if [ -z "$tldevs" ]; then
        result FAIL "$name" "$lib is installed but LD_PRELOAD=$lib ucx_info -d lists no transport pvrdma${missing:+ (unresolved: $missing)} (components: $(awk '/^# *Component:/ { printf "%s ", $3 }' <<<"$out" | tr ' ' '\n' | sort -u | tr '\n' ' '))" \
            "rebuild and reinstall against the installed UCX: $SETUP_HINT"
        return
    fi
    # UCX internals change between releases: the plugin must match exactly.
    if [ -n "$built" ] && [ -n "$inst" ] && [[ $inst != "$built"* ]] && [[ $built != "$inst"* ]]; then
        result FAIL "$name" "md pvrdma loads, but $lib was built against UCX $built; installed: $inst" \
            "rebuild against the installed UCX: $SETUP_HINT"
        return
    fi
    result PASS "$name" "$lib loads with LD_PRELOAD (ucx_info -d: transport pvrdma on $tldevs); built against UCX ${built:-unknown}, installed ${inst:-?}" \
        "activate it in jobs: mpirun -x LD_PRELOAD=$lib ..."
}
