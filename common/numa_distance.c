/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file numa_distance.c
 * @brief Distance from the calling process's CPU binding to a NUMA node,
 *        with hwloc.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_numa.h"

#include <hwloc.h>
#include <limits.h>

static hwloc_obj_t find_numa_node(hwloc_topology_t topo, unsigned os_index)
{
    hwloc_obj_t obj = NULL;

    while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
                                             obj)) != NULL) {
        if (obj->os_index == os_index) {
            return obj;
        }
    }
    return NULL;
}

/* Smallest hwloc latency value between any NUMA node the process may run
 * on and @dev_node, or -1 without a distance matrix. */
static int matrix_distance(hwloc_topology_t topo, hwloc_const_cpuset_t cpuset,
                           hwloc_obj_t dev_node)
{
    struct hwloc_distances_s *dist = NULL;
    unsigned nr = 1;
    hwloc_obj_t node = NULL;
    int best = -1;

    if ((hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                     HWLOC_DISTANCES_KIND_MEANS_LATENCY,
                                     0) != 0) || (nr == 0)) {
        return -1;
    }
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
                                              node)) != NULL) {
        hwloc_uint64_t to = 0, from = 0;

        if (!hwloc_bitmap_intersects(node->cpuset, cpuset) ||
            (hwloc_distances_obj_pair_values(dist, node, dev_node, &from,
                                             &to) != 0)) {
            continue;
        }
        if ((to <= INT_MAX) && ((best < 0) || ((int)to < best))) {
            best = (int)to;
        }
    }
    hwloc_distances_release(topo, dist);
    return best;
}

struct pvrdma_numa_ctx {
    hwloc_topology_t topo;
    hwloc_bitmap_t   cpuset;
};

struct pvrdma_numa_ctx *pvrdma_numa_open(void)
{
    struct pvrdma_numa_ctx *ctx = calloc(1, sizeof(*ctx));

    if (ctx == NULL) {
        return NULL;
    }
    if (hwloc_topology_init(&ctx->topo) != 0) {
        free(ctx);
        return NULL;
    }
    if (hwloc_topology_load(ctx->topo) != 0) {
        goto err_topo;
    }
    ctx->cpuset = hwloc_bitmap_alloc();
    if (ctx->cpuset == NULL) {
        goto err_topo;
    }
    /* Unbound processes (or a failed query) count as "runs everywhere":
     * then every node is local and NUMA does not change the order. */
    if (hwloc_get_cpubind(ctx->topo, ctx->cpuset, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_copy(ctx->cpuset,
                          hwloc_topology_get_topology_cpuset(ctx->topo));
    }
    return ctx;

err_topo:
    hwloc_topology_destroy(ctx->topo);
    free(ctx);
    return NULL;
}

void pvrdma_numa_close(struct pvrdma_numa_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    hwloc_bitmap_free(ctx->cpuset);
    hwloc_topology_destroy(ctx->topo);
    free(ctx);
}

int pvrdma_numa_distance(struct pvrdma_numa_ctx *ctx, int numa_node)
{
    hwloc_obj_t dev_node;
    int d;

    if ((ctx == NULL) || (numa_node < 0)) {
        return PVRDMA_COMMON_NUMA_UNKNOWN;
    }
    dev_node = find_numa_node(ctx->topo, (unsigned)numa_node);
    if ((dev_node == NULL) || (dev_node->cpuset == NULL)) {
        return PVRDMA_COMMON_NUMA_UNKNOWN;
    }
    if (hwloc_bitmap_intersects(dev_node->cpuset, ctx->cpuset)) {
        return 0;
    }
    d = matrix_distance(ctx->topo, ctx->cpuset, dev_node);
    /* Remote without a matrix: farther than local, value unknown. */
    return (d > 0) ? d : 1;
}
