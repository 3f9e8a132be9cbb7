/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Eager flow-control credit accounting. */
#include "pvrdma_credits.h"
#include "test_util.h"

/* Two peers exchanging messages through the accounting only: a message
 * from x to y takes a credit at x, and y consumes a receive, reposts it
 * and owes one credit back. */
struct peer {
    struct pvrdma_common_credits c;
};

static bool send_msg(struct peer *from, struct peer *to, bool credit_msg)
{
    uint32_t piggy;

    if (!pvrdma_common_credits_take(&from->c, credit_msg)) {
        return false;
    }
    piggy = pvrdma_common_credits_piggyback(&from->c);
    CHECK_EQ(pvrdma_common_credits_add(&to->c, piggy), 0);
    pvrdma_common_credits_consumed(&to->c, 1);
    return true;
}

static void test_basic(void)
{
    struct pvrdma_common_credits c;
    unsigned i;

    CHECK_EQ(pvrdma_common_credits_init(&c, 0, 1, 1), EINVAL);
    CHECK_EQ(pvrdma_common_credits_init(&c, 8, 0, 100), 0);
    CHECK_EQ(c.reserved, 1);      /* at least one kept for returns */
    CHECK_EQ(c.threshold, 7);     /* <= initial - reserved */
    CHECK_EQ(c.send, 8);

    for (i = 0; i < 7; ++i) {
        CHECK(pvrdma_common_credits_take(&c, false));
    }
    CHECK(!pvrdma_common_credits_take(&c, false)); /* reserve left */
    CHECK(pvrdma_common_credits_take(&c, true));   /* credit msg may */
    CHECK(!pvrdma_common_credits_take(&c, true));
    CHECK_EQ(c.send, 0);
    pvrdma_common_credits_untake(&c);
    CHECK_EQ(c.send, 1);

    CHECK_EQ(pvrdma_common_credits_add(&c, 5), 0);
    CHECK_EQ(c.send, 6);
    CHECK_EQ(pvrdma_common_credits_add(&c, 3), ERANGE); /* > initial */
    CHECK_EQ(c.send, 8);

    /* receiver side */
    CHECK(!pvrdma_common_credits_need_return(&c));
    pvrdma_common_credits_consumed(&c, 6);
    CHECK(!pvrdma_common_credits_need_return(&c));
    pvrdma_common_credits_consumed(&c, 1);
    CHECK(pvrdma_common_credits_need_return(&c));
    CHECK_EQ(pvrdma_common_credits_piggyback(&c), 7);
    CHECK_EQ(c.owed, 0);
    CHECK_EQ(c.returned, 7);
    CHECK_EQ(pvrdma_common_credits_piggyback(&c), 0);
    CHECK(!pvrdma_common_credits_need_return(&c));

    /* one-credit queues: no reserve possible, threshold 1 */
    CHECK_EQ(pvrdma_common_credits_init(&c, 1, 4, 4), 0);
    CHECK_EQ(c.reserved, 0);
    CHECK_EQ(c.threshold, 1);
    CHECK(pvrdma_common_credits_take(&c, false));
    CHECK(!pvrdma_common_credits_take(&c, false));

    /* explicit values within range are kept */
    CHECK_EQ(pvrdma_common_credits_init(&c, 64, 2, 16), 0);
    CHECK_EQ(c.reserved, 2);
    CHECK_EQ(c.threshold, 16);
    CHECK_EQ(pvrdma_common_credits_init(&c, 64, 100, 0), 0);
    CHECK_EQ(c.reserved, 63);
    CHECK_EQ(c.threshold, 1);
}

/* One-way streaming: the sender never blocks forever, because the
 * receiver returns credits explicitly once it owes threshold of them. */
static void test_one_way_stream(void)
{
    struct peer a, b;
    unsigned sent = 0, explicit_returns = 0, step;

    CHECK_EQ(pvrdma_common_credits_init(&a.c, 16, 1, 8), 0);
    CHECK_EQ(pvrdma_common_credits_init(&b.c, 16, 1, 8), 0);
    for (step = 0; step < 10000 && sent < 1000; ++step) {
        if (send_msg(&a, &b, false)) {
            ++sent;
        } else {
            /* a is blocked: b must be able to unblock it */
            CHECK(pvrdma_common_credits_need_return(&b.c));
        }
        if (pvrdma_common_credits_need_return(&b.c)) {
            CHECK(send_msg(&b, &a, true));
            ++explicit_returns;
        }
    }
    CHECK_EQ(sent, 1000);
    CHECK(explicit_returns >= 1000 / 16);
    CHECK(a.c.send <= a.c.initial);
    CHECK(b.c.send <= b.c.initial);
}

/* Both peers flood each other; a peer that cannot send a normal message
 * returns credits with a credit message (reserved credits), so the pair
 * never deadlocks: in every step somebody makes progress. */
static void test_both_flood(void)
{
    struct peer a, b;
    unsigned step, sent_a = 0, sent_b = 0, stalls = 0;

    CHECK_EQ(pvrdma_common_credits_init(&a.c, 4, 1, 3), 0);
    CHECK_EQ(pvrdma_common_credits_init(&b.c, 4, 1, 3), 0);
    for (step = 0; step < 1000; ++step) {
        bool progress = false;
        /* uneven pattern: a sends twice per step, b once */
        unsigned k;

        for (k = 0; k < 2; ++k) {
            if (send_msg(&a, &b, false)) {
                ++sent_a;
                progress = true;
            }
        }
        if (send_msg(&b, &a, false)) {
            ++sent_b;
            progress = true;
        }
        if (pvrdma_common_credits_need_return(&a.c) &&
            send_msg(&a, &b, true)) {
            progress = true;
        }
        if (pvrdma_common_credits_need_return(&b.c) &&
            send_msg(&b, &a, true)) {
            progress = true;
        }
        stalls += !progress;
        CHECK(a.c.send <= a.c.initial);
        CHECK(b.c.send <= b.c.initial);
    }
    CHECK_EQ(stalls, 0);
    CHECK(sent_a >= 1000);
    CHECK(sent_b >= 500);
}

/* A post that was to carry piggybacked credits failed: they are owed again,
 * and the initial receives of a connection are not owed at all. */
static void test_undo_and_initial(void)
{
    struct pvrdma_common_credits c;

    CHECK_EQ(pvrdma_common_credits_init(&c, 16, 1, 4), 0);
    pvrdma_common_credits_consumed(&c, 16);     /* the first post */
    pvrdma_common_credits_initial_posted(&c);
    CHECK_EQ(c.owed, 0);
    CHECK(!pvrdma_common_credits_need_return(&c));

    pvrdma_common_credits_consumed(&c, 5);
    CHECK_EQ(pvrdma_common_credits_piggyback(&c), 5);
    CHECK_EQ(c.owed, 0);
    CHECK_EQ(c.returned, 5);
    pvrdma_common_credits_unpiggyback(&c, 5);
    CHECK_EQ(c.owed, 5);
    CHECK_EQ(c.returned, 0);
    CHECK(pvrdma_common_credits_need_return(&c));
}

/* Immediate data: AM id, credits and tag come back as they went in, and
 * none spills into another field. */
static void test_imm(void)
{
    uint32_t imm;

    imm = pvrdma_common_imm_pack(7, 0, 0);
    CHECK_EQ(imm, 7);                     /* no credits: just the AM id */
    imm = pvrdma_common_imm_pack(31, PVRDMA_COMMON_IMM_CREDITS_MAX, 0xffff);
    CHECK_EQ(imm, 0xffffffffu);
    CHECK_EQ(pvrdma_common_imm_am_id(imm), 31);
    CHECK_EQ(pvrdma_common_imm_credits(imm), PVRDMA_COMMON_IMM_CREDITS_MAX);
    CHECK_EQ(pvrdma_common_imm_tag(imm), 0xffff);
    imm = pvrdma_common_imm_pack(3, 130, 0x1234);
    CHECK_EQ(pvrdma_common_imm_am_id(imm), 3);
    CHECK_EQ(pvrdma_common_imm_credits(imm), 130);
    CHECK_EQ(pvrdma_common_imm_tag(imm), 0x1234);
    CHECK_EQ(imm, 3u | (130u << 5) | (0x1234u << 16));   /* the wire layout */
    /* an id or a credit count too big for its field is cut, not spilled */
    imm = pvrdma_common_imm_pack(32 + 1, 0, 0);
    CHECK_EQ(imm, 1);
    imm = pvrdma_common_imm_pack(0, PVRDMA_COMMON_IMM_CREDITS_MAX + 1, 0);
    CHECK_EQ(pvrdma_common_imm_tag(imm), 0);
}

int main(void)
{
    test_undo_and_initial();
    test_imm();
    test_basic();
    test_one_way_stream();
    test_both_flood();
    return test_done("test_credits");
}
