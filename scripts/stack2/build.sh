#!/bin/bash
# scripts/stack2/build.sh: build and install the project in the second
# stack's root (Debian 13: Open MPI 5, UCX 1.18), in a chroot, from this
# tree (issue 39).  Progress goes to stderr; stdout gets one line, the
# root's path (for tb run --root); exits non-zero on failure.
#
#   scripts/stack2/build.sh [ROOT]     (as root; ROOT as for root.sh)
#
# Builds in build-stack2/ with -Werror, runs the unit tests there, builds
# our Debian packages in ROOT and installs them there (pvrdma-mpi-btl,
# pvrdma-mpi-tools), and builds tests/mpi's programs with ROOT's mpicc into
# build-stack2/mpi, so that `tb run --root ROOT` jobs use them.
set -eu -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
exec 3>&1 1>&2   # stdout is the root's path only (the last line)
ROOT=$("$TOP/scripts/stack2/root.sh" "$@")
say() { echo "stack2-build: $*" >&2; }
die() { echo "stack2-build: error: $*" >&2; exit 1; }

[ -x "$TOP/configure" ] || die "no configure in $TOP (run scripts/setup.sh or autoreconf -fi first)"
mkdir -p "$ROOT$TOP"
mounts=()
cleanup() {
    local m
    for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
mountpoint -q "$ROOT$TOP" || { mount --bind "$TOP" "$ROOT$TOP" && mounts=("$ROOT$TOP"); }
mountpoint -q "$ROOT/proc" || { mount -t proc proc "$ROOT/proc" && mounts+=("$ROOT/proc"); }
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 bash -c "$1"; }

B=$TOP/build-stack2
mkdir -p "$B"
# UCX 1.18's transport is not built here yet: its internal headers come from
# Debian's ucx source package of the installed version, and the archive
# serves no ucx 1.18.1+ds-2 source (404, 2026-11-28).  See docs/stacks.md.
say "configure in $B (Open MPI $(in_root "dpkg-query -W -f='\${Version}' libopenmpi-dev"), -Werror, --disable-ucx)"
in_root "cd '$B' && '$TOP/configure' --enable-werror --disable-ucx >configure.out 2>&1" ||
    { tail -n 20 "$B/configure.out" >&2; die "configure failed in the root (log: $B/configure.out)"; }
say "make"
in_root "cd '$B' && make -j$(nproc) >make.out 2>&1" ||
    { grep -E 'error|Error' "$B/make.out" | head -n 30 >&2; die "make failed in the root (log: $B/make.out)"; }
say "unit tests"
in_root "cd '$B' && make -C tests/unit check >check.out 2>&1" ||
    { grep -E '^(FAIL|ERROR)' "$B/check.out" >&2; die "unit tests failed in the root (log: $B/check.out)"; }
grep -E '^# (TOTAL|PASS|FAIL)' "$B/check.out" | tr '\n' ' ' >&2; echo >&2
# Installed the way users install: our Debian packages, built in the root
# from the same debian/ (without the UCX package, see above).
say "Debian packages (build profile pkg.pvrdma-mpi.noucx) into $B/deb"
in_root "cd '$TOP' && PVRDMA_DEB_PROFILES=pkg.pvrdma-mpi.noucx PVRDMA_OMPI_SRC_CACHE='$B/ompi-src' scripts/build-debs.sh '$B/deb' >'$B/debs.out' 2>&1" ||
    { tail -n 20 "$B/debs.out" >&2; die "building the Debian packages in the root failed (log: $B/debs.out)"; }
grep -E 'lintian' "$B/debs.out" >&2
say "install them in the root"
in_root "cd '$TOP' && scripts/install-debs.sh '$B/deb' >'$B/install.out' 2>&1" ||
    { tail -n 20 "$B/install.out" >&2; die "installing the packages in the root failed (log: $B/install.out)"; }
in_root "dpkg-query -W -f='\${Package} \${Version}: \${Depends}\n' pvrdma-mpi-btl" >&2
say "tests/mpi with the root's mpicc into $B/mpi"
mkdir -p "$B/mpi"
in_root "make -C '$B/mpi' -f '$TOP/tests/mpi/Makefile' SRCDIR='$TOP/tests/mpi' >'$B/mpi/make.out' 2>&1" ||
    { tail -n 20 "$B/mpi/make.out" >&2; die "building tests/mpi in the root failed"; }
say "done: $(in_root "ompi_info --version 2>/dev/null | head -n 1"), BTL in $(in_root "ompi_info --path pkglibdir --parsable 2>/dev/null | cut -d: -f3")"
echo "$ROOT" >&3
