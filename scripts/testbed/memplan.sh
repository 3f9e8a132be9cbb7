# shellcheck shell=bash
# Test bed: what the guests will cost the host in memory, said before they
# boot; a plan that cannot fit is refused with its numbers (issue #36: an
# 8 x 20 job once ran 25 minutes until the OOM killer ended one guest's QEMU,
# anon RSS 3.28 GB for a 2 GiB guest).
#
# Per QEMU process: the guest's RAM (-m, fully touched in a long MPI job:
# page cache of the 9p root, the ranks), TCG's translation cache (tb-size;
# QEMU 7.2's default is 1 GiB and a long job fills it) and QEMU itself
# (TB_QEMU_OVERHEAD_MIB: device models, 9p server, thread stacks; measured
# ~120-180 MiB). The host keeps TB_HOST_RESERVE_MIB for itself (mpirun's
# ssh, the switch, the page cache the 9p root is served from).
#   TB_TCG_TB_MIB        TCG translation cache per guest (default 256)
#   TB_QEMU_OVERHEAD_MIB per-QEMU allowance (default 200)
#   TB_HOST_RESERVE_MIB  left to the host (default 1024)
#   TB_MEM_PLAN=warn     report an over-budget plan but boot anyway
TB_TCG_TB_MIB=${TB_TCG_TB_MIB:-256}
TB_QEMU_OVERHEAD_MIB=${TB_QEMU_OVERHEAD_MIB:-200}
TB_HOST_RESERVE_MIB=${TB_HOST_RESERVE_MIB:-1024}

# tb_mem_plan N GUEST_MIB ACCEL: prints the plan line; returns 1 when it
# cannot fit (TB_MEM_PLAN=warn: returns 0 and says so).
tb_mem_plan() {
    local n=$1 gmem=$2 accel=$3 tcg=0 per total avail budget
    [ "$accel" = tcg ] && tcg=$TB_TCG_TB_MIB
    per=$((gmem + tcg + TB_QEMU_OVERHEAD_MIB))
    total=$((n * per))
    avail=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
    budget=$((avail - TB_HOST_RESERVE_MIB))
    echo "memory plan: $n guest(s) x ($gmem MiB RAM + $tcg MiB TCG translation cache + $TB_QEMU_OVERHEAD_MIB MiB QEMU) = $total MiB; host has $avail MiB available, $TB_HOST_RESERVE_MIB MiB kept for itself: budget $budget MiB"
    [ "$total" -le "$budget" ] && return 0
    echo "memory plan: does NOT fit ($((total - budget)) MiB over): fewer --hosts, a smaller --mem (at most $(( budget / n - tcg - TB_QEMU_OVERHEAD_MIB )) MiB for $n guests), or TB_TCG_TB_MIB lower; TB_MEM_PLAN=warn boots anyway"
    [ "${TB_MEM_PLAN:-refuse}" = warn ] && return 0
    return 1
}
