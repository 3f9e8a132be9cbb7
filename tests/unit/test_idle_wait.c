/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* The bounded idle wait (common/idle_wait.c), on the real clock: the bounds
 * asserted are upper bounds on polls (a loaded machine only lowers them). */
#include "pvrdma_idle_wait.h"
#include "test_util.h"

/* Calls the transport's progress would make in @p ms of waiting, and the
 * polls the policy let through. */
static uint64_t polls_in(struct pvrdma_common_idle_wait *w, uint64_t ms,
                         int waiting, uint64_t *calls)
{
    uint64_t end = pvrdma_common_now_us() + ms * 1000u, polls = 0;

    *calls = 0;
    while (pvrdma_common_now_us() < end) {
        ++*calls;
        polls += (uint64_t)pvrdma_common_idle_wait_poll(w, waiting);
    }
    return polls;
}

static void busy_us(uint64_t us)
{
    uint64_t end = pvrdma_common_now_us() + us;

    while (pvrdma_common_now_us() < end) {
    }
}

/* As polls_in, waiting, but every poll let through takes @p poll_us and
 * finds nothing (an empty poll that traps to a slow hypervisor). */
static uint64_t slow_polls_in(struct pvrdma_common_idle_wait *w, uint64_t ms,
                              uint64_t poll_us, uint64_t *calls)
{
    uint64_t end = pvrdma_common_now_us() + ms * 1000u, polls = 0;

    *calls = 0;
    while (pvrdma_common_now_us() < end) {
        ++*calls;
        if (pvrdma_common_idle_wait_poll(w, 1)) {
            ++polls;
            busy_us(poll_us);
            pvrdma_common_idle_wait_found(w, 0);
        }
    }
    return polls;
}

int main(void)
{
    struct pvrdma_common_idle_wait w;
    uint64_t calls, polls;

    /* off: every call polls */
    pvrdma_common_idle_wait_init(&w, 1000, 0, 16);
    polls = polls_in(&w, 20, 1, &calls);
    CHECK_EQ(polls, calls);
    CHECK_EQ(w.skipped, 0);

    /* something in flight: every call polls */
    pvrdma_common_idle_wait_init(&w, 1000, 10000, 0);
    polls = polls_in(&w, 50, 0, &calls);
    CHECK_EQ(polls, calls);

    /* waiting: the first 20 ms poll on every call, then one per 10 ms: in
     * 100 ms at most the spin's calls + 8 + 1 */
    pvrdma_common_idle_wait_init(&w, 20000, 10000, 0);
    polls = polls_in(&w, 100, 1, &calls);
    CHECK(calls > 1000);            /* the loop turned (no sleeping) */
    CHECK(polls < calls);
    CHECK_EQ(polls + w.skipped, calls);
    {
        /* after the spin: only the interval's polls */
        uint64_t before = w.skipped;
        uint64_t more   = polls_in(&w, 100, 1, &calls);

        CHECK(more <= 100 / 10 + 1);
        CHECK_EQ(w.skipped - before, calls - more);
    }

    /* a completion restarts the spin: the next calls poll again */
    pvrdma_common_idle_wait_found(&w, 0);
    CHECK(w.quiet_since != 0);
    pvrdma_common_idle_wait_found(&w, 3);
    CHECK_EQ(w.quiet_since, 0);
    CHECK(pvrdma_common_idle_wait_poll(&w, 1));   /* the spin again */

    /* scale 0: the interval is the knob, whatever a poll costs */
    pvrdma_common_idle_wait_init(&w, 0, 50, 0);
    polls = slow_polls_in(&w, 20, 200, &calls);
    CHECK_EQ(w.interval_us, 50);
    CHECK(w.cost_x16 >= 200 * 16);      /* measured all the same */

    /* scale 16 with empty polls of >= 200 us (the nested tier's are ~125):
     * the interval grows to >= 16 x 200 us, so in 100 ms at most
     * 100 / 3.2 + 1 polls instead of one per 250 us (400) */
    pvrdma_common_idle_wait_init(&w, 0, 50, 16);
    (void)slow_polls_in(&w, 20, 200, &calls);      /* learns the cost */
    CHECK(w.interval_us >= 16 * 200);
    CHECK(w.interval_us <= PVRDMA_COMMON_IDLE_POLL_MAX_US);
    polls = slow_polls_in(&w, 100, 200, &calls);
    CHECK(polls <= 100 * 1000 / (16 * 200) + 1);
    CHECK(polls >= 1);
    CHECK(calls > polls);

    /* a poll of 1 ms x 16 would be 16 ms: capped */
    pvrdma_common_idle_wait_init(&w, 0, 50, 16);
    (void)slow_polls_in(&w, 30, 1000, &calls);
    CHECK_EQ(w.interval_us, PVRDMA_COMMON_IDLE_POLL_MAX_US);

    /* a knob above the cap is the user's word: kept */
    pvrdma_common_idle_wait_init(&w, 0, 20000, 16);
    (void)slow_polls_in(&w, 30, 1000, &calls);
    CHECK_EQ(w.interval_us, 20000);

    /* polls that find completions are not timed (they did work) */
    pvrdma_common_idle_wait_init(&w, 0, 50, 16);
    CHECK(pvrdma_common_idle_wait_poll(&w, 1));
    busy_us(500);
    pvrdma_common_idle_wait_found(&w, 1);
    CHECK_EQ(w.cost_x16, 0);
    CHECK_EQ(w.interval_us, 50);

    /* the spin paced (issue 38): polls of 200 us, spin scale 2, so in
     * 15 ms of spin at most one poll per 400 us (and the first two), where
     * the unpaced spin polls on every call (one per 200 us) */
    pvrdma_common_idle_wait_init(&w, 100000, 10000, 0);
    pvrdma_common_idle_wait_spin_scale(&w, 2);
    polls = slow_polls_in(&w, 15, 200, &calls);
    CHECK(polls <= 15000 / 400 + 2);
    CHECK(w.spin_skipped > 0);
    CHECK_EQ(w.spin_skipped, w.skipped);        /* all of it in the spin */
    pvrdma_common_idle_wait_init(&w, 100000, 10000, 0);
    polls = slow_polls_in(&w, 15, 200, &calls);
    CHECK_EQ(polls, calls);
    CHECK_EQ(w.spin_skipped, 0);

    /* the spin's pace follows what it finds: paced spin polls that find
     * nothing stretch it (at most half the spin, at most the back-off's
     * interval), one that ends a wait halves the stretch */
    pvrdma_common_idle_wait_init(&w, 100000, 10000, 0);
    pvrdma_common_idle_wait_spin_scale(&w, 2);
    (void)slow_polls_in(&w, 15, 200, &calls);
    CHECK(w.spin_stretch_x16 > 16);
    {
        uint64_t stretched = w.spin_stretch_x16, before = w.polls_spin;

        polls = slow_polls_in(&w, 15, 200, &calls);
        CHECK(w.polls_spin > before);
        /* 15 ms of spin, stretched, rang fewer polls than the 400 us pace */
        CHECK(polls < 15000 / 400);
        CHECK(w.spin_stretch_x16 >= stretched);
        w.last_phase = PVRDMA_COMMON_IDLE_SPIN;
        w.quiet_since = pvrdma_common_now_us();
        stretched = w.spin_stretch_x16;
        pvrdma_common_idle_wait_found(&w, 1);
        CHECK_EQ(w.spin_stretch_x16, stretched / 2 < 16 ? 16 : stretched / 2);
        CHECK_EQ(w.found_spin, 1);
    }
    /* capped: by half the spin */
    pvrdma_common_idle_wait_init(&w, 2000, 10000, 0);
    pvrdma_common_idle_wait_spin_scale(&w, 2);
    w.cost_x16 = 200 * 16;
    w.spin_stretch_x16 = PVRDMA_COMMON_IDLE_STRETCH_MAX_X16;
    CHECK(pvrdma_common_idle_wait_poll(&w, 1));          /* the wait's first */
    CHECK(w.next_poll - w.quiet_since <= 1000);
    CHECK(w.next_poll - w.quiet_since >= 1000 - 1);
    /* and by the back-off's interval (a host's 50 us) */
    pvrdma_common_idle_wait_init(&w, 1000, 50, 0);
    pvrdma_common_idle_wait_spin_scale(&w, 2);
    w.cost_x16 = 16;
    w.spin_stretch_x16 = PVRDMA_COMMON_IDLE_STRETCH_MAX_X16;
    CHECK(pvrdma_common_idle_wait_poll(&w, 1));
    CHECK(w.next_poll - w.quiet_since <= 50);

    /* the first 50 us of a wait poll on every call, however slow a poll:
     * a round trip of 10-20 us on a host never waits for the pace */
    pvrdma_common_idle_wait_init(&w, 100000, 10000, 0);
    pvrdma_common_idle_wait_spin_scale(&w, 16);
    w.cost_x16 = 1000 * 16;                     /* 1 ms polls: a 16 ms pace */
    {
        uint64_t t0, after, n = 0;
        int r;

        /* the first call starts the spin and polls; a later call must
         * poll if it returned within 50 us of that start (a call's own
         * clock reading is before "after": a test descheduled under load
         * checks only the calls it can judge) */
        CHECK(pvrdma_common_idle_wait_poll(&w, 1));
        t0 = pvrdma_common_now_us();
        while (pvrdma_common_now_us() - t0 < PVRDMA_COMMON_IDLE_FAST_US - 10) {
            r     = pvrdma_common_idle_wait_poll(&w, 1);
            after = pvrdma_common_now_us();
            if (after - w.quiet_since < PVRDMA_COMMON_IDLE_FAST_US) {
                CHECK(r);
                ++n;
            }
        }
        CHECK(n >= 1 || pvrdma_common_now_us() - w.quiet_since >= PVRDMA_COMMON_IDLE_FAST_US);
        busy_us(PVRDMA_COMMON_IDLE_FAST_US);
        CHECK(!pvrdma_common_idle_wait_poll(&w, 1));   /* paced now */
        /* a completion someone waited for restarts the spin at full speed */
        pvrdma_common_idle_wait_found(&w, 1);
        CHECK(pvrdma_common_idle_wait_poll(&w, 1));
        r     = pvrdma_common_idle_wait_poll(&w, 1);
        after = pvrdma_common_now_us();
        CHECK(r || after - w.quiet_since >= PVRDMA_COMMON_IDLE_FAST_US);
    }

    /* the rank's own sends restart the spin: a wait that began in the
     * back-off polls again at once after a send */
    pvrdma_common_idle_wait_init(&w, 1000, 10000, 0);
    (void)polls_in(&w, 5, 1, &calls);             /* past the spin */
    CHECK(pvrdma_common_idle_wait_poll(&w, 1) == 0 ||
          pvrdma_common_idle_wait_poll(&w, 1) == 0); /* backing off */
    pvrdma_common_idle_wait_sends(&w, 0);        /* none yet: no change */
    CHECK(w.quiet_since != 0);
    pvrdma_common_idle_wait_sends(&w, 3);
    CHECK_EQ(w.quiet_since, 0);
    CHECK(pvrdma_common_idle_wait_poll(&w, 1));
    CHECK(pvrdma_common_idle_wait_poll(&w, 1));   /* spinning again */

    return test_done("test_idle_wait");
}
