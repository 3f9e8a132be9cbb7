/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_chan.c
 * @brief Passive side of a connection: the RC QP that receives a peer ep's
 *        active messages (and is the target of its RDMA), keeps receives
 *        posted and returns credits.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"


/* Return owed credits: RDMA WRITE of the cumulative total to the peer's
 * slot, or on a send/recv-only connection a SEND of it
 * (uct_pvrdma_chan_send_credits, pvrdma_sr.c).  Skipped (and retried on the next
 * completion) when the QP is full.  With @p may_defer, a channel whose
 * credits can ride the AMs of an ep to the same peer waits one progress
 * call for such an AM (pvrdma_credit_imm.c). */
void uct_pvrdma_chan_return_credits(uct_pvrdma_chan_t *chan, int may_defer)
{
    uct_pvrdma_iface_t *iface = chan->iface;
    volatile uint64_t *total  = &chan->src_chunk->slots[chan->src_index];
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    uint32_t count;

    if (!pvrdma_common_credits_need_return(&chan->credits) ||
        ucs_unlikely(chan->credit_inflight)) {
        return; /* (a credit SEND in flight: again from its completion) */
    }

    if (ucs_unlikely(!uct_pvrdma_txq_has_room(iface, &chan->txq))) {
        /* Send queue or CQ budget full: retried from progress until it is
         * posted.  Never dropped: after the last message of a burst no
         * receive comes to retry it, and the sender would wait for these
         * credits for ever. */
        uct_pvrdma_chan_defer_credits(chan);
        return;
    }

    if (may_defer && (chan->rev_ep != NULL)) {
        uct_pvrdma_chan_defer_credits(chan);
        return;
    }

    count      = pvrdma_common_credits_piggyback(&chan->credits);
    *total    += count;
    sge.addr   = (uintptr_t)total;
    sge.length = sizeof(*total);
    sge.lkey   = chan->src_chunk->mr->lkey;

    wr.sg_list             = &sge;
    wr.num_sge             = 1;
    wr.send_flags          = 0;
    if (ucs_unlikely(chan->send_credits)) {
        uct_pvrdma_chan_send_credits(chan, &wr, count);
        return;
    }

    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = chan->credit_addr;
    wr.wr.rdma.rkey        = chan->credit_rkey;
    if (uct_pvrdma_txq_post(iface, &chan->txq, &wr, 0) == UCS_OK) {
        iface->op_count.credits_by_msg += count;
        return;
    }
    /* not posted (issue 34): the credits are owed again and the return is
     * retried from progress, or the sender would wait for them for ever */
    *total -= count;
    pvrdma_common_credits_unpiggyback(&chan->credits, count);
    uct_pvrdma_chan_defer_credits(chan);
}


static void uct_pvrdma_chan_set_short(uct_pvrdma_chan_t *chan, int is_short)
{
    if (is_short && !chan->rx_short) {
        ucs_list_add_tail(&chan->iface->rx_short_chans, &chan->rx_short_link);
        chan->rx_short = 1;
    } else if (!is_short && chan->rx_short) {
        ucs_list_del(&chan->rx_short_link);
        chan->rx_short = 0;
    }
}


/* Return a descriptor that is not (or no more) posted to the pool. */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_chan_put_desc(uct_pvrdma_iface_t *iface, uct_pvrdma_rx_desc_t *desc)
{
    desc->chan = NULL;
    --iface->bufs.rx_descs_inuse;
    ucs_mpool_put_inline(desc);
}


/* Repost receives in one WR list once a batch is missing.  When the pool
 * cannot give enough buffers (it could not grow: memory, locked-memory
 * limit), the channel is put on the iface's list of short channels and
 * progress retries it: a channel left without receives gets no
 * completion that would. */
static void uct_pvrdma_chan_refill(uct_pvrdma_chan_t *chan, int force)
{
    uct_pvrdma_iface_t *iface = chan->iface;
    unsigned missing          = chan->rx_len - chan->rx_posted;
    struct ibv_recv_wr wrs[missing], *bad_wr;
    struct ibv_sge sges[missing];
    uct_pvrdma_rx_desc_t *desc;
    unsigned i, count = 0;
    int ret;

    if ((missing == 0) || (!force && (missing < chan->rx_batch))) {
        return;
    }

    for (i = 0; i < missing; ++i) {
        desc = ucs_mpool_get_inline(&iface->rx_mp);
        if (desc == NULL) {
            uct_iface_mpool_empty_warn(&iface->super, &iface->rx_mp);
            break;
        }

        ++iface->bufs.rx_descs_inuse;
        desc->chan         = chan;
        ucs_list_add_tail(&chan->rx_descs, &desc->list);
        sges[count].addr   = (uintptr_t)desc + chan->rx_offset;
        sges[count].length = chan->rx_length;
        sges[count].lkey   = desc->lkey;
        wrs[count].wr_id   = (uintptr_t)desc;
        wrs[count].sg_list = &sges[count];
        wrs[count].num_sge = 1;
        wrs[count].next    = &wrs[count + 1];
        ++count;
    }

    uct_pvrdma_chan_set_short(chan, count < missing);
    if (count == 0) {
        return;
    }

    wrs[count - 1].next = NULL;
    ret = ibv_post_recv(chan->txq.qp, wrs, &bad_wr);
    if (ret != 0) {
        ucs_error("pvrdma: ibv_post_recv(qp 0x%x, %u) failed: %s",
                  chan->txq.qp->qp_num, count, strerror(ret));
        for (; bad_wr != NULL; bad_wr = bad_wr->next) {
            desc = (uct_pvrdma_rx_desc_t*)bad_wr->wr_id;
            ucs_list_del(&desc->list);
            uct_pvrdma_chan_put_desc(iface, desc);
            --count;
        }
    }

    chan->rx_posted += count;
    pvrdma_common_credits_consumed(&chan->credits, count);
}


/* Progress: channels whose refill came short try again.  The list is
 * taken first: a channel still short puts itself back for the next call. */
void uct_pvrdma_iface_refill_short_chans(uct_pvrdma_iface_t *iface)
{
    ucs_list_link_t batch;
    uct_pvrdma_chan_t *chan;

    ucs_list_head_init(&batch);
    ucs_list_splice_tail(&batch, &iface->rx_short_chans);
    ucs_list_head_init(&iface->rx_short_chans);
    while (!ucs_list_is_empty(&batch)) {
        chan = ucs_list_extract_head(&batch, uct_pvrdma_chan_t,
                                     rx_short_link);
        chan->rx_short = 0;
        uct_pvrdma_chan_refill(chan, 1);
        uct_pvrdma_chan_return_credits(chan, 1);
    }
}


void uct_pvrdma_chan_destroy(uct_pvrdma_chan_t *chan)
{
    uct_pvrdma_iface_t *iface = chan->iface;
    uct_pvrdma_rx_desc_t *desc, *tmp;
    int ret;

    uct_pvrdma_chan_unpair_ep(chan);
    uct_pvrdma_chan_set_short(chan, 0);
    uct_pvrdma_conn_chan_confirmed(chan); /* not counted as pending now */
    ucs_list_del(&chan->list);
    --iface->conn.num_chans;
    uct_pvrdma_iface_qp_remove(iface, &chan->txq);

    (void)pvrdma_common_qp_to_err(chan->txq.qp);
    ret = ibv_destroy_qp(chan->txq.qp);
    if (ret != 0) {
        ucs_warn("pvrdma: ibv_destroy_qp(0x%x) failed: %s",
                 chan->txq.qp->qp_num, strerror(ret));
    }

    /* Every receive still posted goes back to the pool now, after the
     * destroy (the device writes no more into them): providers that remove
     * a destroyed QP's completions from the CQ (vmw_pvrdma, mlx5) never
     * show their flushes, and those that leave them (SoftRoCE) are ignored
     * by the poller, as the QP is unknown.  Their CQ entries wait as
     * zombies until the CQ is drained. */
    ucs_list_for_each_safe(desc, tmp, &chan->rx_descs, list) {
        ucs_list_del(&desc->list);
        uct_pvrdma_chan_put_desc(iface, desc);
    }
    iface->cq_acct.rx_reserved -= chan->rx_len;
    iface->cq_acct.budget      += chan->rx_len;
    uct_pvrdma_iface_zombie_add(iface, chan->rx_posted);
    chan->rx_posted = 0;

    uct_pvrdma_slot_put(chan->src_chunk, chan->src_index);
    uct_pvrdma_iface_report_chan_close(iface);
    ucs_free(chan);
}


/* pvrdma_stall.c's keepalive for a passive channel: a signalled zero-length
 * WRITE to the peer ep's credit slot (writes nothing; the rkey is the one
 * credit returns use).  A live peer's device acknowledges it; if the peer's
 * process, VM or ep is gone it fails within RC's retry window and the
 * channel is freed (uct_pvrdma_chan_fail).  Not on a send/recv-only
 * connection (QEMU's model turns the WRITE into a SEND the peer has no
 * receive for).  Returns 1 when posted. */
int uct_pvrdma_chan_probe(uct_pvrdma_chan_t *chan)
{
    uct_pvrdma_iface_t *iface = chan->iface;
    struct ibv_send_wr wr;

    if (chan->unconfirmed || chan->send_credits || (chan->txq.signaled > 0) ||
        !uct_pvrdma_txq_has_room(iface, &chan->txq)) {
        return 0;
    }
    memset(&wr, 0, sizeof(wr));
    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = chan->credit_addr;
    wr.wr.rdma.rkey        = chan->credit_rkey;
    return uct_pvrdma_txq_post(iface, &chan->txq, &wr, 1) == UCS_OK;
}


static void uct_pvrdma_chan_fail(uct_pvrdma_chan_t *chan, struct ibv_wc *wc)
{
    /* The peer ep is gone or broken; its side reports the error to its
     * user.  Here only the resources are released. */
    ucs_log((wc->status == IBV_WC_WR_FLUSH_ERR) ? UCS_LOG_LEVEL_DEBUG :
            UCS_LOG_LEVEL_DIAG,
            "pvrdma: %s:%d: connection from a peer closed (qp 0x%x: %s)",
            chan->iface->md->dev_name, chan->iface->port_num, wc->qp_num,
            ibv_wc_status_str(wc->status));
    uct_pvrdma_chan_destroy(chan);
}


/* @p is_recv: a receive completion (the poller tells, as the opcode of a
 * failed completion is not valid) */
void uct_pvrdma_chan_handle_wc(uct_pvrdma_chan_t *chan, struct ibv_wc *wc,
                               int is_recv)
{
    uct_pvrdma_iface_t *iface = chan->iface;
    uct_pvrdma_rx_desc_t *desc;
    ucs_status_t status;
    uint32_t am_id, length, imm;
    void *data;

    if (!is_recv) {
        /* completion of a credit write or credit message */
        if (ucs_unlikely(wc->status != IBV_WC_SUCCESS)) {
            uct_pvrdma_chan_fail(chan, wc);
            return;
        }
        /* (the iface retired the WRs from the txq) */
        chan->credit_inflight = 0;
        uct_pvrdma_chan_return_credits(chan, 1);
        return;
    }

    desc = (uct_pvrdma_rx_desc_t*)wc->wr_id;
    if (ucs_unlikely(desc->chan != chan)) {
        /* a flush of an earlier QP with the same number, whose buffer was
         * returned when that QP was destroyed */
        return;
    }
    ucs_list_del(&desc->list);
    --chan->rx_posted;
    ++chan->rx_total;

    if (ucs_unlikely(wc->status != IBV_WC_SUCCESS)) {
        uct_pvrdma_chan_put_desc(iface, desc);
        uct_pvrdma_chan_fail(chan, wc);
        return;
    }
    desc->chan = NULL;
    if (ucs_unlikely(chan->unconfirmed)) {
        /* the requester connected: it sent on the QP */
        uct_pvrdma_conn_chan_confirmed(chan);
    }

    data   = UCS_PTR_BYTE_OFFSET(desc, iface->rx_payload_offset);
    length = wc->byte_len;
    if (ucs_likely(chan->rx_hdr_len == 0) &&
        ucs_likely(wc->wc_flags & IBV_WC_WITH_IMM)) {
        imm   = ntohl(wc->imm_data);
        am_id = pvrdma_common_imm_am_id(imm);
        if (imm >= UCT_AM_ID_MAX) {
            /* credits for the reverse connection ride along */
            uct_pvrdma_chan_credit_imm_rx(chan, imm);
        }
    } else {
        /* a send-only peer: the AM id is in a header (or it is garbage) */
        am_id = uct_pvrdma_chan_am_hdr(chan, wc, data, &length);
        if (am_id >= UCT_AM_ID_MAX) {
            ucs_error("pvrdma: qp 0x%x: dropped a message without a valid "
                      "active message id", wc->qp_num);
            uct_pvrdma_chan_put_desc(iface, desc);
            goto out;
        }
    }

    uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, am_id, data,
                       length, "RX: AM");
    status = uct_iface_invoke_am(&iface->super, am_id, data, length,
                                 UCT_CB_PARAM_FLAG_DESC);
    if (status == UCS_OK) {
        uct_pvrdma_chan_put_desc(iface, desc);
    } else {
        /* the user keeps it and calls uct_iface_release_desc() */
        uct_recv_desc(UCS_PTR_BYTE_OFFSET(desc, iface->rx_headroom_offset))
                = &iface->release_desc;
    }

out:
    uct_pvrdma_chan_refill(chan, 0);
    uct_pvrdma_chan_return_credits(chan, 1);
}


/*
 * How many receives a new channel gets.  Its receive queue takes CQ
 * entries for as long as it lives, and the CQ cannot grow (PVRDMA has no
 * resize_cq), so a channel takes RX_QUEUE_LEN only while that is at most
 * 1/UCT_PVRDMA_RX_SHARE_DIV of the entries still free for receives, else
 * that share, but never fewer than UCT_PVRDMA_RX_MIN: a long job's later
 * peers get shorter queues (and fewer credits) instead of being refused.
 * TX_QUEUE_LEN entries always stay for sends.
 * Returns UCS_ERR_NO_RESOURCE when the receives would fit but entries are
 * taken for now by send WRs in flight or by destroyed QPs' completions not
 * yet polled: the request is then not answered, the requester resends it
 * (CONN_RETRY) and the entries are held for it meanwhile; and
 * UCS_ERR_EXCEEDS_LIMIT, with the numbers, when even the minimum does not
 * fit.
 */
/*
 * The share of a new channel: 1/UCT_PVRDMA_RX_SHARE_DIV of the free
 * receive room lasts for any number of peers, but gives the first peers of
 * a small job on a short CQ less than RX_QUEUE_LEN (QEMU's model, 4096
 * entries: 38 receives, a credit return every 28 fragments, 7 send
 * doorbells per 1 MiB, 2026-11-29).  When the launcher says how many peers
 * the job has, the peers not yet connected cannot take more than half the
 * room each, so the share is 1/(2 x those) while that is more (a UCP ep
 * may make a second channel to us); the job's last peers, and processes
 * that join later, get the geometric share of what is left.
 */
unsigned uct_pvrdma_chan_rx_share(const uct_pvrdma_iface_t *iface,
                                  unsigned free_rx, unsigned chans)
{
    unsigned rx_min = ucs_min(UCT_PVRDMA_RX_MIN, iface->config.rx_queue_len);
    unsigned peers  = iface->conn.job_peers;
    unsigned div    = UCT_PVRDMA_RX_SHARE_DIV;

    if (peers > chans) {
        div = ucs_min(div, 2 * (peers - chans));
    }
    return ucs_min(iface->config.rx_queue_len, ucs_max(rx_min, free_rx / div));
}


static ucs_status_t uct_pvrdma_chan_rx_len(uct_pvrdma_iface_t *iface,
                                           unsigned *rx_len_p)
{
    unsigned floor  = iface->config.tx_queue_len;
    unsigned zombies, free_rx, want;

    /* entries held for a request that was not answered: its resend is
     * this one, or another request takes them */
    iface->cq_acct.held = 0;

    zombies = iface->cq_acct.zombie_new + iface->cq_acct.zombie_wait;
    free_rx = (iface->cq_acct.budget + zombies > floor) ?
              (iface->cq_acct.budget + zombies - floor) : 0;
    want    = uct_pvrdma_chan_rx_share(iface, free_rx, iface->conn.num_chans);
    if (want > free_rx) {
        ucs_error("pvrdma: %s:%d: cannot accept another connection: its %u "
                  "receives (the least a connection gets) do not fit in the "
                  "completion queue: CQ %d entries, %u reserved for the "
                  "receives of %u peers connected and the connection QP, %u "
                  "kept for sends; raise UCX_PVRDMA_CQ_LEN (the device "
                  "allows %d) or lower UCX_PVRDMA_RX_QUEUE_LEN (now %u) or "
                  "UCX_PVRDMA_TX_QUEUE_LEN (now %u)", iface->md->dev_name,
                  iface->port_num, want, iface->cq->cqe,
                  iface->cq_acct.rx_reserved, iface->conn.num_chans, floor,
                  iface->md->dev_attr.max_cqe,
                  iface->config.rx_queue_len, iface->config.tx_queue_len);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    /* what is free right now; one entry must stay free for a send, so that
     * a full budget is always one a signalled send filled (impl.h) */
    if ((iface->cq_acct.budget < floor + want) ||
        (iface->cq_acct.budget < iface->cq_acct.tx_outstanding + want + 1)) {
        ucs_debug("pvrdma: %s:%d: %u receives for a new connection wait for "
                  "CQ entries (%u sends in flight, %u zombies)",
                  iface->md->dev_name, iface->port_num, want,
                  iface->cq_acct.tx_outstanding, zombies);
        (void)uct_pvrdma_ep_retire_all_unsignaled(iface);
        /* sends in flight complete, and new ones leave these entries free
         * (uct_pvrdma_txq_has_room) until the request comes again */
        iface->cq_acct.held = ucs_min(want, iface->cq_acct.budget);
        return UCS_ERR_NO_RESOURCE;
    }

    *rx_len_p = want;
    return UCS_OK;
}


ucs_status_t uct_pvrdma_chan_create(uct_pvrdma_iface_t *iface,
                                    const struct pvrdma_common_addr_info *peer,
                                    uint32_t local_psn, uint64_t credit_addr,
                                    uint32_t credit_rkey, int send_credits,
                                    unsigned peer_credit_rx, int rx_am_hdr,
                                    uct_pvrdma_chan_t **chan_p)
{
    uct_pvrdma_chan_t *chan;
    ucs_status_t status;
    unsigned threshold, rx_len;
    int ret;

    status = uct_pvrdma_chan_rx_len(iface, &rx_len);
    if (status != UCS_OK) {
        return status;
    }

    chan = ucs_calloc(1, sizeof(*chan), "pvrdma chan");
    if (chan == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    chan->iface       = iface;
    chan->credit_addr = credit_addr;
    chan->credit_rkey = credit_rkey;
    chan->txq.kind    = UCT_PVRDMA_QP_CHAN;
    chan->txq.avail   = iface->config.tx_queue_len;
    chan->txq.moderation = iface->config.tx_moderation;
    chan->send_credits   = send_credits;
    chan->rx_hdr_len     = rx_am_hdr ? sizeof(uct_pvrdma_am_hdr_t) : 0;
    chan->rx_offset      = iface->rx_payload_offset - chan->rx_hdr_len;
    chan->rx_length      = iface->config.seg_size + chan->rx_hdr_len;
    chan->rx_len         = rx_len;
    chan->rx_batch       = uct_pvrdma_rx_batch(iface->config.rx_batch,
                                               rx_len);
    ucs_list_head_init(&chan->rx_descs);
    threshold            = chan->rx_batch;
    if (send_credits) {
        /* each credit message returns >= initial / peer_credit_rx credits
         * (see uct_pvrdma_chan_send_credits) */
        threshold = ucs_max(threshold,
                            ucs_div_round_up(rx_len, peer_credit_rx));
    }

    status = uct_pvrdma_slot_get(iface, &chan->src_chunk, &chan->src_index);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_pvrdma_iface_create_rc_qp(iface, rx_len, &chan->txq.qp);
    if (status != UCS_OK) {
        goto err_slot;
    }

    pvrdma_common_credits_init(&chan->credits, rx_len, 1, threshold);
    if (send_credits && ((uint64_t)chan->credits.threshold * peer_credit_rx <
                         rx_len)) {
        ucs_error("pvrdma: peer posts %u credit receives, too few for %u "
                  "receive credits", peer_credit_rx, rx_len);
        status = UCS_ERR_UNSUPPORTED;
        goto err_qp;
    }

    /* post every receive before the peer can send */
    uct_pvrdma_chan_refill(chan, 1);
    uct_pvrdma_chan_set_short(chan, 0);
    if (chan->rx_posted < rx_len) {
        ucs_error("pvrdma: %s:%d: could not post %u receive buffers of %zu "
                  "bytes for a new connection (%u in use; locked memory "
                  "limit? lower UCX_PVRDMA_RX_QUEUE_LEN or UCX_PVRDMA_SEG_SIZE)",
                  iface->md->dev_name, iface->port_num, rx_len,
                  iface->rx_mp.data->elem_size, iface->bufs.rx_descs_inuse);
        status = UCS_ERR_NO_MEMORY;
        goto err_qp;
    }
    /* the initial receives are the peer's initial credits, not owed ones */
    pvrdma_common_credits_initial_posted(&chan->credits);

    ret = pvrdma_common_qp_to_rtr(chan->txq.qp, &iface->qp_params, peer);
    if (ret == 0) {
        ret = pvrdma_common_qp_to_rts(chan->txq.qp, &iface->qp_params, peer,
                                      local_psn);
    }
    if (ret != 0) {
        ucs_error("pvrdma: %s:%d: qp 0x%x: connecting to peer qp 0x%x "
                  "failed: %s", iface->md->dev_name, iface->port_num,
                  chan->txq.qp->qp_num, peer->qpn, strerror(ret));
        status = UCS_ERR_UNREACHABLE;
        goto err_qp;
    }

    iface->cq_acct.budget      -= rx_len;
    iface->cq_acct.rx_reserved += rx_len;
    ++iface->conn.num_chans;
    if ((iface->op_count.rx_len_min == 0) ||
        (rx_len < iface->op_count.rx_len_min)) {
        iface->op_count.rx_len_min = rx_len;
    }
    uct_pvrdma_iface_qp_add(iface, &chan->txq);
    ucs_list_add_tail(&iface->chans, &chan->list);
    uct_pvrdma_iface_print_cost(iface, "connection accepted", chan);
    *chan_p = chan;
    return UCS_OK;

err_qp:
    /* nothing was received: the buffers go straight back after the QP */
    ibv_destroy_qp(chan->txq.qp);
    {
        uct_pvrdma_rx_desc_t *desc, *tmp;

        ucs_list_for_each_safe(desc, tmp, &chan->rx_descs, list) {
            ucs_list_del(&desc->list);
            uct_pvrdma_chan_put_desc(iface, desc);
        }
    }
err_slot:
    uct_pvrdma_slot_put(chan->src_chunk, chan->src_index);
err_free:
    ucs_free(chan);
    return status;
}
