/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_tx_batch.c
 * @brief Send coalescing of the UCT "pvrdma" transport
 *        (UCX_PVRDMA_TX_COALESCE, issue 38): AMs that UCP sends to one ep
 *        within a progress turn go as one WR list, one doorbell.
 *
 * Every ibv_post_send rings a doorbell, a VM exit on PVRDMA.  UCP sends a
 * large message's fragments in a loop, and sends from the callbacks of
 * completions and pending requests (the next fragments, rendezvous
 * replies).  An AM that finds its ep already posted to in this progress
 * turn, or that is sent while progress handles completions or pending
 * requests (uct_pvrdma_ep_batch_wants), waits in the ep's batch: its WR and
 * SGEs are copied into its send descriptor and chained to the previous
 * one's, and it is counted as posted at once (send WQE, CQ entry, sequence
 * number, signalling), so the admission of the next AM, the flush and the
 * CQ budget see it.  The batch is posted as one WR list at the end of the
 * progress call (uct_pvrdma_iface_batches_post), before any other WR of the
 * ep (uct_pvrdma_ep_post: in order), by the ep's flush, or at once when it
 * reaches UCT_PVRDMA_BATCH_MAX.  The first AM after progress goes at once,
 * so a lone message never waits.  Only AMs with a send descriptor wait
 * (all of them on PVRDMA, which has no inline data).
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"


void uct_pvrdma_iface_tx_batch_init(uct_pvrdma_iface_t *iface)
{
    ucs_list_head_init(&iface->tx_batch.eps);
    iface->tx_batch.turn        = 1; /* eps start at 0: their first AM goes */
    iface->tx_batch.in_progress = 0;
}


void uct_pvrdma_ep_batch_add(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                             const struct ibv_send_wr *wr,
                             uct_pvrdma_tx_desc_t *desc, int signal)
{
    struct ibv_send_wr *bwr = &desc->wr;

    *bwr         = *wr;
    memcpy(desc->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
    bwr->sg_list = desc->sge;
    if (ucs_unlikely(ep->fence)) {
        bwr->send_flags |= IBV_SEND_FENCE;
        ep->fence        = 0;
    }
    signal = uct_pvrdma_txq_prepare(iface, &ep->txq, bwr, signal);
    uct_pvrdma_txq_posted(iface, &ep->txq, signal);

    if (ep->batch.len == 0) {
        ep->batch.head = desc;
        ucs_list_add_tail(&iface->tx_batch.eps, &ep->batch.link);
    } else {
        ep->batch.tail->wr.next = bwr;
    }
    ep->batch.tail = desc;
    if ((++ep->batch.len >= UCT_PVRDMA_BATCH_MAX) &&
        !iface->tx_batch.in_progress) {
        uct_pvrdma_ep_batch_post(ep);
    }
}


/* Forget the batch without posting it (the ep is being destroyed: its
 * descriptors are released as cancelled, its QP's accounting cleared) */
void uct_pvrdma_ep_batch_drop(uct_pvrdma_ep_t *ep)
{
    if (ep->batch.len > 0) {
        ucs_list_del(&ep->batch.link);
        ep->batch.head = ep->batch.tail = NULL;
        ep->batch.len  = 0;
    }
}


void uct_pvrdma_ep_batch_post(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    struct ibv_send_wr *bad_wr;
    unsigned len = ep->batch.len;
    int ret;

    if (len == 0) {
        return;
    }
    ret = ibv_post_send(ep->txq.qp, &ep->batch.head->wr, &bad_wr);
    uct_pvrdma_ep_batch_drop(ep);
    ep->batch.turn = iface->tx_batch.turn;
    if (ucs_unlikely(ret != 0)) {
        /* they were admitted (WQEs counted free): the device refused a list
         * it has room for, or the QP is gone */
        ucs_error("pvrdma: ibv_post_send(qp 0x%x) of %u AMs failed: %s",
                  ep->txq.qp->qp_num, len, strerror(ret));
        uct_pvrdma_ep_set_failed(ep, UCS_ERR_IO_ERROR);
        return;
    }
    ++iface->op_count.tx_posts;
    iface->op_count.tx_wrs += len;
}


/* End of a progress call: every batch goes, one WR list per ep.  Taken
 * from the head one by one: a failure's error handler may destroy eps,
 * whose cleanup unlinks them. */
void uct_pvrdma_iface_batches_post(uct_pvrdma_iface_t *iface)
{
    while (!ucs_list_is_empty(&iface->tx_batch.eps)) {
        uct_pvrdma_ep_batch_post(ucs_list_head(&iface->tx_batch.eps,
                                               uct_pvrdma_ep_t, batch.link));
    }
}
