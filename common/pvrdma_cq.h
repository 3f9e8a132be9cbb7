/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_cq.h
 * @brief common/: a completion queue the device accepts (cq.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_CQ_H
#define PVRDMA_CQ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief ibv_create_cq() with @p *depth entries, halving the request while
 *        the device refuses it, but never below @p min_depth.
 *
 * Some devices refuse CQs well below their reported max_cqe (QEMU's pvrdma
 * model: ring of at most 128 pages, i.e. ~8K CQEs).
 *
 * @param depth (IN/OUT) wanted entries; on success the entries requested
 *                       from the device that accepted it
 * @return the CQ, or NULL with errno of the last attempt.
 */
struct ibv_cq *pvrdma_common_create_cq(struct ibv_context *ctx, uint32_t *depth,
                                       uint32_t min_depth,
                                       struct ibv_comp_channel *channel);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_CQ_H */
