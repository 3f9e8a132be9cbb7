/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file idle_wait.c
 * @brief The bounded idle wait both plugins apply to their CQ polls (see
 *        struct pvrdma_common_idle_wait).
 *
 * Why time and not a count of empty polls: what an empty poll costs
 * differs 100-fold between a host (~1 us exit) and the nested test tier
 * (~125 us), and both the doorbell rate and the latency cost are stated
 * per second.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_common.h"

#include <time.h>

uint64_t pvrdma_common_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void pvrdma_common_idle_wait_init(struct pvrdma_common_idle_wait *w,
                                  uint64_t spin_us, uint64_t poll_us)
{
    w->spin_us     = spin_us;
    w->poll_us     = poll_us;
    w->quiet_since = 0;
    w->next_poll   = 0;
    w->skipped     = 0;
}

int pvrdma_common_idle_wait_poll(struct pvrdma_common_idle_wait *w,
                                 int waiting)
{
    uint64_t now;

    if ((w->poll_us == 0) || !waiting) {
        w->quiet_since = 0;
        return 1;
    }
    now = pvrdma_common_now_us();
    if (w->quiet_since == 0) {
        w->quiet_since = now;   /* the spin starts */
        return 1;
    }
    if (now - w->quiet_since < w->spin_us) {
        return 1;
    }
    if (now >= w->next_poll) {
        w->next_poll = now + w->poll_us;
        return 1;
    }
    ++w->skipped;
    return 0;
}
