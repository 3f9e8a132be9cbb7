/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ud_recover.c
 * @brief The connection QP of both plugins (common/ud.c) on a real device
 *        (issue 41): a datagram longer than any message leaves it working,
 *        and a QP that went to the error state is brought back.
 *
 * Usage: ud_recover -d DEV[:PORT] [-g GID_INDEX] [-n ROUNDS]
 * (default GID: the port's first one that is set)
 * One process, two UD QPs of common/ud.c on one CQ each ("receiver" with
 * 100-byte messages, "sender"), talking over the device's loopback:
 *   1. the sender sends datagrams of every length up to the port's MTU
 *      (raw, not through common's send: they carry no MAC) to the
 *      receiver: each must complete without error and be dropped and
 *      counted as not ours (on SoftRoCE of Linux 6.1 the first one longer
 *      than a receive put the QP into the error state before the sink);
 *   2. ROUNDS times: the receiver's QP is moved to the error state by
 *      ibv_modify_qp (what the device does on its own after a failed WR),
 *      its completions (or, on a device that flushes nothing, the state
 *      check) must report it broken, pvrdma_common_ud_reset(), a
 *      drain of its CQ and pvrdma_common_ud_restart() must bring it back,
 *      and a message with its secret sent right after must arrive intact
 *      through pvrdma_common_ud_complete().
 * Between 1 and 2 (issue 37): a message MAC'd with the receiver's secret is
 * accepted once, the same datagram posted again (a replay) is dropped and
 * counted, and one made for another QP fails its MAC.
 * -n 0 runs step 1 only (QEMU's PVRDMA model neither flushes the receives
 * of a QP moved to the error state nor reports that state to ibv_query_qp,
 * so step 2 cannot be staged there).
 * Prints "ok - ..." / "not ok - ..." lines and "recovered N times, reset to
 * first message received: min/avg/max X/Y/Z us"; exit 0 when all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pvrdma_device.h"
#include "pvrdma_gid.h"
#include "pvrdma_qp.h"
#include "pvrdma_ud.h"

#define MSG_SIZE 100
#define QKEY     0x1234567u
#define VERSION  9

static int failures;

static void report(int ok, const char *what)
{
    printf("%s - %s\n", ok ? "ok" : "not ok", what);
    failures += !ok;
}

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Poll @p cq until one completion of @p ud is handled or @p wait_us pass; returns
 * its event (-1 on timeout).  Receives are reposted, as the plugins do. */
static int next_event(struct pvrdma_common_ud *ud, struct ibv_cq *cq,
                      const void **msg, struct ibv_wc *out, double wait_us)
{
    double end = now_us() + wait_us;
    const void *ignored;
    struct ibv_wc wc;
    int n, ev;

    msg = (msg != NULL) ? msg : &ignored;
    while (now_us() < end) {
        n = ibv_poll_cq(cq, 1, &wc);
        if (n < 0) {
            return -1;
        } else if (n == 0) {
            continue;
        }
        ev = pvrdma_common_ud_complete(ud, &wc, msg);
        if (ev == PVRDMA_COMMON_UD_STALE) {
            continue;   /* a flush of before the reset, written late */
        }
        if (out != NULL) {
            *out = wc;
        }
        if ((ev == PVRDMA_COMMON_UD_RECEIVED) || (ev == PVRDMA_COMMON_UD_DROPPED)) {
            if (ev == PVRDMA_COMMON_UD_RECEIVED) {
                return ev;   /* the caller reads it, then reposts */
            }
            (void) pvrdma_common_ud_repost(ud, &wc);
        }
        return ev;
    }
    return -1;
}

/* @p len bytes at @p slot (the sender's first tx slot) posted as they are */
static int post_raw(struct pvrdma_common_ud *tx, struct ibv_cq *tx_cq,
                    struct ibv_ah *ah, uint32_t qpn, uint8_t *slot, uint32_t len)
{
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad;
    struct ibv_wc wc;
    const void *msg;

    sge.addr   = (uintptr_t) slot;
    sge.length = len;
    sge.lkey   = tx->mr->lkey;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id             = PVRDMA_COMMON_UD_TX_BIT |
                           ((uint64_t) tx->gen << PVRDMA_COMMON_UD_GEN_SHIFT);
    wr.sg_list           = &sge;
    wr.num_sge           = 1;
    wr.opcode            = IBV_WR_SEND;
    wr.send_flags        = IBV_SEND_SIGNALED;
    wr.wr.ud.ah          = ah;
    wr.wr.ud.remote_qpn  = qpn;
    wr.wr.ud.remote_qkey = QKEY;
    if (ibv_post_send(tx->qp, &wr, &bad) != 0) {
        return EIO;
    }
    tx->tx_busy |= 1;
    return (next_event(tx, tx_cq, &msg, &wc, 5e6) == PVRDMA_COMMON_UD_SENT) ? 0 : EIO;
}

/* raw datagram of @p len bytes from the sender's first tx slot */
static int send_raw(struct pvrdma_common_ud *tx, struct ibv_cq *tx_cq,
                    struct ibv_ah *ah, uint32_t qpn, uint32_t len)
{
    uint8_t *slot = pvrdma_common_ud_tx_get(tx);

    if (slot == NULL) {
        return EAGAIN;
    }
    /* the sender's slots are MSG_SIZE bytes: longer datagrams take the
     * slot and what follows it in the same registered buffer */
    memset(slot, 0xa5, len);
    return post_raw(tx, tx_cq, ah, qpn, slot, len);
}

/* The sender's message in @p slot (sent by pvrdma_common_ud_send) posted
 * again byte for byte: a replay, as a host that captured it would send */
static int resend_raw(struct pvrdma_common_ud *tx, struct ibv_cq *tx_cq,
                      struct ibv_ah *ah, uint32_t qpn, uint8_t *slot)
{
    return post_raw(tx, tx_cq, ah, qpn, slot, MSG_SIZE);
}

/* 1b (issue 37): a message made with the receiver's secret is accepted
 * once; the same datagram again is dropped as a replay; one made with the
 * receiver's secret for another QP (here the sender's own) fails its MAC */
static void replay_step(struct pvrdma_common_ud *tx, struct ibv_cq *tx_cq,
                        struct pvrdma_common_ud *rx, struct ibv_cq *rx_cq,
                        struct ibv_ah *ah, const union ibv_gid *gid)
{
    const void *got = NULL;
    struct ibv_wc wc;
    bool first = false, replay = false, other = false;
    uint8_t *m = pvrdma_common_ud_tx_get(tx);
    char line[256];

    m[0] = 1;
    for (int i = sizeof(struct pvrdma_common_ud_hdr); i < MSG_SIZE; ++i) {
        m[i] = (uint8_t) (i * 3);
    }
    if ((pvrdma_common_ud_send(tx, m, ah, rx->qpn, QKEY, rx->secret,
                               PVRDMA_COMMON_UD_KEYED_RECEIVER) == 0) &&
        (next_event(tx, tx_cq, &got, NULL, 5e6) == PVRDMA_COMMON_UD_SENT)) {
        if (next_event(rx, rx_cq, &got, &wc, 5e6) == PVRDMA_COMMON_UD_RECEIVED) {
            first = pvrdma_common_ud_accept(rx, &wc, got, NULL, gid);
            (void) pvrdma_common_ud_repost(rx, &wc);
        }
        if ((resend_raw(tx, tx_cq, ah, rx->qpn, m) == 0) &&
            (next_event(rx, rx_cq, &got, &wc, 5e6) == PVRDMA_COMMON_UD_RECEIVED)) {
            replay = !pvrdma_common_ud_accept(rx, &wc, got, NULL, gid) &&
                     (rx->replayed == 1);
            (void) pvrdma_common_ud_repost(rx, &wc);
        }
    }
    m = pvrdma_common_ud_tx_get(tx);
    if ((m != NULL) &&
        (pvrdma_common_ud_send(tx, m, ah, tx->qpn, QKEY, rx->secret,
                               PVRDMA_COMMON_UD_KEYED_RECEIVER) == 0)) {
        /* the sender's CQ: its send, and the datagram it received */
        for (int i = 0; i < 2; ++i) {
            (void) next_event(tx, tx_cq, &got, NULL, 5e6);
        }
        other = (tx->forged == 1);
    }
    snprintf(line, sizeof(line), "a MAC'd message accepted once (%s), the same datagram "
             "again dropped as a replay (%s, %" PRIu64 " counted), one made for another "
             "QP dropped (%s)", first ? "yes" : "no", replay ? "yes" : "no",
             rx->replayed, other ? "yes" : "no");
    report(first && replay && other, line);
}

int main(int argc, char **argv)
{
    struct pvrdma_common_ud rx, tx;
    struct pvrdma_common_ud_attr attr;
    struct pvrdma_common_qp_params params;
    struct ibv_context *ctx = NULL;
    struct ibv_port_attr pattr;
    struct ibv_qp_attr qattr;
    struct ibv_cq *rx_cq, *tx_cq;
    struct ibv_pd *pd;
    struct ibv_ah *ah;
    union ibv_gid gid;
    const char *dev = NULL, *what;
    char *colon, line[320];
    int opt, n, gid_index = -1, rounds = 20, port = 1, ev;
    uint32_t mtu, len, lost = 0, flushless = 0;
    double min = 1e12, max = 0, sum = 0;

    while ((opt = getopt(argc, argv, "d:g:n:")) != -1) {
        switch (opt) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        case 'n': rounds = atoi(optarg); break;
        default: goto usage;
        }
    }
    if ((dev == NULL) || (rounds < 0)) {
        goto usage;
    }
    colon = strchr(dev, ':');
    if (colon != NULL) {
        *colon = '\0';
        port   = atoi(colon + 1);
    }
    ctx = pvrdma_common_open_device(dev);
    for (int i = 0; (ctx != NULL) && (gid_index < 0) && (i < 16); ++i) {
        if ((ibv_query_gid(ctx, (uint8_t) port, i, &gid) == 0) &&
            !pvrdma_common_gid_is_zero(&gid)) {
            gid_index = i;
        }
    }
    if ((ctx == NULL) || (gid_index < 0) ||
        (ibv_query_port(ctx, (uint8_t) port, &pattr) != 0) ||
        (ibv_query_gid(ctx, (uint8_t) port, gid_index, &gid) != 0)) {
        fprintf(stderr, "ud_recover: cannot open %s:%d GID %d\n", dev, port, gid_index);
        return 1;
    }
    mtu   = 128u << pattr.active_mtu;
    pd    = ibv_alloc_pd(ctx);
    rx_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    tx_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    memset(&attr, 0, sizeof(attr));
    attr.pd       = pd;
    attr.port_num = (uint8_t) port;
    attr.qkey     = QKEY;
    attr.version  = VERSION;
    attr.rx_count = 16;
    attr.tx_count = 4;
    attr.msg_size = MSG_SIZE;
    attr.cq       = rx_cq;
    if ((pd == NULL) || (rx_cq == NULL) || (tx_cq == NULL) ||
        pvrdma_common_ud_open(&rx, &attr, &what) != 0) {
        fprintf(stderr, "ud_recover: receiver: %s: %s\n", what, strerror(errno));
        return 1;
    }
    attr.cq = tx_cq;
    if (pvrdma_common_ud_open(&tx, &attr, &what) != 0) {
        fprintf(stderr, "ud_recover: sender: %s: %s\n", what, strerror(errno));
        return 1;
    }
    pvrdma_common_qp_params_init(&params);
    params.port_num   = (uint8_t) port;
    params.sgid_index = (uint8_t) gid_index;
    params.link_layer = pattr.link_layer;
    ah = pvrdma_common_ud_ah_create(pd, &params, &gid, pattr.lid);
    if (ah == NULL) {
        fprintf(stderr, "ud_recover: ibv_create_ah: %s\n", strerror(errno));
        return 1;
    }

    /* 1. every length up to the MTU: dropped and counted, never an error */
    for (len = 1, n = 0; ; len = (len < 64) ? len + 21 : len * 2 + 1) {
        len = (len > mtu) ? mtu : len;   /* the last one: exactly the MTU */
        if (send_raw(&tx, tx_cq, ah, rx.qp->qp_num, len) != 0) {
            break;
        }
        ev = next_event(&rx, rx_cq, NULL, NULL, 5e6);
        n += (ev == PVRDMA_COMMON_UD_DROPPED) && !rx.broken;
        if (len == mtu) {
            break;
        }
    }
    snprintf(line, sizeof(line), "datagrams of 1..%u B to a QP of %d-byte messages: "
             "all dropped and counted (%" PRIu64 "), the QP never broken", mtu,
             MSG_SIZE, rx.dropped);
    report(!rx.broken && (rx.dropped == (uint64_t) n) && (n > 5) && (len == mtu), line);
    replay_step(&tx, tx_cq, &rx, rx_cq, ah, &gid);

    /* 2. the error state, and back */
    for (int r = 0; r < rounds; ++r) {
        uint8_t *m;
        const void *got = NULL;
        struct ibv_wc wc;
        double t0;

        memset(&qattr, 0, sizeof(qattr));
        qattr.qp_state = IBV_QPS_ERR;
        if (ibv_modify_qp(rx.qp, &qattr, IBV_QP_STATE) != 0) {
            report(0, "ibv_modify_qp to the error state");
            break;
        }
        /* the device flushes the receives and the first one says
         * "broken"; a device that flushes nothing (QEMU's PVRDMA model) is
         * found by the state check the plugins make when a request of
         * theirs goes unanswered */
        ev = next_event(&rx, rx_cq, NULL, NULL, 300000);
        if (ev < 0) {
            flushless++;
            (void) pvrdma_common_ud_check_state(&rx);
        }
        if (!rx.broken) {
            report(0, "the QP is found broken (a flushed receive or its state)");
            break;
        }
        t0 = now_us();
        if (pvrdma_common_ud_reset(&rx) != 0) {
            report(0, "pvrdma_common_ud_reset");
            break;
        }
        while (ibv_poll_cq(rx_cq, 1, &wc) > 0) {
            /* the old WRs' completions: STALE, nothing to do */
            if (pvrdma_common_ud_complete(&rx, &wc, &got) != PVRDMA_COMMON_UD_STALE) {
                report(0, "completions from before the reset are stale");
            }
        }
        if (pvrdma_common_ud_restart(&rx) != 0) {
            report(0, "pvrdma_common_ud_restart");
            break;
        }
        /* a message with the receiver's secret must arrive intact */
        m = pvrdma_common_ud_tx_get(&tx);
        memset(m, 0, MSG_SIZE);
        m[0] = 1;
        for (int i = sizeof(struct pvrdma_common_ud_hdr); i < MSG_SIZE; ++i) {
            m[i] = (uint8_t) (i * 7 + r);
        }
        if (pvrdma_common_ud_send(&tx, m, ah, rx.qp->qp_num, QKEY, rx.secret,
                                  PVRDMA_COMMON_UD_KEYED_RECEIVER) != 0 ||
            next_event(&tx, tx_cq, &got, NULL, 5e6) != PVRDMA_COMMON_UD_SENT) {
            report(0, "send after the restart");
            break;
        }
        ev = next_event(&rx, rx_cq, &got, &wc, 5e6);
        if (ev == PVRDMA_COMMON_UD_RECEIVED) {
            const uint8_t *b = got;
            int bad = 0;

            for (int i = sizeof(struct pvrdma_common_ud_hdr); i < MSG_SIZE; ++i) {
                bad |= b[i] != (uint8_t) (i * 7 + r);
            }
            lost += bad;
            (void) pvrdma_common_ud_repost(&rx, &wc);
        } else {
            ++lost;
        }
        t0 = now_us() - t0;
        min = (t0 < min) ? t0 : min;
        max = (t0 > max) ? t0 : max;
        sum += t0;
    }
    if (rounds == 0) {
        goto out;
    }
    snprintf(line, sizeof(line), "QP in the error state %d times: reset, restarted, "
             "the next message intact each time (%u lost, %" PRIu64 " resets; found by "
             "a flushed receive %u times, by its state %u times)", rounds, lost, rx.resets,
             rounds - flushless, flushless);
    report((lost == 0) && (rx.resets == (uint64_t) rounds), line);
    if (rx.resets > 0) {
        printf("recovered %" PRIu64 " times, reset to first message received: "
               "min/avg/max %.0f/%.0f/%.0f us\n", rx.resets, min, sum / rx.resets, max);
    }

out:
    ibv_destroy_ah(ah);
    pvrdma_common_ud_close(&rx);
    pvrdma_common_ud_close(&tx);
    ibv_destroy_cq(rx_cq);
    ibv_destroy_cq(tx_cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    return failures ? 1 : 0;

usage:
    fprintf(stderr, "usage: ud_recover -d DEV[:PORT] [-g GID_INDEX] [-n ROUNDS]\n");
    return 2;
}
