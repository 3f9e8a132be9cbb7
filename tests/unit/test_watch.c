/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* The peer watch's timing (common/pvrdma_watch.h): kicks at growing
 * intervals up to a limit, keepalive periods restarted by each probe, a
 * moving marker never due. */
#include "pvrdma_watch.h"
#include "test_util.h"

static void test_kick(void)
{
    struct pvrdma_common_watch w = {0};
    unsigned kicks = 0;

    /* the first look starts the period */
    CHECK(!pvrdma_common_watch_due(&w, 5, 100, 10, 3));
    CHECK(!pvrdma_common_watch_due(&w, 5, 109, 10, 3));
    /* stood still for a period: due; kicked */
    CHECK(pvrdma_common_watch_due(&w, 5, 110, 10, 3));
    pvrdma_common_watch_acted(&w);
    /* the next one after two periods from the start */
    CHECK(!pvrdma_common_watch_due(&w, 5, 119, 10, 3));
    CHECK(pvrdma_common_watch_due(&w, 5, 120, 10, 3));
    pvrdma_common_watch_acted(&w);
    /* at most 3 per stall */
    for (uint64_t t = 121; t < 1000; ++t) {
        if (pvrdma_common_watch_due(&w, 5, t, 10, 3)) {
            pvrdma_common_watch_acted(&w);
            ++kicks;
        }
    }
    CHECK_EQ(kicks, 1);
    /* the marker moves: a new stall, counting from now */
    CHECK(!pvrdma_common_watch_due(&w, 6, 1000, 10, 3));
    CHECK(!pvrdma_common_watch_due(&w, 6, 1009, 10, 3));
    CHECK(pvrdma_common_watch_due(&w, 6, 1010, 10, 3));
}

static void test_keepalive(void)
{
    struct pvrdma_common_watch w = {0};

    CHECK(!pvrdma_common_watch_due(&w, 1, 50, 20, 0));
    CHECK(pvrdma_common_watch_due(&w, 1, 70, 20, 0));
    /* probed: its completion is the next sign of life */
    pvrdma_common_watch_restart(&w, 70);
    CHECK(!pvrdma_common_watch_due(&w, 1, 89, 20, 0));
    CHECK(pvrdma_common_watch_due(&w, 1, 90, 20, 0));
    /* no limit with max 0 */
    for (int i = 0; i < 100; ++i) {
        pvrdma_common_watch_restart(&w, 90 + 20 * (uint64_t)i);
        CHECK(pvrdma_common_watch_due(&w, 1, 110 + 20 * (uint64_t)i, 20, 0));
    }
    /* restart at time 0 still counts as looked at */
    pvrdma_common_watch_restart(&w, 0);
    CHECK(w.since != 0);
}

static void test_reset_and_off(void)
{
    struct pvrdma_common_watch w = {0};

    CHECK(!pvrdma_common_watch_due(&w, 0, 10, 5, 0));
    CHECK(pvrdma_common_watch_due(&w, 0, 15, 5, 0));
    /* a reset watch (peer not connected) starts over */
    pvrdma_common_watch_reset(&w);
    CHECK(!pvrdma_common_watch_due(&w, 0, 15, 5, 0));
    CHECK(!pvrdma_common_watch_due(&w, 0, 19, 5, 0));
    CHECK(pvrdma_common_watch_due(&w, 0, 20, 5, 0));
    /* period 0: off */
    CHECK(!pvrdma_common_watch_due(&w, 0, 1000000, 0, 0));
}

int main(void)
{
    test_kick();
    test_keepalive();
    test_reset_and_off();
    return test_done("test_watch");
}
