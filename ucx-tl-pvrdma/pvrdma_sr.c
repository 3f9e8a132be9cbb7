/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_sr.c
 * @brief The send/recv-only mode of the UCT "pvrdma" transport, whole: what
 *        a connection does when RDMA WRITE does not work.
 *
 * Only QEMU's PVRDMA device model needs it (it turns WRITEs into SENDs);
 * real PVRDMA and every other device use the WRITE path, which does not
 * branch on this mode.  In this mode (see "Send/recv-only connections" in docs/design.md):
 *  - the iface's ops are swapped (uct_pvrdma_iface_use_sr_ops) for the
 *    send/recv-only variants of pvrdma_am.c: AMs carry their id in a
 *    header (uct_pvrdma_am_hdr_t) in front of the payload instead of in
 *    immediate data, and with it what the immediate would carry: credits
 *    for the reverse connection (pvrdma_credit_imm.c), so that a
 *    request/reply exchange needs no credit SENDs of its own (a doorbell
 *    each); there is no PUT (uct_pvrdma_iface_use_sr_ops);
 *  - a channel returns credits by a SEND into receives its peer ep keeps
 *    posted, instead of a WRITE into the ep's slot (credit messages);
 *  - a channel finds the AM id of a message in that header
 *    (uct_pvrdma_chan_am_hdr).
 * The connection exchange (pvrdma_conn.c) says which mode a connection is
 * in; nothing else looks at it.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"


/* put_bcopy of an iface without RDMA WRITE (the other put ops are
 * ucs_empty_function_return_unsupported) */
static ssize_t uct_pvrdma_ep_put_bcopy_unsupported(
        uct_ep_h tl_ep UCS_V_UNUSED, uct_pack_callback_t pack_cb UCS_V_UNUSED,
        void *arg UCS_V_UNUSED, uint64_t remote_addr UCS_V_UNUSED,
        uct_rkey_t rkey UCS_V_UNUSED)
{
    return UCS_ERR_UNSUPPORTED;
}


void uct_pvrdma_iface_use_sr_ops(uct_pvrdma_iface_t *iface)
{
    uct_iface_ops_t *ops = &iface->super.super.ops;

    ops->ep_put_short = (uct_ep_put_short_func_t)
                        ucs_empty_function_return_unsupported;
    ops->ep_put_bcopy = uct_pvrdma_ep_put_bcopy_unsupported;
    ops->ep_put_zcopy = (uct_ep_put_zcopy_func_t)
                        ucs_empty_function_return_unsupported;
    ops->ep_am_short  = uct_pvrdma_ep_am_short_sr;
    ops->ep_am_bcopy  = uct_pvrdma_ep_am_bcopy_sr;
    ops->ep_am_zcopy  = uct_pvrdma_ep_am_zcopy_sr;
}


/* ----------------------------------------------------------------------- */
/*  Receiving: the AM id from the header                                   */
/* ----------------------------------------------------------------------- */

/*
 * AM id of a message without immediate data: from a send-only peer the
 * payload starts with uct_pvrdma_am_hdr_t (the receive was posted that much
 * before the payload offset, so the payload still lands there).  Returns
 * UCT_AM_ID_MAX when the message carries no valid id.
 */
UCS_F_NOINLINE uint32_t
uct_pvrdma_chan_am_hdr(uct_pvrdma_chan_t *chan, const struct ibv_wc *wc,
                       const void *data, uint32_t *length_p)
{
    const uct_pvrdma_am_hdr_t *hdr;

    if ((chan->rx_hdr_len == 0) || (wc->byte_len < sizeof(*hdr))) {
        return UCT_AM_ID_MAX;
    }

    hdr = UCS_PTR_BYTE_OFFSET(data, -(ptrdiff_t)sizeof(*hdr));
    if ((hdr->magic != UCT_PVRDMA_AM_HDR_MAGIC) ||
        (hdr->am_id >= UCT_AM_ID_MAX)) {
        return UCT_AM_ID_MAX;
    }
    if (ntohl(hdr->credit_imm) >= UCT_AM_ID_MAX) {
        /* credits for the reverse connection ride along */
        uct_pvrdma_chan_credit_imm_rx(chan, ntohl(hdr->credit_imm));
    }

    *length_p = wc->byte_len - sizeof(*hdr);
    return hdr->am_id;
}


/* ----------------------------------------------------------------------- */
/*  Credit messages: the channel side                                      */
/* ----------------------------------------------------------------------- */

/*
 * Send/recv-only connection: return owed credits by a SEND of the cumulative
 * total into one of the UCT_PVRDMA_CREDIT_RX_LEN receives (K below) the
 * peer ep keeps posted.  Such a SEND must never find no receive posted: with
 * rnr_retry 7 it would retry until the ep reposts, with less it would break
 * the connection.  Two rules make that impossible:
 *   (1) at most one credit message is in flight (the next one is posted
 *       after the previous completed; this also keeps the source slot
 *       unchanged while the device reads it), and every message returns at
 *       least `threshold' >= ceil(initial / K) credits (need_return);
 *   (2) the ep reads a credit message only when it processes its completion,
 *       and reposts that receive right then (uct_pvrdma_ep_handle_credit_rx).
 * Let c be the messages the ep has processed and R_i the total returned by
 * message i.  The ep can have sent at most initial + R_c AMs, so we cannot
 * have received, hence returned, more: R_n <= initial + R_c for any message
 * n we post.  As each message returns >= threshold, n - c <= initial /
 * threshold <= K: counting the arriving one, at most K messages are
 * unprocessed at the ep, so one of its K receives is free for it.  Nothing
 * depends on the ep's progress except the ep's own credits.
 */
void uct_pvrdma_chan_send_credits(uct_pvrdma_chan_t *chan,
                                         struct ibv_send_wr *wr,
                                         uint32_t count)
{
    volatile uint64_t *total = &chan->src_chunk->slots[chan->src_index];

    wr->opcode = IBV_WR_SEND;
    if (uct_pvrdma_txq_post(chan->iface, &chan->txq, wr, 1) == UCS_OK) {
        chan->credit_inflight        = 1;
        chan->iface->op_count.credits_by_msg += count;
    } else {
        /* still owed: returned with the next attempt */
        *total -= count;
        pvrdma_common_credits_unpiggyback(&chan->credits, count);
    }
}


/* ----------------------------------------------------------------------- */
/*  Credit messages: the ep side                                           */
/* ----------------------------------------------------------------------- */

static void uct_pvrdma_ep_credit_rx_wr(uct_pvrdma_ep_t *ep, unsigned index,
                                       struct ibv_recv_wr *wr,
                                       struct ibv_sge *sge)
{
    uct_pvrdma_slot_chunk_t *chunk = ep->credit_rx[index].chunk;

    sge->addr   = (uintptr_t)&chunk->slots[ep->credit_rx[index].index];
    sge->length = sizeof(chunk->slots[0]);
    sge->lkey   = chunk->mr->lkey;
    wr->wr_id   = ((uint64_t)index << 1) | UCT_PVRDMA_CREDIT_RX_WRID;
    wr->sg_list = sge;
    wr->num_sge = 1;
    wr->next    = NULL;
}


static int uct_pvrdma_ep_post_credit_rx(uct_pvrdma_ep_t *ep,
                                        struct ibv_recv_wr *wrs)
{
    struct ibv_recv_wr *bad_wr;
    int ret;

    ret = ibv_post_recv(ep->txq.qp, wrs, &bad_wr);
    if (ret != 0) {
        ucs_error("pvrdma: ibv_post_recv(qp 0x%x, credit) failed: %s",
                  ep->txq.qp->qp_num, strerror(ret));
    }
    return ret;
}


/*
 * The CONN_REP made this a send/recv-only connection: the peer's channel
 * returns credits by SENDs of its cumulative count.  Post
 * UCT_PVRDMA_CREDIT_RX_LEN receives, each into its own registered 8-byte
 * slot (a credit message is read only when its completion is processed, which
 * is what bounds the messages in flight, see uct_pvrdma_chan_send_credits), and signal
 * every send so that flush never needs an RDMA WRITE.
 */
ucs_status_t uct_pvrdma_ep_start_send_credits(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    struct ibv_recv_wr wrs[UCT_PVRDMA_CREDIT_RX_LEN];
    struct ibv_sge sges[UCT_PVRDMA_CREDIT_RX_LEN];
    ucs_status_t status;
    unsigned i, held;

    /* TX_QUEUE_LEN entries always stay for sends (pvrdma_chan.c) */
    if (iface->cq_acct.budget < UCT_PVRDMA_CREDIT_RX_LEN +
                                iface->config.tx_queue_len) {
        ucs_error("pvrdma: %s:%d: completion queue full, cannot connect more "
                  "endpoints: CQ %d entries, %u reserved for receives, %u "
                  "sends in flight, %u connections from peers, %zu "
                  "endpoints (raise UCX_PVRDMA_CQ_LEN or lower "
                  "UCX_PVRDMA_RX_QUEUE_LEN)", iface->md->dev_name,
                  iface->port_num, iface->cq->cqe, iface->cq_acct.rx_reserved,
                  iface->cq_acct.tx_outstanding, iface->conn.num_chans,
                  ucs_list_length(&iface->eps));
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    /* The receives may only take entries that sends in flight leave free,
     * and one must stay free (see uct_pvrdma_txq_post).  If those are busy
     * now, the reply is not taken: the ep resends its request within
     * CONN_RETRY, the peer its saved reply, and meanwhile new sends leave
     * the entries free (cq_acct.held).  What is held may be ours, from
     * the last reply. */
    held                = iface->cq_acct.held;
    iface->cq_acct.held = 0;
    if (iface->cq_acct.budget < iface->cq_acct.tx_outstanding +
                                UCT_PVRDMA_CREDIT_RX_LEN + 1) {
        (void)uct_pvrdma_ep_retire_all_unsignaled(iface);
        iface->cq_acct.held = ucs_max(held, UCT_PVRDMA_CREDIT_RX_LEN);
        return UCS_ERR_NO_RESOURCE;
    }

    for (i = 0; i < UCT_PVRDMA_CREDIT_RX_LEN; ++i) {
        status = uct_pvrdma_slot_get(iface, &ep->credit_rx[i].chunk,
                                     &ep->credit_rx[i].index);
        if (status != UCS_OK) {
            goto err_slots;
        }
        uct_pvrdma_ep_credit_rx_wr(ep, i, &wrs[i], &sges[i]);
        if (i > 0) {
            wrs[i - 1].next = &wrs[i];
        }
    }

    if (uct_pvrdma_ep_post_credit_rx(ep, wrs) != 0) {
        status = UCS_ERR_IO_ERROR;
        goto err_slots;
    }

    ep->credit_rx_len    = UCT_PVRDMA_CREDIT_RX_LEN;
    ep->txq.moderation   = 1;
    iface->cq_acct.budget      -= UCT_PVRDMA_CREDIT_RX_LEN;
    iface->cq_acct.rx_reserved += UCT_PVRDMA_CREDIT_RX_LEN;
    /* (whoever else waited holds again when its request comes again) */
    return UCS_OK;

err_slots:
    while (i-- > 0) {
        uct_pvrdma_slot_put(ep->credit_rx[i].chunk, ep->credit_rx[i].index);
    }
    return status;
}


/* A credit message arrived: publish its count in the credit slot (where
 * uct_pvrdma_ep_refresh_credits reads it, as with WRITE-returned credits)
 * and repost the receive. */
void uct_pvrdma_ep_handle_credit_rx(uct_pvrdma_ep_t *ep, struct ibv_wc *wc)
{
    unsigned index = (wc->wr_id & ~UCT_PVRDMA_CREDIT_RX_WRID) >> 1;
    volatile uint64_t *total;
    struct ibv_recv_wr wr;
    struct ibv_sge sge;
    uint64_t value;

    if (ucs_unlikely((wc->status != IBV_WC_SUCCESS) ||
                     (index >= ep->credit_rx_len))) {
        /* a QP error also fails the ep's sends, which report it */
        ucs_log((wc->status == IBV_WC_WR_FLUSH_ERR) ? UCS_LOG_LEVEL_DEBUG :
                UCS_LOG_LEVEL_DIAG, "pvrdma: ep %p: credit receive %u: %s", ep,
                index, ibv_wc_status_str(wc->status));
        return;
    }

    value = ep->credit_rx[index].chunk->slots[ep->credit_rx[index].index];
    total = &ep->slot_chunk->slots[ep->slot_index];
    if (wc->byte_len != sizeof(value)) {
        ucs_diag("pvrdma: ep %p: ignoring a %u-byte credit message", ep,
                 wc->byte_len);
    } else if ((int64_t)(value - *total) > 0) {
        *total = value; /* cumulative, and RC keeps the messages in order */
    }

    uct_pvrdma_ep_credit_rx_wr(ep, index, &wr, &sge);
    (void)uct_pvrdma_ep_post_credit_rx(ep, &wr);
}
