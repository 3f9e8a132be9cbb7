# shellcheck shell=bash
# Test bed: obtain Debian's kernel package once and build the guest initramfs.
# Sourced by tb; expects TB_CACHE and the helpers die/info from tb.

# The kernel package linux-image-amd64 points at in this machine's apt sources.
tb_kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1
}

# Prints the kernel release cached in TB_CACHE ("" if none).
tb_cached_kernel() {
    local f
    f=$(ls -1 "$TB_CACHE"/kernel/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
    [ -n "$f" ] && basename "$f" | sed 's/^vmlinuz-//'
}

# Downloads and unpacks the kernel package, builds modules.dep. Idempotent.
tb_ensure_kernel() {
    local kver pkg tmp
    kver=$(tb_cached_kernel)
    if [ -n "$kver" ] && [ -f "$TB_CACHE/kernel/lib/modules/$kver/modules.dep" ]; then
        TB_KVER=$kver
        return 0
    fi
    command -v apt-get >/dev/null || die "apt-get not found: the bed needs Debian's kernel package"
    pkg=$(tb_kernel_package)
    [ -n "$pkg" ] || die "cannot resolve linux-image-amd64 to a kernel package (run 'apt-get update' as root)"
    info "downloading $pkg into $TB_CACHE (once)"
    tmp=$(mktemp -d "$TB_CACHE/dl.XXXXXX")
    ( cd "$tmp" && apt-get download "$pkg" >/dev/null 2>"$tmp/apt.err" ) ||
        die "apt-get download $pkg failed: $(tail -n 3 "$tmp/apt.err")"
    rm -rf "$TB_CACHE/kernel.new"
    dpkg -x "$tmp"/"$pkg"_*.deb "$TB_CACHE/kernel.new" || die "dpkg -x of $pkg failed"
    rm -rf "$tmp"
    kver=${pkg#linux-image-}
    # Debian 12 installs modules under /lib (usrmerge makes that /usr/lib).
    if [ -d "$TB_CACHE/kernel.new/usr/lib/modules" ] && [ ! -d "$TB_CACHE/kernel.new/lib/modules" ]; then
        mkdir -p "$TB_CACHE/kernel.new/lib"
        mv "$TB_CACHE/kernel.new/usr/lib/modules" "$TB_CACHE/kernel.new/lib/modules"
    fi
    [ -f "$TB_CACHE/kernel.new/boot/vmlinuz-$kver" ] || die "$pkg has no /boot/vmlinuz-$kver"
    tb_depmod "$TB_CACHE/kernel.new" "$kver"
    rm -rf "$TB_CACHE/kernel"
    mv "$TB_CACHE/kernel.new" "$TB_CACHE/kernel"
    rm -f "$TB_CACHE"/initramfs-*.cpio.gz
    TB_KVER=$kver
}

tb_depmod() {  # ROOT KVER
    if command -v depmod >/dev/null; then
        depmod -b "$1" "$2" || die "depmod failed"
    elif [ -x /bin/busybox ]; then
        ( cd "$1" && /bin/busybox depmod -b "$1" "$2" ) || die "busybox depmod failed"
    else
        die "neither depmod (kmod) nor busybox found: install kmod or busybox-static"
    fi
}

# Modules the initramfs needs before the 9p root is mounted.
TB_INITRAMFS_MODULES="virtio_pci 9p 9pnet_virtio overlay"

# Builds (once per kernel and init script version) the initramfs: static busybox,
# the stage-1 init and the modules for 9p and overlay with their dependencies.
tb_ensure_initramfs() {
    local init="$TB_DIR/initramfs-init" sum out root mods m dep
    [ -x /bin/busybox ] || die "/bin/busybox missing: install busybox-static"
    file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
        ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' || die "/bin/busybox is not static: install busybox-static"
    sum=$(cat "$init" /bin/busybox | md5sum | cut -c1-12)
    out="$TB_CACHE/initramfs-$TB_KVER-$sum.cpio.gz"
    TB_INITRAMFS=$out
    [ -f "$out" ] && return 0
    root=$(mktemp -d "$TB_CACHE/initramfs.XXXXXX")
    mkdir -p "$root"/{bin,dev,proc,sys,newroot,lib/modules/"$TB_KVER"}
    cp /bin/busybox "$root/bin/busybox"
    cp "$init" "$root/init"
    chmod 755 "$root/init"
    mods=""
    for m in $TB_INITRAMFS_MODULES; do
        dep=$(tb_module_closure "$m") || die "kernel $TB_KVER lacks module $m"
        mods="$mods $dep"
    done
    for m in $(printf '%s\n' $mods | sort -u); do
        mkdir -p "$root/lib/modules/$TB_KVER/$(dirname "$m")"
        cp "$TB_CACHE/kernel/lib/modules/$TB_KVER/$m" "$root/lib/modules/$TB_KVER/$m"
    done
    cp "$TB_CACHE/kernel/lib/modules/$TB_KVER"/modules.{dep,alias,builtin} "$root/lib/modules/$TB_KVER/" 2>/dev/null
    ( cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$out.tmp" || die "cpio failed"
    mv "$out.tmp" "$out"
    rm -rf "$root"
}

# Prints module M's file and the files of everything it depends on (relative paths).
tb_module_closure() {
    local dir="$TB_CACHE/kernel/lib/modules/$TB_KVER" name line
    name=$(printf '%s' "$1" | tr '_' '-')
    line=$(grep -E "/($1|$name)\.ko(\.[a-z]+)?:" "$dir/modules.dep" | head -n 1)
    if [ -z "$line" ]; then
        # built into the kernel: nothing to copy
        grep -qE "/($1|$name)\.ko" "$dir/modules.builtin" && return 0
        return 1
    fi
    printf '%s\n' "$line" | tr -d ':' | tr ' ' '\n' | sed '/^$/d'
}
