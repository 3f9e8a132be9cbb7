/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file cq_notify.c
 * @brief The armed wait both plugins may use instead of idle CQ polls (see
 *        struct pvrdma_common_cq_notify).
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_cq_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

int pvrdma_common_cq_notify_open(struct pvrdma_common_cq_notify *n,
                                 struct ibv_context *ctx, uint64_t arm_after_us)
{
    int flags, err;

    memset(n, 0, sizeof(*n));
    n->arm_after_us = arm_after_us;
    n->channel = ibv_create_comp_channel(ctx);
    if (NULL == n->channel) {
        return (0 != errno) ? errno : ENOMEM;
    }
    /* progress reads it on every call and must never block there */
    flags = fcntl(n->channel->fd, F_GETFL);
    if (flags < 0 || fcntl(n->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        err = errno;
        (void) ibv_destroy_comp_channel(n->channel);
        n->channel = NULL;
        return err;
    }
    return 0;
}

bool pvrdma_common_cq_notify_add(struct pvrdma_common_cq_notify *n, struct ibv_cq *cq)
{
    if (NULL == n->channel || n->ncq >= PVRDMA_COMMON_CQ_NOTIFY_MAX_CQS) {
        return false;
    }
    n->cq[n->ncq] = cq;
    n->hw_armed[n->ncq] = false;
    n->ncq++;
    return true;
}

/* Take every event waiting on the channel; @return the CQs they were for. */
static unsigned take_events(struct pvrdma_common_cq_notify *n)
{
    struct ibv_cq *cq;
    void *cq_ctx;
    unsigned fired = 0;

    while (0 == ibv_get_cq_event(n->channel, &cq, &cq_ctx)) {
        ibv_ack_cq_events(cq, 1);
        n->events++;
        for (unsigned i = 0; i < n->ncq; ++i) {
            if (n->cq[i] == cq) {
                n->hw_armed[i] = false;   /* an event disarms its CQ */
                fired |= 1u << i;
            }
        }
    }
    return fired;
}

int pvrdma_common_cq_notify_arm(struct pvrdma_common_cq_notify *n, uint64_t now)
{
    unsigned armed_now = 0;

    if (!pvrdma_common_cq_notify_usable(n)) {
        return -1;
    }
    (void) take_events(n);
    for (unsigned i = 0; i < n->ncq; ++i) {
        if (n->hw_armed[i]) {
            continue;   /* its event has not come: still armed, no doorbell */
        }
        int rc = ibv_req_notify_cq(n->cq[i], 0);

        if (0 != rc) {
            /* rdma-core returns the errno (some providers set errno too) */
            n->armed     = false;
            n->given_up  = true;
            n->arm_errno = (rc > 0) ? rc : ((0 != errno) ? errno : EIO);
            return -1;
        }
        n->hw_armed[i] = true;
        n->arms++;
        armed_now |= 1u << i;
    }
    n->armed = true;
    n->safety_at = now + PVRDMA_COMMON_CQ_NOTIFY_SAFETY_US;
    return (int) armed_now;
}

bool pvrdma_common_cq_notify_check(struct pvrdma_common_cq_notify *n, uint64_t now,
                                   unsigned *fired, bool *safety)
{
    *safety = false;
    *fired = take_events(n);
    if (0 != *fired) {
        n->misses = 0;
        n->armed = false;
        return true;
    }
    if (now < n->safety_at) {
        return false;
    }
    *safety = true;
    n->armed = false;
    return true;
}

bool pvrdma_common_cq_notify_safety_result(struct pvrdma_common_cq_notify *n, int found)
{
    if (found <= 0) {
        n->misses = 0;
        return false;
    }
    /* one can be the race of a completion with its event: take it first */
    if (0 != take_events(n) || ++n->misses < PVRDMA_COMMON_CQ_NOTIFY_MISSES) {
        return false;
    }
    n->given_up = true;
    return true;
}

void pvrdma_common_cq_notify_close(struct pvrdma_common_cq_notify *n)
{
    if (NULL != n->channel) {
        (void) ibv_destroy_comp_channel(n->channel);
        n->channel = NULL;
    }
    n->ncq = 0;
}
