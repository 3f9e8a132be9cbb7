#!/bin/bash
# scripts/setup.sh: everything on a fresh Debian 12 machine (as root):
# Debian packages, build (with -Werror), install of both plugins, the test
# bed's kernel, then the main job: the weak-scaling validation harness on
# the local test bed (validation/run_weak_scaling.sh with no arguments).
#   scripts/setup.sh [--no-run] [--no-install] [CONFIGURE-ARGS...]
set -eu -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP"
RUN_MAIN=1 INSTALL=1
CONF_ARGS=()
for a in "$@"; do
    case $a in
        --no-run) RUN_MAIN=0 ;;
        --no-install) INSTALL=0 ;;
        -h|--help) sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) CONF_ARGS+=("$a") ;;
    esac
done
say() { echo "setup: $*"; }

# Every dependency comes from Debian's archive.
PACKAGES=(
    build-essential autoconf automake libtool pkg-config dpkg-dev file
    libopenmpi-dev openmpi-bin libucx-dev ucx-utils libucx0
    libibverbs-dev ibverbs-utils ibverbs-providers rdma-core perftest libhwloc-dev
    qemu-system-x86 busybox-static openssh-server openssh-client iproute2 kmod cpio
    openfoam openfoam-examples gnuplot-nox iputils-ping procps
    # the --pvrdma tier's nested QEMU (scripts/testbed/pvrdma/qemu.sh)
    meson ninja-build libglib2.0-dev libpixman-1-dev librdmacm-dev libibumad-dev
    libattr1-dev libcap-ng-dev libfdt-dev zlib1g-dev
)
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
if [ $INSTALL = 1 ]; then
    say "installing the plugins"
    make install >install.out 2>&1 || { tail -n 20 install.out; exit 1; }
fi
cd "$TOP"
# MPI test programs (the tree is read-only inside the bed's guests).
make -s -C tests/mpi >/dev/null || { echo "setup: building tests/mpi failed" >&2; exit 1; }

say "preparing the test bed (kernel package; for --pvrdma vmw_pvrdma.ko and the nested QEMU; once)"
scripts/testbed/tb prepare --pvrdma

if [ $RUN_MAIN = 1 ]; then
    say "main job: validation/run_weak_scaling.sh (mini ladder on the local test bed)"
    validation/run_weak_scaling.sh --out "$TOP/weak-scaling-out"
fi
