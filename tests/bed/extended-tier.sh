#!/bin/bash
# tests/bed/extended-tier.sh: the nested tier's checks that left CI's run
# (tests/bed/pvrdma-tier.sh, PVRDMA_TIER_PARTS=extra): ib_send_bw, RDMA-CM
# through the bed's MAD relay, both transports'
# metered 2 x 4 Alltoall, the BTL's
# one-sided section on a device without atomics, the 2 x 8 scale runs on
# vmw_pvrdma0.  Run by name: tests/run --only extended-tier.
export PVRDMA_TIER_PARTS=extra
exec bash "$(dirname "$0")/pvrdma-tier.sh"
