/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file test_ud.c
 * @brief The checks a connection datagram passes before either plugin sees
 *        it, and the address vector both UD handles and RC QPs use.
 */
#include "pvrdma_common.h"
#include "test_util.h"

struct msg {
    struct pvrdma_common_ud_hdr hdr;
    uint8_t body[60];
};

static void test_msg_check(void)
{
    uint8_t rx[PVRDMA_COMMON_UD_GRH_LEN + sizeof(struct msg)];
    struct msg *m = (struct msg *)(rx + PVRDMA_COMMON_UD_GRH_LEN);
    const uint32_t full = sizeof(rx);

    CHECK_EQ(sizeof(struct pvrdma_common_ud_hdr), 4 + PVRDMA_COMMON_UD_SECRET_LEN);
    memset(rx, 0, sizeof(rx));
    m->hdr.type    = 1;
    m->hdr.version = 3;
    /* the message starts after the GRH area */
    CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, NULL) == m);
    /* longer than ours (another sender's bigger format): still only ours */
    CHECK(pvrdma_common_ud_msg_check(rx, full + 16, sizeof(*m), 3, NULL) == m);
    /* one byte short, only a GRH, nothing at all */
    CHECK(pvrdma_common_ud_msg_check(rx, full - 1, sizeof(*m), 3, NULL) == NULL);
    CHECK(pvrdma_common_ud_msg_check(rx, PVRDMA_COMMON_UD_GRH_LEN, sizeof(*m),
                                     3, NULL) == NULL);
    CHECK(pvrdma_common_ud_msg_check(rx, 0, sizeof(*m), 3, NULL) == NULL);
    /* another version of the format (older peer, other plugin, noise) */
    CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 2, NULL) == NULL);
    /* the receiver's secret: only its own passes */
    {
        uint8_t secret[PVRDMA_COMMON_UD_SECRET_LEN], other[sizeof(secret)];

        CHECK_EQ(pvrdma_common_random_bytes(secret, sizeof(secret)), 0);
        CHECK_EQ(pvrdma_common_random_bytes(other, sizeof(other)), 0);
        CHECK(memcmp(secret, other, sizeof(secret)) != 0);
        memcpy(m->hdr.auth, secret, sizeof(secret));
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret) == m);
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, other) == NULL);
        /* one bit off, anywhere, is a stranger */
        for (size_t i = 0; i < sizeof(secret); ++i) {
            m->hdr.auth[i] ^= 0x80;
            CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret) == NULL);
            m->hdr.auth[i] ^= 0x80;
        }
        memset(m->hdr.auth, 0, sizeof(secret));
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret) == NULL);
    }
    m->hdr.version = 0xff;
    CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, NULL) == NULL);
}

static void test_ah_attr(void)
{
    struct pvrdma_common_qp_params p;
    struct ibv_ah_attr ah;
    union ibv_gid gid, zero;

    memset(&gid, 0, sizeof(gid));
    memset(&zero, 0, sizeof(zero));
    gid.raw[10] = gid.raw[11] = 0xff;
    gid.raw[12] = 10;
    gid.raw[15] = 2;

    pvrdma_common_qp_params_init(&p);
    p.port_num   = 2;
    p.sgid_index = 3;
    p.link_layer = IBV_LINK_LAYER_ETHERNET;
    /* RoCE: always a GRH with the local GID index and hop limit */
    pvrdma_common_ah_attr_fill(&ah, &p, &gid, 0);
    CHECK_EQ(ah.is_global, 1);
    CHECK_EQ(ah.port_num, 2);
    CHECK_EQ(ah.grh.sgid_index, 3);
    CHECK_EQ(ah.grh.hop_limit, 64);
    CHECK(memcmp(ah.grh.dgid.raw, gid.raw, 16) == 0);

    /* InfiniBand: the LID; a GRH only when the GID is known */
    p.link_layer = IBV_LINK_LAYER_INFINIBAND;
    pvrdma_common_ah_attr_fill(&ah, &p, &zero, 7);
    CHECK_EQ(ah.is_global, 0);
    CHECK_EQ(ah.dlid, 7);
    pvrdma_common_ah_attr_fill(&ah, &p, &gid, 7);
    CHECK_EQ(ah.is_global, 1);
    CHECK_EQ(ah.dlid, 7);
}

static void test_psn(void)
{
    uint32_t a = pvrdma_common_psn_new(), b = pvrdma_common_psn_new();

    CHECK(a <= 0xffffffu);
    CHECK(b <= 0xffffffu);
    /* random, not a function of the process: two in a row differ (a
     * collision has probability 2^-24) */
    CHECK(a != b);
}

int main(void)
{
    test_msg_check();
    test_ah_attr();
    test_psn();
    return test_done("test_ud");
}
