#!/bin/sh
# fetch-ucx-src.sh - obtain the UCX source tree of exactly the installed UCX.
#
# The UCX transport includes UCX internal headers (uct/ib/base, ucs/...),
# which Debian does not ship.  They must match the installed libucx0 ABI,
# so we take Debian's own source package of the installed version (with
# Debian's patches applied) rather than an upstream tarball.
#
# Usage: fetch-ucx-src.sh [CACHE_DIR]
#   CACHE_DIR defaults to $PVRDMA_UCX_SRC_CACHE, else ./build/ucx-src.
# On success prints the absolute path of the source root (the directory
# holding src/) on stdout and exits 0.  Messages go to stderr.
#
# Downloads with scripts/fetch-debian-src.sh (needs a deb-src entry for
# Debian's archive; as root it adds one when none is configured).
set -eu

PKG=libucx0

die() {
    echo "fetch-ucx-src.sh: error: $*" >&2
    exit 1
}
note() {
    echo "fetch-ucx-src.sh: $*" >&2
}

cache=${1:-${PVRDMA_UCX_SRC_CACHE:-build/ucx-src}}

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found (this script needs a Debian system; pass --with-ucx-src=DIR to configure instead)"
command -v ucx_info >/dev/null 2>&1 || die "ucx_info not found (install the ucx-utils package)"

deb_version=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) ||
    die "package $PKG is not installed"
src_pkg=$(dpkg-query -W -f='${source:Package}' "$PKG")
src_version=$(dpkg-query -W -f='${source:Version}' "$PKG")
[ -n "$src_pkg" ] || src_pkg=ucx
[ -n "$src_version" ] || src_version=$deb_version
ucx_version=$(ucx_info -v | sed -n 's/^# *\(Library \)\{0,1\}[Vv]ersion:\{0,1\} *\([0-9][0-9.]*\).*/\2/p' | head -n 1)
[ -n "$ucx_version" ] || die "cannot read the UCX version from 'ucx_info -v'"
case "$src_version" in
    "$ucx_version"|"$ucx_version"[-+]*|*:"$ucx_version"[-+]*) ;;
    *) die "ucx_info reports UCX $ucx_version but $PKG is $src_version: mixed installation?" ;;
esac

mkdir -p "$cache" 2>/dev/null || die "cannot create the cache directory $cache"
cache=$(cd "$cache" && pwd)
dest="$cache/$src_pkg-$src_version"
stamp="$dest/.pvrdma-ucx-version"

# Version of an extracted tree, from UCX's configure.ac.
tree_version() {
    sed -n 's/^define(\[ucx_ver_\(major\|minor\|patch\)\], *\([0-9]*\)).*/\2/p' \
        "$1/configure.ac" 2>/dev/null | paste -sd. -
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$src_version" ] &&
   [ -f "$dest/src/uct/ib/base/ib_md.h" ]; then
    note "using cached UCX $src_version source in $dest"
    echo "$dest"
    exit 0
fi

rm -rf "$dest"
"$(dirname "$0")/fetch-debian-src.sh" "$src_pkg" "$src_version" "$dest" ||
    die "could not obtain the $src_pkg $src_version source package (see above); pass --with-ucx-src=DIR to configure instead"

got=$(tree_version "$dest")
[ "$got" = "$ucx_version" ] ||
    die "extracted UCX source is version '$got', installed UCX is $ucx_version"
[ -f "$dest/src/uct/ib/base/ib_md.h" ] ||
    die "extracted tree $dest has no src/uct/ib/base/ib_md.h"
echo "$src_version" > "$stamp"
note "UCX $ucx_version source ready in $dest"
echo "$dest"
