/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* The counters line the plugins print at close: its exact form (the bed
 * suites parse it with tests/bed/lib.sh counter), bad keys, and a line
 * longer than its buffer (cut between pairs, and says so). */
#include "pvrdma_counters.h"
#include "test_util.h"

#include <stdio.h>

int main(void)
{
    struct pvrdma_common_counters c;
    char key[16];
    const char *s;
    int i;

    pvrdma_common_counters_begin(&c, "close", "rxe0", 1);
    pvrdma_common_counters_add(&c, "rdma_writes", 42);
    pvrdma_common_counters_add(&c, "rdma_write_max", UINT64_MAX);
    pvrdma_common_counters_add(&c, "peers_max", 0);
    CHECK_STR(pvrdma_common_counters_str(&c),
              "pvrdma counters: event=close dev=rxe0 port=1 rdma_writes=42 "
              "rdma_write_max=18446744073709551615 peers_max=0");

    /* a key that would break the parse is replaced, never printed */
    pvrdma_common_counters_begin(&c, "chan close", "my dev", 2);
    pvrdma_common_counters_add(&c, "Bad Key", 1);
    pvrdma_common_counters_add(&c, "", 2);
    pvrdma_common_counters_add(&c, NULL, 3);
    CHECK_STR(pvrdma_common_counters_str(&c),
              "pvrdma counters: event=bad_event dev=unknown port=2 bad_key=1 "
              "bad_key=2 bad_key=3");

    /* too many pairs: whole pairs only, then the mark, once */
    pvrdma_common_counters_begin(&c, "close", "rxe0", 1);
    for (i = 0; i < 400; ++i) {
        snprintf(key, sizeof(key), "k%d", i);
        pvrdma_common_counters_add(&c, key, 1234567);
    }
    s = pvrdma_common_counters_str(&c);
    CHECK(c.truncated);
    CHECK(strlen(s) < sizeof(c.text));
    CHECK_EQ(strcmp(s + strlen(s) - strlen(" truncated=1"), " truncated=1"), 0);
    CHECK_CONTAINS(s, " k0=1234567 k1=1234567");
    CHECK_CONTAINS(strstr(s, " truncated=1") - 10, "=1234567 truncated=1");
    s = pvrdma_common_counters_str(&c);
    CHECK(strstr(s, " truncated=1") == s + strlen(s) - strlen(" truncated=1"));

    return test_done("test_counters");
}
