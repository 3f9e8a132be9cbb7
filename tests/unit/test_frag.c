/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Fragmentation math. */
#include "pvrdma_frag.h"
#include "test_util.h"

int main(void)
{
    const uint64_t mib128 = 128ull << 20;
    uint64_t off = 0, len = 0, sum, i, n;

    /* limits: minimum of the non-zero ones */
    CHECK_EQ(pvrdma_common_frag_limit(mib128, 1ull << 31, 0), mib128);
    CHECK_EQ(pvrdma_common_frag_limit(UINT64_MAX, 0x800000, 0), 0x800000);
    CHECK_EQ(pvrdma_common_frag_limit(mib128, 1ull << 31, 65536), 65536);
    CHECK_EQ(pvrdma_common_frag_limit(0, 0, 0), UINT64_MAX);

    /* counts */
    CHECK_EQ(pvrdma_common_frag_count(0, mib128), 0);
    CHECK_EQ(pvrdma_common_frag_count(1, mib128), 1);
    CHECK_EQ(pvrdma_common_frag_count(mib128, mib128), 1);
    CHECK_EQ(pvrdma_common_frag_count(mib128 + 1, mib128), 2);
    CHECK_EQ(pvrdma_common_frag_count(3 * mib128, mib128), 3);
    CHECK_EQ(pvrdma_common_frag_count(1ull << 30, mib128), 8);
    CHECK_EQ(pvrdma_common_frag_count(UINT64_MAX, 1), UINT64_MAX);
    CHECK_EQ(pvrdma_common_frag_count(UINT64_MAX, UINT64_MAX), 1);
    CHECK_EQ(pvrdma_common_frag_count(UINT64_MAX, 1ull << 32), 1ull << 32);
    CHECK_EQ(pvrdma_common_frag_count(UINT64_MAX - 1, UINT64_MAX), 1);
    CHECK_EQ(pvrdma_common_frag_count(5, 0), 0); /* invalid chunk */

    /* pieces cover the length exactly */
    n = pvrdma_common_frag_count(mib128 * 2 + 4097, mib128);
    CHECK_EQ(n, 3);
    for (i = 0, sum = 0; i < n; ++i) {
        CHECK_EQ(pvrdma_common_frag_get(mib128 * 2 + 4097, mib128, i, &off,
                                        &len), 0);
        CHECK_EQ(off, sum);
        sum += len;
    }
    CHECK_EQ(sum, mib128 * 2 + 4097);
    CHECK_EQ(len, 4097);
    CHECK_EQ(pvrdma_common_frag_get(mib128 * 2 + 4097, mib128, 3, &off, &len),
             ERANGE);
    CHECK_EQ(pvrdma_common_frag_get(mib128, mib128, 0, &off, &len), 0);
    CHECK_EQ(off, 0);
    CHECK_EQ(len, mib128);
    CHECK_EQ(pvrdma_common_frag_get(0, mib128, 0, &off, &len), ERANGE);
    CHECK_EQ(pvrdma_common_frag_get(10, 0, 0, &off, &len), EINVAL);
    CHECK_EQ(pvrdma_common_frag_get(10, 4, 0, NULL, &len), EINVAL);

    /* last piece of a huge length */
    CHECK_EQ(pvrdma_common_frag_get(UINT64_MAX, 1ull << 30,
                                    pvrdma_common_frag_count(UINT64_MAX,
                                                             1ull << 30) - 1,
                                    &off, &len), 0);
    CHECK_EQ(off + len, UINT64_MAX);
    CHECK_EQ(len, (1ull << 30) - 1);

    return test_done("test_frag");
}
