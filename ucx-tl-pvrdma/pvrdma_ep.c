/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_ep.c
 * @brief Endpoint of the UCT "pvrdma" transport: creation (which starts the
 *        connection exchange), active messages, RMA, flush, fence, pending
 *        queue and failure handling.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

#include <uct/base/uct_iov.inl>


/* ----------------------------------------------------------------------- */
/*  Completion and failure                                                 */
/* ----------------------------------------------------------------------- */

static void uct_pvrdma_ep_release_descs(uct_pvrdma_ep_t *ep, uint64_t sn,
                                        ucs_status_t status)
{
    uct_pvrdma_tx_desc_t *desc;

    while (!ucs_queue_is_empty(&ep->outstanding)) {
        desc = ucs_queue_head_elem_non_empty(&ep->outstanding,
                                             uct_pvrdma_tx_desc_t, queue);
        if (desc->sn > sn) {
            break;
        }

        ucs_queue_pull_non_empty(&ep->outstanding);
        if ((desc->unpack_cb != NULL) && (status == UCS_OK)) {
            desc->unpack_cb(desc->unpack_arg, desc + 1, desc->length);
        }
        if (desc->comp != NULL) {
            uct_invoke_completion(desc->comp, status);
        }
        ucs_mpool_put_inline(desc);
    }
}


void uct_pvrdma_ep_schedule_pending(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if (!ep->in_pending_list && !ucs_queue_is_empty(&ep->pending)) {
        ucs_list_add_tail(&iface->pending_eps, &ep->pending_link);
        ep->in_pending_list = 1;
    }
}


/* WRs up to @p sn completed (the iface has retired them from the txq) */
void uct_pvrdma_ep_send_completion(uct_pvrdma_ep_t *ep, uint64_t sn)
{
    uct_pvrdma_ep_schedule_pending(ep);
    uct_pvrdma_ep_release_descs(ep, sn, UCS_OK);
}


/* ----------------------------------------------------------------------- */
/*  Credit messages of a send/recv-only connection                         */
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
 * is what bounds the messages in flight, see pvrdma_chan.c), and signal
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
    if (iface->cq_budget < UCT_PVRDMA_CREDIT_RX_LEN +
                           iface->config.tx_queue_len) {
        ucs_error("pvrdma: %s:%d: completion queue full, cannot connect more "
                  "endpoints: CQ %d entries, %u reserved for receives, %u "
                  "sends in flight, %u connections from peers, %zu "
                  "endpoints (raise UCX_PVRDMA_CQ_LEN or lower "
                  "UCX_PVRDMA_RX_QUEUE_LEN)", iface->md->dev_name,
                  iface->port_num, iface->cq->cqe, iface->rx_reserved,
                  iface->tx_outstanding, iface->num_chans,
                  ucs_list_length(&iface->eps));
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    /* The receives may only take entries that sends in flight leave free,
     * and one must stay free (see uct_pvrdma_txq_post).  If those are busy
     * now, the reply is not taken: the ep resends its request within
     * CONN_RETRY, the peer its saved reply, and meanwhile new sends leave
     * the entries free (cq_held). */
    held           = iface->cq_held; /* maybe ours, from the last reply */
    iface->cq_held = 0;
    if (iface->cq_budget < iface->tx_outstanding +
                           UCT_PVRDMA_CREDIT_RX_LEN + 1) {
        (void)uct_pvrdma_iface_retire_unsignaled(iface);
        iface->cq_held = ucs_max(held, UCT_PVRDMA_CREDIT_RX_LEN);
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
    iface->cq_budget    -= UCT_PVRDMA_CREDIT_RX_LEN;
    iface->rx_reserved  += UCT_PVRDMA_CREDIT_RX_LEN;
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


void uct_pvrdma_ep_set_failed(uct_pvrdma_ep_t *ep, ucs_status_t status)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    ucs_status_t err_status;
    const char *why;
    char gid[64];

    if (ep->state == UCT_PVRDMA_EP_FAILED) {
        return;
    }

    if (ep->state == UCT_PVRDMA_EP_CONNECTING) {
        --iface->num_connecting;
    }

    ep->state  = UCT_PVRDMA_EP_FAILED;
    ep->status = status;
    uct_pvrdma_ep_unpair_chan(ep);
    uct_pvrdma_ep_release_descs(ep, UINT64_MAX, status);

    /* The user's handler may destroy the ep: nothing may touch it after,
     * so what the message needs is copied first.  Unhandled (no error
     * callback, e.g. Open MPI's pml ucx) the failure is fatal: the message
     * names both ends, the device and the completion status. */
    pvrdma_common_gid_str(&ep->peer_gid, gid, sizeof(gid));
    why        = ep->fail_why;
    err_status = uct_iface_handle_ep_err(&iface->super.super, &ep->super.super,
                                         status);
    if (err_status != UCS_OK) {
        ucs_log(uct_base_iface_failure_log_level(&iface->super, err_status,
                                                 status),
                "pvrdma: %s %s:%d: connection to the peer at %s failed: %s%s%s",
                ucs_get_host_name(), iface->md->dev_name, iface->port_num,
                gid, ucs_status_string(status),
                (why != NULL) ? ", completion status: " : "",
                (why != NULL) ? why : "");
    }
}


/* ----------------------------------------------------------------------- */
/*  Pending queue                                                          */
/* ----------------------------------------------------------------------- */

int uct_pvrdma_ep_has_resources(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if (!uct_pvrdma_ep_is_connected(ep) ||
        !uct_pvrdma_txq_has_room(iface, &ep->txq)) {
        return 0;
    }

    if (ep->credits.send <= ep->credits.reserved) {
        uct_pvrdma_ep_refresh_credits(ep);
    }
    return ep->credits.send > ep->credits.reserved;
}


ucs_status_t uct_pvrdma_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                       unsigned flags UCS_V_UNUSED)
{
    uct_pvrdma_ep_t *ep = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);

    if (ucs_queue_is_empty(&ep->pending) && uct_pvrdma_ep_has_resources(ep)) {
        return UCS_ERR_BUSY;
    }

    uct_pending_req_queue_push(&ep->pending, req);
    UCT_TL_EP_STAT_PEND(&ep->super);
    /* Connected eps are woken by completions/credits; others by connect */
    uct_pvrdma_ep_schedule_pending(ep);
    return UCS_OK;
}


void uct_pvrdma_ep_pending_purge(uct_ep_h tl_ep,
                                 uct_pending_purge_callback_t cb, void *arg)
{
    uct_pvrdma_ep_t *ep = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pending_req_priv_queue_t *priv;

    uct_pending_queue_purge(priv, &ep->pending, 1, cb, arg);
}


void uct_pvrdma_ep_dispatch_pending(uct_pvrdma_ep_t *ep)
{
    uct_pending_req_priv_queue_t *priv;

    uct_pending_queue_dispatch(priv, &ep->pending,
                               uct_pvrdma_ep_has_resources(ep));
}


void uct_pvrdma_iface_progress_pending(uct_pvrdma_iface_t *iface)
{
    uct_pvrdma_ep_t *ep, *tmp;

    ucs_list_for_each_safe(ep, tmp, &iface->pending_eps, pending_link) {
        if (!uct_pvrdma_ep_has_resources(ep)) {
            continue;
        }

        /* unlink first: a request may re-add the ep, or destroy it */
        ucs_list_del(&ep->pending_link);
        ep->in_pending_list = 0;
        uct_pvrdma_ep_dispatch_pending(ep);
        uct_pvrdma_ep_schedule_pending(ep);
    }
}


/* ----------------------------------------------------------------------- */
/*  Active messages                                                        */
/* ----------------------------------------------------------------------- */

/* An AM may go: the ep is connected, has a WQE and a receive credit. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_check(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep)
{
    ucs_status_t status = uct_pvrdma_ep_check_tx(iface, ep);

    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    return ucs_likely(uct_pvrdma_ep_take_credit(ep)) ? UCS_OK :
                                                       UCS_ERR_NO_RESOURCE;
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_prepare(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                         uct_pvrdma_tx_desc_t **desc_p)
{
    uct_pvrdma_tx_desc_t *desc;
    ucs_status_t status;

    status = uct_pvrdma_ep_am_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    UCT_TL_IFACE_GET_TX_DESC(&iface->super, &iface->tx_mp, desc, {
        pvrdma_common_credits_untake(&ep->credits);
        return UCS_ERR_NO_RESOURCE;
    });

    uct_pvrdma_tx_desc_reset(desc);
    *desc_p = desc;
    return UCS_OK;
}


/*
 * Post an AM with the given SGEs: SEND_WITH_IMM (immediate = AM id, and
 * credits owed to the peer when there are any: pvrdma_credit_imm.c), or on
 * an iface without RDMA WRITE (@p sr, a constant at every call site) a
 * plain SEND whose payload starts with uct_pvrdma_am_hdr_t.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_post(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                      uint8_t id, struct ibv_sge *sge, int num_sge,
                      uct_pvrdma_tx_desc_t *desc, int signal, int sr)
{
    uint32_t credits = 0;
    struct ibv_send_wr wr;
    ucs_status_t status;

    wr.sg_list    = sge;
    wr.num_sge    = num_sge;
    if (sr) {
        wr.opcode   = IBV_WR_SEND;
    } else {
        wr.opcode   = IBV_WR_SEND_WITH_IMM;
        wr.imm_data = uct_pvrdma_ep_am_imm(ep, id, &credits);
    }
    wr.send_flags = 0;

    status = uct_pvrdma_ep_post(iface, ep, &wr, signal);
    if (ucs_unlikely(status != UCS_OK)) {
        uct_pvrdma_ep_am_imm_undo(ep, credits);
        pvrdma_common_credits_untake(&ep->credits);
        ucs_mpool_put_inline(desc);
        return status;
    }

    uct_pvrdma_ep_track_desc(ep, desc);
    return UCS_OK;
}


/* Where the AM's own bytes start in a send buffer; writes the send/recv
 * header in front when @p sr. */
static UCS_F_ALWAYS_INLINE void *
uct_pvrdma_ep_am_buf(uct_pvrdma_tx_desc_t *desc, uint8_t id, int sr)
{
    uct_pvrdma_am_hdr_t *hdr;

    if (!sr) {
        return desc + 1;
    }

    hdr        = (uct_pvrdma_am_hdr_t*)(desc + 1);
    hdr->am_id = id;
    hdr->magic = UCT_PVRDMA_AM_HDR_MAGIC;
    memset(hdr->reserved, 0, sizeof(hdr->reserved));
    return hdr + 1;
}


#define UCT_PVRDMA_AM_HDR_SIZE(_sr) ((_sr) ? sizeof(uct_pvrdma_am_hdr_t) : 0)


/*
 * am_short where the device takes inline data (not PVRDMA, whose QPs have
 * max_inline_data 0 and never get here): the provider copies header and
 * payload into the WQE at post time, so no send buffer, no lkey lookup in
 * the device and nothing to release on completion.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_short_inline(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                              uint8_t id, uint64_t hdr, const void *payload,
                              unsigned length)
{
    struct ibv_send_wr wr;
    struct ibv_sge sge[2];
    ucs_status_t status;
    uint32_t credits;

    status = uct_pvrdma_ep_am_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    sge[0].addr   = (uintptr_t)&hdr;
    sge[0].length = sizeof(hdr);
    sge[0].lkey   = 0;
    sge[1].addr   = (uintptr_t)payload;
    sge[1].length = length;
    sge[1].lkey   = 0;
    wr.sg_list    = sge;
    wr.num_sge    = (length > 0) ? 2 : 1;
    wr.opcode     = IBV_WR_SEND_WITH_IMM;
    wr.imm_data   = uct_pvrdma_ep_am_imm(ep, id, &credits);
    wr.send_flags = IBV_SEND_INLINE;

    status = uct_pvrdma_ep_post(iface, ep, &wr, 0);
    if (ucs_unlikely(status != UCS_OK)) {
        uct_pvrdma_ep_am_imm_undo(ep, credits);
        pvrdma_common_credits_untake(&ep->credits);
        return status;
    }
    UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, sizeof(hdr) + length);
    return UCS_OK;
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_short_common(uct_ep_h tl_ep, uint8_t id, uint64_t hdr,
                              const void *payload, unsigned length, int sr)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;

    UCT_CHECK_AM_ID(id);
    UCT_CHECK_LENGTH(sizeof(hdr) + length, 0, iface->config.seg_size,
                     "am_short");

    if (!sr && (sizeof(hdr) + length <= iface->config.max_inline)) {
        return uct_pvrdma_ep_am_short_inline(iface, ep, id, hdr, payload,
                                             length);
    }

    status = uct_pvrdma_ep_am_prepare(iface, ep, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    /* no inline data on PVRDMA: copy into a registered buffer */
    uct_am_short_fill_data(uct_pvrdma_ep_am_buf(desc, id, sr), hdr, payload,
                           length);
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = UCT_PVRDMA_AM_HDR_SIZE(sr) + sizeof(hdr) + length;
    sge.lkey   = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, sizeof(hdr) + length);
    return uct_pvrdma_ep_am_post(iface, ep, id, &sge, 1, desc, 0, sr);
}


static UCS_F_ALWAYS_INLINE ssize_t
uct_pvrdma_ep_am_bcopy_common(uct_ep_h tl_ep, uint8_t id,
                              uct_pack_callback_t pack_cb, void *arg, int sr)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;
    size_t length;

    UCT_CHECK_AM_ID(id);

    status = uct_pvrdma_ep_am_prepare(iface, ep, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    length = pack_cb(uct_pvrdma_ep_am_buf(desc, id, sr), arg);
    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "am_bcopy");
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = UCT_PVRDMA_AM_HDR_SIZE(sr) + length;
    sge.lkey   = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, AM, BCOPY, length);
    status = uct_pvrdma_ep_am_post(iface, ep, id, &sge, 1, desc, 0, sr);
    return (status == UCS_OK) ? (ssize_t)length : status;
}


/* Fill SGEs from an iov; zero-length entries are skipped. */
static UCS_F_ALWAYS_INLINE int
uct_pvrdma_iov_to_sge(struct ibv_sge *sge, const uct_iov_t *iov, size_t iovcnt,
                      size_t *total_p)
{
    size_t i, total = 0;
    int num_sge     = 0;

    for (i = 0; i < iovcnt; ++i) {
        if (iov[i].length == 0) {
            continue;
        }
        sge[num_sge].addr   = (uintptr_t)iov[i].buffer;
        sge[num_sge].length = iov[i].length;
        sge[num_sge].lkey   = (iov[i].memh == UCT_MEM_HANDLE_NULL) ? 0 :
                              uct_pvrdma_memh_lkey(iov[i].memh);
        total              += iov[i].length;
        ++num_sge;
    }

    *total_p = total;
    return num_sge;
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_zcopy_common(uct_ep_h tl_ep, uint8_t id, const void *header,
                              unsigned header_length, const uct_iov_t *iov,
                              size_t iovcnt, uct_completion_t *comp, int sr)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    struct ibv_sge sge[iface->config.tx_max_sge];
    uct_pvrdma_tx_desc_t *desc;
    ucs_status_t status;
    size_t length;
    int num_sge;

    UCT_CHECK_AM_ID(id);
    UCT_CHECK_IOV_SIZE(iovcnt, (size_t)iface->config.tx_max_sge - 1,
                       "am_zcopy");
    UCT_CHECK_LENGTH(header_length, 0, ucs_min(iface->config.seg_size, 128),
                     "am_zcopy header");
    UCT_CHECK_LENGTH(header_length + uct_iov_total_length(iov, iovcnt), 0,
                     iface->config.seg_size, "am_zcopy");

    status = uct_pvrdma_ep_am_prepare(iface, ep, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    /* the send/recv header travels in the same SGE as the user header */
    memcpy(uct_pvrdma_ep_am_buf(desc, id, sr), header, header_length);
    sge[0].addr   = (uintptr_t)(desc + 1);
    sge[0].length = UCT_PVRDMA_AM_HDR_SIZE(sr) + header_length;
    sge[0].lkey   = desc->lkey;
    num_sge       = 1 + uct_pvrdma_iov_to_sge(&sge[1], iov, iovcnt, &length);
    desc->comp    = comp;

    UCT_TL_EP_STAT_OP(&ep->super, AM, ZCOPY, header_length + length);
    status = uct_pvrdma_ep_am_post(iface, ep, id, sge, num_sge, desc,
                                   comp != NULL, sr);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}


/* The AM ops of an iface with RDMA WRITE (no suffix, immediate data) and of
 * a send-only one (_sr, uct_pvrdma_am_hdr_t); uct_pvrdma_iface_t's ops table
 * holds one set (uct_pvrdma_iface_init_rdma_write). */
#define UCT_PVRDMA_EP_DEFINE_AM_OPS(_suffix, _sr) \
    ucs_status_t uct_pvrdma_ep_am_short##_suffix(uct_ep_h tl_ep, uint8_t id, \
                                                 uint64_t hdr, \
                                                 const void *payload, \
                                                 unsigned length) \
    { \
        return uct_pvrdma_ep_am_short_common(tl_ep, id, hdr, payload, \
                                             length, _sr); \
    } \
    \
    ssize_t uct_pvrdma_ep_am_bcopy##_suffix(uct_ep_h tl_ep, uint8_t id, \
                                            uct_pack_callback_t pack_cb, \
                                            void *arg, \
                                            unsigned flags UCS_V_UNUSED) \
    { \
        return uct_pvrdma_ep_am_bcopy_common(tl_ep, id, pack_cb, arg, _sr); \
    } \
    \
    ucs_status_t uct_pvrdma_ep_am_zcopy##_suffix( \
            uct_ep_h tl_ep, uint8_t id, const void *header, \
            unsigned header_length, const uct_iov_t *iov, size_t iovcnt, \
            unsigned flags UCS_V_UNUSED, uct_completion_t *comp) \
    { \
        return uct_pvrdma_ep_am_zcopy_common(tl_ep, id, header, \
                                             header_length, iov, iovcnt, \
                                             comp, _sr); \
    }

UCT_PVRDMA_EP_DEFINE_AM_OPS(, 0)
UCT_PVRDMA_EP_DEFINE_AM_OPS(_sr, 1)


/* ----------------------------------------------------------------------- */
/*  RMA                                                                    */
/* ----------------------------------------------------------------------- */

/*
 * Count an RDMA WR just posted for the user (iface->op_count, printed at
 * close): the bed tests assert from these counts whether GETs went by RDMA
 * READ and PUTs by RDMA WRITE.  Every user READ and WRITE is posted by
 * uct_pvrdma_ep_rdma_post, and only those: the credit-return WRITEs
 * (pvrdma_chan.c, counted in credits_by_msg) and the zero-length flush
 * WRITE (uct_pvrdma_ep_flush) carry no user data and are not counted.
 * @p opcode is a constant at every call site, so this is one increment and
 * one comparison.
 */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_iface_count_rdma(uct_pvrdma_iface_t *iface,
                            enum ibv_wr_opcode opcode, size_t length)
{
    if (opcode == IBV_WR_RDMA_READ) {
        ++iface->op_count.rdma_reads;
        iface->op_count.rdma_read_max = ucs_max(iface->op_count.rdma_read_max,
                                                (uint64_t)length);
    } else {
        ++iface->op_count.rdma_writes;
        iface->op_count.rdma_write_max =
                ucs_max(iface->op_count.rdma_write_max, (uint64_t)length);
    }
}


/* Post one user RDMA READ or WRITE of @p length bytes (the sum of @p sge) */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_rdma_post(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                        enum ibv_wr_opcode opcode, struct ibv_sge *sge,
                        int num_sge, size_t length, uint64_t remote_addr,
                        uct_rkey_t rkey, uct_pvrdma_tx_desc_t *desc,
                        int signal)
{
    struct ibv_send_wr wr;
    ucs_status_t status;

    wr.sg_list             = sge;
    wr.num_sge             = num_sge;
    wr.opcode              = opcode;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = (uint32_t)rkey;

    status = uct_pvrdma_ep_post(iface, ep, &wr, signal);
    if (ucs_unlikely(status != UCS_OK)) {
        if (desc != NULL) {
            ucs_mpool_put_inline(desc);
        }
        return status;
    }

    uct_pvrdma_iface_count_rdma(iface, opcode, length);
    if (desc != NULL) {
        uct_pvrdma_ep_track_desc(ep, desc);
    }
    return UCS_OK;
}


/* @p put: the operation is an RDMA WRITE (needs a WRITE connection) */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_get_desc(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                       int put, uct_pvrdma_tx_desc_t **desc_p)
{
    uct_pvrdma_tx_desc_t *desc;
    ucs_status_t status;

    status = uct_pvrdma_ep_check_tx_op(iface, ep, put);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    UCT_TL_IFACE_GET_TX_DESC(&iface->super, &iface->tx_mp, desc,
                             return UCS_ERR_NO_RESOURCE);
    uct_pvrdma_tx_desc_reset(desc);
    *desc_p = desc;
    return UCS_OK;
}


ucs_status_t uct_pvrdma_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                     unsigned length, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;

    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "put_short");

    status = uct_pvrdma_ep_get_desc(iface, ep, 1, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    memcpy(desc + 1, buffer, length);
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = length;
    sge.lkey   = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, PUT, SHORT, length);
    return uct_pvrdma_ep_rdma_post(iface, ep, IBV_WR_RDMA_WRITE, &sge, 1,
                                   length, remote_addr, rkey, desc, 0);
}


ssize_t uct_pvrdma_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                void *arg, uint64_t remote_addr,
                                uct_rkey_t rkey)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;
    size_t length;

    status = uct_pvrdma_ep_get_desc(iface, ep, 1, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    length = pack_cb(desc + 1, arg);
    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "put_bcopy");
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = length;
    sge.lkey   = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, PUT, BCOPY, length);
    status = uct_pvrdma_ep_rdma_post(iface, ep, IBV_WR_RDMA_WRITE, &sge, 1,
                                     length, remote_addr, rkey, desc, 0);
    return (status == UCS_OK) ? (ssize_t)length : status;
}


/* put_bcopy of an iface without RDMA WRITE (the other put ops are
 * ucs_empty_function_return_unsupported) */
ssize_t uct_pvrdma_ep_put_bcopy_unsupported(
        uct_ep_h tl_ep UCS_V_UNUSED, uct_pack_callback_t pack_cb UCS_V_UNUSED,
        void *arg UCS_V_UNUSED, uint64_t remote_addr UCS_V_UNUSED,
        uct_rkey_t rkey UCS_V_UNUSED)
{
    return UCS_ERR_UNSUPPORTED;
}


/* Zero-copy RDMA: a descriptor is needed only to carry the completion. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_rdma_zcopy(uct_ep_h tl_ep, enum ibv_wr_opcode opcode,
                         const uct_iov_t *iov, size_t iovcnt,
                         uint64_t remote_addr, uct_rkey_t rkey,
                         uct_completion_t *comp, size_t max_length,
                         const char *name)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    struct ibv_sge sge[iface->config.tx_max_sge];
    uct_pvrdma_tx_desc_t *desc = NULL;
    ucs_status_t status;
    size_t length;
    int num_sge;

    UCT_CHECK_IOV_SIZE(iovcnt, (size_t)iface->config.tx_max_sge, name);
    UCT_CHECK_LENGTH(uct_iov_total_length(iov, iovcnt), 0, max_length, name);

    if (comp != NULL) {
        status = uct_pvrdma_ep_get_desc(iface, ep,
                                        opcode == IBV_WR_RDMA_WRITE, &desc);
        if (ucs_unlikely(status != UCS_OK)) {
            return status;
        }
        desc->comp = comp;
    } else {
        status = uct_pvrdma_ep_check_tx_op(iface, ep,
                                           opcode == IBV_WR_RDMA_WRITE);
        if (ucs_unlikely(status != UCS_OK)) {
            return status;
        }
    }

    num_sge = uct_pvrdma_iov_to_sge(sge, iov, iovcnt, &length);
    status  = uct_pvrdma_ep_rdma_post(iface, ep, opcode, sge, num_sge, length,
                                      remote_addr, rkey, desc, comp != NULL);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}


ucs_status_t uct_pvrdma_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    ucs_status_t status;

    status = uct_pvrdma_ep_rdma_zcopy(tl_ep, IBV_WR_RDMA_WRITE, iov, iovcnt,
                                      remote_addr, rkey, comp,
                                      iface->config.max_put_zcopy,
                                      "put_zcopy");
    UCT_TL_EP_STAT_OP_IF_SUCCESS(status,
                                 &ucs_derived_of(tl_ep, uct_pvrdma_ep_t)->super,
                                 PUT, ZCOPY, uct_iov_total_length(iov, iovcnt));
    return status;
}


ucs_status_t uct_pvrdma_ep_get_bcopy(uct_ep_h tl_ep,
                                     uct_unpack_callback_t unpack_cb,
                                     void *arg, size_t length,
                                     uint64_t remote_addr, uct_rkey_t rkey,
                                     uct_completion_t *comp)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;

    if (!iface->profile.rdma_read_ok) {
        return UCS_ERR_UNSUPPORTED;
    }

    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "get_bcopy");

    status = uct_pvrdma_ep_get_desc(iface, ep, 0, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    desc->unpack_cb  = unpack_cb;
    desc->unpack_arg = arg;
    desc->length     = length;
    desc->comp       = comp;
    sge.addr         = (uintptr_t)(desc + 1);
    sge.length       = length;
    sge.lkey         = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, GET, BCOPY, length);
    status = uct_pvrdma_ep_rdma_post(iface, ep, IBV_WR_RDMA_READ, &sge, 1,
                                     length, remote_addr, rkey, desc, 1);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}


ucs_status_t uct_pvrdma_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    ucs_status_t status;

    if (!iface->profile.rdma_read_ok) {
        return UCS_ERR_UNSUPPORTED;
    }

    status = uct_pvrdma_ep_rdma_zcopy(tl_ep, IBV_WR_RDMA_READ, iov, iovcnt,
                                      remote_addr, rkey, comp,
                                      iface->config.max_get_zcopy,
                                      "get_zcopy");
    UCT_TL_EP_STAT_OP_IF_SUCCESS(status,
                                 &ucs_derived_of(tl_ep, uct_pvrdma_ep_t)->super,
                                 GET, ZCOPY, uct_iov_total_length(iov, iovcnt));
    return status;
}


/* ----------------------------------------------------------------------- */
/*  Flush and fence                                                        */
/* ----------------------------------------------------------------------- */

/* A signalled zero-length RDMA WRITE to the peer's scratch word: its
 * completion retires every earlier WR of the ep's QP (ep flush and
 * uct_pvrdma_iface_retire_unsignaled).  No user data: not counted in
 * iface->op_count.rdma_writes. */
static ucs_status_t uct_pvrdma_ep_post_flush_write(uct_pvrdma_iface_t *iface,
                                                   uct_pvrdma_ep_t *ep)
{
    struct ibv_send_wr wr;

    memset(&wr, 0, sizeof(wr));
    wr.sg_list             = NULL;
    wr.num_sge             = 0;
    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = ep->flush_addr;
    wr.wr.rdma.rkey        = ep->flush_rkey;
    return uct_pvrdma_txq_post(iface, &ep->txq, &wr, 1);
}


/* pvrdma_stall.c: a signalled WR of this ep has neither completed nor failed
 * for far longer than RC's retransmission takes (TIMEOUT x RETRY_COUNT).
 * Seen on SoftRoCE under load: the peer got the data but no ACK came back
 * and nothing was resent, QP in RTS, for minutes.  A new signalled
 * zero-length WRITE makes the device send a packet; the peer acknowledges
 * it (ACKs are cumulative, so this retires every earlier WR) or, if it
 * missed earlier packets, NAKs it and the device resends them.  Only on
 * connections with RDMA WRITE; returns 1 when posted. */
int uct_pvrdma_ep_kick(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if ((ep->state != UCT_PVRDMA_EP_CONNECTED) || (ep->txq.signaled == 0) ||
        !uct_pvrdma_txq_has_room(iface, &ep->txq)) {
        return 0;
    }
    return uct_pvrdma_ep_post_flush_write(iface, ep) == UCS_OK;
}


/* pvrdma_stall.c's keepalive: a connected ep with no signalled WR in flight
 * gets a signalled zero-length WRITE to the peer's scratch word (it also
 * retires the unsignalled WRs before it, which alone never complete
 * visibly).  The peer's device acknowledges it without its process (which
 * may be computing); a dead peer fails it with retry-exceeded, and the ep
 * fails through UCT error handling.  Only on connections with RDMA WRITE (a send/recv-only
 * one would need a receive and a credit of the peer).  Returns 1 when
 * posted. */
int uct_pvrdma_ep_probe(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if ((ep->state != UCT_PVRDMA_EP_CONNECTED) || !iface->rdma_write_ok ||
        (ep->credit_rx_len > 0) || (ep->txq.signaled > 0) ||
        !uct_pvrdma_txq_has_room(iface, &ep->txq)) {
        return 0;
    }
    return uct_pvrdma_ep_post_flush_write(iface, ep) == UCS_OK;
}


ucs_status_t uct_pvrdma_ep_flush(uct_ep_h tl_ep, unsigned flags UCS_V_UNUSED,
                                 uct_completion_t *comp)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    ucs_status_t status;

    if (ep->state == UCT_PVRDMA_EP_FAILED) {
        return ep->status;
    }

    if (ep->txq.posted_sn == ep->txq.acked_sn) {
        UCT_TL_EP_STAT_FLUSH(&ep->super);
        return UCS_OK;
    }

    if (!uct_pvrdma_txq_has_room(iface, &ep->txq)) {
        return UCS_ERR_NO_RESOURCE;
    }

    /* The last WR was not signalled: its completion would never be seen.
     * Post a signalled zero-length RDMA WRITE to the peer's scratch word;
     * it retires every earlier WR of the QP.  A send/recv-only ep signals
     * every WR (txq.moderation 1), so it never gets here: its flush only
     * waits for the completions of what it posted.  No user data: not in
     * iface->op_count.rdma_writes. */
    if (ep->txq.unsignaled > 0) {
        ucs_assert(ep->state == UCT_PVRDMA_EP_CONNECTED);
        status = uct_pvrdma_ep_post_flush_write(iface, ep);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (comp != NULL) {
        UCT_TL_IFACE_GET_TX_DESC(&iface->super, &iface->tx_mp, desc,
                                 return UCS_ERR_NO_RESOURCE);
        uct_pvrdma_tx_desc_reset(desc);
        desc->comp = comp;
        uct_pvrdma_ep_track_desc(ep, desc);
    }

    UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
    return UCS_INPROGRESS;
}


ucs_status_t uct_pvrdma_ep_fence(uct_ep_h tl_ep, unsigned flags UCS_V_UNUSED)
{
    uct_pvrdma_ep_t *ep = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);

    /* RC executes WRITEs and SENDs in order; only READs can be overtaken,
     * and IBV_SEND_FENCE on the next WR waits for them. */
    ep->fence = 1;
    UCT_TL_EP_STAT_FENCE(&ep->super);
    return UCS_OK;
}


/* ----------------------------------------------------------------------- */
/*  Class                                                                  */
/* ----------------------------------------------------------------------- */

static UCS_CLASS_INIT_FUNC(uct_pvrdma_ep_t, const uct_ep_params_t *params)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(params->iface,
                                               uct_pvrdma_iface_t);
    struct pvrdma_common_addr_info remote;
    ucs_status_t status;
    char err[128];

    UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);

    if ((uct_pvrdma_dev_addr_unpack(params->dev_addr, &remote) != 0) ||
        (pvrdma_common_addr_check_compat(&iface->dev_info, &remote, err,
                                         sizeof(err)) != 0)) {
        ucs_error("pvrdma: invalid or incompatible peer device address");
        return UCS_ERR_INVALID_ADDR;
    }

    self->peer_gid    = remote.gid;
    self->peer_lid    = remote.lid;
    self->peer_ud_qpn = uct_pvrdma_iface_addr_qpn(params->iface_addr);
    self->state       = UCT_PVRDMA_EP_CONNECTING;
    self->status      = UCS_OK;
    self->fence       = 0;
    self->ah          = NULL;
    self->conn_id     = iface->iface_uuid + (++iface->conn_seq);
    self->psn         = ucs_generate_uuid((uintptr_t)self) & 0xffffff;
    self->credits_seen    = 0;
    self->alive_seen      = 0;
    self->alive_since     = 0;
    self->fail_why        = NULL;
    self->in_pending_list = 0;
    self->rev_chan        = NULL;
    ucs_queue_head_init(&self->outstanding);
    ucs_queue_head_init(&self->pending);
    memset(&self->credits, 0, sizeof(self->credits));

    /* receives only for credit messages, if the connection turns out to be
     * send/recv-only (the CONN_REP says) */
    status = uct_pvrdma_iface_create_rc_qp(iface, UCT_PVRDMA_CREDIT_RX_LEN,
                                           &self->txq.qp);
    if (status != UCS_OK) {
        return status;
    }

    self->txq.kind       = UCT_PVRDMA_QP_EP;
    self->txq.avail      = iface->config.tx_queue_len;
    self->txq.moderation = iface->config.tx_moderation;
    self->credit_rx_len  = 0;
    self->txq.unsignaled = 0;
    self->txq.signaled   = 0;
    self->txq.posted_sn  = 0;
    self->txq.acked_sn   = 0;

    status = uct_pvrdma_slot_get(iface, &self->slot_chunk, &self->slot_index);
    if (status != UCS_OK) {
        goto err_qp;
    }

    uct_pvrdma_iface_qp_add(iface, &self->txq);
    ucs_list_add_tail(&iface->eps, &self->list);
    uct_pvrdma_ep_tag_add(self);

    status = uct_pvrdma_conn_start(self);
    if (status != UCS_OK) {
        goto err_list;
    }

    return UCS_OK;

err_list:
    uct_pvrdma_ep_tag_remove(self);
    ucs_list_del(&self->list);
    uct_pvrdma_iface_qp_remove(iface, &self->txq);
    uct_pvrdma_slot_put(self->slot_chunk, self->slot_index);
err_qp:
    ibv_destroy_qp(self->txq.qp);
    return status;
}


static UCS_CLASS_CLEANUP_FUNC(uct_pvrdma_ep_t)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(self->super.super.iface,
                                               uct_pvrdma_iface_t);
    unsigned i;
    int ret;

    if (self->state == UCT_PVRDMA_EP_CONNECTING) {
        --iface->num_connecting;
    }
    if (self->state != UCT_PVRDMA_EP_FAILED) {
        /* let the peer free its passive channel, which exists if it got a
         * request (best effort: the peer frees it at close otherwise) */
        uct_pvrdma_conn_send_disconnect(self);
    }

    if (self->in_pending_list) {
        ucs_list_del(&self->pending_link);
    }
    uct_pvrdma_ep_unpair_chan(self);
    uct_pvrdma_ep_tag_remove(self);
    ucs_list_del(&self->list);
    uct_pvrdma_iface_qp_remove(iface, &self->txq);

    /* outstanding work is cancelled, as UCT requires on destroy */
    uct_pvrdma_ep_release_descs(self, UINT64_MAX, UCS_ERR_CANCELED);

    ret = ibv_destroy_qp(self->txq.qp);
    if (ret != 0) {
        ucs_warn("pvrdma: ibv_destroy_qp(0x%x) failed: %s",
                 self->txq.qp->qp_num, strerror(ret));
    }
    uct_pvrdma_slot_put(self->slot_chunk, self->slot_index);
    /* The credit receives hold registered slots, not pool buffers: they
     * go back here, whether or not their flushes ever reach the CQ (if
     * they do, the QP is unknown by then and they are ignored); their CQ
     * entries are zombies until the CQ has been drained. */
    if (self->credit_rx_len > 0) {
        for (i = 0; i < self->credit_rx_len; ++i) {
            uct_pvrdma_slot_put(self->credit_rx[i].chunk,
                                self->credit_rx[i].index);
        }
        iface->rx_reserved -= self->credit_rx_len;
        iface->cq_budget   += self->credit_rx_len;
        uct_pvrdma_iface_zombie_add(iface, self->credit_rx_len);
    }
}


UCS_CLASS_DEFINE(uct_pvrdma_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_pvrdma_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_pvrdma_ep_t, uct_ep_t);


/*
 * Retire unsignalled WRs that no completion will ever cover: an ep whose
 * last WRs were unsignalled and that sends nothing more keeps up to
 * TX_MODERATION - 1 of them counted in the CQ budget for ever (they did
 * complete, silently).  A signalled zero-length WRITE to the peer's
 * scratch word (as ep flush posts) retires them.  Called when CQ entries
 * are wanted for a new connection's receives.  Returns how many WRs will
 * be retired.
 */
unsigned uct_pvrdma_iface_retire_unsignaled(uct_pvrdma_iface_t *iface)
{
    unsigned count = 0;
    uct_pvrdma_ep_t *ep;

    ucs_list_for_each(ep, &iface->eps, list) {
        if ((ep->state != UCT_PVRDMA_EP_CONNECTED) ||
            (ep->txq.signaled > 0) ||
            (ep->txq.posted_sn == ep->txq.acked_sn)) {
            continue;
        }
        if (!uct_pvrdma_txq_has_room(iface, &ep->txq)) {
            break;
        }
        count                 += ep->txq.posted_sn - ep->txq.acked_sn + 1;
        if (uct_pvrdma_ep_post_flush_write(iface, ep) != UCS_OK) {
            break;
        }
    }
    return count;
}
