/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* The replay window of connection datagrams (common/auth.c): every
 * sequence number is taken once per sender, reordering within 64 is fine,
 * older and repeated ones are refused, senders are apart, and a full table
 * forgets the least recently heard from. */
#include "pvrdma_auth.h"
#include "test_util.h"

static void test_window(void)
{
    struct pvrdma_common_replay r;
    uint8_t a[16] = {1}, b[16] = {2};

    CHECK_EQ(pvrdma_common_replay_init(&r, 4), 0);
    CHECK(pvrdma_common_replay_fresh(&r, a, 7, 1000));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 7, 1000));   /* replay */
    CHECK_EQ(r.refused_back, 0);   /* a repeat of the newest */
    CHECK(pvrdma_common_replay_fresh(&r, a, 7, 1002));
    CHECK(pvrdma_common_replay_fresh(&r, a, 7, 1001));    /* late, in window */
    CHECK(!pvrdma_common_replay_fresh(&r, a, 7, 1001));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 7, 1002));
    /* another sender (GID or QP) has its own window */
    CHECK(pvrdma_common_replay_fresh(&r, b, 7, 1000));
    CHECK(pvrdma_common_replay_fresh(&r, a, 8, 1000));
    /* a jump ahead; what is 64 or more behind is too old to tell */
    CHECK_EQ(r.superseded, 0);   /* the refusals so far were repeats */
    CHECK(pvrdma_common_replay_fresh(&r, a, 7, 1100));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 7, 1036));
    CHECK_EQ(r.superseded, 1);
    CHECK_EQ(r.refused_back, 64);   /* what the log says */
    CHECK(pvrdma_common_replay_fresh(&r, a, 7, 1037));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 7, 1037));
    CHECK_EQ(r.superseded, 1);
    /* every one of 64 in any order once, then none again */
    for (uint64_t i = 0; i < 64; ++i) {
        CHECK(pvrdma_common_replay_fresh(&r, b, 9, 5000 + ((i * 37) % 64)));
    }
    for (uint64_t i = 0; i < 64; ++i) {
        CHECK(!pvrdma_common_replay_fresh(&r, b, 9, 5000 + i));
    }
    /* full (4 senders): a fifth evicts the least recently heard from (a:8) */
    CHECK_EQ(r.n, 4);
    CHECK(pvrdma_common_replay_fresh(&r, b, 10, 1));
    CHECK_EQ(r.evicted, 1);
    CHECK(!pvrdma_common_replay_fresh(&r, a, 7, 1100));   /* a:7 kept */
    pvrdma_common_replay_fini(&r);
}

/* The top of the range: a sender's counter starts at the wall clock in ns
 * (common/ud.c) and would need 584 years to wrap, so a number past the top
 * is never fresh again: at UINT64_MAX the window still works, and a
 * wrapped-around 0 is refused as old, never taken as new. */
static void test_wrap(void)
{
    struct pvrdma_common_replay r;
    uint8_t a[16] = {5};

    CHECK_EQ(pvrdma_common_replay_init(&r, 2), 0);
    CHECK(pvrdma_common_replay_fresh(&r, a, 1, UINT64_MAX - 1));
    CHECK(pvrdma_common_replay_fresh(&r, a, 1, UINT64_MAX));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 1, UINT64_MAX));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 1, UINT64_MAX - 1));
    CHECK(pvrdma_common_replay_fresh(&r, a, 1, UINT64_MAX - 63));   /* in window */
    CHECK(!pvrdma_common_replay_fresh(&r, a, 1, UINT64_MAX - 64));  /* too old */
    CHECK(!pvrdma_common_replay_fresh(&r, a, 1, 0));                /* wrapped */
    CHECK(!pvrdma_common_replay_fresh(&r, a, 1, 1));
    /* a new sender's first number may be anything, 0 included */
    CHECK(pvrdma_common_replay_fresh(&r, a, 2, 0));
    CHECK(!pvrdma_common_replay_fresh(&r, a, 2, 0));
    pvrdma_common_replay_fini(&r);
}

static void test_mac(void)
{
    uint8_t key[PVRDMA_COMMON_AUTH_KEY_LEN] = {3}, msg[64], mac[16];

    CHECK_EQ(pvrdma_common_auth_init(), 0);
    for (size_t i = 0; i < sizeof(msg); ++i) {
        msg[i] = (uint8_t) i;
    }
    pvrdma_common_auth_mac(mac, key, msg, sizeof(msg), 8, 42);
    memcpy(msg + 8, mac, sizeof(mac));
    CHECK(pvrdma_common_auth_verify(key, msg, sizeof(msg), 8, 42));
    /* the MAC field's own old contents do not matter, the rest does */
    CHECK(!pvrdma_common_auth_verify(key, msg, sizeof(msg), 8, 43));
    key[0] ^= 1;
    CHECK(!pvrdma_common_auth_verify(key, msg, sizeof(msg), 8, 42));
    key[0] ^= 1;
    msg[63] ^= 1;
    CHECK(!pvrdma_common_auth_verify(key, msg, sizeof(msg), 8, 42));
    msg[63] ^= 1;
    CHECK(pvrdma_common_auth_verify(key, msg, sizeof(msg), 8, 42));
    /* too short for its MAC field */
    CHECK(!pvrdma_common_auth_verify(key, msg, 20, 8, 42));
}

int main(void)
{
    test_window();
    test_wrap();
    test_mac();
    return test_done("test_auth");
}
