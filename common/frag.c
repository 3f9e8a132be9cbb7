/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file frag.c
 * @brief Splitting a length into chunks no larger than the device allows
 *        (max_mr_size, max_msg_size, user limit).  Pure.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_frag.h"

#include <errno.h>

uint64_t pvrdma_common_frag_limit(uint64_t max_mr_size, uint64_t max_msg_size,
                                  uint64_t user_limit)
{
    uint64_t limit = UINT64_MAX;

    if ((max_mr_size != 0) && (max_mr_size < limit)) {
        limit = max_mr_size;
    }
    if ((max_msg_size != 0) && (max_msg_size < limit)) {
        limit = max_msg_size;
    }
    if ((user_limit != 0) && (user_limit < limit)) {
        limit = user_limit;
    }
    return limit;
}

uint64_t pvrdma_common_frag_count(uint64_t len, uint64_t chunk)
{
    if (chunk == 0) {
        return 0;
    }
    /* len / chunk + remainder, instead of (len + chunk - 1) / chunk, so
     * that lengths near UINT64_MAX do not overflow. */
    return (len / chunk) + ((len % chunk) != 0);
}

int pvrdma_common_frag_get(uint64_t len, uint64_t chunk, uint64_t i,
                           uint64_t *offset, uint64_t *frag_len)
{
    uint64_t off;

    if ((chunk == 0) || (offset == NULL) || (frag_len == NULL)) {
        return EINVAL;
    }
    if (i >= pvrdma_common_frag_count(len, chunk)) {
        return ERANGE;
    }
    off = i * chunk; /* < len, so no overflow */
    *offset = off;
    *frag_len = ((len - off) < chunk) ? (len - off) : chunk;
    return 0;
}
