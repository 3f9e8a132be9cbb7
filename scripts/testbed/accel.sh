# shellcheck shell=bash
# Test bed: choose the QEMU accelerator. KVM only where a stock kernel really
# boots under it: /dev/kvm usable AND the CPU shows vmx/svm. A paravirtual
# /dev/kvm without them fails on MSRs/cmpxchg16b/xrstor (see testbed notes).
# TB_ACCEL=kvm|tcg overrides.
tb_choose_accel() {
    local want=${TB_ACCEL:-auto}
    case $want in
        kvm) ACCEL_NAME=kvm ACCEL_WHY="forced by TB_ACCEL" ;;
        tcg) ACCEL_NAME=tcg ACCEL_WHY="forced by TB_ACCEL" ;;
        auto)
            if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
                ACCEL_NAME=kvm ACCEL_WHY="/dev/kvm usable and the CPU has vmx/svm"
            elif [ -e /dev/kvm ]; then
                ACCEL_NAME=tcg ACCEL_WHY="/dev/kvm present but the CPU shows no vmx/svm: a stock kernel does not boot under it"
            else
                ACCEL_NAME=tcg ACCEL_WHY="no /dev/kvm"
            fi ;;
        *) die "TB_ACCEL must be kvm, tcg or auto, got '$want'" ;;
    esac
    if [ "$ACCEL_NAME" = kvm ]; then
        ACCEL_ARGS=(-accel kvm -cpu host)
    else
        # tb-size: QEMU 7.2's default translation cache is 1 GiB per
        # guest, and a long MPI job fills it (anon RSS 3.28 GB for a 2 GiB
        # guest); see memplan.sh.
        ACCEL_ARGS=(-accel "tcg,thread=multi,tb-size=${TB_TCG_TB_MIB:-256}" -cpu "${TB_TCG_CPU:-max}")
    fi
}
