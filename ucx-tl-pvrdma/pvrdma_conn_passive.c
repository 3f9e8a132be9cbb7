/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_conn_passive.c
 * @brief The passive side of the connection exchange (pvrdma_conn.c
 *        describes the protocol): a REQ makes a channel and is answered
 *        with REP (or REJ), an RTU or the first receive confirms it, an
 *        unconfirmed one gets its REP again and is closed after
 *        CONN_TIMEOUT, a DISC frees it and is acknowledged.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"
#include "pvrdma_conn_msg.h"


/* The channel of connection @p conn_id from the UD QP @p ud_qpn at @p gid */
uct_pvrdma_chan_t *
uct_pvrdma_conn_find_chan(uct_pvrdma_iface_t *iface,
                          const union ibv_gid *gid, uint32_t ud_qpn,
                          uint64_t conn_id)
{
    uct_pvrdma_chan_t *chan;

    ucs_list_for_each(chan, &iface->chans, list) {
        if ((chan->conn_id == conn_id) && (chan->peer_ud_qpn == ud_qpn) &&
            !memcmp(&chan->peer_gid, gid, sizeof(*gid))) {
            return chan;
        }
    }
    return NULL;
}


void
uct_pvrdma_conn_handle_req(uct_pvrdma_iface_t *iface,
                           const uct_pvrdma_conn_msg_t *req,
                           const struct pvrdma_common_addr_info *peer)
{
    uint32_t ud_qpn  = be32toh(req->src_ud_qpn);
    uint64_t conn_id = be64toh(req->conn_id);
    int peer_sr      = !!(req->hdr.flags & UCT_PVRDMA_CONN_F_SEND_ONLY);
    int send_only    = peer_sr || !iface->rdma_write_ok;
    uct_pvrdma_conn_msg_t rep;
    uct_pvrdma_chan_t *chan;
    struct ibv_ah *ah;
    ucs_status_t status;
    uint32_t psn;
    char err[128];

    chan = uct_pvrdma_conn_find_chan(iface, &peer->gid, ud_qpn, conn_id);
    if ((chan == NULL) &&
        (iface->conn.num_unconfirmed >= iface->config.conn_pending_max)) {
        /* its sender resends it; by then some are confirmed or closed.  No
         * address handle for it (issue 34: the cache held one for every
         * request, also those left unanswered). */
        ++iface->conn.reqs_capped;
        if (ucs_is_pow2(iface->conn.reqs_capped)) {
            /* said at the 1st, 2nd, 4th, ... time */
            ucs_diag("pvrdma: %s:%d: %u accepted connections unconfirmed "
                     "(UCX_PVRDMA_CONN_PENDING_MAX): request not answered "
                     "(%" PRIu64 " so far)", iface->md->dev_name,
                     iface->port_num, iface->conn.num_unconfirmed,
                     iface->conn.reqs_capped);
        }
        return;
    }

    ah = uct_pvrdma_ud_get_ah(iface, &peer->gid, peer->lid);
    if (ah == NULL) {
        return;
    }

    if (chan != NULL) {
        /* our reply was lost or is late: answer the same again */
        uct_pvrdma_conn_reply(iface, ah, ud_qpn, chan->rep);
        return;
    }

    if (pvrdma_common_addr_check_compat(&iface->dev_info, peer, err,
                                        sizeof(err)) != 0) {
        ucs_error("pvrdma: %s:%d: rejecting a connection: %s",
                  iface->md->dev_name, iface->port_num, err);
        status = UCS_ERR_UNREACHABLE;
    } else if (be32toh(req->credits) > UCT_PVRDMA_CONN_CREDITS_MAX) {
        ucs_diag("pvrdma: %s:%d: rejecting a connection that grants %u "
                 "credits", iface->md->dev_name, iface->port_num,
                 be32toh(req->credits));
        status = UCS_ERR_INVALID_PARAM;
    } else if (send_only && (be32toh(req->credits) == 0)) {
        ucs_error("pvrdma: %s:%d: rejecting a connection: it needs send/recv "
                  "credit returns (no RDMA WRITE) but the peer's transport "
                  "does not support them", iface->md->dev_name,
                  iface->port_num);
        status = UCS_ERR_UNSUPPORTED;
    } else {
        psn    = pvrdma_common_psn_new();
        status = uct_pvrdma_chan_create(iface, peer, psn,
                                        be64toh(req->remote_addr),
                                        be32toh(req->rkey), send_only,
                                        be32toh(req->credits), peer_sr,
                                        &chan);
    }

    if (status == UCS_ERR_NO_RESOURCE) {
        /* CQ entries are busy for now (sends in flight, completions of
         * destroyed QPs): the requester resends within CONN_RETRY.  Say
         * so: unanswered, a requester gave up after CONN_TIMEOUT at 4 x 8
         * with a budget of 4 (CI, 2026-12-02), as if we were dead */
        uct_pvrdma_conn_msg_init(iface, &rep, UCT_PVRDMA_CONN_BUSY, conn_id);
        uct_pvrdma_conn_reply(iface, ah, ud_qpn, &rep);
        ++iface->conn.reqs_busy;
        return;
    } else if (status != UCS_OK) {
        uct_pvrdma_conn_msg_init(iface, &rep, UCT_PVRDMA_CONN_REJ, conn_id);
        uct_pvrdma_conn_reply(iface, ah, ud_qpn, &rep);
        return;
    }

    chan->peer_gid     = peer->gid;
    chan->peer_lid     = peer->lid;
    chan->peer_ud_qpn  = ud_qpn;
    chan->conn_id      = conn_id;
    chan->unconfirmed  = 1;
    chan->next_rep     = ucs_get_time() + iface->config.conn_retry;
    chan->deadline     = ucs_get_time() + iface->config.conn_timeout;
    ++iface->conn.num_unconfirmed;
    chan->peer_has_tag = !!(req->hdr.flags & UCT_PVRDMA_CONN_F_EP_TAG);
    chan->peer_ep_tag  = be16toh(req->ep_tag);
    uct_pvrdma_chan_pair_ep(chan);

    uct_pvrdma_conn_msg_init(iface, &rep, UCT_PVRDMA_CONN_REP, conn_id);
    uct_pvrdma_conn_pack_addr(iface, chan->txq.qp->qp_num, psn, rep.addr);
    rep.remote_addr = htobe64((uintptr_t)iface->scratch);
    rep.rkey        = htobe32(iface->scratch_mr->rkey);
    /* the receives it really posted (maybe fewer than RX_QUEUE_LEN) */
    rep.credits     = htobe32(chan->rx_len);
    rep.hdr.flags   = send_only ? UCT_PVRDMA_CONN_F_SEND_ONLY : 0;

    UCS_STATIC_ASSERT(sizeof(rep) <= sizeof(chan->rep));
    memcpy(chan->rep, &rep, sizeof(rep));
    chan->rep_len = sizeof(rep);
    uct_pvrdma_conn_reply(iface, ah, ud_qpn, &rep);
    ucs_debug("pvrdma: accepted connection 0x%" PRIx64 " on qp 0x%x, %u "
              "receives%s%s", conn_id, chan->txq.qp->qp_num, chan->rx_len,
              send_only ? ", send/recv only" : "",
              peer_sr ? " (AM id in a header)" : "");
}


/* RTU: the ep is connected to its channel */
void
uct_pvrdma_conn_handle_rtu(uct_pvrdma_iface_t *iface,
                           const uct_pvrdma_conn_msg_t *msg,
                           const struct pvrdma_common_addr_info *peer)
{
    uct_pvrdma_chan_t *chan;

    chan = uct_pvrdma_conn_find_chan(iface, &peer->gid,
                                     be32toh(msg->src_ud_qpn),
                                     be64toh(msg->conn_id));
    if (chan != NULL) {
        uct_pvrdma_conn_chan_confirmed(chan);
    }
}


/* DISC: the ep is gone: free its channel if it is still here, and say so
 * either way (a DISC resent after a lost DACK finds no channel) */
void
uct_pvrdma_conn_handle_disc(uct_pvrdma_iface_t *iface,
                            const uct_pvrdma_conn_msg_t *msg,
                            const struct pvrdma_common_addr_info *peer)
{
    uint32_t ud_qpn  = be32toh(msg->src_ud_qpn);
    uint64_t conn_id = be64toh(msg->conn_id);
    uct_pvrdma_conn_msg_t ack;
    uct_pvrdma_chan_t *chan;
    struct ibv_ah *ah;

    chan = uct_pvrdma_conn_find_chan(iface, &peer->gid, ud_qpn, conn_id);
    if (chan != NULL) {
        ucs_debug("pvrdma: peer closed connection on qp 0x%x",
                  chan->txq.qp->qp_num);
        uct_pvrdma_chan_destroy(chan);
    }
    ah = uct_pvrdma_ud_get_ah(iface, &peer->gid, peer->lid);
    if (ah != NULL) {
        uct_pvrdma_conn_msg_init(iface, &ack, UCT_PVRDMA_CONN_DACK, conn_id);
        uct_pvrdma_conn_reply(iface, ah, ud_qpn, &ack);
    }
}


/* Passive channels the requester has not confirmed: reply again, or close
 * them after CONN_TIMEOUT */
void uct_pvrdma_conn_progress_chans(uct_pvrdma_iface_t *iface,
                                    ucs_time_t now, int *looked)
{
    uct_pvrdma_chan_t *chan, *tmp;
    struct ibv_ah *ah;
    char gid_str[64];

    ucs_list_for_each_safe(chan, tmp, &iface->chans, list) {
        if (!chan->unconfirmed) {
            continue;
        }

        if (now >= chan->deadline) {
            ucs_diag("pvrdma: %s:%d: closing the connection on qp 0x%x that "
                     "%s UD qp 0x%x requested: not confirmed within "
                     "UCX_PVRDMA_CONN_TIMEOUT (%.1f s)", iface->md->dev_name,
                     iface->port_num, chan->txq.qp->qp_num,
                     pvrdma_common_gid_str(&chan->peer_gid, gid_str,
                                           sizeof(gid_str)),
                     chan->peer_ud_qpn,
                     ucs_time_to_sec(iface->config.conn_timeout));
            ++iface->conn.chans_reaped;
            uct_pvrdma_chan_destroy(chan);
        } else if (now >= chan->next_rep) {
            /* a live requester answers it with an RTU */
            uct_pvrdma_conn_check_ud(iface, looked);
            chan->next_rep = uct_pvrdma_conn_next_resend(iface, chan->deadline,
                                                         now);
            ah = uct_pvrdma_ud_get_ah(iface, &chan->peer_gid, chan->peer_lid);
            if (ah != NULL) {
                uct_pvrdma_conn_reply(iface, ah, chan->peer_ud_qpn, chan->rep);
            }
        }
    }
}


void uct_pvrdma_conn_chan_confirmed(uct_pvrdma_chan_t *chan)
{
    if (chan->unconfirmed) {
        chan->unconfirmed = 0;
        --chan->iface->conn.num_unconfirmed;
    }
}
