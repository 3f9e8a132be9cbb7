/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_impl.h
 * @brief Hot-path inlines of the UCT "pvrdma" transport: resource checks,
 *        credits, posting send WRs with selective signalling and iovs as
 *        SGEs; and what the iface's own files share (pvrdma_iface.c,
 *        pvrdma_iface_init.c, pvrdma_progress.c).
 */
#ifndef UCT_PVRDMA_IMPL_H
#define UCT_PVRDMA_IMPL_H

#include "pvrdma.h"

#include <arpa/inet.h>


/** Pick up credits the peer returned by RDMA WRITE into our slot. */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_ep_refresh_credits(uct_pvrdma_ep_t *ep)
{
    uint64_t total = ep->slot_chunk->slots[ep->slot_index];

    if (total != ep->credits_seen) {
        if (pvrdma_common_credits_add(&ep->credits,
                                      (uint32_t)(total - ep->credits_seen))) {
            ucs_diag("pvrdma: ep %p: peer returned more credits than it was "
                     "given", ep);
        }
        ep->credits_seen = total;
    }
}


static UCS_F_ALWAYS_INLINE int uct_pvrdma_ep_take_credit(uct_pvrdma_ep_t *ep)
{
    if (ucs_likely(pvrdma_common_credits_take(&ep->credits, false))) {
        return 1;
    }

    uct_pvrdma_ep_refresh_credits(ep);
    return pvrdma_common_credits_take(&ep->credits, false);
}


/**
 * Can a WR be posted on @p txq right now?  Needs a send WQE and a CQ entry
 * for it: every WR in flight may come back as a completion (a flush, if
 * its QP fails), signalled or not (see "Completions" in docs/design.md).
 */
static UCS_F_ALWAYS_INLINE int
uct_pvrdma_txq_has_room(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq)
{
    if (ucs_unlikely(txq->avail == 0)) {
        return 0;
    }
    if (ucs_likely(iface->cq_acct.tx_outstanding + iface->cq_acct.held <
                   iface->cq_acct.budget)) {
        return 1;
    }
    ++iface->op_count.cq_full;
    return 0;
}


/**
 * WRs of @p txq up to @p sn completed (a signalled completion retires every
 * earlier WR of its QP; a flush completion comes for each WR): their send
 * WQEs and CQ entries are free again.
 */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_txq_retire(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq,
                      uint64_t sn)
{
    unsigned count;

    if (ucs_unlikely(sn <= txq->acked_sn) || ucs_unlikely(sn > txq->posted_sn)) {
        return; /* not one of ours (already retired) */
    }

    count                  = sn - txq->acked_sn;
    txq->avail            += count;
    txq->acked_sn          = sn;
    iface->cq_acct.tx_outstanding -= count;
    if (txq->acked_sn == txq->posted_sn) {
        /* nothing left in flight: no signalled completion is coming (a
         * flushed QP may have reported them as errors, not counted) */
        iface->cq_acct.tx_signaled -= txq->signaled;
        txq->signaled       = 0;
    }
}


/** The connection budget has work for progress (pvrdma_budget.c): eps
 *  wait for a slot, closes are open, or eps over the budget are to be
 *  closed again. */
static UCS_F_ALWAYS_INLINE int
uct_pvrdma_iface_budget_active(const uct_pvrdma_iface_t *iface)
{
    return (iface->budget.num_waiting > 0) || (iface->budget.closing > 0) ||
           (iface->budget.held > iface->budget.max);
}


/** Why an ep that is not (fully) connected cannot post.  One the
 *  connection budget closed is opened again by this send (pvrdma_budget.c):
 *  UCP queues the send and the connection dispatches it. */
static UCS_F_NOINLINE ucs_status_t
uct_pvrdma_ep_state_status(uct_pvrdma_ep_t *ep)
{
    switch (ep->state) {
    case UCT_PVRDMA_EP_FAILED:
        return ep->status;
    case UCT_PVRDMA_EP_CLOSED:
        (void)uct_pvrdma_budget_connect(ep);
        return UCS_ERR_NO_RESOURCE;
    case UCT_PVRDMA_EP_CONNECTING:
    case UCT_PVRDMA_EP_CLOSING:
        return UCS_ERR_NO_RESOURCE;
    default:
        /* CONNECTED_SR asked for a PUT: the connection has no RDMA WRITE */
        return UCS_ERR_UNSUPPORTED;
    }
}


/**
 * Check the ep can send (connected, nothing waiting in its pending queue,
 * WQE and CQ room).  @p put (a constant at every call site) also requires
 * RDMA WRITE on the connection; both variants cost one comparison of the
 * state.
 *
 * The pending test keeps UCT's ordering: a send must not overtake the
 * requests UCP queued on the ep when it had no resources.  Resources can
 * come back outside progress (the peer returns credits by RDMA WRITE into
 * the ep's slot at any time; uct_pvrdma_ep_take_credit reads it), and
 * inside progress an AM handler may send between the completion that
 * freed room and the pending dispatch: without the test a later AM went
 * first (bed, pml ucx, 256 KiB messages both ways with 16 in flight: the
 * rendezvous RTS of message 38 overtook 34-37, UCP matched it to the
 * receive of 34 and five receive buffers got each other's data).  While a
 * pending request's own callback runs (ep->dispatching) it may send: the
 * dispatcher took it off the queue, the rest stay behind it.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_check_tx_op(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                          int put)
{
    if (ucs_unlikely(put ? (ep->state != UCT_PVRDMA_EP_CONNECTED) :
                           (ep->state < UCT_PVRDMA_EP_CONNECTED_SR))) {
        return uct_pvrdma_ep_state_status(ep);
    }

    if (ucs_unlikely(!ucs_queue_is_empty(&ep->pending)) && !ep->dispatching) {
        return UCS_ERR_NO_RESOURCE;
    }

    if (ucs_unlikely(!uct_pvrdma_txq_has_room(iface, &ep->txq))) {
        return UCS_ERR_NO_RESOURCE;
    }

    return UCS_OK;
}


static UCS_F_ALWAYS_INLINE int uct_pvrdma_ep_is_connected(uct_pvrdma_ep_t *ep)
{
    return ep->state >= UCT_PVRDMA_EP_CONNECTED_SR;
}


/**
 * Set up one WR for @p txq: it is signalled when @p signal is set or every
 * txq->moderation WRs (tx_moderation; 1 on a send/recv-only ep, whose flush
 * relies on every WR completing visibly); wr_id carries its sequence
 * number.  Returns whether it is signalled.
 */
static UCS_F_ALWAYS_INLINE int
uct_pvrdma_txq_prepare(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq,
                       struct ibv_send_wr *wr, int signal)
{
    signal = signal || (txq->unsignaled + 1 >= txq->moderation);
    if (ucs_unlikely(iface->cq_acct.tx_outstanding + iface->cq_acct.held + 1 >=
                     iface->cq_acct.budget) &&
        !signal) {
        /* This WR takes the last free CQ entry: nothing more may be posted
         * until a completion retires WRs, and only a signalled WR produces
         * one (or an error).  If every WR in flight were unsignalled, no
         * completion would ever come and every sender would wait for ever;
         * signalling this one guarantees a completion is on its way
         * whenever the budget is full. */
        signal = 1;
        ++iface->op_count.forced_signals;
    }
    wr->next    = NULL;
    wr->wr_id   = txq->posted_sn + 1;
    if (signal) {
        wr->send_flags |= IBV_SEND_SIGNALED;
    }
    return signal;
}


/** Count a WR set up by uct_pvrdma_txq_prepare as posted. */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_txq_posted(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq,
                      int signal)
{
    ++txq->posted_sn;
    --txq->avail;
    ++iface->op_count.tx_counted;
    if (++iface->cq_acct.tx_outstanding > iface->op_count.tx_outstanding_max) {
        iface->op_count.tx_outstanding_max = iface->cq_acct.tx_outstanding;
    }
    if (signal) {
        txq->unsignaled = 0;
        ++txq->signaled;
        ++iface->cq_acct.tx_signaled;
    } else {
        ++txq->unsignaled;
    }
}


/** Post one WR (one doorbell). */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_txq_post(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq,
                    struct ibv_send_wr *wr, int signal)
{
    struct ibv_send_wr *bad_wr;
    int ret;

    signal = uct_pvrdma_txq_prepare(iface, txq, wr, signal);
    ret    = ibv_post_send(txq->qp, wr, &bad_wr);
    if (ucs_unlikely(ret != 0)) {
        if (ret == ENOMEM) {
            return UCS_ERR_NO_RESOURCE;
        }
        ucs_error("pvrdma: ibv_post_send(qp 0x%x) failed: %s", txq->qp->qp_num,
                  strerror(ret));
        return UCS_ERR_IO_ERROR;
    }
    ++iface->op_count.tx_posts;
    ++iface->op_count.tx_wrs;
    uct_pvrdma_txq_posted(iface, txq, signal);
    return UCS_OK;
}


/** Post on an ep: after the AMs waiting in its batch (in order), applies a
 *  pending fence. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_post(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                   struct ibv_send_wr *wr, int signal)
{
    ucs_status_t status;

    if (ucs_unlikely(ep->batch.len > 0)) {
        uct_pvrdma_ep_batch_post(ep);
    }
    if (ucs_unlikely(ep->fence)) {
        wr->send_flags |= IBV_SEND_FENCE;
    }

    status = uct_pvrdma_txq_post(iface, &ep->txq, wr, signal);
    if (ucs_likely(status == UCS_OK)) {
        ep->fence      = 0;
        ep->batch.turn = iface->tx_batch.turn;
    }
    return status;
}


/**
 * Should an AM wait in its ep's batch for the turn's WR list
 * (UCX_PVRDMA_TX_COALESCE)?  When the ep already had a WR posted at once
 * in this progress turn, or completions and pending requests are being
 * handled (UCP sends from their callbacks: the next fragments, replies):
 * the first AM after progress always goes at once.
 */
static UCS_F_ALWAYS_INLINE int
uct_pvrdma_ep_batch_wants(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                          const struct ibv_send_wr *wr)
{
    return iface->config.tx_coalesce &&
           (iface->tx_batch.in_progress ||
            (ep->batch.turn == iface->tx_batch.turn)) &&
           (wr->num_sge <= UCT_PVRDMA_BATCH_SGE);
}


/**
 * Immediate data of an AM: its id and, when the channel this ep carries
 * credits for owes some, those credits (pvrdma_credit_imm.c).  Returns the
 * credits taken in @p credits_p; uct_pvrdma_ep_am_imm_undo gives them back
 * if the post fails.
 */
static UCS_F_ALWAYS_INLINE uint32_t
uct_pvrdma_ep_am_imm(uct_pvrdma_ep_t *ep, uint8_t id, uint32_t *credits_p)
{
    uct_pvrdma_chan_t *chan = ep->rev_chan;
    uint32_t credits;

    if (ucs_likely((chan == NULL) || (chan->credits.owed == 0))) {
        *credits_p = 0;
        return htonl(id);
    }

    credits    = pvrdma_common_credits_piggyback(&chan->credits);
    *credits_p = credits;
    chan->iface->op_count.credits_by_imm += credits;
    return htonl(pvrdma_common_imm_pack(id, credits, chan->peer_ep_tag));
}


static UCS_F_ALWAYS_INLINE void
uct_pvrdma_ep_am_imm_undo(uct_pvrdma_ep_t *ep, uint32_t credits)
{
    if (credits > 0) {
        pvrdma_common_credits_unpiggyback(&ep->rev_chan->credits, credits);
        ep->rev_chan->iface->op_count.credits_by_imm -= credits;
    }
}


/** Track a descriptor until the WR just posted is retired. */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_ep_track_desc(uct_pvrdma_ep_t *ep, uct_pvrdma_tx_desc_t *desc)
{
    desc->sn = ep->txq.posted_sn;
    ucs_queue_push(&ep->outstanding, &desc->queue);
    if ((desc->comp != NULL) || (desc->unpack_cb != NULL)) {
        /* someone waits for it: the idle wait keeps polling */
        ++ucs_derived_of(ep->super.super.iface,
                        uct_pvrdma_iface_t)->cq_acct.tx_awaited;
    }
}



static UCS_F_ALWAYS_INLINE void
uct_pvrdma_tx_desc_reset(uct_pvrdma_tx_desc_t *desc)
{
    desc->comp      = NULL;
    desc->unpack_cb = NULL;
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


/* The iface's set-up (pvrdma_iface_init.c), called from its class init and
 * cleanup, and its progress function (pvrdma_progress.c), in its ops table
 * (pvrdma_iface.c). */
extern const char *uct_pvrdma_ternary_names[];
ucs_status_t uct_pvrdma_iface_parse_dev_name(uct_pvrdma_iface_t *iface,
                                             const char *dev_name);
ucs_status_t
uct_pvrdma_iface_init_profile(uct_pvrdma_iface_t *iface,
                              const uct_pvrdma_iface_config_t *config);
ucs_status_t uct_pvrdma_iface_init_addr(uct_pvrdma_iface_t *iface,
                                        const uct_pvrdma_iface_config_t *config);
void uct_pvrdma_iface_init_rdma_write(uct_pvrdma_iface_t *iface,
                                      const uct_pvrdma_iface_config_t *config);
ucs_status_t uct_pvrdma_iface_init_cq(uct_pvrdma_iface_t *iface);
void uct_pvrdma_iface_cleanup_cq(uct_pvrdma_iface_t *iface);
ucs_status_t
uct_pvrdma_iface_init_mpools(uct_pvrdma_iface_t *iface,
                             const uct_pvrdma_iface_config_t *config,
                             const uct_iface_params_t *params);
unsigned uct_pvrdma_iface_progress(uct_iface_h tl_iface);


/* Argument checks of am_zcopy (both modes; compiled out without
 * --enable-params-check, as UCX's own) */
#define UCT_PVRDMA_CHECK_AM_ZCOPY(_iface, _id, _header_length, _iov, _iovcnt) \
    UCT_CHECK_AM_ID(_id); \
    UCT_CHECK_IOV_SIZE(_iovcnt, (size_t)(_iface)->config.tx_max_sge - 1, \
                       "am_zcopy"); \
    UCT_CHECK_LENGTH(_header_length, 0, \
                     ucs_min((_iface)->config.seg_size, 128), \
                     "am_zcopy header"); \
    UCT_CHECK_LENGTH((_header_length) + uct_iov_total_length(_iov, _iovcnt), \
                     0, (_iface)->config.seg_size, "am_zcopy")

/** A get found the send buffer pool empty and unable to grow (its quota,
 *  or the locked-memory limit failed its registration): eps say "no
 *  resources" until a buffer comes back (uct_pvrdma_ep_has_resources). */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_iface_tx_mp_empty(uct_pvrdma_iface_t *iface)
{
    iface->bufs.tx_mp_exhausted = 1;
    ++iface->op_count.tx_mp_empty;
}

/**
 * The one admission check of every active message (both modes): the ep is
 * connected, its QP has a send WQE and the iface a CQ entry, the peer a
 * receive credit, and a send buffer is free.  On failure nothing is taken.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_admit(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                       uct_pvrdma_tx_desc_t **desc_p)
{
    uct_pvrdma_tx_desc_t *desc;

    ucs_status_t status;

    if (desc_p != NULL) {
        *desc_p = NULL;
    }
    status = uct_pvrdma_ep_check_tx_op(iface, ep, 0);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    if (ucs_unlikely(!uct_pvrdma_ep_take_credit(ep))) {
        return UCS_ERR_NO_RESOURCE;
    }
    if (desc_p == NULL) {
        return UCS_OK; /* inline data: no buffer */
    }

    UCT_TL_IFACE_GET_TX_DESC(&iface->super, &iface->tx_mp, desc, {
        pvrdma_common_credits_untake(&ep->credits);
        uct_pvrdma_iface_tx_mp_empty(iface);
        return UCS_ERR_NO_RESOURCE;
    });
    uct_pvrdma_tx_desc_reset(desc);
    *desc_p = desc;
    return UCS_OK;
}


/**
 * Post an admitted AM.  @p credits were taken for its immediate data
 * (uct_pvrdma_ep_am_imm); if the post fails they are owed again, the
 * receive credit is given back and the buffer released.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_post(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                      struct ibv_send_wr *wr, uct_pvrdma_tx_desc_t *desc,
                      uint32_t credits, int signal)
{
    ucs_status_t status;

    if ((desc != NULL) && uct_pvrdma_ep_batch_wants(iface, ep, wr)) {
        /* counted as posted now (WQE, CQ entry, sequence number), so the
         * admission of the next AM and the flush see it */
        uct_pvrdma_ep_batch_add(iface, ep, wr, desc, signal);
        uct_pvrdma_ep_track_desc(ep, desc);
        ++ep->budget.am_sent;
        return UCS_OK;
    }

    status = uct_pvrdma_ep_post(iface, ep, wr, signal);

    if (ucs_unlikely(status != UCS_OK)) {
        uct_pvrdma_ep_am_imm_undo(ep, credits);
        pvrdma_common_credits_untake(&ep->credits);
        if (desc != NULL) {
            ucs_mpool_put_inline(desc);
        }
        return status;
    }
    if (desc != NULL) {
        uct_pvrdma_ep_track_desc(ep, desc);
    }
    ++ep->budget.am_sent;
    return UCS_OK;
}


#endif


