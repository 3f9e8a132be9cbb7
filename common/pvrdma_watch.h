/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_watch.h
 * @brief common/: the timing of a peer watch (stall kick and keepalive), the
 *        same idea in both plugins written once (issue 35).
 *
 * A watch follows a progress marker of one peer (WRs of ours it retired,
 * messages received from it, ...).  While the marker moves, nothing is due.
 * Once it has stood still for @c period, an action is due (a kick, a probe);
 * the caller takes it and says so: pvrdma_common_watch_acted() makes the
 * next one due a period later (a stall kick, at most @c max per stall),
 * pvrdma_common_watch_restart() starts a new period (a keepalive probe,
 * whose completion is the next sign of life).  Time is in any unit the
 * caller likes (µs, UCS ticks), the same for @c now and @c period.  All
 * inline and pure (no clock read, no I/O): tests/unit/test_watch.c.
 */
#ifndef PVRDMA_WATCH_H
#define PVRDMA_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pvrdma_common_watch {
    uint64_t seen;    /**< the marker when it last moved */
    uint64_t since;   /**< when it last moved; 0: look again (reset) */
    unsigned count;   /**< actions taken since */
};

/** @brief Forget the past: the next look starts a period.  Pure. */
static inline void pvrdma_common_watch_reset(struct pvrdma_common_watch *w)
{
    w->since = 0;
}

/**
 * @brief Look at @p marker at @p now: true when it has not moved for
 *        (count + 1) x @p period and fewer than @p max actions were taken
 *        (@p max 0: no limit).  A moved marker (or a reset watch) starts a
 *        new period and is never due.  @p period 0: never due.  Pure.
 */
static inline bool pvrdma_common_watch_due(struct pvrdma_common_watch *w,
                                           uint64_t marker, uint64_t now,
                                           uint64_t period, unsigned max)
{
    if ((marker != w->seen) || (0 == w->since)) {
        w->seen  = marker;
        w->since = now;
        w->count = 0;
        return false;
    }
    if ((0 == period) || ((0 != max) && (w->count >= max))) {
        return false;
    }
    return now - w->since >= (uint64_t)(w->count + 1) * period;
}

/** @brief The due action was taken: the next is due one period later.  Pure. */
static inline void pvrdma_common_watch_acted(struct pvrdma_common_watch *w)
{
    ++w->count;
}

/** @brief The due action was taken and its outcome is the next sign of
 *         life: a new period starts at @p now.  Pure. */
static inline void pvrdma_common_watch_restart(struct pvrdma_common_watch *w,
                                               uint64_t now)
{
    w->since = (0 == now) ? 1 : now;
    w->count = 0;
}

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_WATCH_H */
