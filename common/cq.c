/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file cq.c
 * @brief Create a CQ as deep as the device really allows.
 *
 * Why: a device's max_cqe is not always the limit that holds.  QEMU's
 * pvrdma device model (the nested test tier) reports max_cqe 28672 but
 * maps a CQ ring of at most 128 pages, so ibv_create_cq(8192) fails there
 * with EFAULT ("could not create completion queue, error: -14").  Halving
 * until the device accepts, down to what the caller minimally needs, takes
 * the limit from the device instead of from a table of known devices.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_cq.h"

#include <errno.h>

struct ibv_cq *pvrdma_common_create_cq(struct ibv_context *ctx, uint32_t *depth,
                                       uint32_t min_depth,
                                       struct ibv_comp_channel *channel)
{
    struct ibv_cq *cq;
    uint32_t want;
    int err = EINVAL;

    if ((ctx == NULL) || (depth == NULL) || (*depth == 0) || (*depth > INT32_MAX)) {
        errno = EINVAL;
        return NULL;
    }
    if (min_depth == 0) {
        min_depth = 1;
    }
    for (want = *depth; ; want /= 2) {
        if (want < min_depth) {
            want = min_depth;
        }
        errno = 0;
        cq = ibv_create_cq(ctx, (int)want, NULL, channel, 0);
        if (cq != NULL) {
            *depth = want;
            return cq;
        }
        err = (errno != 0) ? errno : ENOMEM;
        if (want == min_depth) {
            break;
        }
    }
    errno = err;
    return NULL;
}
