#!/bin/sh
# fetch-ompi-src.sh - obtain the Open MPI source tree of exactly the installed
# Open MPI, for the internal headers its devel package leaves out.
#
# Debian 13's libopenmpi-dev (Open MPI 5.0.7) installs opal_config.h, which
# names implementation headers it does not ship (opal/mca/threads/pthreads/
# threads_pthreads_*.h, opal/mca/timer/linux/timer_linux.h), so no
# out-of-tree component compiles against it alone.  Debian 12's 4.1.4
# ships them.  Like UCX's (fetch-ucx-src.sh), the missing headers come from
# Debian's own source package of the installed version; configure adds the
# tree with -idirafter, so every header the package does ship wins.
#
# Usage: fetch-ompi-src.sh [CACHE_DIR]
#   CACHE_DIR defaults to $PVRDMA_OMPI_SRC_CACHE, else ./build/ompi-src.
# On success prints the absolute path of the source root (holding opal/) on
# stdout and exits 0.  Messages go to stderr.
set -eu

PKG=libopenmpi-dev

die() {
    echo "fetch-ompi-src.sh: error: $*" >&2
    exit 1
}
note() {
    echo "fetch-ompi-src.sh: $*" >&2
}

cache=${1:-${PVRDMA_OMPI_SRC_CACHE:-build/ompi-src}}
command -v dpkg-query >/dev/null 2>&1 ||
    die "dpkg-query not found (this script needs a Debian system; pass --with-ompi-src=DIR to configure instead)"
src_pkg=$(dpkg-query -W -f='${source:Package}' "$PKG" 2>/dev/null) ||
    die "package $PKG is not installed"
src_version=$(dpkg-query -W -f='${source:Version}' "$PKG")
[ -n "$src_pkg" ] || src_pkg=openmpi

mkdir -p "$cache" 2>/dev/null || die "cannot create the cache directory $cache"
cache=$(cd "$cache" && pwd)
dest="$cache/$src_pkg-$src_version"
stamp="$dest/.pvrdma-ompi-version"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$src_version" ]; then
    note "using cached Open MPI $src_version source in $dest"
    echo "$dest"
    exit 0
fi
rm -rf "$dest"
"$(dirname "$0")/fetch-debian-src.sh" "$src_pkg" "$src_version" "$dest" ||
    die "could not obtain the $src_pkg $src_version source package (see above); pass --with-ompi-src=DIR to configure instead"
[ -d "$dest/opal/mca/threads" ] || die "extracted tree $dest has no opal/mca/threads"
echo "$src_version" >"$stamp"
note "Open MPI $src_version source ready in $dest"
echo "$dest"
