/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_idle_wait.h
 * @brief common/: the bounded idle wait: polling an empty CQ only as often as pays (idle_wait.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_IDLE_WAIT_H
#define PVRDMA_IDLE_WAIT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Bounded idle wait.  On PVRDMA an ibv_poll_cq that finds the CQ empty is a
 * doorbell (a VM exit), so a rank that waits in MPI_Recv rings as many as
 * its loop can turn.  The policy: while something of ours is in flight, or
 * for @c spin_us after the CQ last gave a completion, poll on every call;
 * after that, poll at most once per interval.  The interval is @c poll_us,
 * or, when @c scale is not 0, @c scale times the measured time of an empty
 * poll if that is longer (at most PVRDMA_COMMON_IDLE_POLL_MAX_US): a
 * waiting rank then spends at most 1/scale of its time in empty polls,
 * whatever a VM exit costs on its host (~1 us on ESXi, where poll_us
 * rules; ~125 us on the nested test tier).  A message that arrives during
 * the back-off is seen up to one interval late (its latency cost); the
 * waiting rank rings at most 1e6 / poll_us polls a second.  poll_us 0
 * turns the policy off.  Times in microseconds (CLOCK_MONOTONIC, a vDSO
 * read: no VM exit).
 */
#define PVRDMA_COMMON_IDLE_POLL_MAX_US 10000   /**< scaled interval cap */

/**
 * The spin's own pace (issue 38).  For its first PVRDMA_COMMON_IDLE_FAST_US
 * the spin polls on every call, so a round trip of 10-20 us on a host never
 * waits for a poll.  After that, with @c spin_scale above 1, the spin polls
 * at most once per @c spin_scale times the measured empty poll: where a
 * poll is as slow as the nested tier's (~125 us) a rank that waits half a
 * millisecond for its peer rang a poll per 125 us, most of them too early
 * to find anything.  A message is then seen at most (spin_scale - 1) empty
 * polls' time late; on a host (~1 us polls) that is a microsecond or two,
 * and only after the first 50 us of a wait.
 */
#define PVRDMA_COMMON_IDLE_FAST_US 50

/**
 * The spin's pace follows what its polls find (issue 38: "poll only as
 * often as it can find something").  Each paced spin poll that finds
 * nothing stretches the pace by a quarter; one that ends a wait halves the
 * stretch (never below spin_scale empty polls).  The pace settles where
 * about one paced spin poll in four finds something (ln 1.25 / ln 2.5):
 * on the nested tier OpenFOAM's waits that outlast the first poll mostly
 * outlast the spin too, and 91 % of its paced spin polls found nothing
 * (2026-12-06).  Capped by the back-off's interval (a host's 50 us: the
 * latency that interval already accepts) and half the spin's length.  The
 * first PVRDMA_COMMON_IDLE_FAST_US are not paced at all.
 */
#define PVRDMA_COMMON_IDLE_STRETCH_MAX_X16 (1024u * 16u)

/** The phase of a wait a poll belongs to (counted at close). */
enum pvrdma_common_idle_phase {
    PVRDMA_COMMON_IDLE_BUSY,     /**< something of ours in flight */
    PVRDMA_COMMON_IDLE_FAST,     /**< the spin's first PVRDMA_COMMON_IDLE_FAST_US */
    PVRDMA_COMMON_IDLE_SPIN,     /**< the paced rest of the spin */
    PVRDMA_COMMON_IDLE_BACKOFF   /**< after the spin */
};

struct pvrdma_common_idle_wait {
    uint64_t spin_us;       /**< config: full-speed polling after activity */
    uint64_t poll_us;       /**< config: then one poll per this, 0 = off */
    uint64_t scale;         /**< config: interval >= scale x empty poll, 0 = fixed */
    uint64_t quiet_since;   /**< when the CQ last gave something, 0: busy */
    uint64_t next_poll;     /**< backing off: not before this */
    uint64_t poll_started;  /**< a waiting poll is being timed, 0: none */
    uint64_t cost_x16;      /**< empty poll's time, us x 16 (moving average) */
    uint64_t interval_us;   /**< the back-off interval now */
    uint64_t skipped;       /**< polls not rung (counted at close) */
    uint64_t spin_scale;    /**< config: spin polls >= this x empty poll apart, <= 1: every call */
    uint64_t spin_skipped;  /**< of skipped, those in the spin (counted at close) */
    uint64_t sends_seen;    /**< the caller's sends count when it last looked */
    int backing_off;        /**< the last poll allowed was one of the back-off's
                                 (the spin is over: the caller may arm instead) */
    uint64_t backed_off_us; /**< then: how long the back-off had lasted */
    /* where the polls it allowed went (counted at close: which phase of a
     * wait rings the doorbells) */
    uint64_t polls_busy;    /**< something of ours in flight: every call */
    uint64_t polls_fast;    /**< the spin's first PVRDMA_COMMON_IDLE_FAST_US */
    uint64_t polls_spin;    /**< the paced rest of the spin */
    uint64_t polls_backoff; /**< one per interval after the spin */
    uint64_t found_fast;    /**< waits that a poll of the spin's first part ended */
    uint64_t found_spin;    /**< a poll of its paced rest */
    uint64_t found_backoff; /**< a poll after the spin */
    enum pvrdma_common_idle_phase last_phase; /**< of the last poll allowed */
    uint64_t spin_stretch_x16; /**< the spin's pace over spin_scale polls, x 16
                                    (see PVRDMA_COMMON_IDLE_STRETCH_MAX_X16) */
    int spin_adapt;         /**< config: the stretch follows the spin's finds */
};

/** @brief Microseconds on CLOCK_MONOTONIC. */
uint64_t pvrdma_common_now_us(void);

/** @brief Set up @p w with the knobs (counters zeroed). */
void pvrdma_common_idle_wait_init(struct pvrdma_common_idle_wait *w,
                                  uint64_t spin_us, uint64_t poll_us,
                                  uint64_t scale);

/** @brief Whether the spin's pace follows what its polls find (see
 *  PVRDMA_COMMON_IDLE_STRETCH_MAX_X16); init sets 1. */
static inline void pvrdma_common_idle_wait_spin_adapt(struct pvrdma_common_idle_wait *w,
                                                      int on)
{
    w->spin_adapt       = on;
    w->spin_stretch_x16 = 16;
}

/** @brief Pace the spin (see PVRDMA_COMMON_IDLE_FAST_US); init sets 1. */
static inline void pvrdma_common_idle_wait_spin_scale(struct pvrdma_common_idle_wait *w,
                                                      uint64_t spin_scale)
{
    w->spin_scale = spin_scale;
}

/**
 * @brief Whether to poll the CQ now.  @p waiting: nothing of ours is in
 *        flight or queued (only receives can come); otherwise always 1.
 *        Reads the clock only when @p waiting and the policy is on.
 */
int pvrdma_common_idle_wait_poll(struct pvrdma_common_idle_wait *w,
                                 int waiting);

/** @brief A timed poll found nothing: its time goes into the average. */
void pvrdma_common_idle_wait_measure(struct pvrdma_common_idle_wait *w);

struct pvrdma_common_counters;
/** @brief Append the idle wait's keys to a counters line (idle_polls_skipped,
 *  spin_polls_skipped, polls_busy/fast/spin/backoff, waits_found_fast/spin/
 *  backoff): which phase of a wait rings the doorbells, and when waits end. */
void pvrdma_common_idle_wait_counters_add(const struct pvrdma_common_idle_wait *w,
                                          struct pvrdma_common_counters *c);

/** @brief A wait ended: counted by the phase it ended in. */
void pvrdma_common_idle_wait_count_found(struct pvrdma_common_idle_wait *w);

/** @brief The poll found @p n completions that someone waited for (a
 *  receive, a send whose completion runs a callback): activity restarts
 *  the spin.  Completions nobody waits for (a send buffer to recycle) are
 *  not counted: they would restart the spin of a rank that still waits. */
static inline void pvrdma_common_idle_wait_found(struct pvrdma_common_idle_wait *w,
                                                 int n)
{
    if (n > 0) {
        if (w->quiet_since != 0) {
            pvrdma_common_idle_wait_count_found(w);
        }
        w->quiet_since  = 0;
        w->poll_started = 0;
    } else if (w->poll_started != 0) {
        pvrdma_common_idle_wait_measure(w);
    }
}

/**
 * @brief @p sends: how many sends the process has posted in all.  If that
 *        grew since the last call, an answer may come soon, so the spin
 *        starts again, as after a completion.  Its own sends, not their
 *        completions (which no longer count, see found()), are what a reply
 *        follows: a rank that computed for longer than the spin, sent its
 *        halo and waits for its peers' would otherwise begin that wait in
 *        the back-off.
 */
static inline void pvrdma_common_idle_wait_sends(struct pvrdma_common_idle_wait *w,
                                                 uint64_t sends)
{
    if (sends != w->sends_seen) {
        w->sends_seen = sends;
        pvrdma_common_idle_wait_found(w, 1);
    }
}

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_IDLE_WAIT_H */
