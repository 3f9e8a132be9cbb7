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
# Needs a deb-src entry for Debian's archive.  When none is configured and
# the script runs as root, it adds /etc/apt/sources.list.d/pvrdma-deb-src.sources
# (deb-src twin of the deb entries in debian.sources) and runs apt-get update.
set -eu

PKG=libucx0
SRC_LIST=/etc/apt/sources.list.d/pvrdma-deb-src.sources
DEB_SOURCES=/etc/apt/sources.list.d/debian.sources

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
ucx_version=$(ucx_info -v | sed -n 's/^# *Version *\([0-9][0-9.]*\).*/\1/p' | head -n 1)
[ -n "$ucx_version" ] || die "cannot read the UCX version from 'ucx_info -v'"
case "$src_version" in
    "$ucx_version"|"$ucx_version"-*|*:"$ucx_version"-*) ;;
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

have_source() {
    apt-cache showsrc "$src_pkg" 2>/dev/null |
        grep -qx "Version: $src_version"
}

if ! have_source; then
    if [ "$(id -u)" != 0 ]; then
        die "no deb-src entry provides $src_pkg $src_version. As root, add a deb-src entry for Debian's archive (or run this script as root once: it adds $SRC_LIST), then run apt-get update; or pass --with-ucx-src=DIR to configure"
    fi
    if [ ! -f "$SRC_LIST" ]; then
        if [ -f "$DEB_SOURCES" ]; then
            note "adding deb-src entries to $SRC_LIST (copied from $DEB_SOURCES)"
            sed 's/^Types:.*/Types: deb-src/' "$DEB_SOURCES" > "$SRC_LIST.tmp"
        else
            codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
            note "adding deb-src entry for Debian $codename to $SRC_LIST"
            printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$codename" "$codename" > "$SRC_LIST.tmp"
        fi
        mv "$SRC_LIST.tmp" "$SRC_LIST"
    fi
    note "running apt-get update"
    apt-get update -qq >&2 || die "apt-get update failed (no network?); pass --with-ucx-src=DIR to configure instead"
    have_source || die "Debian's archive does not offer $src_pkg $src_version as a source package any more; download it from snapshot.debian.org (dpkg-source -x ${src_pkg}_${src_version}.dsc) and pass --with-ucx-src=DIR to configure"
fi

work="$cache/download.$$"
rm -rf "$work"
mkdir -p "$work"
chmod 0755 "$work" # apt's _apt user downloads into it when it can
trap 'rm -rf "$work"' EXIT
note "downloading $src_pkg $src_version source package"
(cd "$work" && apt-get source --download-only -qq "$src_pkg=$src_version" >&2) ||
    die "apt-get source --download-only $src_pkg=$src_version failed"
dsc=$(ls "$work"/*.dsc 2>/dev/null | head -n 1)
[ -n "$dsc" ] || die "no .dsc file was downloaded"

rm -rf "$dest"
note "extracting into $dest"
dpkg-source --no-check -x "$dsc" "$dest" >&2 ||
    die "dpkg-source -x $dsc failed"

got=$(tree_version "$dest")
[ "$got" = "$ucx_version" ] ||
    die "extracted UCX source is version '$got', installed UCX is $ucx_version"
[ -f "$dest/src/uct/ib/base/ib_md.h" ] ||
    die "extracted tree $dest has no src/uct/ib/base/ib_md.h"
echo "$src_version" > "$stamp"
note "UCX $ucx_version source ready in $dest"
echo "$dest"
