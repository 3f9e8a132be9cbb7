#!/bin/sh
# build-openib-rdmacm.sh - Open MPI's openib BTL with the rdmacm connection
# method, the transport of the paper, for the benchmarks' and the validation
# harness's `openib` baseline (issue 19).  Debian's Open MPI 4.1.4 is built
# without librdmacm, so its openib has only the udcm connection method,
# which cannot connect over RoCE ("No OpenFabrics connection schemes
# reported that they were able to be used").
#
# Usage: build-openib-rdmacm.sh
#   Builds the openib component from Debian's `openmpi` source package of
#   exactly the installed version (configure with the package's own options
#   where they matter to a component, librdmacm found), once: the result is
#   cached in $CACHE.  Then lays out $DEST: every component of Debian's Open
#   MPI (symlinks) with openib replaced by this one, so that
#     mpirun --mca mca_base_component_path $DEST --mca btl openib,self \
#            --mca btl_openib_cpc_include rdmacm ...
#   runs it (validation/transports/openib.conf does); nothing of Debian's
#   installation is changed.  Prints $DEST.
# Needs: libopenmpi-dev, librdmacm-dev, libibverbs-dev, a deb-src entry (see
# fetch-debian-src.sh).  About 4 min on 2 cores, mostly configure.
set -eu

die() { echo "build-openib-rdmacm.sh: error: $*" >&2; exit 1; }
note() { echo "build-openib-rdmacm.sh: $*" >&2; }

MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
OMPI_LIB=/usr/lib/$MA/openmpi/lib
COMPONENTS=$OMPI_LIB/openmpi3
DEST=${PVRDMA_OPENIB_DIR:-/usr/local/lib/pvrdma-mpi/openib-rdmacm}

VER=$(dpkg-query -W -f='${source:Version}' libopenmpi3 2>/dev/null) ||
    die "libopenmpi3 is not installed"
CACHE=${PVRDMA_OPENIB_CACHE:-/var/cache/pvrdma-mpi-testbed/openib-rdmacm}/$VER
[ -d "$COMPONENTS" ] || die "no $COMPONENTS (Debian's Open MPI components)"
[ -e "/usr/include/rdma/rdma_cma.h" ] || die "librdmacm-dev is not installed"

if [ ! -s "$CACHE/mca_btl_openib.so" ]; then
    work=$(mktemp -d /tmp/openib-rdmacm.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    "$(dirname "$0")/fetch-debian-src.sh" openmpi "$VER" "$work/src"
    cd "$work/src"
    # Debian's patches change configure.ac and Makefile.am files (none of
    # openib's): the tarball's configure and Makefile.in serve one
    # component, so every file is dated back and the generated ones after
    # their sources, or make would regenerate them with upstream's exact
    # automake (1.15), which Debian 12 does not have
    find . -type f -exec touch -d '2020-01-01 00:00:00' {} +
    find . -name aclocal.m4 -exec touch -d '2020-01-01 00:00:01' {} +
    find . \( -name configure -o -name '*.in' \) -exec touch -d '2020-01-01 00:00:02' {} +
    note "configure (log: $work/configure.log)"
    # The package's options that shape what a component sees (external
    # PMIx, libevent, hwloc; verbs; IPv6); Fortran, Java and OSHMEM are not
    # needed for one BTL.  rdmacm is required, not just tried.
    ./configure --prefix=/usr --libdir="$OMPI_LIB" \
        --includedir="$OMPI_LIB/../include" --sysconfdir=/etc/openmpi \
        --with-verbs --enable-openib-rdmacm \
        --with-pmix="/usr/lib/$MA/pmix2" --with-libevent=external \
        --with-hwloc=external --enable-ipv6 --with-package-string="Debian OpenMPI" \
        --disable-mpi-fortran --disable-mpi-java --disable-oshmem \
        --without-ucx --without-ofi --without-psm --without-psm2 \
        >"$work/configure.log" 2>&1 ||
        { tail -n 20 "$work/configure.log" >&2; die "configure failed"; }
    grep -q '^#define OPAL_HAVE_RDMACM 1' opal/include/opal_config.h ||
        die "configure did not find librdmacm (OPAL_HAVE_RDMACM is not 1)"
    # Only the component, linked against the installed libopen-pal and
    # common_verbs of the same version instead of building them again.
    note "make opal/mca/btl/openib"
    make -C opal/mca/btl/openib -j"$(nproc)" mca_btl_openib.la \
        mca_btl_openib_la_DEPENDENCIES= \
        mca_btl_openib_la_LIBADD="\$(btl_openib_LIBS) -L$OMPI_LIB -lmca_common_verbs -lopen-pal" \
        >"$work/make.log" 2>&1 ||
        { tail -n 20 "$work/make.log" >&2; die "make failed"; }
    mkdir -p "$CACHE"
    cp opal/mca/btl/openib/.libs/mca_btl_openib.so "$CACHE/mca_btl_openib.so"
    cd /
fi

nm -D "$CACHE/mca_btl_openib.so" | grep -q ' rdma_create_id' ||
    die "$CACHE/mca_btl_openib.so does not use librdmacm"
mkdir -p "$DEST"
find "$DEST" -maxdepth 1 \( -name 'mca_*.so' -o -name 'mca_*.la' \) -delete
for f in "$COMPONENTS"/mca_*.so; do
    [ "$(basename "$f")" = mca_btl_openib.so ] || ln -s "$f" "$DEST/"
done
install -m 0644 "$CACHE/mca_btl_openib.so" "$DEST/mca_btl_openib.so"
note "openib with rdmacm in $DEST (use --mca mca_base_component_path $DEST)"
echo "$DEST"
