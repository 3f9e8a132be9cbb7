/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_ep.c
 * @brief Endpoint of the UCT "pvrdma" transport: the ep class (creation
 *        starts the connection exchange), send completion and failure,
 *        pending queue, flush, fence and the zero-length WRITEs that kick,
 *        probe and retire.  Its data paths: pvrdma_am.c (active messages)
 *        and pvrdma_rma.c (PUT, GET); the send/recv-only mode (credit
 *        messages, AM id in a header): pvrdma_sr.c.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"


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
        if ((desc->comp != NULL) || (desc->unpack_cb != NULL)) {
            --ucs_derived_of(ep->super.super.iface,
                           uct_pvrdma_iface_t)->cq_acct.tx_awaited;
        }
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
        --iface->conn.num_connecting;
    }
    uct_pvrdma_budget_ep_cleanup(ep);

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

    /* No send buffer and the pool cannot grow (its quota, or the
     * locked-memory limit failed its registration; a get found out and set
     * the flag): until one comes back a request can only wait in the
     * queue.  Saying "resources" here made pending_add answer BUSY and UCP
     * retry the send at once, for ever (issue 34). */
    if (ucs_unlikely(iface->bufs.tx_mp_exhausted)) {
        if (iface->tx_mp.freelist == NULL) {
            return 0;
        }
        iface->bufs.tx_mp_exhausted = 0;
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
    if (ep->state == UCT_PVRDMA_EP_CLOSED) {
        /* closed for the connection budget: the request opens it again
         * (UCP may queue one without trying a send first) */
        (void)uct_pvrdma_budget_connect(ep);
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

    /* the request being dispatched is off the queue while its callback
     * sends; later ones stay queued (uct_pvrdma_ep_check_tx_op) */
    ep->dispatching = 1;
    uct_pending_queue_dispatch(priv, &ep->pending,
                               uct_pvrdma_ep_has_resources(ep));
    ep->dispatching = 0;
}


/* ----------------------------------------------------------------------- */
/*  Flush and fence                                                        */
/* ----------------------------------------------------------------------- */

/* A signalled zero-length RDMA WRITE to the peer's scratch word: its
 * completion retires every earlier WR of the ep's QP (ep flush and
 * uct_pvrdma_ep_retire_all_unsignaled).  No user data: not counted in
 * iface->op_count.rdma_writes. */
static ucs_status_t uct_pvrdma_ep_post_flush_write(uct_pvrdma_iface_t *iface,
                                                   uct_pvrdma_ep_t *ep)
{
    struct ibv_send_wr wr;

    uct_pvrdma_ep_batch_post(ep); /* behind the AMs waiting for their list */
    memset(&wr, 0, sizeof(wr));
    wr.sg_list             = NULL;
    wr.num_sge             = 0;
    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = ep->flush_addr;
    wr.wr.rdma.rkey        = ep->flush_rkey;
    return uct_pvrdma_txq_post(iface, &ep->txq, &wr, 1);
}


/* Whether a flush WRITE may go on @p ep now (the kick's and the probe's
 * common admission): connected, on a connection that uses RDMA WRITE (a
 * send/recv-only one has no scratch word to write, and QEMU's model turns
 * the WRITE into a SEND the peer has no receive for), with room in the send
 * queue and the CQ. */
static int uct_pvrdma_ep_has_flush_write(uct_pvrdma_iface_t *iface,
                                         uct_pvrdma_ep_t *ep)
{
    return (ep->state == UCT_PVRDMA_EP_CONNECTED) && iface->rdma_write_ok &&
           (ep->credit_rx_len == 0);
}

static int uct_pvrdma_ep_flush_write_admits(uct_pvrdma_iface_t *iface,
                                            uct_pvrdma_ep_t *ep)
{
    return uct_pvrdma_ep_has_flush_write(iface, ep) &&
           uct_pvrdma_txq_has_room(iface, &ep->txq);
}


/* pvrdma_stall.c: a signalled WR of this ep has neither completed nor failed
 * for far longer than RC's retransmission takes (TIMEOUT x RETRY_COUNT).
 * Seen on SoftRoCE under load: the peer got the data but no ACK came back
 * and nothing was resent, QP in RTS, for minutes.  A new signalled
 * zero-length WRITE makes the device send a packet; the peer acknowledges
 * it (ACKs are cumulative, so this retires every earlier WR) or, if it
 * missed earlier packets, NAKs it and the device resends them.  Returns 1
 * when posted. */
int uct_pvrdma_ep_kick(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if ((ep->txq.signaled == 0) || !uct_pvrdma_ep_flush_write_admits(iface, ep)) {
        return 0;
    }
    return uct_pvrdma_ep_post_flush_write(iface, ep) == UCS_OK;
}


/* pvrdma_stall.c's keepalive: a connected ep with no signalled WR in flight
 * gets a signalled zero-length WRITE to the peer's scratch word (it also
 * retires the unsignalled WRs before it, which alone never complete
 * visibly).  The peer's device acknowledges it without its process (which
 * may be computing); a dead peer fails it with retry-exceeded, and the ep
 * fails through UCT error handling.  A send/recv-only connection is not
 * probed (it would need a receive and a credit of the peer).  A posted
 * probe is counted and its completion, not @p now, is the next sign of
 * life.  Returns 1 when posted. */
int uct_pvrdma_ep_probe(uct_pvrdma_ep_t *ep, ucs_time_t now)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if ((ep->txq.signaled > 0) || !uct_pvrdma_ep_flush_write_admits(iface, ep) ||
        (uct_pvrdma_ep_post_flush_write(iface, ep) != UCS_OK)) {
        return 0;
    }
    ++iface->watch.keepalives;
    pvrdma_common_watch_restart(&ep->alive, now);
    return 1;
}


/* The connection budget wants this ep idle (pvrdma_budget.c): its last WRs
 * were unsignalled, so nothing says they completed; a signalled zero-length
 * WRITE retires them.  Returns 1 when posted. */
int uct_pvrdma_ep_retire(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if ((ep->txq.signaled > 0) || (ep->txq.posted_sn == ep->txq.acked_sn) ||
        (ep->batch.len > 0) || !uct_pvrdma_ep_flush_write_admits(iface, ep)) {
        return 0;
    }
    return uct_pvrdma_ep_post_flush_write(iface, ep) == UCS_OK;
}


/*
 * uct_ep_check: a caller (UCP's keepalive where it uses it, or an
 * application) asks that a dead peer show up even though nothing is being
 * sent to it.  The answer is the keepalive's probe, now: a signalled
 * zero-length WRITE that the peer's device acknowledges and that fails with
 * retry-exceeded when the peer's process, VM or link is gone, so that the
 * ep fails through UCT error handling (asynchronously, as UCT wants).  An
 * ep with a signalled WR in flight needs no probe: RC completes or fails
 * that WR.  On a send/recv-only connection (QEMU's model only) every WR is
 * signalled, so whatever was sent last completes or fails visibly; with
 * nothing in flight there is nothing to probe with (a SEND would need a
 * receive and a credit of the peer), and the check is a no-op there.
 */
ucs_status_t uct_pvrdma_ep_check(uct_ep_h tl_ep, unsigned flags,
                                 uct_completion_t *comp)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);

    UCT_EP_KEEPALIVE_CHECK_PARAM(flags, comp);

    /* failed: already reported; connecting: the connection timeout
     * (CONN_TIMEOUT) fails it; a signalled WR in flight: RC will */
    if ((ep->txq.signaled > 0) || !uct_pvrdma_ep_has_flush_write(iface, ep)) {
        return UCS_OK;
    }
    if (!uct_pvrdma_ep_probe(ep, ucs_get_time())) {
        return UCS_ERR_NO_RESOURCE; /* no room: UCP tries again */
    }
    ucs_debug("pvrdma: ep_check probe on ep %p", ep);
    return UCS_OK;
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

    /* What is not posted yet is not flushed: an ep still connecting has
     * posted nothing (posted_sn == acked_sn == 0), requests in its pending
     * queue wait behind.  UCP queues its flush behind them only when told
     * NO_RESOURCE (as UCX's ud transport does); UCS_OK here let
     * MPI_Win_flush return before a put to a new peer was even posted and
     * ucp_ep_close drop queued AMs (issue 34).  The request being
     * dispatched may flush: the queue's rest is behind it. */
    if ((ep->state == UCT_PVRDMA_EP_CONNECTING) ||
        (!ucs_queue_is_empty(&ep->pending) && !ep->dispatching)) {
        return UCS_ERR_NO_RESOURCE;
    }

    /* AMs waiting for the turn's WR list go now: a flush waits for them */
    uct_pvrdma_ep_batch_post(ep);
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
        UCT_TL_IFACE_GET_TX_DESC(&iface->super, &iface->tx_mp, desc, {
            uct_pvrdma_iface_tx_mp_empty(iface);
            return UCS_ERR_NO_RESOURCE;
        });
        uct_pvrdma_tx_desc_reset(desc);
        desc->comp = comp;
        uct_pvrdma_ep_track_desc(ep, desc);
    } else {
        /* the caller polls flush until it is done: no idle back-off */
        iface->tx_batch.flush_turn = iface->tx_batch.turn;
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


/* Is this ep the one to the peer at dev_addr and iface_addr (its UD QP and
 * secret)?  A failed ep is not: UCP must not keep it in a new
 * configuration.  For ep_is_connected (pvrdma_compat.h). */
int uct_pvrdma_ep_is_peer(uct_ep_h tl_ep, const uct_device_addr_t *dev_addr,
                          const uct_iface_addr_t *iface_addr)
{
    uct_pvrdma_ep_t *ep = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uint8_t secret[PVRDMA_COMMON_UD_SECRET_LEN];
    struct pvrdma_common_addr_info remote;

    if ((ep->state == UCT_PVRDMA_EP_FAILED) ||
        (uct_pvrdma_dev_addr_unpack(dev_addr, &remote) != 0)) {
        return 0;
    }

    uct_pvrdma_iface_addr_secret(iface_addr, secret);
    return !memcmp(&remote.gid, &ep->peer_gid, sizeof(remote.gid)) &&
           (remote.lid == ep->peer_lid) &&
           (uct_pvrdma_iface_addr_qpn(iface_addr) == ep->peer_ud_qpn) &&
           !memcmp(secret, ep->peer_secret, sizeof(secret));
}


/* ----------------------------------------------------------------------- */
/*  Class                                                                  */
/* ----------------------------------------------------------------------- */

/* An RC QP for the ep, a credit slot, a new connection id and PSN, and the
 * connection exchange started: at its first connection and each time the
 * connection budget reopens it (pvrdma_budget.c).  On failure the ep is as
 * it was (no QP). */
ucs_status_t uct_pvrdma_ep_open_qp(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    ucs_status_t status;

    /* receives only for credit messages, if the connection turns out to be
     * send/recv-only (the CONN_REP says) */
    status = uct_pvrdma_iface_create_rc_qp(iface, UCT_PVRDMA_CREDIT_RX_LEN,
                                           &ep->txq.qp);
    if (status != UCS_OK) {
        ep->txq.qp = NULL;
        return status;
    }

    status = uct_pvrdma_slot_get(iface, &ep->slot_chunk, &ep->slot_index);
    if (status != UCS_OK) {
        ibv_destroy_qp(ep->txq.qp);
        ep->txq.qp = NULL;
        return status;
    }

    ep->txq.kind       = UCT_PVRDMA_QP_EP;
    ep->txq.avail      = iface->config.tx_queue_len;
    ep->txq.moderation = iface->config.tx_moderation;
    ep->txq.unsignaled = 0;
    ep->txq.signaled   = 0;
    ep->txq.posted_sn  = 0;
    ep->txq.acked_sn   = 0;
    ep->credit_rx_len  = 0;
    ep->state          = UCT_PVRDMA_EP_CONNECTING;
    ep->fence          = 0;
    ep->conn_id        = iface->iface_uuid + (++iface->conn.seq);
    ep->psn            = pvrdma_common_psn_new();
    ep->credits_seen   = 0;
    ep->fail_why       = NULL;
    memset(&ep->credits, 0, sizeof(ep->credits));
    memset(&ep->alive, 0, sizeof(ep->alive));
    memset(&ep->kick, 0, sizeof(ep->kick));
    ep->budget.am_sent  = 0;
    ep->budget.lru_sn   = 0;
    ep->budget.lru_time = ucs_get_time();
    ep->budget.refused  = 0;
    if (ep->budget.opens++ > 0) {
        uct_pvrdma_ep_tag_add(ep); /* its last was dropped at its close */
    }
    if (++iface->budget.held > iface->budget.held_max) {
        iface->budget.held_max = iface->budget.held;
    }

    uct_pvrdma_iface_qp_add(iface, &ep->txq);
    return uct_pvrdma_conn_start(ep);
}


/* Give back what the ep's connection holds: QP, credit slot, credit
 * receives.  Nothing of it may be in flight any more (destroy: cancelled
 * by the caller; close: the peer agreed), and the QP is off the iface's
 * lookup (uct_pvrdma_iface_qp_remove). */
static void uct_pvrdma_ep_release_qp(uct_pvrdma_iface_t *iface,
                                     uct_pvrdma_ep_t *ep)
{
    unsigned i;
    int ret;

    ret = ibv_destroy_qp(ep->txq.qp);
    if (ret != 0) {
        ucs_warn("pvrdma: ibv_destroy_qp(0x%x) failed: %s",
                 ep->txq.qp->qp_num, strerror(ret));
    }
    ep->txq.qp = NULL;
    --iface->budget.held;
    uct_pvrdma_slot_put(ep->slot_chunk, ep->slot_index);
    /* The credit receives hold registered slots, not pool buffers: they
     * go back here, whether or not their flushes ever reach the CQ (if
     * they do, the QP is unknown by then and they are ignored); their CQ
     * entries are zombies until the CQ has been drained. */
    if (ep->credit_rx_len > 0) {
        for (i = 0; i < ep->credit_rx_len; ++i) {
            uct_pvrdma_slot_put(ep->credit_rx[i].chunk,
                                ep->credit_rx[i].index);
        }
        iface->cq_acct.rx_reserved -= ep->credit_rx_len;
        iface->cq_acct.budget      += ep->credit_rx_len;
        uct_pvrdma_iface_zombie_add(iface, ep->credit_rx_len);
        ep->credit_rx_len = 0;
    }
}


/* The peer agreed to close the connection for the connection budget
 * (pvrdma_budget.c): nothing is queued or in flight on it either way (a
 * credit SEND its channel posted before agreeing reached our CQ ahead of
 * the CLOSE_ACK, which the UD QP completes on the same CQ, so it was
 * handled while the QP was ours).  The ep stays, CLOSED, without a QP,
 * until a send opens it again; its credits in AM immediates stop (our
 * channel from the peer returns them by WRITE or SEND meanwhile). */
void uct_pvrdma_ep_close_qp(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    ucs_assert(ep->state == UCT_PVRDMA_EP_CLOSING);
    uct_pvrdma_ep_unpair_chan(ep);
    /* a new tag when it reopens: credits for the closed connection that
     * the peer's AMs still carry then find no ep, rather than the new
     * connection (whose receives they do not count) */
    uct_pvrdma_ep_tag_remove(ep);
    uct_pvrdma_iface_qp_remove(iface, &ep->txq);
    uct_pvrdma_ep_release_qp(iface, ep);
    ep->state = UCT_PVRDMA_EP_CLOSED;
    ucs_debug("pvrdma: ep %p closed for the connection budget (%u of %u "
              "held)", ep, iface->budget.held, iface->budget.max);
}


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
    uct_pvrdma_iface_addr_secret(params->iface_addr, self->peer_secret);
    /* no QP until the connection budget gives it one (at once when the
     * budget has room): CLOSED, nothing posted */
    self->state       = UCT_PVRDMA_EP_CLOSED;
    self->status      = UCS_OK;
    self->fence       = 0;
    self->batch.head  = self->batch.tail = NULL;
    self->batch.len   = 0;
    self->batch.turn  = 0;
    self->ah          = NULL;
    self->conn_id     = 0;
    self->credits_seen    = 0;
    memset(&self->alive, 0, sizeof(self->alive));
    memset(&self->kick, 0, sizeof(self->kick));
    memset(&self->budget, 0, sizeof(self->budget));
    self->fail_why        = NULL;
    self->in_pending_list = 0;
    self->rev_chan        = NULL;
    ucs_queue_head_init(&self->outstanding);
    ucs_queue_head_init(&self->pending);
    self->dispatching     = 0;
    memset(&self->credits, 0, sizeof(self->credits));
    memset(&self->txq, 0, sizeof(self->txq));
    self->txq.kind        = UCT_PVRDMA_QP_EP;
    self->credit_rx_len   = 0;

    ucs_list_add_tail(&iface->eps, &self->list);
    uct_pvrdma_ep_tag_add(self);

    status = uct_pvrdma_budget_connect(self);
    if (status != UCS_OK) {
        uct_pvrdma_ep_tag_remove(self);
        ucs_list_del(&self->list);
        return status;
    }
    return UCS_OK;
}


static UCS_CLASS_CLEANUP_FUNC(uct_pvrdma_ep_t)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(self->super.super.iface,
                                               uct_pvrdma_iface_t);

    if (self->state == UCT_PVRDMA_EP_CONNECTING) {
        --iface->conn.num_connecting;
    }
    uct_pvrdma_budget_ep_cleanup(self);
    if ((self->state != UCT_PVRDMA_EP_FAILED) && (self->txq.qp != NULL)) {
        /* let the peer free its passive channel, which exists if it got a
         * request: resent until acknowledged (pvrdma_conn.c); a closed ep
         * has none there */
        uct_pvrdma_conn_disconnect(self);
    }

    if (self->in_pending_list) {
        ucs_list_del(&self->pending_link);
    }
    uct_pvrdma_ep_unpair_chan(self);
    uct_pvrdma_ep_tag_remove(self);
    ucs_list_del(&self->list);
    /* AMs still waiting for their WR list (a destroy without a flush) are
     * cancelled with the rest below, never posted */
    uct_pvrdma_ep_batch_drop(self);
    if (self->txq.qp != NULL) {
        uct_pvrdma_iface_qp_remove(iface, &self->txq);
    }

    /* outstanding work is cancelled, as UCT requires on destroy */
    uct_pvrdma_ep_release_descs(self, UINT64_MAX, UCS_ERR_CANCELED);

    if (self->txq.qp != NULL) {
        uct_pvrdma_ep_release_qp(iface, self);
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
unsigned uct_pvrdma_ep_retire_all_unsignaled(uct_pvrdma_iface_t *iface)
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
