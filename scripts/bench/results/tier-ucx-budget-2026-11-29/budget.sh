#!/bin/bash
# The connection budget on the nested tier (QEMU's PVRDMA model, the real
# vmw_pvrdma driver and provider; send/recv-only connections), issue 36:
# both transports' budget jobs at 2 x 4 with a budget of 2 (the cost of a
# reconnect: reconnect.sh beside it).
# Run: scripts/testbed/tb run --pvrdma --hosts 2 --out DIR -- bash THIS
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
DEV=$(ibv_devices 2>/dev/null | awk 'NR > 2 && $1 != "" { print $1; exit }')
env SCALE_DEV="$DEV" SCALE_RPN=4 SCALE_BTL_RPN=4 SCALE_BUDGET=2 \
    SCALE_ONLY="budget ucxbudget" SCALE_RC_TIMEOUT=19 bash "$TOP/tests/bed/scale.sh"
