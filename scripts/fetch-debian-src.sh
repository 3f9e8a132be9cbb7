#!/bin/sh
# fetch-debian-src.sh - download one exact version of a Debian source package
# from Debian's archive and extract it (Debian's patches applied).
#
# Usage: fetch-debian-src.sh SOURCE-PACKAGE VERSION DEST
#   DEST must not exist yet (it is created by dpkg-source); exits 0 when
#   DEST holds the extracted tree.  Messages go to stderr.
#
# Used where the project needs sources Debian does not ship as binaries:
# UCX's internal headers (scripts/fetch-ucx-src.sh) and the test bed's
# patched QEMU (scripts/testbed/pvrdma/qemu.sh).
#
# Needs a deb-src entry for Debian's archive.  When none provides the
# version and the script runs as root, it adds
# /etc/apt/sources.list.d/pvrdma-deb-src.sources (deb-src twin of the deb
# entries in debian.sources) and runs apt-get update.
set -eu

SRC_LIST=/etc/apt/sources.list.d/pvrdma-deb-src.sources
DEB_SOURCES=/etc/apt/sources.list.d/debian.sources

die() {
    echo "fetch-debian-src.sh: error: $*" >&2
    exit 1
}
note() {
    echo "fetch-debian-src.sh: $*" >&2
}

[ $# -eq 3 ] || die "usage: fetch-debian-src.sh SOURCE-PACKAGE VERSION DEST"
src_pkg=$1 src_version=$2 dest=$3
for t in apt-get apt-cache dpkg-source; do
    command -v "$t" >/dev/null 2>&1 || die "$t not found (install apt and dpkg-dev)"
done
[ ! -e "$dest" ] || die "$dest already exists"

have_source() {
    apt-cache showsrc "$src_pkg" 2>/dev/null |
        grep -qx "Version: $src_version"
}

if ! have_source; then
    if [ "$(id -u)" != 0 ]; then
        die "no deb-src entry provides $src_pkg $src_version. As root, add a deb-src entry for Debian's archive (or run this as root once: it adds $SRC_LIST), then run apt-get update"
    fi
    if [ ! -f "$SRC_LIST" ]; then
        if [ -f "$DEB_SOURCES" ]; then
            note "adding deb-src entries to $SRC_LIST (copied from $DEB_SOURCES)"
            sed 's/^Types:.*/Types: deb-src/' "$DEB_SOURCES" > "$SRC_LIST.tmp"
        else
            codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
            note "adding deb-src entry for Debian $codename to $SRC_LIST"
            printf 'Types: deb-src\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$("$(dirname "$0")/debian-mirror.sh")" "$codename" "$codename" > "$SRC_LIST.tmp"
        fi
        mv "$SRC_LIST.tmp" "$SRC_LIST"
    fi
    note "running apt-get update"
    apt-get update -qq >&2 || die "apt-get update failed (no network?)"
    have_source || die "Debian's archive does not offer $src_pkg $src_version as a source package any more (snapshot.debian.org has it: dpkg-source -x ${src_pkg}_${src_version}.dsc)"
fi

mkdir -p "$(dirname "$dest")" || die "cannot create the parent of $dest"
work=$(mktemp -d "$(dirname "$dest")/download.XXXXXX") || die "cannot create a download directory next to $dest"
chmod 0755 "$work" # apt's _apt user downloads into it when it can
trap 'rm -rf "$work"' EXIT
note "downloading $src_pkg $src_version source package"
(cd "$work" && apt-get source --download-only -qq "$src_pkg=$src_version" >&2) ||
    die "apt-get source --download-only $src_pkg=$src_version failed"
dsc=$(ls "$work"/*.dsc 2>/dev/null | head -n 1)
[ -n "$dsc" ] || die "no .dsc file was downloaded"

note "extracting into $dest"
dpkg-source --no-check -x "$dsc" "$dest" >"$work/dpkg-source.log" 2>&1 ||
    { tail -n 5 "$work/dpkg-source.log" >&2; rm -rf "$dest"; die "dpkg-source -x $dsc failed"; }
