#!/bin/bash
# scripts/install-debs.sh: install the packages scripts/build-debs.sh built
# (pvrdma-mpi-btl, pvrdma-mpi-ucx, pvrdma-mpi-tools) with apt-get, as root.
#   scripts/install-debs.sh [DEBDIR]      (default: build/deb)
# Files of ours that an earlier `make install` left, and that no package
# owns, are removed first: they would shadow or outlive the packages.
# --reinstall: a rebuild keeps the version, and must still replace the files.
set -u -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
DEBS=${1:-$TOP/build/deb}
say() { echo "install-debs: $*" >&2; }
die() { echo "install-debs: error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (apt-get install)"
version=$(grep -m 1 '^AC_INIT' "$TOP/configure.ac" | cut -d'[' -f3 | cut -d']' -f1)
debs=()
for p in pvrdma-mpi-btl pvrdma-mpi-ucx pvrdma-mpi-tools; do
    f=$(ls "$DEBS/${p}_${version}_"*.deb 2>/dev/null | head -n 1)
    # built without it (build profile pkg.pvrdma-mpi.noucx: docs/stacks.md)
    [ -z "$f" ] && [ $p = pvrdma-mpi-ucx ] && grep -qs 'pkg.pvrdma-mpi.noucx' "$DEBS/profiles" && continue
    [ -n "$f" ] || die "no $DEBS/${p}_${version}_*.deb: build them with scripts/build-debs.sh"
    debs+=("$f")
done

ompi_dir=$(ompi_info --path pkglibdir 2>/dev/null | awk '{ print $2 }')
ompi_data=$(ompi_info --path pkgdatadir 2>/dev/null | awk '{ print $2 }')
ucx_dir=$(pkg-config --variable=libdir ucx 2>/dev/null)/ucx
for f in "$ompi_dir"/mca_btl_pvrdma.so "$ompi_dir"/mca_btl_pvrdma.la "$ompi_data"/help-mpi-btl-pvrdma.txt \
         "$ucx_dir"/libuct_pvrdma.so "$ucx_dir"/libuct_pvrdma.so.0 "$ucx_dir"/libuct_pvrdma.so.0.0.0 \
         "$ucx_dir"/libuct_pvrdma.la /usr/local/share/pvrdma-mpi /usr/local/share/modules/modulefiles/pvrdma-mpi; do
    { [ -e "$f" ] || [ -L "$f" ]; } && ! dpkg -S "$f" >/dev/null 2>&1 || continue
    say "removing $f (left by an earlier make install; no package owns it)"
    rm -rf "$f"
done
say "apt-get install --reinstall ${debs[*]##*/}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall --no-install-recommends "${debs[@]}" \
    >"$DEBS/install.log" 2>&1 || { tail -n 20 "$DEBS/install.log" >&2; die "apt-get install failed (log: $DEBS/install.log)"; }
