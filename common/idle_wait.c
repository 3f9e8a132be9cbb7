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
#include "pvrdma_idle_wait.h"
#include "pvrdma_counters.h"

#include <time.h>

uint64_t pvrdma_common_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void pvrdma_common_idle_wait_init(struct pvrdma_common_idle_wait *w,
                                  uint64_t spin_us, uint64_t poll_us,
                                  uint64_t scale)
{
    w->spin_us      = spin_us;
    w->poll_us      = poll_us;
    w->scale        = scale;
    w->quiet_since  = 0;
    w->next_poll    = 0;
    w->poll_started = 0;
    w->cost_x16     = 0;
    w->interval_us  = poll_us;
    w->skipped      = 0;
    w->spin_scale   = 1;
    w->spin_skipped = 0;
    w->sends_seen   = 0;
    w->backing_off  = 0;
    w->backed_off_us = 0;
    w->polls_busy    = 0;
    w->polls_fast    = 0;
    w->polls_spin    = 0;
    w->polls_backoff = 0;
    w->found_fast    = 0;
    w->found_spin    = 0;
    w->found_backoff = 0;
    w->last_phase    = PVRDMA_COMMON_IDLE_BUSY;
    w->spin_stretch_x16 = 16;
    w->spin_adapt    = 1;
}

void pvrdma_common_idle_wait_count_found(struct pvrdma_common_idle_wait *w)
{
    if (w->last_phase == PVRDMA_COMMON_IDLE_FAST) {
        ++w->found_fast;
    } else if (w->last_phase == PVRDMA_COMMON_IDLE_SPIN) {
        ++w->found_spin;
        if (!w->spin_adapt) {
            return;
        }
        /* the pace was right for this wait: hurry the next ones */
        w->spin_stretch_x16 /= 2;
        if (w->spin_stretch_x16 < 16) {
            w->spin_stretch_x16 = 16;
        }
    } else if (w->last_phase == PVRDMA_COMMON_IDLE_BACKOFF) {
        ++w->found_backoff;
    }
}

/*
 * The time of an empty poll, as a moving average that falls fast and rises
 * slowly: a poll cannot take less than its VM exit, but one that the host
 * descheduled takes far more, and one such sample must not stretch the
 * interval (the latency cost) for long.
 */
void pvrdma_common_idle_wait_measure(struct pvrdma_common_idle_wait *w)
{
    uint64_t sample = (pvrdma_common_now_us() - w->poll_started) * 16u;
    uint64_t scaled;

    w->poll_started = 0;
    if ((w->last_phase == PVRDMA_COMMON_IDLE_SPIN) && w->spin_adapt &&
        (w->spin_stretch_x16 < PVRDMA_COMMON_IDLE_STRETCH_MAX_X16)) {
        /* a paced spin poll that found nothing: the next ones come later */
        w->spin_stretch_x16 += w->spin_stretch_x16 / 4;
    }
    if (w->cost_x16 == 0) {
        w->cost_x16 = (sample > 0) ? sample : 1;
    } else if (sample < w->cost_x16) {
        w->cost_x16 -= (w->cost_x16 - sample) / 4;
    } else {
        w->cost_x16 += (sample - w->cost_x16) / 16;
    }
    if (w->scale == 0) {
        return;
    }
    scaled = w->scale * w->cost_x16 / 16u;
    if (scaled > PVRDMA_COMMON_IDLE_POLL_MAX_US) {
        scaled = PVRDMA_COMMON_IDLE_POLL_MAX_US;
    }
    w->interval_us = (scaled > w->poll_us) ? scaled : w->poll_us;
}

/* A poll of the spin at @p now: the next paced one is spin_scale empty
 * polls later, stretched by what the spin's polls found lately (see
 * spin_stretch_x16), never later than the back-off's interval nor half
 * the spin (so that a spin poll still comes, and tells whether the pace
 * may quicken again). */
static int spin_poll(struct pvrdma_common_idle_wait *w, uint64_t now)
{
    uint64_t gap = w->spin_scale * w->cost_x16 / 16u * w->spin_stretch_x16 / 16u;

    if (gap > w->interval_us) {
        gap = w->interval_us;
    }
    if (gap > w->spin_us / 2) {
        gap = w->spin_us / 2;
    }
    w->next_poll = (w->spin_scale <= 1) ? 0 : now + gap;
    return 1;
}

int pvrdma_common_idle_wait_poll(struct pvrdma_common_idle_wait *w,
                                 int waiting)
{
    uint64_t now;

    w->backing_off = 0;
    if ((w->poll_us == 0) || !waiting) {
        w->quiet_since  = 0;
        w->poll_started = 0;
        ++w->polls_busy;
        w->last_phase = PVRDMA_COMMON_IDLE_BUSY;
        return 1;
    }
    now = pvrdma_common_now_us();
    /* every poll of a waiting process is timed (found() ends the timing) */
    w->poll_started = now;
    if (w->quiet_since == 0) {
        w->quiet_since = now;   /* the spin starts */
        ++w->polls_fast;
        w->last_phase = PVRDMA_COMMON_IDLE_FAST;
        return spin_poll(w, now);
    }
    if (now - w->quiet_since < w->spin_us) {
        /* the spin: every call at first, then paced by the poll's cost */
        if (now - w->quiet_since < PVRDMA_COMMON_IDLE_FAST_US) {
            ++w->polls_fast;
            w->last_phase = PVRDMA_COMMON_IDLE_FAST;
            return spin_poll(w, now);
        }
        if (now >= w->next_poll) {
            ++w->polls_spin;
            w->last_phase = PVRDMA_COMMON_IDLE_SPIN;
            return spin_poll(w, now);
        }
        w->poll_started = 0;
        ++w->skipped;
        ++w->spin_skipped;
        return 0;
    }
    if (now >= w->next_poll) {
        w->next_poll     = now + w->interval_us;
        w->backing_off   = 1;
        w->backed_off_us = now - w->quiet_since - w->spin_us;
        ++w->polls_backoff;
        w->last_phase = PVRDMA_COMMON_IDLE_BACKOFF;
        return 1;
    }
    w->poll_started = 0;
    ++w->skipped;
    return 0;
}

void pvrdma_common_idle_wait_counters_add(const struct pvrdma_common_idle_wait *w,
                                          struct pvrdma_common_counters *c)
{
    pvrdma_common_counters_add(c, "idle_polls_skipped", w->skipped);
    pvrdma_common_counters_add(c, "spin_polls_skipped", w->spin_skipped);
    pvrdma_common_counters_add(c, "polls_busy", w->polls_busy);
    pvrdma_common_counters_add(c, "polls_fast", w->polls_fast);
    pvrdma_common_counters_add(c, "polls_spin", w->polls_spin);
    pvrdma_common_counters_add(c, "polls_backoff", w->polls_backoff);
    pvrdma_common_counters_add(c, "waits_found_fast", w->found_fast);
    pvrdma_common_counters_add(c, "waits_found_spin", w->found_spin);
    pvrdma_common_counters_add(c, "waits_found_backoff", w->found_backoff);
}
