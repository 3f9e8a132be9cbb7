#!/bin/bash
# tests/packages.sh: our Debian packages and environment modules as a user
# gets them, on the machine (run by tests/run after scripts/setup.sh built
# the packages from a clean copy of the tree and installed them):
#  - the three .debs exist, lintian reports nothing README does not justify,
#    the plugins depend on exactly the installed Open MPI / UCX;
#  - installed: dpkg -L puts each file where Open MPI, UCX and both module
#    systems look; ompi_info lists btl pvrdma; with pvrdma-mpi/ucx loaded
#    UCX knows the pvrdma transport (ucx_info -c; the machine has no RDMA
#    device for ucx_info -d, the bed suites check that);
#  - module load / unload of pvrdma-mpi/btl and pvrdma-mpi/ucx with
#    Environment Modules and Lmod: the values each sets (the same in both),
#    the conflict between the two, every variable restored after unload;
#  - pvrdma-doctor's module check passes here and fails, with the command
#    that fixes it, on a broken modulefile;
#  - apt-get remove, then dpkg --purge: no file of ours is left; then the packages
#    are installed again (the bed suites after this need them).
# Prints "ok - ..." / "not ok - ..."; exit status 1 when a check failed.
set -u -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
DEBS=${PVRDMA_DEB_DIR:-$TOP/build/deb}
PKGS=(pvrdma-mpi-btl pvrdma-mpi-ucx pvrdma-mpi-tools)
LOG=${TB_OUT:-$TOP/tb-out}/packages
mkdir -p "$LOG"
FAILED=0
pass() { echo "ok - packages: $1"; }
fail() { echo "not ok - packages: $1: $2"; FAILED=1; }
# ok NAME CMD...: pass when CMD succeeds, else fail with its last output lines
ok() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then pass "$name"
    else fail "$name" "$(echo "$out" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"; fi
}

version=$(grep -m 1 '^AC_INIT' "$TOP/configure.ac" | cut -d'[' -f3 | cut -d']' -f1)
ompi_dir=$(ompi_info --path pkglibdir 2>/dev/null | awk '{ print $2 }')
ompi_data=$(ompi_info --path pkgdatadir 2>/dev/null | awk '{ print $2 }')
ucx_dir=$(pkg-config --variable=libdir ucx)/ucx
EM_DIR=/usr/share/modules/modulefiles/pvrdma-mpi
LMOD_LINK=/etc/lmod/modules/pvrdma-mpi

# --- the built packages ------------------------------------------------------
deb() { ls "$DEBS/$1_${version}_"*.deb 2>/dev/null | head -n 1; }
for p in "${PKGS[@]}"; do
    [ -n "$(deb "$p")" ] && pass "$p $version built ($(basename "$(deb "$p")"))" ||
        fail "$p $version built" "no $DEBS/${p}_${version}_*.deb (scripts/build-debs.sh)"
done
if [ -f "$DEBS/lintian.log" ]; then
    tags=$(grep -E '^[EWIXP]: ' "$DEBS/lintian.log")
    [ -z "$tags" ] && pass "lintian clean (errors, warnings, info; overrides in debian/*.lintian-overrides)" ||
        fail "lintian clean" "$(echo "$tags" | head -n 3 | tr '\n' ' ')"
else
    fail "lintian clean" "no $DEBS/lintian.log (scripts/build-debs.sh)"
fi
ompi_v=$(dpkg-query -W -f='${Version}' libopenmpi3)
ucx_v=$(dpkg-query -W -f='${Version}' libucx0)
dep=$(dpkg-deb -f "$(deb pvrdma-mpi-btl)" Depends 2>/dev/null)
[[ $dep == *"libopenmpi3 (= $ompi_v)"* ]] && pass "pvrdma-mpi-btl depends on libopenmpi3 (= $ompi_v)" ||
    fail "pvrdma-mpi-btl depends on libopenmpi3 (= $ompi_v)" "Depends: $dep"
dep=$(dpkg-deb -f "$(deb pvrdma-mpi-ucx)" Depends 2>/dev/null)
[[ $dep == *"libucx0 (= $ucx_v)"* ]] && pass "pvrdma-mpi-ucx depends on libucx0 (= $ucx_v)" ||
    fail "pvrdma-mpi-ucx depends on libucx0 (= $ucx_v)" "Depends: $dep"

# --- installed ---------------------------------------------------------------
# check_installed WHEN: the packages are installed, with their files where
# Open MPI, UCX and the module systems look, and Open MPI loads the BTL.
check_installed() {
    local when=$1 p st f owner
    for p in "${PKGS[@]}"; do
        st=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null)
        [ "$st" = "install ok installed $version" ] && pass "$when: $p $version installed" ||
            fail "$when: $p $version installed" "dpkg says '${st:-not known}'"
    done
    for f in "pvrdma-mpi-btl:$ompi_dir/mca_btl_pvrdma.so" "pvrdma-mpi-btl:$ompi_data/help-mpi-btl-pvrdma.txt" \
             "pvrdma-mpi-ucx:$ucx_dir/libuct_pvrdma.so.0" "pvrdma-mpi-tools:$EM_DIR/btl" "pvrdma-mpi-tools:$EM_DIR/ucx" \
             "pvrdma-mpi-tools:$LMOD_LINK" "pvrdma-mpi-tools:/usr/bin/pvrdma-doctor" \
             "pvrdma-mpi-tools:/usr/share/pvrdma-mpi/ucx-env.conf"; do
        p=${f%%:*} f=${f#*:}
        if dpkg -L "$p" 2>/dev/null | grep -qxF "$f" && [ -e "$f" ]; then :; else
            fail "$when: dpkg -L $p lists $f and it exists" "missing"; continue
        fi
        pass "$when: dpkg -L $p lists $f"
    done
    for f in btl ucx; do
        [ -f "$LMOD_LINK/$f.lua" ] && pass "$when: $LMOD_LINK/$f.lua (Lmod's MODULEPATH)" ||
            fail "$when: $LMOD_LINK/$f.lua (Lmod's MODULEPATH)" "missing"
    done
    timeout 120 ompi_info --param btl pvrdma --level 9 >"$LOG/ompi_info.$when.log" 2>&1
    grep -q 'MCA btl: pvrdma' "$LOG/ompi_info.$when.log" && pass "$when: ompi_info lists btl pvrdma" ||
        fail "$when: ompi_info lists btl pvrdma" "not listed (log: $LOG/ompi_info.$when.log)"
}
check_installed installed
# docs/knobs.md is generated from the installed plugins' parameter tables
# (scripts/gen-knobs): stale means a knob was added, renamed or reworded
# without the reference
ok "docs/knobs.md matches the plugins' parameter tables (scripts/gen-knobs --check)" \
    "$TOP/scripts/gen-knobs" --check

# --- the module systems ------------------------------------------------------
# Environment Modules natively when installed; Lmod natively or unpacked by
# scripts/setup.sh into build/lmod (Debian's two packages conflict).
LMOD_ROOT=""
if [ -x /usr/share/lmod/lmod/libexec/lmod ]; then LMOD_ROOT=/
elif [ -x "$TOP/build/lmod/root/usr/share/lmod/lmod/libexec/lmod" ]; then LMOD_ROOT=$TOP/build/lmod/root/
fi
SYSTEMS=()
[ -f /usr/share/modules/init/bash ] && SYSTEMS+=(modules) ||
    fail "Environment Modules" "not installed (/usr/share/modules/init/bash; scripts/setup.sh installs environment-modules)"
[ -n "$LMOD_ROOT" ] && SYSTEMS+=(lmod) ||
    fail "Lmod" "neither installed nor unpacked in build/lmod (scripts/setup.sh)"

# modsh SYSTEM SCRIPT: runs SCRIPT in bash in a clean environment where
# `module` is SYSTEM's, with its default MODULEPATH (nothing of ours added).
modsh() {
    local init
    case $1 in
        modules) init='. /usr/share/modules/init/bash' ;;
        lmod) init="L=${LMOD_ROOT}usr/share/lmod/lmod
              export LMOD_PKG=\$L LMOD_DIR=\$L/libexec LMOD_CMD=\$L/libexec/lmod
              export MODULEPATH=\$(sed 's/#.*//' ${LMOD_ROOT}etc/lmod/modulespath | xargs | tr ' ' :)
              module() { eval \"\$(lua5.3 \$LMOD_CMD bash \"\$@\")\"; }" ;;
    esac
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -c "$init
$2"
}
# The variables a module system keeps for itself.
own_vars='^(LOADEDMODULES|_LMFILES_|MODULEPATH|MODULESHOME|MODULES_[A-Z_]*|__MODULES_[A-Za-z_]*|_ModuleTable[0-9_A-Za-z]*|__LMOD_[A-Za-z_]*|LMOD_[A-Za-z_]*|BASH_FUNC_[a-z_]*%%|ENV|BASH_ENV|MANPATH|SHLVL|_)='

# Values a user had before: unloading must bring these back, and unset ones
# must be unset again.
BEFORE='export OMPI_MCA_pml=user-pml OMPI_MCA_btl=tcp,self LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libm.so.6; unset UCX_TLS OMPI_MCA_pml_ucx_tls'
declare -A SET_BY
for sys in "${SYSTEMS[@]}"; do
    for m in btl ucx; do
        name="$sys: pvrdma-mpi/$m"
        out=$(modsh "$sys" "$BEFORE
env | sort >'$LOG/env.$sys.$m.0'
module load pvrdma-mpi/$m || exit 11
env | sort >'$LOG/env.$sys.$m.1'
module unload pvrdma-mpi/$m || exit 12
env | sort >'$LOG/env.$sys.$m.2'" 2>&1)
        rc=$?
        if [ $rc != 0 ]; then fail "$name load/unload" "exit $rc: $(echo "$out" | tail -n 3 | tr '\n' ' ')"; continue; fi
        # what the module set: the variables that changed, its system's own aside
        set_vars=$(comm -13 "$LOG/env.$sys.$m.0" "$LOG/env.$sys.$m.1" | grep -vE "$own_vars")
        SET_BY[$sys.$m]=$set_vars
        case $m in
            btl) want='OMPI_MCA_btl=pvrdma,vader,self
OMPI_MCA_mca_base_param_files=/root/.openmpi/mca-params.conf,/usr/share/pvrdma-mpi/btl-mca-params.conf,/etc/openmpi/openmpi-mca-params.conf
OMPI_MCA_pml=ob1' ;;
            ucx) want="LD_PRELOAD=$ucx_dir/libuct_pvrdma.so.0:/usr/lib/x86_64-linux-gnu/libm.so.6
OMPI_MCA_mca_base_envar_file_prefix=/usr/share/pvrdma-mpi/ucx-env.conf
OMPI_MCA_pml=ucx
OMPI_MCA_pml_ucx_devices=any
OMPI_MCA_pml_ucx_tls=any
UCX_TLS=pvrdma,sm,self" ;;
        esac
        [ "$set_vars" = "$want" ] && pass "$name sets $(echo "$set_vars" | cut -d= -f1 | paste -sd' ' -)" ||
            fail "$name sets what the transport needs" "set: $(echo "$set_vars" | paste -sd' ' -); want: $(echo "$want" | paste -sd' ' -)"
        diff_out=$(diff <(grep -vE "$own_vars" "$LOG/env.$sys.$m.0") <(grep -vE "$own_vars" "$LOG/env.$sys.$m.2"))
        [ -z "$diff_out" ] && pass "$name unload restores every variable it touched (earlier values back, unset ones unset)" ||
            fail "$name unload restores every variable" "$(echo "$diff_out" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
    done
    # never both: Environment Modules refuses the second (conflict), Lmod
    # swaps them (one module name, two versions); either way the variables
    # are those of the one loaded
    out=$(modsh "$sys" 'module load pvrdma-mpi/btl || exit 11
module load pvrdma-mpi/ucx 2>&1
echo "pml=${OMPI_MCA_pml:-} btl=${OMPI_MCA_btl:-} loaded=$LOADEDMODULES"' 2>&1)
    last=$(echo "$out" | tail -n 1)
    if [ $sys = modules ] && [ "$last" = "pml=ob1 btl=pvrdma,vader,self loaded=pvrdma-mpi/btl" ] && grep -qi conflict <<<"$out"; then
        pass "$sys: pvrdma-mpi/ucx refused while pvrdma-mpi/btl is loaded (conflict)"
    elif [ $sys = lmod ] && [ "$last" = "pml=ucx btl= loaded=pvrdma-mpi/ucx" ]; then
        pass "$sys: loading pvrdma-mpi/ucx over pvrdma-mpi/btl swaps them (btl's variables gone)"
    else
        fail "$sys: pvrdma-mpi/btl and pvrdma-mpi/ucx never both loaded" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
    fi
done
# Open MPI reads the package's parameter file under pvrdma-mpi/btl (one-sided
# MPI: osc rdma may use btl pvrdma, osc ucx is left out under ob1)
out=$(modsh modules 'module load pvrdma-mpi/btl || exit 11
ompi_info --param osc all --level 9 --parsable' 2>&1)
if grep -qx 'mca:osc:rdma:param:osc_rdma_btls:value:openib,ugni,uct,ucp,pvrdma' <<<"$out" &&
   grep -qx 'mca:osc:base:param:osc:value:^ucx' <<<"$out"; then
    pass "pvrdma-mpi/btl: Open MPI reads btl-mca-params.conf (osc_rdma_btls names pvrdma, osc ^ucx)"
else
    fail "pvrdma-mpi/btl: Open MPI reads btl-mca-params.conf" "$(grep -E 'osc_rdma_btls:value|param:osc:value' <<<"$out" | tr '\n' ' ')"
fi
if [ -n "${SET_BY[modules.ucx]:-}" ] && [ -n "${SET_BY[lmod.ucx]:-}" ]; then
    [ "${SET_BY[modules.ucx]}" = "${SET_BY[lmod.ucx]}" ] && [ "${SET_BY[modules.btl]}" = "${SET_BY[lmod.btl]}" ] &&
        pass "Environment Modules and Lmod set the same variables to the same values" ||
        fail "Environment Modules and Lmod set the same" "they differ (env.*.{btl,ucx}.1 in $LOG)"
fi
# UCX with the module loaded: the preload registers the transport (its
# configuration is listed); the machine has no RDMA device for ucx_info -d.
if [[ " ${SYSTEMS[*]} " == *" modules "* ]]; then
    out=$(modsh modules 'module load pvrdma-mpi/ucx && timeout 60 ucx_info -c -f' 2>&1)
    grep -q '^UCX_PVRDMA_SEG_SIZE=' <<<"$out" && pass "with pvrdma-mpi/ucx loaded ucx_info -c lists the pvrdma transport's UCX_PVRDMA_* settings" ||
        fail "with pvrdma-mpi/ucx loaded ucx_info -c lists UCX_PVRDMA_*" "$(echo "$out" | grep -i -m 2 'error\|pvrdma' | tr '\n' ' ')"
fi

# --- pvrdma-doctor's module check --------------------------------------------
out=$(timeout 300 pvrdma-doctor 2>&1)
mod=$(grep -E '^(PASS|WARN|FAIL) +environment module' <<<"$out")
if [ -n "$mod" ] && ! grep -q '^FAIL' <<<"$mod"; then
    pass "pvrdma-doctor: the environment modules check passes ($(echo "$mod" | awk '{ print $1 }' | sort | uniq -c | xargs))"
else
    fail "pvrdma-doctor: the environment modules check passes" "$(echo "${mod:-no module check in its output}" | head -n 3 | tr '\n' ' ')"
fi
bad=$(mktemp -d)
mkdir -p "$bad/pvrdma-mpi"
sed "s|^set uct .*|set uct /nonexistent/ucx/libuct_pvrdma.so.0|" "$EM_DIR/ucx" >"$bad/pvrdma-mpi/ucx"
cp "$EM_DIR/btl" "$bad/pvrdma-mpi/btl"
out=$(PVRDMA_DOCTOR_MODULEFILES=$bad/pvrdma-mpi timeout 300 pvrdma-doctor --quick 2>&1)
rm -rf "$bad"
if grep -A1 -E '^FAIL +environment module pvrdma-mpi/ucx' <<<"$out" | grep -q "/nonexistent/ucx/libuct_pvrdma.so.0" &&
   grep -A1 -E '^FAIL +environment module pvrdma-mpi/ucx' <<<"$out" | grep -qE 'remedy: .*(apt-get install|scripts/setup.sh)'; then
    pass "pvrdma-doctor: a modulefile preloading a wrong path FAILs with the command that fixes it"
else
    fail "pvrdma-doctor: a wrong preload path FAILs with a fix" "$(grep -A1 'environment module' <<<"$out" | head -n 4 | tr '\n' ' ')"
fi

# --- remove, purge: nothing of ours is left; then install again ---------------
files=$(dpkg -L "${PKGS[@]}" 2>/dev/null | sort -u)
ours() {  # every path of ours that exists: the packages' files but the directories others share, and our names
    local f
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        if [ -L "$f" ] || [ -f "$f" ]; then echo "$f"
        elif [ -d "$f" ] && [[ $f == *pvrdma* ]]; then echo "$f"
        fi
    done <<<"$files"
    ls -d "$ompi_dir"/*pvrdma* "$ucx_dir"/*pvrdma* "$ompi_data"/*pvrdma* /usr/share/pvrdma-mpi \
          /usr/share/doc/pvrdma-mpi-* "$EM_DIR" "$LMOD_LINK" /usr/bin/pvrdma-* 2>/dev/null
}
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "${PKGS[@]}" >"$LOG/remove.log" 2>&1 ||
    fail "apt-get remove ${PKGS[*]}" "failed (log: $LOG/remove.log)"
left=$(ours | sort -u)
[ -z "$left" ] && pass "apt-get remove leaves no file of ours ($(echo "$files" | wc -l) paths checked)" ||
    fail "apt-get remove leaves no file of ours" "left: $(echo "$left" | head -n 5 | tr '\n' ' ')"
# (apt-get purge cannot name packages that came from files and are gone)
dpkg --purge "${PKGS[@]}" >"$LOG/purge.log" 2>&1 ||
    fail "dpkg --purge ${PKGS[*]}" "failed (log: $LOG/purge.log)"
known=$(dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null | grep -v 'not-installed$')
left=$(ours | sort -u)
[ -z "$known$left" ] && pass "after dpkg --purge dpkg knows none of the packages and no file of ours is left" ||
    fail "dpkg --purge" "dpkg: $(echo "$known" | tr '\n' ' '); left: $(echo "$left" | head -n 5 | tr '\n' ' ')"
"$TOP/scripts/install-debs.sh" "$DEBS" >"$LOG/reinstall.log" 2>&1 ||
    fail "install again (scripts/install-debs.sh)" "failed: $(tail -n 2 "$LOG/reinstall.log" | tr '\n' ' ')"
check_installed reinstalled
exit $FAILED
