/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_progress.c
 * @brief Completion progress of the UCT "pvrdma" transport: QP lookup by
 *        number, CQ entries of destroyed QPs (zombies), CQ polling, send
 *        completions, CQ arming and events, and the iface progress function.
 */
#include "pvrdma.h"

#include <string.h>
#include "pvrdma_impl.h"


/* ----------------------------------------------------------------------- */
/*  QP lookup                                                              */
/* ----------------------------------------------------------------------- */

void uct_pvrdma_iface_qp_add(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq)
{
    ucs_list_add_tail(&iface->qp_hash[txq->qp->qp_num %
                                      UCT_PVRDMA_QP_HASH_SIZE],
                      &txq->hash_link);
}


void uct_pvrdma_iface_qp_remove(uct_pvrdma_iface_t *iface,
                                uct_pvrdma_txq_t *txq)
{
    unsigned outstanding = txq->posted_sn - txq->acked_sn;

    ucs_list_del(&txq->hash_link);
    /* The QP is about to be destroyed: its send WRs in flight complete no
     * more (they are cancelled), but their completions may already sit in
     * the CQ, or be put there by the destroy itself (SoftRoCE flushes),
     * and will not be found any more: they stay counted until the CQ has
     * been drained (zombies). */
    iface->cq_acct.tx_signaled    -= txq->signaled;
    txq->signaled                  = 0;
    iface->cq_acct.tx_outstanding -= outstanding;
    txq->acked_sn                  = txq->posted_sn;
    uct_pvrdma_iface_zombie_add(iface, outstanding);
}


/*
 * @p count CQ entries of a QP being destroyed (its receives posted, its
 * send WRs in flight) may still be in the CQ, without a QP to find them
 * by: keep them out of cq_acct.budget (if they were not already) until a
 * poll that begins after now finds the CQ empty, or until the polls since
 * the first such poll have taken as many entries as were then in use; the
 * CQ is FIFO and no completion of a QP arrives after ibv_destroy_qp
 * returns, so by then every one of them has been polled (and ignored).
 * The caller has already removed them from what they were counted in
 * (cq_acct.rx_reserved or cq_acct.tx_outstanding); receives reserved but
 * not posted need no wait.
 */
void uct_pvrdma_iface_zombie_add(uct_pvrdma_iface_t *iface, unsigned count)
{
    iface->cq_acct.budget     -= count;
    iface->cq_acct.zombie_new += count;
}


static UCS_F_ALWAYS_INLINE uct_pvrdma_txq_t *
uct_pvrdma_iface_qp_find(uct_pvrdma_iface_t *iface, uint32_t qp_num)
{
    uct_pvrdma_txq_t *txq;

    ucs_list_for_each(txq, &iface->qp_hash[qp_num % UCT_PVRDMA_QP_HASH_SIZE],
                      hash_link) {
        if (txq->qp->qp_num == qp_num) {
            return txq;
        }
    }
    return NULL;
}


/* ----------------------------------------------------------------------- */
/*  Progress                                                               */
/* ----------------------------------------------------------------------- */

ucs_status_t uct_pvrdma_wc_to_status(enum ibv_wc_status wc_status)
{
    switch (wc_status) {
    case IBV_WC_SUCCESS:
        return UCS_OK;
    case IBV_WC_WR_FLUSH_ERR:
        return UCS_ERR_CANCELED;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
        return UCS_ERR_CONNECTION_RESET;
    default:
        return UCS_ERR_IO_ERROR;
    }
}


static void uct_pvrdma_iface_handle_send_wc(uct_pvrdma_iface_t *iface,
                                            uct_pvrdma_txq_t *txq,
                                            struct ibv_wc *wc)
{
    uct_pvrdma_ep_t *ep;
    ucs_status_t status;

    /* a successful send completion is a signalled WR; an error or flush
     * completion comes for signalled and unsignalled WRs alike (retire
     * zeroes the signalled count when the last one is in) */
    if ((wc->status == IBV_WC_SUCCESS) && (txq->signaled > 0)) {
        --txq->signaled;
        --iface->cq_acct.tx_signaled;
    }
    uct_pvrdma_txq_retire(iface, txq, wc->wr_id);

    if (txq->kind == UCT_PVRDMA_QP_CHAN) {
        uct_pvrdma_chan_handle_wc(ucs_container_of(txq, uct_pvrdma_chan_t,
                                                   txq), wc, 0);
        return;
    }

    ep = ucs_container_of(txq, uct_pvrdma_ep_t, txq);
    if (ucs_likely(wc->status == IBV_WC_SUCCESS)) {
        uct_pvrdma_ep_send_completion(ep, wc->wr_id);
        return;
    }

    status = uct_pvrdma_wc_to_status(wc->status);
    if (ep->state != UCT_PVRDMA_EP_FAILED) {
        ucs_log((status == UCS_ERR_CANCELED) ? UCS_LOG_LEVEL_DEBUG :
                iface->super.config.failure_level,
                "pvrdma: %s:%d: send completion error on qp 0x%x: %s "
                "(vendor_err 0x%x)", iface->md->dev_name, iface->port_num,
                wc->qp_num, ibv_wc_status_str(wc->status), wc->vendor_err);
        ep->fail_why = ibv_wc_status_str(wc->status);
        uct_pvrdma_ep_set_failed(ep, (status == UCS_ERR_CANCELED) ?
                                 UCS_ERR_CONNECTION_RESET : status);
    }
}


/*
 * Is @p wc a receive completion?  The opcode is valid only in successful
 * completions; a flush or error completion is told by its wr_id: a
 * channel's send WRs carry sequence numbers (at most posted_sn), its
 * receives descriptor addresses; an ep's credit receives have
 * UCT_PVRDMA_CREDIT_RX_WRID set.
 */
static UCS_F_ALWAYS_INLINE int
uct_pvrdma_wc_is_recv(const uct_pvrdma_txq_t *txq, const struct ibv_wc *wc)
{
    if (ucs_likely(wc->status == IBV_WC_SUCCESS)) {
        return !!(wc->opcode & IBV_WC_RECV);
    }
    if (txq->kind == UCT_PVRDMA_QP_CHAN) {
        return wc->wr_id > txq->posted_sn;
    }
    return (wc->wr_id & UCT_PVRDMA_CREDIT_RX_WRID) == UCT_PVRDMA_CREDIT_RX_WRID;
}


/* Poll the CQ once.  @p awaited_p: how many of the completions someone
 * waited for (receives, sends with a user completion, errors), what
 * restarts the idle spin. */
static unsigned uct_pvrdma_iface_poll_cq(uct_pvrdma_iface_t *iface,
                                         unsigned *awaited_p)
{
    struct ibv_wc wcs[iface->config.poll_batch];
    /* a reset connection QP: is this poll after the reset? */
    int ud_resetting = iface->ud.dgram.resetting;
    unsigned awaited = iface->cq_acct.tx_awaited;
    unsigned sends_done = 0;
    uct_pvrdma_txq_t *txq;
    int i, n;

    /* QPs destroyed before this poll: their completions are in the CQ
     * already, behind at most the entries in use now (uct_pvrdma_iface_
     * zombie_add) */
    unsigned zombie_before = iface->cq_acct.zombie_new;

    if ((iface->cq_acct.zombie_wait == 0) && (zombie_before > 0)) {
        iface->cq_acct.zombie_wait = zombie_before;
        iface->cq_acct.zombie_new  = 0;
        iface->cq_acct.zombie_left = ucs_min((unsigned)iface->cq->cqe,
                                             iface->cq->cqe -
                                             iface->cq_acct.budget +
                                             iface->cq_acct.tx_outstanding);
        zombie_before              = 0;
    }

    ++iface->op_count.cq_polls;
    n = ibv_poll_cq(iface->cq, iface->config.poll_batch, wcs);
    if (ucs_unlikely(n < 0)) {
        /* a broken CQ delivers nothing any more: every wait would spin
         * for ever, so end the process with the reason */
        ucs_fatal("pvrdma: %s %s:%d: ibv_poll_cq failed (%d): the device "
                  "cannot deliver completions (see dmesg)", ucs_get_host_name(),
                  iface->md->dev_name, iface->port_num, n);
    }

    if (n < (int)iface->config.poll_batch) {
        /* the CQ is empty: no completion of a QP destroyed before this
         * poll is left */
        iface->cq_acct.budget     += iface->cq_acct.zombie_wait +
                                     zombie_before;
        iface->cq_acct.zombie_new -= zombie_before;
        iface->cq_acct.zombie_wait = 0;
    } else if (iface->cq_acct.zombie_wait > 0) {
        /* A CQ that never drains (every poll a full batch, as under an
         * all-pairs burst) once held the zombies' wait for ever, and with
         * it every new connection (issue 36: "no answer within
         * CONN_TIMEOUT").  The CQ is FIFO: once as many entries as were in
         * use when the wait began have been polled, theirs were too. */
        if ((unsigned)n >= iface->cq_acct.zombie_left) {
            iface->cq_acct.budget     += iface->cq_acct.zombie_wait;
            iface->cq_acct.zombie_wait = 0;
            ++iface->cq_acct.zombie_counted;
        } else {
            iface->cq_acct.zombie_left -= n;
        }
    }

    /* UCP's callbacks may send: those AMs go in the turn's WR lists */
    iface->tx_batch.in_progress = 1;
    for (i = 0; i < n; ++i) {
        if (wcs[i].qp_num == iface->ud.dgram.qp->qp_num) {
            uct_pvrdma_ud_handle_wc(iface, &wcs[i]);
            continue;
        }

        txq = uct_pvrdma_iface_qp_find(iface, wcs[i].qp_num);
        if (ucs_unlikely(txq == NULL)) {
            /* a QP destroyed since: its receive buffers went back to the
             * pool when it was destroyed (the wr_id may be one that is
             * posted elsewhere by now), its CQ entries are zombies */
            continue;
        }

        if (uct_pvrdma_wc_is_recv(txq, &wcs[i])) {
            if (ucs_unlikely(txq->kind != UCT_PVRDMA_QP_CHAN)) {
                /* credit message to an ep (send/recv-only connection) */
                uct_pvrdma_ep_handle_credit_rx(
                        ucs_container_of(txq, uct_pvrdma_ep_t, txq), &wcs[i]);
                continue;
            }
            uct_pvrdma_chan_handle_wc(ucs_container_of(txq, uct_pvrdma_chan_t,
                                                       txq), &wcs[i], 1);
        } else {
            sends_done += (wcs[i].status == IBV_WC_SUCCESS);
            uct_pvrdma_iface_handle_send_wc(iface, txq, &wcs[i]);
        }
    }
    iface->tx_batch.in_progress = 0;
    /* a completion the user waited for retired its descs */
    *awaited_p = (unsigned)n - sends_done +
                 ((awaited > iface->cq_acct.tx_awaited) ?
                  awaited - iface->cq_acct.tx_awaited : 0);

    if (ucs_unlikely(iface->ud.dgram.broken || ud_resetting)) {
        uct_pvrdma_ud_recover(iface, n < (int)iface->config.poll_batch);
    }
    return n;
}


/* Arm the CQ (pvrdma_common_cq_notify_arm); a refused arm is said once and
 * gives the armed wait up. */
static int uct_pvrdma_iface_arm(uct_pvrdma_iface_t *iface)
{
    int armed_now = pvrdma_common_cq_notify_arm(&iface->notify.cq,
                                                pvrdma_common_now_us());
    int err;

    if ((armed_now < 0) &&
        ((err = pvrdma_common_cq_notify_take_error(&iface->notify.cq)) != 0)) {
        ucs_diag("pvrdma: %s:%d: ibv_req_notify_cq failed (%s): polling the "
                 "CQ as with UCX_PVRDMA_CQ_IDLE_POLLS=0", iface->md->dev_name,
                 iface->port_num, strerror(err));
    }
    return armed_now;
}


/* Arm the CQ (common/cq_notify.c: no doorbell while it is still armed from
 * before) and wait on the completion channel.  A CQ armed just now is
 * polled once more: a completion that came before the arm raised no event.
 * Returns what that poll found. */
static unsigned uct_pvrdma_iface_arm_cq(uct_pvrdma_iface_t *iface,
                                        unsigned *awaited_p)
{
    unsigned count;

    if (uct_pvrdma_iface_arm(iface) <= 0) {
        return 0;
    }
    count = uct_pvrdma_iface_poll_cq(iface, awaited_p);
    if (count > 0) {
        iface->notify.cq.armed   = 0;
        iface->notify.empty_polls = 0;
    }
    return count;
}


/*
 * A safety poll of an armed CQ found @p count completions: several in a row
 * whose event never came mean the device does not deliver CQ events (QEMU's
 * PVRDMA model without the bed's patch): then poll, as on a device without
 * doorbell costs.
 */
static void uct_pvrdma_iface_safety_result(uct_pvrdma_iface_t *iface,
                                           unsigned count)
{
    if (!pvrdma_common_cq_notify_safety_result(&iface->notify.cq, (int)count)) {
        return;
    }
    ucs_diag("pvrdma: %s:%d: the device does not deliver CQ events; polling "
             "the CQ (as with UCX_PVRDMA_CQ_IDLE_POLLS=0)",
             iface->md->dev_name, iface->port_num);
    iface->config.idle_polls = 0;
}


void uct_pvrdma_iface_wakeup_poll(uct_pvrdma_iface_t *iface)
{
    iface->notify.empty_polls = 0;
}


/* Nothing of ours that anyone waits for is due on the CQ, nothing is
 * queued or being connected: only messages from peers can come (the idle
 * wait may back off).  Signalled sends without a completion (every
 * TX_MODERATION-th; every one on a send/recv-only ep) only give back send
 * WQEs and buffers: an ep that runs out of them goes on pending_eps, which
 * keeps the worker polling, as does a flush without a completion asked
 * since the last progress call (its caller polls it). */
static int uct_pvrdma_iface_only_waiting(uct_pvrdma_iface_t *iface)
{
    return (iface->cq_acct.tx_awaited == 0) &&
           (iface->tx_batch.turn - iface->tx_batch.flush_turn > 1) &&
           (iface->conn.num_connecting == 0) &&
           (iface->conn.num_unconfirmed == 0) &&
           (iface->conn.num_discs == 0) &&
           (iface->budget.num_waiting == 0) &&
           (iface->budget.closing == 0) &&
           !iface->ud.dgram.resetting &&
           !iface->ud.dgram.broken &&
           ucs_list_is_empty(&iface->pending_eps) &&
           ucs_list_is_empty(&iface->deferred_chans) &&
           ucs_list_is_empty(&iface->rx_short_chans);
}


unsigned uct_pvrdma_iface_progress(uct_iface_h tl_iface)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_iface, uct_pvrdma_iface_t);
    unsigned count            = 0;
    unsigned awaited          = 0;
    int arming                = 0;
    int waiting;
    unsigned fired;
    bool safety               = false;

    /* a new turn: the next AM to each ep goes at once again */
    ++iface->tx_batch.turn;
    /* sends posted since the last call: an answer may come, spin again */
    pvrdma_common_idle_wait_sends(&iface->idle, iface->op_count.tx_counted);

    /* credits no AM carried since the last call (pvrdma_credit_imm.c) */
    if (ucs_unlikely(!ucs_list_is_empty(&iface->deferred_chans))) {
        uct_pvrdma_iface_return_deferred_credits(iface);
    }
    /* channels whose receive refill failed (pool could not grow): a
     * channel without receives gets no completion that would retry it */
    if (ucs_unlikely(!ucs_list_is_empty(&iface->rx_short_chans))) {
        uct_pvrdma_iface_refill_short_chans(iface);
    }

    /* While armed and nothing is in flight from us, only look at the event
     * channel: a system call, no doorbell.  A send of ours that will
     * complete ends the wait (the CQ stays armed).  The bounded idle wait
     * otherwise: only waiting for messages since IDLE_SPIN, poll at most
     * once per IDLE_POLL_INTERVAL (empty polls are VM exits), and arm the
     * CQ before a back-off poll once the back-off has lasted 10 ms. */
    waiting = uct_pvrdma_iface_only_waiting(iface);
    if (iface->notify.cq.armed && (iface->cq_acct.tx_signaled != 0)) {
        iface->notify.cq.armed = 0;
    }
    if (iface->notify.cq.armed) {
        if (!pvrdma_common_cq_notify_check(&iface->notify.cq,
                                           pvrdma_common_now_us(), &fired,
                                           &safety)) {
            goto out;
        }
        arming = 1; /* nothing found: back to the channel at once */
    } else if (!pvrdma_common_idle_wait_poll(&iface->idle, waiting)) {
        goto out;
    } else if (waiting && (iface->config.idle_polls > 0) &&
               pvrdma_common_cq_notify_due(&iface->notify.cq, &iface->idle) &&
               (uct_pvrdma_iface_arm(iface) >= 0)) {
        iface->notify.cq.armed = 0; /* waits only if this poll finds nothing */
        arming                 = 1;
    }

    count = uct_pvrdma_iface_poll_cq(iface, &awaited);
    if (safety) {
        uct_pvrdma_iface_safety_result(iface, count);
    }
    if (count > 0) {
        iface->notify.empty_polls = 0;
    } else if ((iface->config.idle_polls > 0) &&
               (iface->cq_acct.tx_signaled == 0) &&
               (arming ||
                (++iface->notify.empty_polls >= iface->config.idle_polls))) {
        count = uct_pvrdma_iface_arm_cq(iface, &awaited);
    }
    pvrdma_common_idle_wait_found(&iface->idle, awaited);

out:
    if (ucs_unlikely((iface->conn.num_connecting > 0) ||
                     (iface->conn.num_unconfirmed > 0) ||
                     (iface->conn.num_discs > 0) ||
                     uct_pvrdma_iface_budget_active(iface))) {
        uct_pvrdma_conn_progress(iface);
    }
    if (!ucs_list_is_empty(&iface->pending_eps)) {
        iface->tx_batch.in_progress = 1;
        uct_pvrdma_iface_progress_pending(iface);
        iface->tx_batch.in_progress = 0;
    }
    if (!ucs_list_is_empty(&iface->tx_batch.eps)) {
        uct_pvrdma_iface_batches_post(iface);
    }
    uct_pvrdma_iface_stall_watch(iface, count);
    uct_pvrdma_iface_keepalive_watch(iface);
    return count;
}


/* Each ep that waits is looked at once per call.  The waiting eps move to
 * a list of this call's own first and are taken from its head one by one
 * (issue 34: a safe iterator keeps a pointer to the next ep, which a
 * request's callback may destroy); an ep on that list keeps
 * in_pending_list set, so that its destroy unlinks it from there. */
void uct_pvrdma_iface_progress_pending(uct_pvrdma_iface_t *iface)
{
    ucs_list_link_t todo;
    uct_pvrdma_ep_t *ep;

    ucs_list_head_init(&todo);
    ucs_list_splice_tail(&todo, &iface->pending_eps);
    ucs_list_head_init(&iface->pending_eps);

    while (!ucs_list_is_empty(&todo)) {
        ep = ucs_list_extract_head(&todo, uct_pvrdma_ep_t, pending_link);
        if (!uct_pvrdma_ep_has_resources(ep)) {
            ucs_list_add_tail(&iface->pending_eps, &ep->pending_link);
            continue;
        }
        /* off every list: a request may re-add the ep */
        ep->in_pending_list = 0;
        uct_pvrdma_ep_dispatch_pending(ep);
        uct_pvrdma_ep_schedule_pending(ep);
    }
}
