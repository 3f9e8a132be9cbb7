/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Retry counters from a hw_counters directory: rxe's and mlx5's names, a
 * device without counters, differences and the text form. */
#include "pvrdma_retry_counters.h"
#include "test_util.h"

#include <stdlib.h>
#include <unistd.h>

/* Writes "name value" pairs (NULL-terminated) as counter files. */
static void put(const char *dir, const char *const *pairs)
{
    char path[512];
    FILE *f;

    for (; pairs[0] != NULL; pairs += 2) {
        snprintf(path, sizeof(path), "%s/%s", dir, pairs[0]);
        f = fopen(path, "w");
        CHECK(f != NULL);
        if (f != NULL) {
            fprintf(f, "%s\n", pairs[1]);
            fclose(f);
        }
    }
}

int main(void)
{
    char dir[] = "/tmp/pvrdma-hwc-XXXXXX", buf[160];
    struct pvrdma_common_retry_counters a, b, d;

    CHECK(mkdtemp(dir) != NULL);

    /* no counters at all (PVRDMA): not available, said so */
    CHECK_EQ(pvrdma_common_retry_counters_read_dir(dir, &a), 0);
    CHECK_EQ(a.available, 0);
    CHECK_STR(pvrdma_common_retry_counters_str(&a, buf, sizeof(buf)),
              "not exposed by the device (no hw_counters)");
    CHECK_EQ(pvrdma_common_retry_counters_read("no-such-device", 1, &a), 0);

    /* rxe's names; unrelated counters are ignored */
    put(dir, (const char *const[]){"completer_retry_err", "7", "rcvd_seq_err", "3",
                                   "rcvd_rnr_err", "0", "duplicate_request", "11",
                                   "sent_pkts", "123456", NULL});
    CHECK_EQ(pvrdma_common_retry_counters_read_dir(dir, &a), 4);
    CHECK_EQ(a.available, 1);
    CHECK_EQ(a.timeouts, 7);
    CHECK_EQ(a.seq_naks, 3);
    CHECK_EQ(a.rnr_naks, 0);
    CHECK_EQ(a.duplicates, 11);

    /* later: mlx5-style names add to the same fields */
    put(dir, (const char *const[]){"completer_retry_err", "10", "packet_seq_err", "2",
                                   "implied_nak_seq_err", "1", "rnr_nak_retry_err", "5",
                                   NULL});
    CHECK_EQ(pvrdma_common_retry_counters_read_dir(dir, &b), 7);
    CHECK_EQ(b.seq_naks, 6);
    pvrdma_common_retry_counters_since(&a, &b, &d);
    CHECK_EQ(d.available, 1);
    CHECK_EQ(d.timeouts, 3);
    CHECK_EQ(d.seq_naks, 3);
    CHECK_EQ(d.rnr_naks, 5);
    CHECK_EQ(d.duplicates, 0);
    CHECK_STR(pvrdma_common_retry_counters_str(&d, buf, sizeof(buf)),
              "3 retries, 3 sequence NAKs, 5 RNR NAKs, 0 duplicate requests");

    /* a counter that went back (driver reloaded) counts from zero */
    pvrdma_common_retry_counters_since(&b, &a, &d);
    CHECK_EQ(d.timeouts, 7);

    /* leave nothing behind */
    {
        static const char *const names[] = {
            "completer_retry_err", "rcvd_seq_err", "rcvd_rnr_err",
            "duplicate_request", "sent_pkts", "packet_seq_err",
            "implied_nak_seq_err", "rnr_nak_retry_err"
        };
        char path[512];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
            unlink(path);
        }
        rmdir(dir);
    }
    return test_done("test_retry_counters");
}
