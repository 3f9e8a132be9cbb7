#!/bin/bash
# scripts/setup.sh: everything on a fresh Debian 12 machine (as root):
# Debian packages, build (with -Werror), the project's own Debian packages
# (scripts/build-debs.sh) installed with apt-get, the test bed's kernel,
# then the main job: the weak-scaling validation harness on the local test
# bed (validation/run_weak_scaling.sh with no arguments).
# It also builds the stock openib baseline with rdmacm that the benchmarks
# and the harness's `openib` profile compare against (issue 19:
# scripts/build-openib-rdmacm.sh, once, cached).
#   scripts/setup.sh [--no-run] [--no-install] [--no-baselines] [CONFIGURE-ARGS...]
#   --no-install: build the packages but do not install them;
#   --no-baselines: skip the openib baseline (tests/run: no test uses it);
#   CONFIGURE-ARGS go to the development build in build/ (unit tests).
set -eu -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP"
RUN_MAIN=1 INSTALL=1 BASELINES=1
CONF_ARGS=()
for a in "$@"; do
    case $a in
        --no-run) RUN_MAIN=0 ;;
        --no-install) INSTALL=0 ;;
        --no-baselines) BASELINES=0 ;;
        -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) CONF_ARGS+=("$a") ;;
    esac
done
say() { echo "setup: $*"; }

# Every dependency comes from Debian's archive.
PACKAGES=(
    build-essential autoconf automake libtool pkg-config dpkg-dev file
    libopenmpi-dev openmpi-bin libucx-dev ucx-utils libucx0
    libibverbs-dev ibverbs-utils ibverbs-providers rdma-core perftest libhwloc-dev libsodium-dev
    qemu-system-x86 busybox-static openssh-server openssh-client iproute2 kmod cpio
    openfoam openfoam-examples gnuplot-nox iputils-ping procps
    # the --pvrdma tier's nested QEMU (scripts/testbed/pvrdma/qemu.sh)
    meson ninja-build libglib2.0-dev libpixman-1-dev librdmacm-dev libibumad-dev
    libattr1-dev libcap-ng-dev libfdt-dev zlib1g-dev
    # the second stack's Debian 13 root (scripts/stack2/root.sh)
    debootstrap
    # our Debian packages (scripts/build-debs.sh) and their test
    debhelper lintian
    # Lmod's dependencies: tests/packages.sh runs Debian's lmod unpacked,
    # since it conflicts with environment-modules (installed below)
    tcl lua5.3 lua-posix lua-filesystem lua-json lua-term
)
# A module system for `module load pvrdma-mpi/...`: Environment Modules,
# unless Lmod is there already (Debian's two conflict with each other).
dpkg-query -W -f='${Status}' lmod 2>/dev/null | grep -q 'install ok installed' ||
    PACKAGES+=(environment-modules)
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "setup: run as root to install: ${missing[*]}" >&2; exit 1; }
    say "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

say "building"
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null
mkdir -p build
cd build
if [ ! -f Makefile ] || [ ${#CONF_ARGS[@]} -gt 0 ]; then
    ../configure --enable-werror "${CONF_ARGS[@]}" >configure.out || { tail -n 30 configure.out; exit 1; }
fi
make -j"$(nproc)" >make.out 2>&1 || { tail -n 40 make.out; exit 1; }
cd "$TOP"

# The plugins reach the machine only through our Debian packages, the way
# users install them.  (UCX's internal headers: the build/ tree's cache.)
say "building the Debian packages (scripts/build-debs.sh build/deb)"
PVRDMA_UCX_SRC_CACHE=$TOP/build/ucx-src scripts/build-debs.sh "$TOP/build/deb" >/dev/null
if [ $INSTALL = 1 ]; then
    say "installing the packages (scripts/install-debs.sh build/deb)"
    scripts/install-debs.sh "$TOP/build/deb"
fi
# Lmod for tests/packages.sh, unpacked (not installed: it conflicts with
# environment-modules).
if ! dpkg-query -W -f='${Status}' lmod 2>/dev/null | grep -q 'install ok installed' &&
   [ ! -x build/lmod/root/usr/share/lmod/lmod/libexec/lmod ]; then
    rm -rf build/lmod && mkdir -p build/lmod && chmod 0755 build/lmod
    (cd build/lmod && apt-get download -qq lmod 2>/dev/null && dpkg -x lmod_*.deb root) ||
        { echo "setup: could not download and unpack Debian's lmod into build/lmod" >&2; exit 1; }
fi
# Test programs (the tree is read-only inside the bed's guests, and a
# compile there runs under emulation): MPI, raw verbs, UCP/UCT.
for d in tests/mpi tests/fabric tests/ucx; do
    make -s -C "$d" >/dev/null || { echo "setup: building $d failed" >&2; exit 1; }
done

say "preparing the test bed (kernel package; for --pvrdma vmw_pvrdma.ko and the nested QEMU; once)"
scripts/testbed/tb prepare --pvrdma

# The stock baseline of the paper's transport: Debian's openib cannot
# connect over RoCE (no rdmacm); a failure here costs only the openib rows
# of the benchmarks and the harness, which then say why.
if [ $BASELINES = 1 ]; then
    say "the stock openib baseline with rdmacm (scripts/build-openib-rdmacm.sh; once, cached)"
    scripts/build-openib-rdmacm.sh >/dev/null ||
        echo "setup: warning: building openib with rdmacm failed (above); the openib baseline rows will say it cannot run" >&2
fi

if [ $RUN_MAIN = 1 ]; then
    say "main job: validation/run_weak_scaling.sh (mini ladder on the local test bed)"
    validation/run_weak_scaling.sh --out "$TOP/weak-scaling-out"
fi
