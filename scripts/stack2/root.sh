#!/bin/bash
# scripts/stack2/root.sh: the second stack's root, a Debian 13 (trixie)
# system with Open MPI 5 and UCX 1.18 from Debian's archive (issue 39).
#
#   scripts/stack2/root.sh [ROOT]      (as root; prints ROOT on stdout)
#
# ROOT defaults to $PVRDMA_STACK2_ROOT, else /var/cache/pvrdma-mpi/stack2-trixie.
# Built once per machine with debootstrap from the machine's own Debian
# mirror (the archive Debian 12 comes from carries trixie too), then reused:
# a stamp records the package list, so a changed list rebuilds the root.
# The root is what the bed's guests boot into with `tb run --root ROOT`, and
# what scripts/stack2/build.sh builds the project in (chroot).
set -eu -o pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
ROOT=${1:-${PVRDMA_STACK2_ROOT:-/var/cache/pvrdma-mpi/stack2-trixie}}
SUITE=trixie
say() { echo "stack2-root: $*" >&2; }
die() { echo "stack2-root: error: $*" >&2; exit 1; }

# The same roles as scripts/setup.sh's list, for the second stack: build the
# project, run it on the bed (sshd, ip, rdma, modprobe), and fetch UCX's
# source package of the installed version (dpkg-dev for apt-get source).
PACKAGES=(
    build-essential autoconf automake libtool pkg-config dpkg-dev file
    libopenmpi-dev openmpi-bin libucx-dev ucx-utils libucx0
    libibverbs-dev ibverbs-utils ibverbs-providers rdma-core perftest libhwloc-dev libsodium-dev
    openssh-server openssh-client iproute2 kmod procps iputils-ping ca-certificates
    # `module load pvrdma-mpi/btl`, as on Debian 12
    environment-modules
    # our Debian packages (scripts/build-debs.sh) on this stack
    debhelper fakeroot lintian git cpio
)
[ "$(id -u)" = 0 ] || die "run as root (debootstrap and chroot)"
command -v debootstrap >/dev/null ||
    die "debootstrap is not installed (apt-get install debootstrap)"

MIRROR=$("$TOP/scripts/debian-mirror.sh")
want=$(printf '%s\n' "$SUITE" "$MIRROR" "${PACKAGES[@]}" | sha256sum | cut -c1-16)
stamp=$ROOT/.pvrdma-stack2

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    say "using the cached $SUITE root $ROOT"
    echo "$ROOT"
    exit 0
fi

say "building a $SUITE root in $ROOT from $MIRROR (once per machine)"
# Never delete through a mount (build.sh bind-mounts the project tree).
if [ -d "$ROOT" ] && awk -v r="$ROOT/" 'index($5 "/", r) == 1 {f=1} END {exit !f}' /proc/self/mountinfo; then
    die "something is mounted under $ROOT (build.sh running?): not rebuilding it"
fi
rm -rf --one-file-system "$ROOT"
mkdir -p "$(dirname "$ROOT")"
t0=$(date +%s)
debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 ||
    { tail -n 20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed (log: $ROOT.debootstrap.log)"; }

# No daemons start inside the chroot while packages are installed.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"
cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb-src $MIRROR $SUITE main
EOF
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$ROOT/proc"
trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT
chroot "$ROOT" apt-get update -qq >>"$ROOT.debootstrap.log" 2>&1 || die "apt-get update in the root failed"
pkgs=${PACKAGES[*]}
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get install -y -qq --no-install-recommends $pkgs \
    >>"$ROOT.debootstrap.log" 2>&1 ||
    { tail -n 20 "$ROOT.debootstrap.log" >&2; die "installing the packages in the root failed"; }
chroot "$ROOT" apt-get clean
umount "$ROOT/proc"
trap - EXIT
echo "$want" >"$stamp"
say "done in $(( $(date +%s) - t0 )) s: $(chroot "$ROOT" dpkg-query -W -f='Open MPI ${Version}, ' libopenmpi-dev)$(chroot "$ROOT" dpkg-query -W -f='UCX ${Version}' libucx-dev)"
echo "$ROOT"
