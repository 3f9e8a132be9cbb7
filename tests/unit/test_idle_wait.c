/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* The bounded idle wait (common/idle_wait.c), on the real clock: the bounds
 * asserted are upper bounds on polls (a loaded machine only lowers them). */
#include "pvrdma_common.h"
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

int main(void)
{
    struct pvrdma_common_idle_wait w;
    uint64_t calls, polls;

    /* off: every call polls */
    pvrdma_common_idle_wait_init(&w, 1000, 0);
    polls = polls_in(&w, 20, 1, &calls);
    CHECK_EQ(polls, calls);
    CHECK_EQ(w.skipped, 0);

    /* something in flight: every call polls */
    pvrdma_common_idle_wait_init(&w, 1000, 10000);
    polls = polls_in(&w, 50, 0, &calls);
    CHECK_EQ(polls, calls);

    /* waiting: the first 20 ms poll on every call, then one per 10 ms: in
     * 100 ms at most the spin's calls + 8 + 1 */
    pvrdma_common_idle_wait_init(&w, 20000, 10000);
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

    return test_done("test_idle_wait");
}
