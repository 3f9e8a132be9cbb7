/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ud.c
 * @brief The UD QP both plugins exchange connection messages over: its
 *        buffers, bring-up, sends, receives, address handles, and the
 *        checks every received message passes before a plugin sees it.
 *
 * Both plugins set RC QPs up by datagrams (Debian's Open MPI has no rdmacm
 * CPC, UCX's rdmacm needs IP addressing the bed's PVRDMA model lacks), so
 * this is the one place a datagram from the fabric enters either of them.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_ud.h"
#include "pvrdma_gid.h"
#include "pvrdma_qp.h"
#include "pvrdma_page.h"
#include "pvrdma_counters.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t ud_rx_slot(const struct pvrdma_common_ud *ud)
{
    return PVRDMA_COMMON_UD_GRH_LEN + ud->msg_size;
}

static uint8_t *ud_rx_buf(const struct pvrdma_common_ud *ud, uint32_t index)
{
    return ud->buf + (size_t) index * ud_rx_slot(ud);
}

static uint8_t *ud_tx_buf(const struct pvrdma_common_ud *ud, uint32_t index)
{
    return ud->buf + (size_t) ud->rx_count * ud_rx_slot(ud) +
           (size_t) index * ud->msg_size;
}

/* the buffer every receive's second SGE points at (never read) */
static uint8_t *ud_sink(const struct pvrdma_common_ud *ud)
{
    return ud_tx_buf(ud, ud->tx_count);
}

static uint64_t ud_wr_id(const struct pvrdma_common_ud *ud, uint32_t index)
{
    return ((uint64_t) ud->gen << PVRDMA_COMMON_UD_GEN_SHIFT) | index;
}

/* @p sge: two entries, the slot and the shared sink */
static void ud_recv_wr(struct pvrdma_common_ud *ud, uint32_t index,
                       struct ibv_recv_wr *wr, struct ibv_sge *sge)
{
    sge[0].addr   = (uintptr_t) ud_rx_buf(ud, index);
    sge[0].length = ud_rx_slot(ud);
    sge[0].lkey   = ud->mr->lkey;
    sge[1].addr   = (uintptr_t) ud_sink(ud);
    sge[1].length = PVRDMA_COMMON_UD_SINK_LEN;
    sge[1].lkey   = ud->mr->lkey;
    memset(wr, 0, sizeof(*wr));
    wr->wr_id   = ud_wr_id(ud, index);
    wr->sg_list = sge;
    wr->num_sge = 2;
}

/* every receive in one list: one doorbell, not rx_count */
static int ud_post_all(struct pvrdma_common_ud *ud)
{
    struct ibv_recv_wr *wrs, *bad;
    struct ibv_sge *sges;
    int rc;

    wrs  = calloc(ud->rx_count, sizeof(*wrs));
    sges = calloc(ud->rx_count, 2 * sizeof(*sges));
    if ((wrs == NULL) || (sges == NULL)) {
        free(wrs);
        free(sges);
        return ENOMEM;
    }
    for (uint32_t i = 0; i < ud->rx_count; ++i) {
        ud_recv_wr(ud, i, &wrs[i], &sges[2 * i]);
        wrs[i].next = (i + 1 < ud->rx_count) ? &wrs[i + 1] : NULL;
    }
    rc = ibv_post_recv(ud->qp, wrs, &bad);
    free(wrs);
    free(sges);
    return rc;
}

/* RESET -> INIT -> RTR -> RTS; a UD QP needs no peer for any of them. */
static int ud_to_rts(struct ibv_qp *qp, uint8_t port_num, uint32_t qkey)
{
    struct ibv_qp_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state   = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num   = port_num;
    attr.qkey       = qkey;
    rc = pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                            IBV_QP_PORT | IBV_QP_QKEY);
    if (rc == 0) {
        attr.qp_state = IBV_QPS_RTR;
        rc = pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE);
    }
    if (rc == 0) {
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn   = 0;
        rc = pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    return rc;
}

int pvrdma_common_ud_open(struct pvrdma_common_ud *ud,
                          const struct pvrdma_common_ud_attr *attr,
                          const char **what)
{
    struct ibv_qp_init_attr init;
    size_t size;
    int rc;

    memset(ud, 0, sizeof(*ud));
    *what = "UD QP parameters";
    if ((attr->rx_count == 0) || (attr->tx_count == 0) ||
        (attr->tx_count > PVRDMA_COMMON_UD_TX_MAX) ||
        (attr->msg_size < sizeof(struct pvrdma_common_ud_hdr))) {
        return EINVAL;
    }
    ud->qkey     = attr->qkey;
    ud->version  = attr->version;
    ud->port_num = attr->port_num;
    *what        = "libsodium initialisation";
    rc           = pvrdma_common_auth_init();
    if (rc != 0) {
        return rc;
    }
    *what        = "getrandom (UD secret)";
    rc           = pvrdma_common_random_bytes(ud->secret, sizeof(ud->secret));
    if (rc == 0) {
        /* Start at the wall clock in ns: a later QP that gets the number
         * of an earlier one (a new process or iface) starts above all that
         * the earlier one sent (it cannot send a datagram per ns), so peers
         * that still hold the earlier one's window take its datagrams as
         * new, and the earlier one's, replayed, as old. */
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        ud->tx_seq = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
        ud->seq_base = ud->tx_seq;
    }
    if (rc != 0) {
        return rc;
    }
    *what        = "replay windows";
    rc           = pvrdma_common_replay_init(&ud->replay, PVRDMA_COMMON_UD_REPLAY_CAP);
    if (rc != 0) {
        return rc;
    }
    ud->rx_count = attr->rx_count;
    ud->tx_count = attr->tx_count;
    ud->msg_size = attr->msg_size;

    /* whole pages: QEMU's pvrdma model refuses MRs that cross a page */
    size    = (size_t) ud->rx_count * ud_rx_slot(ud) +
              (size_t) ud->tx_count * ud->msg_size + PVRDMA_COMMON_UD_SINK_LEN;
    *what   = "allocating the UD buffers";
    ud->buf = pvrdma_common_page_alloc(size);
    if (ud->buf == NULL) {
        rc = ENOMEM;
        goto err;
    }
    *what  = "ibv_reg_mr (UD buffers)";
    ud->mr = ibv_reg_mr(attr->pd, ud->buf, size, IBV_ACCESS_LOCAL_WRITE);
    if (ud->mr == NULL) {
        rc = errno;
        goto err;
    }

    memset(&init, 0, sizeof(init));
    init.send_cq          = (attr->send_cq != NULL) ? attr->send_cq : attr->cq;
    init.recv_cq          = attr->cq;
    init.qp_type          = IBV_QPT_UD;
    init.cap.max_send_wr  = ud->tx_count;
    init.cap.max_recv_wr  = ud->rx_count;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 2;   /* slot + sink */
    *what  = "ibv_create_qp (UD)";
    ud->qp = ibv_create_qp(attr->pd, &init);
    if (ud->qp == NULL) {
        rc = errno;
        goto err;
    }
    ud->qpn = ud->qp->qp_num;
    *what = "ibv_modify_qp (UD)";
    rc    = ud_to_rts(ud->qp, attr->port_num, ud->qkey);
    if (rc != 0) {
        goto err;
    }

    *what = "ibv_post_recv (UD)";
    rc    = ud_post_all(ud);
    if (rc != 0) {
        goto err;
    }
    *what = NULL;
    return 0;

err:
    if (rc == 0) {
        rc = EIO;
    }
    pvrdma_common_ud_close(ud);
    return rc;
}

void pvrdma_common_ud_close(struct pvrdma_common_ud *ud)
{
    if (ud->qp != NULL) {
        (void) ibv_destroy_qp(ud->qp);
    }
    if (ud->mr != NULL) {
        (void) ibv_dereg_mr(ud->mr);
    }
    free(ud->buf);
    pvrdma_common_replay_fini(&ud->replay);
    memset(ud, 0, sizeof(*ud));
}

void *pvrdma_common_ud_tx_get(struct pvrdma_common_ud *ud)
{
    uint64_t all = (ud->tx_count == 64) ? UINT64_MAX :
                   ((UINT64_C(1) << ud->tx_count) - 1);
    uint32_t index;

    if (((ud->tx_busy & all) == all) || ud->broken || ud->resetting) {
        return NULL;
    }
    index = (uint32_t) __builtin_ctzll(~ud->tx_busy & all);
    memset(ud_tx_buf(ud, index), 0, ud->msg_size);
    return ud_tx_buf(ud, index);
}

int pvrdma_common_ud_send(struct pvrdma_common_ud *ud, void *msg,
                          struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
                          const uint8_t *key, enum pvrdma_common_ud_keyed keyed)
{
    return pvrdma_common_ud_send_seq(ud, msg, ah, qpn, qkey, key, keyed, &ud->tx_seq);
}

int pvrdma_common_ud_send_seq(struct pvrdma_common_ud *ud, void *msg,
                              struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
                              const uint8_t *key, enum pvrdma_common_ud_keyed keyed,
                              uint64_t *dest_seq)
{
    uint32_t index = (uint32_t) (((uint8_t *) msg - ud_tx_buf(ud, 0)) /
                                 ud->msg_size);
    struct pvrdma_common_ud_hdr *hdr = msg;
    struct ibv_send_wr wr, *bad;
    struct ibv_sge sge;
    uint64_t seq;
    int rc;

    if (*dest_seq == 0) {
        *dest_seq = ud->seq_base;
    }
    seq = *dest_seq + 1;

    hdr->version = ud->version;
    hdr->keyed   = (uint8_t) keyed;
    for (int i = 7; i >= 0; --i) {
        hdr->seq[i] = (uint8_t) (seq >> (8 * (7 - i)));
    }
    pvrdma_common_auth_mac(hdr->mac, key, msg, ud->msg_size,
                           offsetof(struct pvrdma_common_ud_hdr, mac), qpn);
    sge.addr   = (uintptr_t) msg;
    sge.length = ud->msg_size;
    sge.lkey   = ud->mr->lkey;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id             = PVRDMA_COMMON_UD_TX_BIT | ud_wr_id(ud, index);
    wr.sg_list           = &sge;
    wr.num_sge           = 1;
    wr.opcode            = IBV_WR_SEND;
    wr.send_flags        = IBV_SEND_SIGNALED;
    wr.wr.ud.ah          = ah;
    wr.wr.ud.remote_qpn  = qpn;
    wr.wr.ud.remote_qkey = qkey;
    rc = ibv_post_send(ud->qp, &wr, &bad);
    if (rc == 0) {
        ud->tx_busy |= UINT64_C(1) << index;
        *dest_seq = seq;   /* a number is used up only by a datagram sent */
    }
    return rc;
}

const void *pvrdma_common_ud_msg_check(const void *rx, uint32_t byte_len,
                                       uint32_t msg_size, uint8_t version,
                                       const uint8_t *key, uint32_t dest_qpn)
{
    const struct pvrdma_common_ud_hdr *hdr;

    /* the first 40 bytes are the GRH (RoCE v2 over IPv4: the IP header at
     * byte 20); a datagram shorter than our message is not ours */
    if (byte_len < PVRDMA_COMMON_UD_GRH_LEN + msg_size) {
        return NULL;
    }
    hdr = (const void *) ((const uint8_t *) rx + PVRDMA_COMMON_UD_GRH_LEN);
    if (hdr->version != version) {
        return NULL;
    }
    if ((key != NULL) &&
        ((hdr->keyed != PVRDMA_COMMON_UD_KEYED_RECEIVER) ||
         !pvrdma_common_auth_verify(key, hdr, msg_size,
                                    offsetof(struct pvrdma_common_ud_hdr, mac),
                                    dest_qpn))) {
        return NULL;
    }
    return hdr;
}

/* A failed or flushed completion: the QP is in the error state (RC and UD
 * alike, a failed WR takes its QP there on every device we know). */
static void ud_mark_broken(struct pvrdma_common_ud *ud, const char *why)
{
    if (!ud->broken) {
        ud->broken    = true;
        ud->broken_by = why;
    }
}

bool pvrdma_common_ud_check_state(struct pvrdma_common_ud *ud)
{
    struct ibv_qp_init_attr init;
    struct ibv_qp_attr attr;

    if (ud->broken || ud->resetting) {
        return ud->broken;
    }
    if ((ibv_query_qp(ud->qp, &attr, IBV_QP_STATE, &init) == 0) &&
        (attr.qp_state != IBV_QPS_RTS)) {
        ud_mark_broken(ud, "found out of RTS by ibv_query_qp");
    }
    return ud->broken;
}

enum pvrdma_common_ud_event
pvrdma_common_ud_complete(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                          const void **msg)
{
    *msg = NULL;
    if ((uint16_t) (wc->wr_id >> PVRDMA_COMMON_UD_GEN_SHIFT) != ud->gen) {
        return PVRDMA_COMMON_UD_STALE;
    }
    if (wc->wr_id & PVRDMA_COMMON_UD_TX_BIT) {
        ud->tx_busy &= ~(UINT64_C(1) << (wc->wr_id & 63));
        if (wc->status != IBV_WC_SUCCESS) {
            ud_mark_broken(ud, ibv_wc_status_str(wc->status));
            return PVRDMA_COMMON_UD_SEND_FAILED;
        }
        return PVRDMA_COMMON_UD_SENT;
    }
    if (wc->status == IBV_WC_SUCCESS) {
        const void *rx = ud_rx_buf(ud, (uint32_t) wc->wr_id);

        const struct pvrdma_common_ud_hdr *hdr;

        hdr = pvrdma_common_ud_msg_check(rx, wc->byte_len, ud->msg_size,
                                         ud->version, NULL, 0);
        if ((hdr != NULL) && (hdr->keyed == PVRDMA_COMMON_UD_KEYED_SENDER)) {
            *msg = hdr;   /* the plugin checks it with the sender's key */
        } else if ((hdr != NULL) &&
                   (hdr->keyed == PVRDMA_COMMON_UD_KEYED_RECEIVER) &&
                   pvrdma_common_auth_verify(ud->secret, hdr, ud->msg_size,
                                             offsetof(struct pvrdma_common_ud_hdr, mac),
                                             ud->qpn)) {
            *msg = hdr;
        } else if (hdr != NULL) {
            ud->forged++;   /* well formed, but its MAC is not ours */
        }
    } else {
        ud_mark_broken(ud, ibv_wc_status_str(wc->status));
        if (wc->status == IBV_WC_WR_FLUSH_ERR) {
            return PVRDMA_COMMON_UD_DROPPED;   /* no datagram: not counted */
        }
    }
    if (*msg == NULL) {
        ud->dropped++;
        return PVRDMA_COMMON_UD_DROPPED;   /* caller reposts */
    }
    return PVRDMA_COMMON_UD_RECEIVED;
}

int pvrdma_common_ud_reset(struct pvrdma_common_ud *ud)
{
    struct ibv_qp_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RESET;
    rc = pvrdma_common_qp_modify(ud->qp, &attr, IBV_QP_STATE);
    if (rc != 0) {
        return rc;
    }
    ud->gen++;
    ud->tx_busy   = 0;   /* dropped by the device; late ones are STALE */
    ud->broken    = false;
    ud->resetting = true;
    return 0;
}

int pvrdma_common_ud_restart(struct pvrdma_common_ud *ud)
{
    int rc = ud_to_rts(ud->qp, ud->port_num, ud->qkey);

    if (rc == 0) {
        rc = ud_post_all(ud);
    }
    if (rc != 0) {
        return rc;
    }
    ud->resetting = false;
    ud->resets++;
    return 0;
}

/* Whether @p grh says the datagram came from @p gid: through libibverbs'
 * decoding (GRH, or RoCE v2's IPv4 header, by the GID type), else the raw
 * GRH source GID (bytes 8..23) or the IPv4 source (bytes 32..35) of an
 * IPv4-mapped GID. */
static bool grh_from(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                     const uint8_t *grh, const union ibv_gid *gid)
{
    static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    struct ibv_ah_attr ah;

    if ((ibv_init_ah_from_wc(ud->qp->context, ud->port_num, (struct ibv_wc *) wc,
                             (struct ibv_grh *) grh, &ah) == 0) &&
        ah.is_global && !memcmp(&ah.grh.dgid, gid, sizeof(*gid))) {
        return true;
    }
    if (!memcmp(grh + 8, gid->raw, sizeof(gid->raw))) {
        return true;
    }
    return !memcmp(gid->raw, v4_prefix, sizeof(v4_prefix)) &&
           !memcmp(grh + 32, gid->raw + 12, 4);
}

bool pvrdma_common_ud_from(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                           const void *msg, uint32_t qpn,
                           const union ibv_gid *gid)
{
    static const uint8_t zero[PVRDMA_COMMON_UD_GRH_LEN];
    const uint8_t *grh = (const uint8_t *) msg - PVRDMA_COMMON_UD_GRH_LEN;

    /* the source QP is written by the sender's device, the GRH (or IPv4
     * header, RoCE v2) by its network stack: both must be the address the
     * message names.  A device that hands over no GRH at all (QEMU's
     * pvrdma model leaves the area empty) leaves the QP and the secret. */
    if ((wc->src_qp == qpn) &&
        (!(wc->wc_flags & IBV_WC_GRH) || !memcmp(grh, zero, sizeof(zero)) ||
         grh_from(ud, wc, grh, gid))) {
        return true;
    }
    ud->spoofed++;
    ud->dropped++;
    return false;
}

bool pvrdma_common_ud_accept(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                             const void *msg, const uint8_t *sender_key,
                             const union ibv_gid *gid)
{
    const struct pvrdma_common_ud_hdr *hdr = msg;
    uint64_t seq = 0;

    if ((hdr->keyed == PVRDMA_COMMON_UD_KEYED_SENDER) &&
        ((sender_key == NULL) ||
         !pvrdma_common_auth_verify(sender_key, hdr, ud->msg_size,
                                    offsetof(struct pvrdma_common_ud_hdr, mac),
                                    ud->qpn))) {
        ud->forged++;
        ud->dropped++;
        return false;
    }
    for (int i = 0; i < 8; ++i) {
        seq = (seq << 8) | hdr->seq[i];
    }
    if (!pvrdma_common_replay_fresh(&ud->replay, gid->raw, wc->src_qp, seq)) {
        ud->replayed++;
        ud->dropped++;
        return false;
    }
    return true;
}

int pvrdma_common_ud_repost(struct pvrdma_common_ud *ud, const struct ibv_wc *wc)
{
    struct ibv_recv_wr wr, *bad;
    struct ibv_sge sge[2];

    if (ud->broken || ud->resetting) {
        return 0;   /* pvrdma_common_ud_restart() posts every receive */
    }
    ud_recv_wr(ud, (uint32_t) wc->wr_id, &wr, sge);
    return ibv_post_recv(ud->qp, &wr, &bad);
}

struct ibv_ah *pvrdma_common_ud_ah_create(struct ibv_pd *pd,
                                          const struct pvrdma_common_qp_params *p,
                                          const union ibv_gid *dgid,
                                          uint16_t dlid)
{
    struct ibv_ah_attr ah;

    pvrdma_common_ah_attr_fill(&ah, p, dgid, dlid);
    return ibv_create_ah(pd, &ah);
}


void pvrdma_common_ud_counters_add(const struct pvrdma_common_ud *ud,
                                   struct pvrdma_common_counters *c)
{
    pvrdma_common_counters_add(c, "dgram_dropped", (NULL != ud) ? ud->dropped : 0);
    pvrdma_common_counters_add(c, "dgram_forged", (NULL != ud) ? ud->forged : 0);
    pvrdma_common_counters_add(c, "dgram_replayed", (NULL != ud) ? ud->replayed : 0);
    pvrdma_common_counters_add(c, "dgram_superseded",
                               (NULL != ud) ? ud->replay.superseded : 0);
    pvrdma_common_counters_add(c, "dgram_spoofed", (NULL != ud) ? ud->spoofed : 0);
    pvrdma_common_counters_add(c, "cm_qp_resets", (NULL != ud) ? ud->resets : 0);
}
