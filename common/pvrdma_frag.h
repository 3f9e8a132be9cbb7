/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_frag.h
 * @brief common/: fragment sizes of a message (frag.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_FRAG_H
#define PVRDMA_FRAG_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Largest chunk allowed by all limits: the minimum of the non-zero
 *        arguments (0 means "no limit"); UINT64_MAX when all are 0.  Pure.
 */
uint64_t pvrdma_common_frag_limit(uint64_t max_mr_size, uint64_t max_msg_size,
                                  uint64_t user_limit);

/**
 * @brief Number of chunks of at most @p chunk bytes covering @p len bytes:
 *        ceil(len / chunk), 0 for len 0, overflow-free.  Pure.
 * @return the count; 0 also when chunk is 0 (invalid).
 */
uint64_t pvrdma_common_frag_count(uint64_t len, uint64_t chunk);

/**
 * @brief Offset and length of chunk @p i (0-based) of @p len.  Pure.
 * @return 0; ERANGE when i >= count; EINVAL when chunk is 0.
 */
int pvrdma_common_frag_get(uint64_t len, uint64_t chunk, uint64_t i,
                           uint64_t *offset, uint64_t *frag_len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_FRAG_H */
