#!/bin/bash
# scripts/build-debs.sh: build the Debian packages (pvrdma-mpi-btl,
# pvrdma-mpi-ucx, pvrdma-mpi-tools) with dpkg-buildpackage -us -uc -b from a
# clean copy of this tree (the files git tracks, plus new ones it does not
# ignore; no build products), then check them with lintian (clean but for
# the overrides in debian/*.lintian-overrides).
#   scripts/build-debs.sh [OUTDIR]      (default: build/deb)
# Prints the paths of the .deb files on stdout, one per line; progress and
# errors go to stderr.  PVRDMA_DEB_JOBS: parallel build jobs (default: nproc).
# UCX's internal headers come from PVRDMA_UCX_SRC_CACHE (default: the
# cache of the build/ tree, build/ucx-src), filled from Debian's ucx source
# package of the installed version when empty (scripts/fetch-ucx-src.sh).
set -u -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
OUT=${1:-$TOP/build/deb}
say() { echo "build-debs: $*" >&2; }
die() { echo "build-debs: error: $*" >&2; exit 1; }

for t in dpkg-buildpackage dh lintian; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install dpkg-dev debhelper lintian)"
done
version=$(sed -n 's/^AC_INIT(\[pvrdma-mpi\], *\[\([^]]*\)\].*/\1/p' "$TOP/configure.ac")
[ -n "$version" ] || die "cannot read the version from configure.ac's AC_INIT"

mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "${OUT:?}"/pvrdma-mpi-* "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo
src=$OUT/pvrdma-mpi-$version
mkdir -p "$src"
if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$TOP" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        cpio -0pdm --quiet "$src") || die "copying the tree into $src failed"
else
    # not a git checkout (e.g. a release tarball): everything but build products
    tar -C "$TOP" --exclude='./build' --exclude='./build-*' --exclude=./tb-out --exclude=./weak-scaling-out -cf - . |
        tar -C "$src" -xf - || die "copying the tree into $src failed"
fi
[ -f "$src/debian/rules" ] || die "$src has no debian/rules"

export PVRDMA_UCX_SRC_CACHE=${PVRDMA_UCX_SRC_CACHE:-$TOP/build/ucx-src}
# Open MPI 5's missing internal headers, when needed (scripts/fetch-ompi-src.sh)
export PVRDMA_OMPI_SRC_CACHE=${PVRDMA_OMPI_SRC_CACHE:-$TOP/build/ompi-src}
export DEB_BUILD_OPTIONS="parallel=${PVRDMA_DEB_JOBS:-$(nproc)} ${DEB_BUILD_OPTIONS:-}"
# PVRDMA_DEB_PROFILES: build profiles, e.g. pkg.pvrdma-mpi.noucx (no UCX
# transport package: the second stack, docs/stacks.md).
profiles=${PVRDMA_DEB_PROFILES:+-P$PVRDMA_DEB_PROFILES}
echo "${PVRDMA_DEB_PROFILES:-}" >"$OUT/profiles"   # for install-debs.sh
say "dpkg-buildpackage -us -uc -b $profiles in $src (log: $OUT/build.log)"
(cd "$src" && dpkg-buildpackage -us -uc -b $profiles) >"$OUT/build.log" 2>&1 ||
    { tail -n 30 "$OUT/build.log" >&2; die "dpkg-buildpackage failed (log: $OUT/build.log)"; }
changes=$(ls "$OUT"/pvrdma-mpi_"$version"_*.changes 2>/dev/null | head -n 1)
[ -n "$changes" ] || die "no .changes file in $OUT"

# Lintian clean: what it reports and the project accepts is overridden in
# debian/*.lintian-overrides, each with its reason (README, Debian packages).
lintian --display-info "$changes" >"$OUT/lintian.log" 2>&1
tags=$(grep -E '^[EWIXP]: ' "$OUT/lintian.log")
[ -z "$tags" ] || { echo "$tags" >&2; die "lintian reports the tags above (log: $OUT/lintian.log)"; }
say "lintian: no tags ($(grep -c . "$OUT/lintian.log") lines of log)"
ls "$OUT"/*.deb
