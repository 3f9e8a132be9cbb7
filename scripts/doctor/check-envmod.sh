# shellcheck shell=bash
# pvrdma-doctor: what `module load pvrdma-mpi/btl` and `module load
# pvrdma-mpi/ucx` would set, checked against this machine: a module system
# to load them with, the modulefiles where it looks, the plugin each one
# selects present (and loadable: the plugin checks before this one), the
# UCX preload path the installed UCX's module directory.

# The Tcl modulefiles (Environment Modules); Lmod reads the Lua twins.
MODULEFILES=${PVRDMA_DOCTOR_MODULEFILES:-/usr/share/modules/modulefiles/pvrdma-mpi}
LMOD_MODULEFILES=/etc/lmod/modules/pvrdma-mpi
PKG_HINT="apt-get install ./pvrdma-mpi-btl_*.deb ./pvrdma-mpi-ucx_*.deb ./pvrdma-mpi-tools_*.deb (the packages scripts/build-debs.sh or scripts/setup.sh --no-run builds)"

# modulefile_value FILE VAR: the value FILE's pushenv/setenv/prepend-path
# gives VAR, with the file's own `set NAME VALUE` variables substituted.
modulefile_value() {
    awk -v var="$2" '
        $1 == "set" && NF == 3 { v[$2] = $3 }
        ($1 == "pushenv" || $1 == "setenv" || $1 == "prepend-path") && $2 == var {
            val = $3
            for (n in v) gsub("\\$" n, v[n], val)
            print val; exit
        }' "$1"
}

# ucx_module_dir: where the installed UCX keeps its modules (next to the
# libuct that ucx_info runs with).
ucx_module_dir() {
    local lib
    lib=$(ldd "$(command -v ucx_info)" 2>/dev/null | awk '$1 ~ /^libuct\.so/ { print $3; exit }')
    [ -n "$lib" ] && echo "$(dirname "$(readlink -f "$lib")")/ucx"
}

check_envmod_system() {
    local name="environment modules: module system"
    if [ -f /usr/share/modules/init/bash ]; then
        result PASS "$name" "Environment Modules $(dpkg-query -W -f='${Version}' environment-modules 2>/dev/null) (module load pvrdma-mpi/btl or pvrdma-mpi/ucx)"
    elif [ -f /usr/share/lmod/lmod/init/bash ]; then
        result PASS "$name" "Lmod $(dpkg-query -W -f='${Version}' lmod 2>/dev/null) (module load pvrdma-mpi/btl or pvrdma-mpi/ucx)"
        [ -f "$LMOD_MODULEFILES/ucx.lua" ] ||
            result WARN "$name" "Lmod looks in $LMOD_MODULEFILES, which has no ucx.lua" "apt-get install --reinstall pvrdma-mpi-tools"
    else
        result WARN "$name" "neither Environment Modules nor Lmod is installed: no 'module' command" \
            "apt-get install environment-modules (or lmod), then log in again; without it select the transport with mpirun flags (README, Using the transports)"
    fi
}

check_envmod_btl() {
    local name="environment module pvrdma-mpi/btl" f=$MODULEFILES/btl so want pml btl
    if [ ! -f "$f" ]; then
        result WARN "$name" "$f not installed" "$PKG_HINT"
        return
    fi
    so=$(awk '$1 == "set" && $2 == "component" { print $3 }' "$f")
    pml=$(modulefile_value "$f" OMPI_MCA_pml) btl=$(modulefile_value "$f" OMPI_MCA_btl)
    want=$(ompi_info --path pkglibdir 2>/dev/null | awk '{ print $2 }')/mca_btl_pvrdma.so
    if [ "$pml" != ob1 ] || [[ ,$btl, != *,pvrdma,* ]]; then
        result FAIL "$name" "$f sets OMPI_MCA_pml=$pml OMPI_MCA_btl=$btl: not pml ob1 with btl pvrdma" "apt-get install --reinstall pvrdma-mpi-tools"
    elif command -v ompi_info >/dev/null && [ "$so" != "$want" ]; then
        result FAIL "$name" "$f expects the BTL at $so, but this Open MPI loads components from $(dirname "$want")" \
            "install pvrdma-mpi-tools built for this Open MPI: scripts/setup.sh --no-run in the source tree"
    elif [ ! -e "$so" ]; then
        result FAIL "$name" "sets OMPI_MCA_pml=$pml OMPI_MCA_btl=$btl, but $so is not installed: module load refuses" "apt-get install pvrdma-mpi-btl"
    elif [ "${OMPI_PLUGIN_STATUS:-}" = FAIL ]; then
        result FAIL "$name" "sets OMPI_MCA_pml=$pml OMPI_MCA_btl=$btl, but Open MPI does not load $so (Open MPI plugin check above)" \
            "apt-get install --reinstall pvrdma-mpi-btl (it must match the installed libopenmpi3: apt-cache policy libopenmpi3)"
    else
        result PASS "$name" "sets OMPI_MCA_pml=$pml OMPI_MCA_btl=$btl; $so present${OMPI_PLUGIN_STATUS:+ (Open MPI plugin: $OMPI_PLUGIN_STATUS)}"
    fi
}

check_envmod_ucx() {
    local name="environment module pvrdma-mpi/ucx" f=$MODULEFILES/ucx uct tls pml utls udev envfile dir
    if [ ! -f "$f" ]; then
        result WARN "$name" "$f not installed" "$PKG_HINT"
        return
    fi
    uct=$(modulefile_value "$f" LD_PRELOAD) tls=$(modulefile_value "$f" UCX_TLS)
    pml=$(modulefile_value "$f" OMPI_MCA_pml) utls=$(modulefile_value "$f" OMPI_MCA_pml_ucx_tls)
    udev=$(modulefile_value "$f" OMPI_MCA_pml_ucx_devices) envfile=$(modulefile_value "$f" OMPI_MCA_mca_base_envar_file_prefix)
    dir=$(ucx_module_dir)
    local sets="OMPI_MCA_pml=$pml pml_ucx_tls=$utls pml_ucx_devices=$udev UCX_TLS=$tls LD_PRELOAD=$uct"
    if [ "$pml" != ucx ] || [ "$utls" != any ] || [ "$udev" != any ] || [[ ,$tls, != *,pvrdma,* ]]; then
        result FAIL "$name" "$f sets $sets: pml ucx needs pml_ucx_tls/devices any and UCX_TLS with pvrdma" "apt-get install --reinstall pvrdma-mpi-tools"
    elif [ -n "$dir" ] && [ "$(dirname "$uct")" != "$dir" ]; then
        result FAIL "$name" "preloads $uct, but the installed UCX keeps its modules in $dir" \
            "install pvrdma-mpi-tools and pvrdma-mpi-ucx built for this UCX: scripts/setup.sh --no-run in the source tree"
    elif [ ! -e "$uct" ]; then
        result FAIL "$name" "preloads $uct, which is not installed: module load refuses" "apt-get install pvrdma-mpi-ucx"
    elif [ -z "$envfile" ] || ! grep -q 'LD_PRELOAD' "$envfile" 2>/dev/null || ! grep -q 'UCX_TLS' "$envfile"; then
        result FAIL "$name" "mpirun would not forward LD_PRELOAD and UCX_TLS to the ranks: ${envfile:-no parameter file} lacks them" \
            "apt-get install --reinstall pvrdma-mpi-tools"
    elif [ "${UCX_PLUGIN_STATUS:-}" = FAIL ]; then
        result FAIL "$name" "sets $sets, but the preload does not work (UCX plugin check above)" \
            "apt-get install --reinstall pvrdma-mpi-ucx (it must match the installed libucx0: apt-cache policy libucx0)"
    else
        result PASS "$name" "sets $sets; mpirun forwards LD_PRELOAD and UCX_TLS ($envfile); preload in UCX's module directory ${dir:-?}${UCX_PLUGIN_STATUS:+ (UCX plugin: $UCX_PLUGIN_STATUS)}"
    fi
}

# check_one_sided DEV: which osc component serves MPI windows on each path.
# osc rdma over btl pvrdma needs the device's atomics and RDMA READ (the
# BTL's one-sided module offers them together, by default); otherwise osc
# pt2pt does the work at the target, which Open MPI 4.1 refuses under
# MPI_THREAD_MULTIPLE.
check_one_sided() {
    local dev=$1 name="one-sided MPI ($1)" f=$MODULEFILES/btl info atomic rd conf btlpath
    info=$(ibv_devinfo -v -d "$dev" 2>/dev/null)
    atomic=$(awk '$1 == "atomic_cap:" { print $2; exit }' <<<"$info")
    rd=$(awk '$1 == "max_qp_rd_atom:" { print $2; exit }' <<<"$info")
    conf=$(sed -n 's/^set paramfile //p' "$f" 2>/dev/null)
    if [ -n "$conf" ] && ! grep -Eq '^osc_rdma_btls *=.*pvrdma' "$conf" 2>/dev/null; then
        result FAIL "$name" "pvrdma-mpi/btl's parameter file ${conf} does not name pvrdma in osc_rdma_btls (or is missing)" \
            "apt-get install --reinstall pvrdma-mpi-tools"
        return
    fi
    if [ -n "$atomic" ] && [ "$atomic" != ATOMIC_NONE ] && [ "${rd:-0}" -gt 0 ]; then
        btlpath="osc rdma over btl pvrdma's one-sided module (device atomics $atomic, max_qp_rd_atom $rd; point-to-point keeps the WRITE rendezvous); with btl_pvrdma_atomics off: osc pt2pt"
    else
        btlpath="osc pt2pt over btl pvrdma (device atomic_cap ${atomic:-unknown}, max_qp_rd_atom ${rd:-unknown}: no network atomics for osc rdma)"
    fi
    result PASS "$name" "pml ob1 (pvrdma-mpi/btl): $btlpath; osc pt2pt refuses MPI_THREAD_MULTIPLE; pml ucx (pvrdma-mpi/ucx): osc ucx with --mca osc ucx (Open MPI 4.1.4: wrong MPI_Fetch_and_op on doubles)"
}

check_envmod_all() {
    local dev
    check_envmod_system
    check_envmod_btl
    check_envmod_ucx
    for dev in "${TARGETS[@]}"; do
        check_one_sided "$dev"
    done
}
