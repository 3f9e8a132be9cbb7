/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_numa.h
 * @brief Internal to common/: NUMA distances for port discovery.
 */
#ifndef PVRDMA_NUMA_H
#define PVRDMA_NUMA_H



#include "pvrdma_device.h"

#include <stdlib.h>

struct pvrdma_numa_ctx;

/** @brief Load the hwloc topology and the process binding; NULL on error. */
struct pvrdma_numa_ctx *pvrdma_numa_open(void);

/** @brief Release pvrdma_numa_open() resources (NULL is fine). */
void pvrdma_numa_close(struct pvrdma_numa_ctx *ctx);

/**
 * @brief Distance from the process's CPUs to @p numa_node: 0 local,
 *        the hwloc latency value (or 1) when remote, -1 unknown.
 */
int pvrdma_numa_distance(struct pvrdma_numa_ctx *ctx, int numa_node);

#endif
