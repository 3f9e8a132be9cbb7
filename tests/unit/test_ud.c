/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file test_ud.c
 * @brief The checks a connection datagram passes before either plugin sees
 *        it, and the address vector both UD handles and RC QPs use.
 */
#include "pvrdma_qp.h"
#include "pvrdma_ud.h"
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

    CHECK_EQ(sizeof(struct pvrdma_common_ud_hdr), 12 + PVRDMA_COMMON_AUTH_MAC_LEN);
    memset(rx, 0, sizeof(rx));
    m->hdr.type    = 1;
    m->hdr.version = 3;
    /* the message starts after the GRH area */
    CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, NULL, 0) == m);
    /* longer than ours (another sender's bigger format): still only ours */
    CHECK(pvrdma_common_ud_msg_check(rx, full + 16, sizeof(*m), 3, NULL, 0) == m);
    /* one byte short, only a GRH, nothing at all */
    CHECK(pvrdma_common_ud_msg_check(rx, full - 1, sizeof(*m), 3, NULL, 0) == NULL);
    CHECK(pvrdma_common_ud_msg_check(rx, PVRDMA_COMMON_UD_GRH_LEN, sizeof(*m),
                                     3, NULL, 0) == NULL);
    CHECK(pvrdma_common_ud_msg_check(rx, 0, sizeof(*m), 3, NULL, 0) == NULL);
    /* another version of the format (older peer, other plugin, noise) */
    CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 2, NULL, 0) == NULL);
    /* the MAC, keyed by the receiver's secret, made for its QP: only that
     * passes (issue 37: the secret itself is never in the datagram) */
    {
        const size_t off = offsetof(struct pvrdma_common_ud_hdr, mac);
        uint8_t secret[PVRDMA_COMMON_UD_SECRET_LEN], other[sizeof(secret)];

        CHECK_EQ(pvrdma_common_auth_init(), 0);
        CHECK_EQ(pvrdma_common_random_bytes(secret, sizeof(secret)), 0);
        CHECK_EQ(pvrdma_common_random_bytes(other, sizeof(other)), 0);
        CHECK(memcmp(secret, other, sizeof(secret)) != 0);
        memset(m->body, 0x5a, sizeof(m->body));
        pvrdma_common_auth_mac(m->hdr.mac, secret, m, sizeof(*m), off, 0x1234);
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret, 0x1234) == m);
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, other, 0x1234) == NULL);
        /* made for another QP */
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret, 0x1235) == NULL);
        /* one bit off, anywhere in the message, MAC included */
        for (size_t i = 0; i < sizeof(*m); ++i) {
            ((uint8_t *) m)[i] ^= 0x80;
            CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret, 0x1234) == NULL);
            ((uint8_t *) m)[i] ^= 0x80;
        }
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret, 0x1234) == m);
        /* the secret itself in the MAC field (what version 3 sent) */
        memcpy(m->hdr.mac, secret, sizeof(secret));
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret, 0x1234) == NULL);
        /* keyed by the sender: not ours to check here */
        pvrdma_common_auth_mac(m->hdr.mac, secret, m, sizeof(*m), off, 0x1234);
        m->hdr.keyed = PVRDMA_COMMON_UD_KEYED_SENDER;
        CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, secret, 0x1234) == NULL);
        m->hdr.keyed = PVRDMA_COMMON_UD_KEYED_RECEIVER;
    }
    m->hdr.version = 0xff;
    CHECK(pvrdma_common_ud_msg_check(rx, full, sizeof(*m), 3, NULL, 0) == NULL);
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

/* What each completion of the UD QP does to its bookkeeping (no device:
 * pvrdma_common_ud_complete only reads the slots and the wc). */
static void test_complete(void)
{
    static uint8_t buf[4 * (PVRDMA_COMMON_UD_GRH_LEN + sizeof(struct msg)) +
                       2 * sizeof(struct msg)];
    struct pvrdma_common_ud ud;
    struct ibv_wc wc;
    const void *msg;
    struct msg *m;

    memset(&ud, 0, sizeof(ud));
    ud.buf      = buf;
    ud.rx_count = 4;
    ud.tx_count = 2;
    ud.msg_size = sizeof(struct msg);
    ud.version  = 5;
    ud.gen      = 7;
    ud.qpn      = 0x77;
    CHECK_EQ(pvrdma_common_random_bytes(ud.secret, sizeof(ud.secret)), 0);
    CHECK_EQ(pvrdma_common_replay_init(&ud.replay, 8), 0);

    /* a good message in receive slot 2 of this generation */
    m = (struct msg *)(buf + 2 * (PVRDMA_COMMON_UD_GRH_LEN + sizeof(struct msg)) +
                       PVRDMA_COMMON_UD_GRH_LEN);
    m->hdr.type    = 1;
    m->hdr.version = 5;
    m->hdr.seq[7]  = 9;
    pvrdma_common_auth_mac(m->hdr.mac, ud.secret, m, sizeof(*m),
                           offsetof(struct pvrdma_common_ud_hdr, mac), ud.qpn);
    memset(&wc, 0, sizeof(wc));
    wc.wr_id    = ((uint64_t) 7 << PVRDMA_COMMON_UD_GEN_SHIFT) | 2;
    wc.status   = IBV_WC_SUCCESS;
    wc.byte_len = PVRDMA_COMMON_UD_GRH_LEN + sizeof(struct msg);
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_RECEIVED);
    CHECK(msg == m);
    /* longer than the slot (the rest went to the sink): still checked */
    wc.byte_len += 1000;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_RECEIVED);
    /* accepted once from its sender; the same datagram again is a replay */
    {
        union ibv_gid from;

        memset(&from, 0, sizeof(from));
        from.raw[15] = 2;
        wc.src_qp = 0x99;
        CHECK(pvrdma_common_ud_accept(&ud, &wc, m, NULL, &from));
        CHECK(!pvrdma_common_ud_accept(&ud, &wc, m, NULL, &from));
        CHECK_EQ(ud.replayed, 1);
        CHECK_EQ(ud.dropped, 1);
        /* a later one of the same sender passes */
        m->hdr.seq[7] = 10;
        CHECK(pvrdma_common_ud_accept(&ud, &wc, m, NULL, &from));
        /* keyed by its sender: only with the sender's key */
        m->hdr.keyed = PVRDMA_COMMON_UD_KEYED_SENDER;
        m->hdr.seq[7] = 11;
        pvrdma_common_auth_mac(m->hdr.mac, ud.secret, m, sizeof(*m),
                               offsetof(struct pvrdma_common_ud_hdr, mac), ud.qpn);
        CHECK(!pvrdma_common_ud_accept(&ud, &wc, m, NULL, &from));
        CHECK_EQ(ud.forged, 1);
        CHECK(pvrdma_common_ud_accept(&ud, &wc, m, ud.secret, &from));
        m->hdr.keyed = PVRDMA_COMMON_UD_KEYED_RECEIVER;
        m->hdr.seq[7] = 9;
        pvrdma_common_auth_mac(m->hdr.mac, ud.secret, m, sizeof(*m),
                               offsetof(struct pvrdma_common_ud_hdr, mac), ud.qpn);
        ud.dropped = ud.forged = ud.replayed = 0;
    }
    /* not made with our secret: dropped and counted, the QP is fine */
    m->hdr.mac[0] ^= 1;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_DROPPED);
    CHECK_EQ(ud.dropped, 1);
    CHECK_EQ(ud.forged, 1);
    CHECK(!ud.broken);

    /* a completion of an earlier generation: nothing at all */
    wc.wr_id = ((uint64_t) 6 << PVRDMA_COMMON_UD_GEN_SHIFT) | 2;
    wc.status = IBV_WC_LOC_QP_OP_ERR;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_STALE);
    CHECK(!ud.broken);
    CHECK_EQ(ud.dropped, 1);

    /* a failed receive (SoftRoCE's answer to a datagram longer than the
     * receive): dropped, counted, the QP is broken */
    wc.wr_id = ((uint64_t) 7 << PVRDMA_COMMON_UD_GEN_SHIFT) | 1;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_DROPPED);
    CHECK(msg == NULL);
    CHECK(ud.broken);
    CHECK(strcmp(ud.broken_by, ibv_wc_status_str(IBV_WC_LOC_QP_OP_ERR)) == 0);
    CHECK_EQ(ud.dropped, 2);
    /* the flushes after it carry no datagram: not counted; the first
     * cause stays */
    wc.status = IBV_WC_WR_FLUSH_ERR;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_DROPPED);
    CHECK_EQ(ud.dropped, 2);
    CHECK(strcmp(ud.broken_by, ibv_wc_status_str(IBV_WC_LOC_QP_OP_ERR)) == 0);
    /* no send slot while broken */
    CHECK(pvrdma_common_ud_tx_get(&ud) == NULL);

    /* sends: a success frees the slot, a failure breaks the QP */
    ud.broken  = false;
    ud.tx_busy = 3;
    wc.wr_id   = PVRDMA_COMMON_UD_TX_BIT | ((uint64_t) 7 << PVRDMA_COMMON_UD_GEN_SHIFT) | 1;
    wc.status  = IBV_WC_SUCCESS;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_SENT);
    CHECK_EQ(ud.tx_busy, 1);
    CHECK(pvrdma_common_ud_tx_get(&ud) != NULL);
    wc.wr_id  = PVRDMA_COMMON_UD_TX_BIT | ((uint64_t) 7 << PVRDMA_COMMON_UD_GEN_SHIFT);
    wc.status = IBV_WC_GENERAL_ERR;
    CHECK_EQ(pvrdma_common_ud_complete(&ud, &wc, &msg), PVRDMA_COMMON_UD_SEND_FAILED);
    CHECK_EQ(ud.tx_busy, 0);
    CHECK(ud.broken);
    /* while being reset, no slot either */
    ud.broken    = false;
    ud.resetting = true;
    CHECK(pvrdma_common_ud_tx_get(&ud) == NULL);
}

int main(void)
{
    test_msg_check();
    test_complete();
    test_ah_attr();
    test_psn();
    return test_done("test_ud");
}
