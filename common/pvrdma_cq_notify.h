/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_cq_notify.h
 * @brief common/: waiting for a CQ's completion event instead of polling it
 *        (cq_notify.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_CQ_NOTIFY_H
#define PVRDMA_CQ_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "pvrdma_idle_wait.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Armed wait (issue 38).  On PVRDMA an ibv_poll_cq that finds the CQ empty
 * is a doorbell (a VM exit), and so is ibv_req_notify_cq; reading a
 * completion channel is a system call of the guest, no exit.  A process
 * whose idle wait has backed off for @c arm_after_us (pvrdma_idle_wait.h)
 * arms its CQs once and then reads the channel on every progress call,
 * polling only when an event came: one arm and two polls per wait, however
 * long it lasts, where the back-off rang a poll per interval.  A CQ stays
 * armed until its event is taken, so arming again before that is no
 * doorbell.  Why not at once when the back-off starts: the event is an
 * interrupt, and on the nested test tier one takes milliseconds to reach
 * the process (OpenFOAM t2np2 and t2np4 ran 30-45 % longer that way,
 * 2026-12-06); most waits of a running code end within a few ms, the
 * long ones (a rank in a barrier, behind a slower peer) are what it saves.
 *
 * A device that never delivers the event (QEMU 7.2's PVRDMA model without
 * the bed's patch) is found by the safety poll: while armed, the CQs are
 * polled anyway every PVRDMA_COMMON_CQ_NOTIFY_SAFETY_US; after
 * PVRDMA_COMMON_CQ_NOTIFY_MISSES safety polls in a row found completions
 * whose event had not come, the wait is given up (@c given_up) and the
 * caller polls as before.
 */
#define PVRDMA_COMMON_CQ_NOTIFY_MAX_CQS   2
#define PVRDMA_COMMON_CQ_NOTIFY_MISSES    4
#define PVRDMA_COMMON_CQ_NOTIFY_SAFETY_US 100000

struct pvrdma_common_cq_notify {
    struct ibv_comp_channel *channel;    /**< non-blocking; NULL: never arms */
    struct ibv_cq *cq[PVRDMA_COMMON_CQ_NOTIFY_MAX_CQS];
    bool hw_armed[PVRDMA_COMMON_CQ_NOTIFY_MAX_CQS]; /**< armed, event not taken */
    unsigned ncq;
    bool armed;          /**< the caller waits on the channel */
    bool given_up;       /**< events did not come, or arming failed: never arm again */
    int arm_errno;       /**< arming failed with this, not yet reported (0: none) */
    uint64_t arm_after_us; /**< config: arm once the back-off lasted this long */
    uint64_t safety_at;  /**< when the next safety poll is due */
    unsigned misses;     /**< safety polls in a row that found work */
    uint64_t arms;       /**< ibv_req_notify_cq rung (counted at close) */
    uint64_t events;     /**< events taken (counted at close) */
};

/**
 * @brief A non-blocking completion channel on @p ctx, for the CQs to be
 *        created on it (@p n zeroed first); arm once a wait has backed off
 *        for @p arm_after_us.
 * @return 0, or errno (then @p n never arms and the CQs go without it).
 */
int pvrdma_common_cq_notify_open(struct pvrdma_common_cq_notify *n,
                                 struct ibv_context *ctx, uint64_t arm_after_us);

/** @brief The channel, to create a CQ on (NULL: none). */
static inline struct ibv_comp_channel *
pvrdma_common_cq_notify_channel(const struct pvrdma_common_cq_notify *n)
{
    return n->channel;
}

/** @brief Arm @p cq too (created on the channel); false when full. */
bool pvrdma_common_cq_notify_add(struct pvrdma_common_cq_notify *n,
                                 struct ibv_cq *cq);

/** @brief Whether the caller may arm (a channel, CQs, not given up). */
static inline bool pvrdma_common_cq_notify_usable(const struct pvrdma_common_cq_notify *n)
{
    return NULL != n->channel && n->ncq > 0 && !n->given_up;
}

/** @brief Whether to arm before this poll: the idle wait @p w allowed it
 *  as one of its back-off's, which has lasted @c arm_after_us by now. */
static inline bool pvrdma_common_cq_notify_due(const struct pvrdma_common_cq_notify *n,
                                               const struct pvrdma_common_idle_wait *w)
{
    return w->backing_off && w->backed_off_us >= n->arm_after_us &&
           pvrdma_common_cq_notify_usable(n);
}

/**
 * @brief Arm every CQ not armed already (events taken first, so a CQ whose
 *        event came is armed again) and wait on the channel (@c armed),
 *        before the poll that decides to wait: a completion that comes
 *        after arming raises the event, one that came before is found by
 *        that poll.  So a CQ armed now must be polled once more (a CQ still
 *        armed from before had no completion since its last poll).
 * @return the CQs armed now (bit i: cq[i]), or -1 when the wait is not
 *         usable or arming failed (then keep polling).  A failed arm gives
 *         the wait up: a device that refuses one refuses the next, and each
 *         try is a doorbell.
 */
int pvrdma_common_cq_notify_arm(struct pvrdma_common_cq_notify *n, uint64_t now);

/** @brief Why arming failed (an errno), once; then 0.  The caller says it
 *  (its framework's log): the wait is given up and the process polls. */
static inline int pvrdma_common_cq_notify_take_error(struct pvrdma_common_cq_notify *n)
{
    int err = n->arm_errno;

    n->arm_errno = 0;
    return err;
}

/**
 * @brief While @c armed: take the events that came (no blocking).
 * @param fired (OUT) the CQs whose event came (bit i: cq[i])
 * @return true when the caller should poll now (@c armed is then false):
 *         an event came, or the safety poll is due (@p *safety set: poll
 *         every CQ).
 */
bool pvrdma_common_cq_notify_check(struct pvrdma_common_cq_notify *n, uint64_t now,
                                   unsigned *fired, bool *safety);

/**
 * @brief A safety poll found @p found completions: some with no event is a
 *        miss; PVRDMA_COMMON_CQ_NOTIFY_MISSES in a row give the wait up.
 * @return true when this call gave it up (the caller says so once).
 */
bool pvrdma_common_cq_notify_safety_result(struct pvrdma_common_cq_notify *n, int found);

/** @brief Destroy the channel, after its CQs (every event taken was
 *  acknowledged at once, so nothing holds ibv_destroy_cq). */
void pvrdma_common_cq_notify_close(struct pvrdma_common_cq_notify *n);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_CQ_NOTIFY_H */
