# shellcheck shell=bash
# tb --pvrdma: what the nested tier needs that Debian does not ship, built once
# into $TB_CACHE/pvrdma and reused:
#   - vmw_pvrdma.ko for the bed's kernel (Debian builds its kernel without
#     CONFIG_INFINIBAND_VMWARE_PVRDMA): compiled out of tree from the driver
#     directory of linux-source-6.1 against linux-headers-<kver> and
#     linux-kbuild-6.1, all fetched with `apt-get download` and unpacked with
#     `dpkg -x` (nothing is installed on the machine);
#   - madmux, the MAD multiplexer stand-in QEMU's pvrdma device talks to.
# Sourced by tb after kernel.sh (uses TB_CACHE, TB_KVER, TB_DIR, die, info).

# Package version of the cached kernel, so source and headers match its ABI.
tb_pvrdma_kernel_version() {
    apt-cache show "linux-image-$TB_KVER" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1
}

# Prints why the module cannot be built here ("" if it can or is cached).
tb_pvrdma_module_blocker() {
    local series t
    series=$(echo "$TB_KVER" | cut -d. -f1-2)
    [ -f "$TB_CACHE/pvrdma/$TB_KVER/vmw_pvrdma.ko" ] && return 0
    for t in gcc make apt-get dpkg tar xz; do
        command -v "$t" >/dev/null || { echo "$t missing"; return 0; }
    done
    apt-cache show "linux-source-$series" >/dev/null 2>&1 || { echo "linux-source-$series not in apt's lists (apt-get update)"; return 0; }
    apt-cache show "linux-headers-$TB_KVER" >/dev/null 2>&1 || { echo "linux-headers-$TB_KVER not in apt's lists"; return 0; }
}

# Builds $TB_CACHE/pvrdma/$TB_KVER/vmw_pvrdma.ko unless it is there. Sets TB_PVRDMA_KO.
tb_ensure_pvrdma_module() {
    local dest="$TB_CACHE/pvrdma/$TB_KVER" series ver tmp p hdr common drv vermagic pkgs
    TB_PVRDMA_KO=$dest/vmw_pvrdma.ko
    [ -f "$TB_PVRDMA_KO" ] && return 0
    series=$(echo "$TB_KVER" | cut -d. -f1-2)           # 6.1.0-56-amd64 -> 6.1
    common=linux-headers-${TB_KVER%-*}-common             # -> linux-headers-6.1.0-56-common
    pkgs=("linux-source-$series" "linux-kbuild-$series" "linux-headers-$TB_KVER" "$common")
    ver=$(tb_pvrdma_kernel_version)
    info "building vmw_pvrdma.ko for $TB_KVER (once): apt-get download ${pkgs[*]}"
    tmp=$(mktemp -d "$TB_CACHE/pvrdma-build.XXXXXX")
    # Same version as the kernel image where the archive still has it.
    ( cd "$tmp" && { [ -n "$ver" ] && apt-get download "${pkgs[@]/%/=$ver}" >/dev/null 2>&1 ||
                     apt-get download "${pkgs[@]}" >/dev/null 2>"$tmp/apt.err"; } ) ||
        { local err; err=$(tail -n 3 "$tmp/apt.err" 2>/dev/null); rm -rf "$tmp"
          die "apt-get download ${pkgs[*]} failed: $err"; }
    for p in "$tmp"/*.deb; do dpkg -x "$p" "$tmp/x" || { rm -rf "$tmp"; die "dpkg -x $p failed"; }; done
    hdr=$tmp/x/usr/src/linux-headers-$TB_KVER
    [ -f "$hdr/Makefile" ] || { rm -rf "$tmp"; die "linux-headers-$TB_KVER has no Makefile"; }
    # The flavour's Makefile includes the -common tree by absolute path.
    sed -i "s|^include /usr/src/|include $tmp/x/usr/src/|" "$hdr/Makefile"
    drv=linux-source-$series/drivers/infiniband/hw/vmw_pvrdma
    tar -xJf "$tmp/x/usr/src/linux-source-$series.tar.xz" -C "$tmp" "$drv" ||
        { rm -rf "$tmp"; die "no $drv in linux-source-$series"; }
    make -C "$hdr" M="$tmp/$drv" CONFIG_INFINIBAND_VMWARE_PVRDMA=m modules >"$tmp/build.log" 2>&1 ||
        { tail -n 20 "$tmp/build.log" >&2; rm -rf "$tmp"; die "building vmw_pvrdma.ko failed"; }
    vermagic=$(strings "$tmp/$drv/vmw_pvrdma.ko" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p')
    [ "$vermagic" = "$TB_KVER" ] || { rm -rf "$tmp"; die "vmw_pvrdma.ko vermagic '$vermagic' != $TB_KVER"; }
    mkdir -p "$dest"
    cp "$tmp/$drv/vmw_pvrdma.ko" "$TB_PVRDMA_KO.tmp" && mv "$TB_PVRDMA_KO.tmp" "$TB_PVRDMA_KO"
    rm -rf "$tmp"
}

# Compiles madmux.c once per source version. Sets TB_MADMUX.
tb_ensure_madmux() {
    local src="$TB_DIR/pvrdma/madmux.c" sum
    command -v gcc >/dev/null || die "gcc not found: the bed compiles its MAD multiplexer (apt-get install gcc)"
    sum=$(md5sum <"$src" | cut -c1-12)
    TB_MADMUX=$TB_CACHE/pvrdma/madmux-$sum
    [ -x "$TB_MADMUX" ] && return 0
    mkdir -p "$TB_CACHE/pvrdma"
    gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$TB_MADMUX.tmp" "$src" ||
        die "compiling $src failed"
    mv "$TB_MADMUX.tmp" "$TB_MADMUX"
}

# Everything tb run --pvrdma needs on the machine side, checked or built.
tb_pvrdma_prepare() {
    tb_ensure_pvrdma_module
    tb_ensure_madmux
    tb_ensure_pvrdma_qemu
}
