# shellcheck shell=bash
# tb --pvrdma: the QEMU the outer guests run for their nested node, built once
# into $TB_CACHE/pvrdma/qemu-<version>-<sum>/ and reused.
#
# Why not Debian's qemu-system-x86_64 as is: its pvrdma device model caches
# UD address handles by destination GID only (create_ah in
# hw/rdma/rdma_backend.c), in the PD of the first process that sent there;
# every later process's UD send to that GID then fails on rxe ("local QP
# operation error"). Both transports connect over UD, so only one MPI job per
# boot could connect. qemu-ah-cache-per-pd.patch keys the cache by PD too.
# qemu-meter-counters.patch: the meter (issue 19, pvrdma/meter-host) reads
# doorbells by kind and device commands by code from `info rdma`; the device
# model only counted all UAR writes and all commands together.
# qemu-cq-arm-notify.patch: an armed CQ gets its completion event (the model
# armed only for solicited completions, so ibv_req_notify_cq(cq, 0) never
# woke anyone; pvrdma/README.md, "CQ events").
# qemu-mr-page-span.patch: a memory region that does not start on a page
# and crosses one more page than its length rounds up to (200 bytes across
# a page boundary) registers, as on the real device; the model refused it
# ("Invalid nchunks/length"), and openib's malloc()ed CTS buffer failed with
# it (tests/fabric/mr_span checks it on the tier).
#
# The build: Debian's own `qemu` source package of exactly the installed
# qemu-system-x86 version (scripts/fetch-debian-src.sh), those patches, and a
# configure reduced to what the nested node uses (KVM, virtfs, vmxnet3,
# pvrdma, socket netdev): a few minutes on 2 cores. Firmware comes from the
# installed Debian packages (-L /usr/share/qemu -L /usr/share/seabios in outer-init).
# Sourced by tb after module.sh (uses TB_CACHE, TB_DIR, die, info).

TB_PV_QEMU_PATCHES=("$TB_DIR/pvrdma/qemu-ah-cache-per-pd.patch" "$TB_DIR/pvrdma/qemu-meter-counters.patch"
                    "$TB_DIR/pvrdma/qemu-cq-arm-notify.patch" "$TB_DIR/pvrdma/qemu-mr-page-span.patch")
# Debian packages the build needs (scripts/setup.sh installs them).
TB_PV_QEMU_BUILD_DEPS=(meson ninja-build pkg-config dpkg-dev libglib2.0-dev libpixman-1-dev
                       libibverbs-dev librdmacm-dev libibumad-dev libattr1-dev libcap-ng-dev
                       libfdt-dev zlib1g-dev)
TB_PV_QEMU_CONFIGURE=(--prefix=/usr --target-list=x86_64-softmmu --without-default-features
                      --disable-tcg --enable-kvm --enable-virtfs --enable-attr --enable-cap-ng
                      --enable-rdma --enable-pvrdma --enable-fdt=system
                      --disable-docs --disable-tools --disable-werror)

# Source version of the installed qemu-system-x86 ("" when not installed).
tb_pvrdma_qemu_version() {
    dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null
}

# Where the built binary lives for this QEMU version, patch and configure.
tb_pvrdma_qemu_path() {
    local ver sum
    ver=$(tb_pvrdma_qemu_version)
    sum=$({ cat "${TB_PV_QEMU_PATCHES[@]}"; echo "${TB_PV_QEMU_CONFIGURE[*]}"; } | md5sum | cut -c1-12)
    echo "$TB_CACHE/pvrdma/qemu-${ver//[:+~]/_}-$sum/qemu-system-x86_64"
}

# Prints why the QEMU cannot be built here ("" if it can or is cached).
tb_pvrdma_qemu_blocker() {
    local p missing=()
    [ -x "$(tb_pvrdma_qemu_path)" ] && return 0
    [ -n "$(tb_pvrdma_qemu_version)" ] || { echo "qemu-system-x86 is not installed"; return 0; }
    for p in "${TB_PV_QEMU_BUILD_DEPS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] || echo "build dependencies missing (apt-get install ${missing[*]}, or run scripts/setup.sh)"
}

# Builds the patched qemu-system-x86_64 unless cached. Sets TB_PV_QEMU.
tb_ensure_pvrdma_qemu() {
    local ver blocker tmp dest p
    TB_PV_QEMU=$(tb_pvrdma_qemu_path)
    [ -x "$TB_PV_QEMU" ] && return 0
    blocker=$(tb_pvrdma_qemu_blocker)
    [ -z "$blocker" ] || die "cannot build the bed's QEMU for --pvrdma: $blocker"
    ver=$(tb_pvrdma_qemu_version)
    dest=$(dirname "$TB_PV_QEMU")
    info "building qemu-system-x86_64 $ver with the bed's patches for the nested nodes (once, a few minutes)"
    mkdir -p "$TB_CACHE/pvrdma"
    tmp=$(mktemp -d "$TB_CACHE/pvrdma/qemu-build.XXXXXX")
    "$TB_DIR/../fetch-debian-src.sh" qemu "$ver" "$tmp/src" ||
        { rm -rf "$tmp"; die "could not obtain Debian's qemu $ver source package"; }
    for p in "${TB_PV_QEMU_PATCHES[@]}"; do
        patch -d "$tmp/src" -p1 -s <"$p" >"$tmp/patch.log" 2>&1 ||
            { cat "$tmp/patch.log" >&2; rm -rf "$tmp"; die "$(basename "$p") does not apply to qemu $ver"; }
    done
    mkdir "$tmp/build"
    ( cd "$tmp/build" && ../src/configure "${TB_PV_QEMU_CONFIGURE[@]}" ) >"$tmp/configure.log" 2>&1 ||
        { tail -n 20 "$tmp/configure.log" >&2; rm -rf "$tmp"; die "configuring qemu $ver failed"; }
    grep -q 'PVRDMA support *: YES' "$tmp/configure.log" ||
        { rm -rf "$tmp"; die "qemu $ver configured without PVRDMA support"; }
    ninja -C "$tmp/build" -j "$(nproc)" qemu-system-x86_64 >"$tmp/build.log" 2>&1 ||
        { tail -n 20 "$tmp/build.log" >&2; rm -rf "$tmp"; die "building qemu $ver failed"; }
    "$tmp/build/qemu-system-x86_64" -device help 2>/dev/null | grep -q 'name "pvrdma"' ||
        { rm -rf "$tmp"; die "the built QEMU has no -device pvrdma"; }
    mkdir -p "$dest"
    cp "$tmp/build/qemu-system-x86_64" "$TB_PV_QEMU.tmp" && mv "$TB_PV_QEMU.tmp" "$TB_PV_QEMU"
    rm -rf "$tmp"
}
