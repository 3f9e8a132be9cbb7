/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* NUMA distance from this process (hwloc) on the real topology. */

#include "pvrdma_numa.h"
#include "test_util.h"

#include <hwloc.h>

int main(void)
{
    struct pvrdma_numa_ctx *ctx = pvrdma_numa_open();
    hwloc_topology_t topo;
    int nodes;

    CHECK(ctx != NULL);
    /* unknown nodes */
    CHECK_EQ(pvrdma_numa_distance(ctx, -1), (uint64_t)(int64_t)-1);
    CHECK_EQ(pvrdma_numa_distance(ctx, 9999), (uint64_t)(int64_t)-1);
    CHECK_EQ(pvrdma_numa_distance(NULL, 0), (uint64_t)(int64_t)-1);

    /* Node 0 exists on every Linux machine.  Bound to node 0's CPUs it is
     * local; unbound, every node is local too. */
    CHECK_EQ(pvrdma_numa_distance(ctx, 0), 0);
    pvrdma_numa_close(ctx);

    CHECK_EQ(hwloc_topology_init(&topo), 0);
    CHECK_EQ(hwloc_topology_load(topo), 0);
    nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (nodes > 1) {
        hwloc_obj_t last = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
                                                 (unsigned)nodes - 1);

        /* Bound to the last node, node 0 must be remote (> 0). */
        if (hwloc_set_cpubind(topo, last->cpuset, HWLOC_CPUBIND_PROCESS) == 0) {
            ctx = pvrdma_numa_open();
            CHECK(pvrdma_numa_distance(ctx, 0) > 0);
            CHECK_EQ(pvrdma_numa_distance(ctx, (int)last->os_index), 0);
            pvrdma_numa_close(ctx);
        }
    } else {
        printf("single NUMA node: remote case not exercised\n");
    }
    hwloc_topology_destroy(topo);
    return test_done("test_numa");
}
