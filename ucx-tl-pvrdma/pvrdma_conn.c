/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_conn.c
 * @brief Connection exchange of the UCT "pvrdma" transport over one UD QP
 *        per iface (design: docs/design.md, "Connection set-up over UD"; the messages' wire
 *        form: pvrdma_conn_msg.h; the UD QP itself: pvrdma_ud.c).
 *
 * Messages (100 bytes, integers big-endian), each with a MAC in the common
 * header keyed by the receiver's secret (from its iface address; replies
 * are keyed by the secret the REQ names): common/ud.c drops every other datagram, and each message must
 * come from the UD QP and GID it names (pvrdma_common_ud_from).
 *   REQ   requester -> iface:  its RC QP address, its own secret for the
 *                              replies, credit slot address/rkey,
 *                              credit receives it would post (send/recv
 *                              mode), flag SEND_ONLY if it has no RDMA WRITE,
 *                              flag EP_TAG with the tag credits in AM
 *                              immediates name the ep by
 *                              (pvrdma_credit_imm.c)
 *   REP   iface -> requester:  passive RC QP address, receives posted,
 *                              scratch word address/rkey (for flush writes),
 *                              flag SEND_ONLY if the connection is
 *                              send/recv-only (either end has no WRITE)
 *   REJ   iface -> requester:  the connection cannot be accepted
 *   BUSY  iface -> requester:  not now (no CQ entries for its receives):
 *                              the requester's CONN_TIMEOUT starts again,
 *                              at most UCT_PVRDMA_CONN_BUSY_MAX times
 *   DISC  requester -> iface:  the ep was destroyed, free the channel
 *                              (carries the requester's secret for DACK)
 *   DACK  iface -> requester:  the channel of that DISC is gone (also
 *                              for a DISC whose channel was already
 *                              freed: the first DACK may have been lost)
 *   RTU   requester -> iface:  the ep is connected to the channel (sent
 *                              for every REP of a live ep)
 *   CLOSE, CLOSE_ACK, CLOSE_NAK: the connection budget's agreement to
 *                              close an idle connection (pvrdma_budget.c)
 * A REQ is resent every CONN_RETRY until REP/REJ or CONN_TIMEOUT; the
 * passive side answers duplicates with the saved REP.  A channel is
 * unconfirmed until an RTU or its first receive arrives: meanwhile its REP
 * is resent every CONN_RETRY, and after CONN_TIMEOUT it is closed (its
 * requester died, or its DISC was lost); at most CONN_PENDING_MAX
 * channels are unconfirmed at a time, requests beyond wait unanswered.
 * A destroyed ep leaves a disconnect record (uct_pvrdma_disc_t) whose DISC
 * is resent every CONN_RETRY until a DACK or CONN_TIMEOUT (issue 34: a
 * lost DISC left the peer's confirmed channel open until its iface
 * closed).
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"


#include "pvrdma_conn_msg.h"


/* Nothing connecting, open or being disconnected; no connection id given
 * yet. */
void uct_pvrdma_iface_conn_init(uct_pvrdma_iface_conn_t *conn)
{
    memset(conn, 0, sizeof(*conn));
}


/* Local RC QP address in wire form */
void uct_pvrdma_conn_pack_addr(uct_pvrdma_iface_t *iface,
                               uint32_t qpn, uint32_t psn, void *wire)
{
    struct pvrdma_common_addr_info info = iface->dev_info;

    info.qpn = qpn;
    info.psn = psn;
    (void)pvrdma_common_addr_pack(&info, wire);
}


/* Every message names our GID in its address, which the receiver checks
 * against the datagram's source (pvrdma_common_ud_from) and drops the
 * message without: REJ and DACK carry the UD QP's number there, the others
 * overwrite it with their RC QP's (issue 34: REJ and DACK went out with a
 * zeroed address and were dropped as malformed, so a rejected requester
 * waited for CONN_TIMEOUT and no DISC was ever acknowledged). */
void uct_pvrdma_conn_msg_init(uct_pvrdma_iface_t *iface,
                              uct_pvrdma_conn_msg_t *msg, uint8_t type,
                              uint64_t conn_id)
{
    memset(msg, 0, sizeof(*msg));
    msg->hdr.type   = type;
    msg->src_ud_qpn = htobe32(iface->ud.dgram.qp->qp_num);
    msg->conn_id    = htobe64(conn_id);
    uct_pvrdma_conn_pack_addr(iface, iface->ud.dgram.qp->qp_num, 0, msg->addr);
}


/* REP, REJ, DACK: to a requester that has our iface address, so their MAC
 * is keyed with our own secret (issue 37: a REQ used to carry the
 * requester's secret for them, in clear) */
void uct_pvrdma_conn_reply(uct_pvrdma_iface_t *iface, struct ibv_ah *ah,
                           uint32_t dest_qpn, const void *msg)
{
    uct_pvrdma_ud_send(iface, ah, dest_qpn, iface->ud.dgram.secret,
                       PVRDMA_COMMON_UD_KEYED_SENDER, msg);
}


/* ----------------------------------------------------------------------- */
/*  Active side                                                            */
/* ----------------------------------------------------------------------- */

static void uct_pvrdma_conn_send_req(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_conn_msg_t msg;

    if (ep->ah == NULL) {
        ep->ah = uct_pvrdma_ud_get_ah(iface, &ep->peer_gid, ep->peer_lid);
        if (ep->ah == NULL) {
            return; /* the next resend tries again; CONN_TIMEOUT bounds it */
        }
    }
    uct_pvrdma_conn_msg_init(iface, &msg, UCT_PVRDMA_CONN_REQ, ep->conn_id);
    uct_pvrdma_conn_pack_addr(iface, ep->txq.qp->qp_num, ep->psn, msg.addr);
    msg.remote_addr = htobe64(
            (uintptr_t)&ep->slot_chunk->slots[ep->slot_index]);
    msg.rkey        = htobe32(ep->slot_chunk->mr->rkey);
    msg.credits     = htobe32(UCT_PVRDMA_CREDIT_RX_LEN);
    msg.hdr.flags   = iface->rdma_write_ok ? 0 : UCT_PVRDMA_CONN_F_SEND_ONLY;
    if (ep->has_credit_tag) {
        msg.hdr.flags  |= UCT_PVRDMA_CONN_F_EP_TAG;
        msg.ep_tag  = htobe16(ep->credit_tag);
    }
    uct_pvrdma_ud_send(iface, ep->ah, ep->peer_ud_qpn, ep->peer_secret,
                       PVRDMA_COMMON_UD_KEYED_RECEIVER, &msg);
}


ucs_status_t uct_pvrdma_conn_start(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    ucs_time_t now            = ucs_get_time();

    /* the address handle is made by the first REQ that goes out */
    ep->ah         = NULL;
    ep->deadline   = now + iface->config.conn_timeout;
    ep->next_retry = now + iface->config.conn_retry;
    ep->busy_answers = 0;
    ++iface->conn.num_connecting;
    uct_pvrdma_conn_send_req(ep);
    return UCS_OK;
}


/* RTU of an ep to its peer's iface */
static void uct_pvrdma_conn_send_ep_msg(uct_pvrdma_ep_t *ep, uint8_t type)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_conn_msg_t msg;

    if (ep->ah == NULL) {
        return; /* no REQ ever went out: the peer knows nothing of it */
    }
    uct_pvrdma_conn_msg_init(iface, &msg, type, ep->conn_id);
    uct_pvrdma_conn_pack_addr(iface, ep->txq.qp->qp_num, ep->psn, msg.addr);
    uct_pvrdma_ud_send(iface, ep->ah, ep->peer_ud_qpn, ep->peer_secret,
                       PVRDMA_COMMON_UD_KEYED_RECEIVER, &msg);
}


static void uct_pvrdma_conn_send_disc(uct_pvrdma_iface_t *iface,
                                      const uct_pvrdma_disc_t *disc)
{
    uct_pvrdma_conn_msg_t msg;

    uct_pvrdma_conn_msg_init(iface, &msg, UCT_PVRDMA_CONN_DISC, disc->conn_id);
    uct_pvrdma_conn_pack_addr(iface, disc->qpn, disc->psn, msg.addr);
    /* a send dropped for busy UD slots is resent like a lost one */
    uct_pvrdma_ud_send(iface, disc->ah, disc->peer_ud_qpn, disc->peer_secret,
                       PVRDMA_COMMON_UD_KEYED_RECEIVER, &msg);
}


/* The ep is being destroyed: tell the peer's iface to free its passive
 * channel, which exists if it got a request, and keep telling it until it
 * says so (DACK) */
void uct_pvrdma_conn_disconnect(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    ucs_time_t now            = ucs_get_time();
    uct_pvrdma_disc_t *disc;

    if (ep->ah == NULL) {
        return; /* no REQ ever went out: the peer knows nothing of it */
    }
    disc = ucs_malloc(sizeof(*disc), "pvrdma disc");
    if (disc == NULL) {
        /* one DISC, unacknowledged: the channel may stay until the peer's
         * keepalive finds this ep's QP gone */
        uct_pvrdma_conn_send_ep_msg(ep, UCT_PVRDMA_CONN_DISC);
        return;
    }
    disc->peer_gid    = ep->peer_gid;
    disc->peer_ud_qpn = ep->peer_ud_qpn;
    memcpy(disc->peer_secret, ep->peer_secret, sizeof(disc->peer_secret));
    disc->ah          = ep->ah;  /* the AH cache lives as long as the iface */
    disc->conn_id     = ep->conn_id;
    disc->qpn         = ep->txq.qp->qp_num;
    disc->psn         = ep->psn;
    disc->next_retry  = now + iface->config.conn_retry;
    disc->deadline    = now + iface->config.conn_timeout;
    ucs_list_add_tail(&iface->discs, &disc->list);
    ++iface->conn.num_discs;
    uct_pvrdma_conn_send_disc(iface, disc);
}


static void uct_pvrdma_conn_disc_free(uct_pvrdma_iface_t *iface,
                                      uct_pvrdma_disc_t *disc)
{
    ucs_list_del(&disc->list);
    --iface->conn.num_discs;
    ucs_free(disc);
}


/* At iface close: what was not acknowledged by now is counted as expired */
void uct_pvrdma_conn_discs_cleanup(uct_pvrdma_iface_t *iface)
{
    uct_pvrdma_disc_t *disc, *tmp;

    ucs_list_for_each_safe(disc, tmp, &iface->discs, list) {
        ++iface->conn.discs_expired;
        uct_pvrdma_conn_disc_free(iface, disc);
    }
}


/* A message of ours is resent: no answer came in time.  Is our own
 * connection QP still alive?  A device that flushes nothing when a QP goes
 * to the error state says so only here: once per
 * progress call that resends (a device command); the next CQ poll
 * recovers it (uct_pvrdma_ud_recover). */
void uct_pvrdma_conn_check_ud(uct_pvrdma_iface_t *iface, int *looked)
{
    if (!*looked) {
        *looked = 1;
        (void)pvrdma_common_ud_check_state(&iface->ud.dgram);
    }
}


/* After as long again as the message has waited: CONN_RETRY, then 2, 4
 * and 8 x, at most 8 x and a quarter of CONN_TIMEOUT (so at least four
 * resends fit in it).  A fabric that answers answers within the first
 * CONN_RETRY; one that does not is mostly one whose UD sends are backed up
 * (issue 36, 4 x 8 with a budget of 4 on the rxe bed: at a fixed 1 s every
 * rank's 64 UD send slots stayed full of resends, hundreds of connection
 * messages per rank were not sent at all, and connections timed out with
 * their peers alive).  Each resend round also costs a device command
 * (uct_pvrdma_conn_check_ud), a VM exit on PVRDMA. */
ucs_time_t uct_pvrdma_conn_next_resend(const uct_pvrdma_iface_t *iface,
                                       ucs_time_t deadline, ucs_time_t now)
{
    ucs_time_t since = deadline - iface->config.conn_timeout; /* first sent */
    ucs_time_t retry = iface->config.conn_retry;
    ucs_time_t most  = ucs_max(retry, ucs_min(8 * retry,
                                              iface->config.conn_timeout / 4));
    ucs_time_t gap   = (now > since) ? now - since : 0;

    return now + ucs_min(ucs_max(gap, retry), most);
}


static void uct_pvrdma_conn_progress_eps(uct_pvrdma_iface_t *iface,
                                         ucs_time_t now, int *looked)
{
    char gid_str[64];
    uct_pvrdma_ep_t *ep;

    ucs_list_for_each(ep, &iface->eps, list) {
        if (ep->state != UCT_PVRDMA_EP_CONNECTING) {
            continue;
        }

        if (now >= ep->deadline) {
            ucs_log(iface->super.config.failure_level,
                    "pvrdma: %s:%d: no answer from peer %s UD qp 0x%x "
                    "within UCX_PVRDMA_CONN_TIMEOUT (%.1f s; it had "
                    "answered busy %u times, each restarting it, at most %u; "
                    "here %" PRIu64 " messages not sent for busy send slots, "
                    "%" PRIu64 " datagrams dropped)",
                    iface->md->dev_name, iface->port_num,
                    pvrdma_common_gid_str(&ep->peer_gid, gid_str,
                                          sizeof(gid_str)),
                    ep->peer_ud_qpn,
                    ucs_time_to_sec(iface->config.conn_timeout),
                    ep->busy_answers, UCT_PVRDMA_CONN_BUSY_MAX,
                    iface->ud.tx_full, iface->ud.dgram.dropped);
            /* the error handler may destroy eps: stop iterating */
            uct_pvrdma_ep_set_failed(ep, UCS_ERR_ENDPOINT_TIMEOUT);
            return;
        }

        if (now >= ep->next_retry) {
            uct_pvrdma_conn_check_ud(iface, looked);
            ucs_debug("pvrdma: resending connection request of ep %p", ep);
            ep->next_retry = uct_pvrdma_conn_next_resend(iface, ep->deadline,
                                                         now);
            uct_pvrdma_conn_send_req(ep);
        }
    }
}


/* Disconnects not acknowledged yet: resend, or give up after CONN_TIMEOUT
 * (the peer is gone, or its iface closed) */
static void uct_pvrdma_conn_progress_discs(uct_pvrdma_iface_t *iface,
                                           ucs_time_t now, int *looked)
{
    uct_pvrdma_disc_t *disc, *tmp;

    ucs_list_for_each_safe(disc, tmp, &iface->discs, list) {
        if (now >= disc->deadline) {
            ucs_debug("pvrdma: %s:%d: disconnect of connection 0x%" PRIx64
                      " not acknowledged within UCX_PVRDMA_CONN_TIMEOUT",
                      iface->md->dev_name, iface->port_num, disc->conn_id);
            ++iface->conn.discs_expired;
            uct_pvrdma_conn_disc_free(iface, disc);
        } else if (now >= disc->next_retry) {
            uct_pvrdma_conn_check_ud(iface, looked);
            disc->next_retry = uct_pvrdma_conn_next_resend(iface,
                                                           disc->deadline, now);
            uct_pvrdma_conn_send_disc(iface, disc);
        }
    }
}


void uct_pvrdma_conn_progress(uct_pvrdma_iface_t *iface)
{
    ucs_time_t now = ucs_get_time();
    int looked     = 0;

    if (uct_pvrdma_iface_budget_active(iface)) {
        uct_pvrdma_budget_progress(iface, now, &looked);
    }

    if (iface->conn.num_discs > 0) {
        uct_pvrdma_conn_progress_discs(iface, now, &looked);
    }

    if (iface->conn.num_unconfirmed > 0) {
        uct_pvrdma_conn_progress_chans(iface, now, &looked);
    }
    if (iface->conn.num_connecting > 0) {
        uct_pvrdma_conn_progress_eps(iface, now, &looked);
    }
}


/* The ep that sent the REQ of @p conn_id, connecting, connected or closing
 * (for the budget) */
static uct_pvrdma_ep_t *uct_pvrdma_conn_find_ep(uct_pvrdma_iface_t *iface,
                                                uint64_t conn_id)
{
    uct_pvrdma_ep_t *ep;

    ucs_list_for_each(ep, &iface->eps, list) {
        if ((ep->conn_id == conn_id) &&
            ((ep->state == UCT_PVRDMA_EP_CONNECTING) ||
             (ep->state == UCT_PVRDMA_EP_CONNECTED) ||
             (ep->state == UCT_PVRDMA_EP_CONNECTED_SR) ||
             (ep->state == UCT_PVRDMA_EP_CLOSING))) {
            return ep;
        }
    }
    return NULL;
}


/* A REP/REJ must come from the iface the ep asked; counted if not */
static int uct_pvrdma_conn_from_peer(uct_pvrdma_iface_t *iface,
                                     uct_pvrdma_ep_t *ep,
                                     const uct_pvrdma_conn_msg_t *msg,
                                     const struct pvrdma_common_addr_info *peer)
{
    if ((be32toh(msg->src_ud_qpn) == ep->peer_ud_qpn) &&
        !memcmp(&peer->gid, &ep->peer_gid, sizeof(peer->gid))) {
        return 1;
    }
    ucs_diag("pvrdma: %s:%d: dropped a reply for ep %p from UD qp 0x%x, not "
             "the peer it asked (qp 0x%x)", iface->md->dev_name,
             iface->port_num, ep, be32toh(msg->src_ud_qpn), ep->peer_ud_qpn);
    ++iface->ud.dgram.spoofed;
    ++iface->ud.dgram.dropped;
    return 0;
}


static void
uct_pvrdma_conn_handle_rep(uct_pvrdma_iface_t *iface,
                           const uct_pvrdma_conn_msg_t *msg,
                           const struct pvrdma_common_addr_info *peer)
{
    uct_pvrdma_ep_t *ep = uct_pvrdma_conn_find_ep(iface, be64toh(msg->conn_id));
    int send_only       = (msg->hdr.flags & UCT_PVRDMA_CONN_F_SEND_ONLY) ||
                          !iface->rdma_write_ok;
    ucs_status_t status;
    int ret;

    if ((ep == NULL) || !uct_pvrdma_conn_from_peer(iface, ep, msg, peer)) {
        return; /* the ep is gone: its channel is closed unconfirmed */
    }
    if (ep->state != UCT_PVRDMA_EP_CONNECTING) {
        /* our RTU was lost, or the peer asks again: confirm again */
        uct_pvrdma_conn_send_ep_msg(ep, UCT_PVRDMA_CONN_RTU);
        return;
    }

    if (send_only) {
        /* before RTR: the peer may send credits as soon as it sees an AM */
        status = uct_pvrdma_ep_start_send_credits(ep);
        if (status == UCS_ERR_NO_RESOURCE) {
            return; /* CQ entries busy: taken when the reply comes again */
        } else if (status != UCS_OK) {
            uct_pvrdma_ep_set_failed(ep, status);
            return;
        }
    }

    ret = pvrdma_common_qp_to_rtr(ep->txq.qp, &iface->qp_params, peer);
    if (ret == 0) {
        ret = pvrdma_common_qp_to_rts(ep->txq.qp, &iface->qp_params, peer,
                                      ep->psn);
    }
    if (ret != 0) {
        ucs_error("pvrdma: %s:%d: qp 0x%x: connecting to peer qp 0x%x "
                  "failed: %s", iface->md->dev_name, iface->port_num,
                  ep->txq.qp->qp_num, peer->qpn, strerror(ret));
        uct_pvrdma_ep_set_failed(ep, UCS_ERR_UNREACHABLE);
        return;
    }

    if ((be32toh(msg->credits) > UCT_PVRDMA_CONN_CREDITS_MAX) ||
        (pvrdma_common_credits_init(&ep->credits, be32toh(msg->credits), 1,
                                    1) != 0)) {
        ucs_error("pvrdma: peer granted no or too many receive credits (%u)",
                  be32toh(msg->credits));
        uct_pvrdma_ep_set_failed(ep, UCS_ERR_UNREACHABLE);
        return;
    }

    ep->flush_addr = be64toh(msg->remote_addr);
    ep->flush_rkey = be32toh(msg->rkey);
    ep->state      = send_only ? UCT_PVRDMA_EP_CONNECTED_SR :
                                 UCT_PVRDMA_EP_CONNECTED;
    --iface->conn.num_connecting;
    ucs_debug("pvrdma: ep %p qp 0x%x connected to qp 0x%x, %u credits%s", ep,
              ep->txq.qp->qp_num, peer->qpn, ep->credits.initial,
              send_only ? ", send/recv only (credits by SEND, no PUT)" : "");

    uct_pvrdma_ep_pair_chan(ep);
    uct_pvrdma_conn_send_ep_msg(ep, UCT_PVRDMA_CONN_RTU);

    /* requests queued while connecting can go now */
    if (!ucs_queue_is_empty(&ep->pending) && !ep->in_pending_list) {
        ucs_list_add_tail(&iface->pending_eps, &ep->pending_link);
        ep->in_pending_list = 1;
    }
}


static void uct_pvrdma_conn_handle_rej(uct_pvrdma_iface_t *iface,
                                       const uct_pvrdma_conn_msg_t *msg,
                                       const struct pvrdma_common_addr_info *peer)
{
    uct_pvrdma_ep_t *ep = uct_pvrdma_conn_find_ep(iface, be64toh(msg->conn_id));

    if ((ep != NULL) && (ep->state == UCT_PVRDMA_EP_CONNECTING) &&
        uct_pvrdma_conn_from_peer(iface, ep, msg, peer)) {
        ucs_error("pvrdma: %s:%d: peer rejected the connection (see its "
                  "log)", iface->md->dev_name, iface->port_num);
        uct_pvrdma_ep_set_failed(ep, UCS_ERR_UNREACHABLE);
    }
}


/* BUSY: the peer is alive but cannot take the connection yet (its CQ
 * entries are held by sends in flight or destroyed QPs' completions); our
 * resends go on, and CONN_TIMEOUT starts again, a bounded number of times
 * (the BTL's BUSY restarts its connect timeout the same way) */
static void uct_pvrdma_conn_handle_busy(uct_pvrdma_iface_t *iface,
                                        const uct_pvrdma_conn_msg_t *msg,
                                        const struct pvrdma_common_addr_info *peer)
{
    uct_pvrdma_ep_t *ep = uct_pvrdma_conn_find_ep(iface, be64toh(msg->conn_id));

    if ((ep == NULL) || (ep->state != UCT_PVRDMA_EP_CONNECTING) ||
        !uct_pvrdma_conn_from_peer(iface, ep, msg, peer)) {
        return;
    }
    ++iface->conn.busy_heard;
    if (ep->busy_answers < UCT_PVRDMA_CONN_BUSY_MAX) {
        ++ep->busy_answers;
        ep->deadline = ucs_get_time() + iface->config.conn_timeout;
        ucs_debug("pvrdma: ep %p: the peer is busy (%u), waiting on",
                  ep, ep->busy_answers);
    }
}


/* DACK: the peer freed the channel of one of our disconnects */
static void
uct_pvrdma_conn_handle_dack(uct_pvrdma_iface_t *iface,
                            const uct_pvrdma_conn_msg_t *msg,
                            const struct pvrdma_common_addr_info *peer)
{
    uint64_t conn_id = be64toh(msg->conn_id);
    uct_pvrdma_disc_t *disc;

    ucs_list_for_each(disc, &iface->discs, list) {
        if ((disc->conn_id == conn_id) &&
            (disc->peer_ud_qpn == be32toh(msg->src_ud_qpn)) &&
            !memcmp(&disc->peer_gid, &peer->gid, sizeof(peer->gid))) {
            ++iface->conn.discs_acked;
            uct_pvrdma_conn_disc_free(iface, disc);
            return;
        }
    }
    /* a duplicate DACK: its record is gone already */
}


/* The secret a reply's MAC is keyed with: that of the iface our ep (REP,
 * REJ, BUSY, CLOSE_ACK, CLOSE_NAK) or disconnect (DACK) asked, or NULL when that
 * is gone */
static const uint8_t *
uct_pvrdma_conn_reply_key(uct_pvrdma_iface_t *iface,
                          const uct_pvrdma_conn_msg_t *msg,
                          const struct pvrdma_common_addr_info *peer)
{
    uint64_t conn_id = be64toh(msg->conn_id);
    uct_pvrdma_disc_t *disc;
    uct_pvrdma_ep_t *ep;

    if (msg->hdr.type != UCT_PVRDMA_CONN_DACK) {
        ep = uct_pvrdma_conn_find_ep(iface, conn_id);
        return ((ep != NULL) && uct_pvrdma_conn_from_peer(iface, ep, msg, peer)) ?
               ep->peer_secret : NULL;
    }
    ucs_list_for_each(disc, &iface->discs, list) {
        if ((disc->conn_id == conn_id) &&
            (disc->peer_ud_qpn == be32toh(msg->src_ud_qpn)) &&
            !memcmp(&disc->peer_gid, &peer->gid, sizeof(peer->gid))) {
            return disc->peer_secret;
        }
    }
    return NULL;
}


void uct_pvrdma_ud_handle_wc(uct_pvrdma_iface_t *iface, struct ibv_wc *wc)
{
    const uct_pvrdma_conn_msg_t *msg;
    const uint8_t *key;
    struct pvrdma_common_addr_info peer;
    const void *rx;
    int ret;

    switch (pvrdma_common_ud_complete(&iface->ud.dgram, wc, &rx)) {
    case PVRDMA_COMMON_UD_SENT:
        iface->ud.tx_done_at = ucs_get_time();
        return;
    case PVRDMA_COMMON_UD_STALE:
        return;
    case PVRDMA_COMMON_UD_SEND_FAILED:
        ucs_diag("pvrdma: UD send failed: %s", ibv_wc_status_str(wc->status));
        return;
    case PVRDMA_COMMON_UD_DROPPED:
        ucs_diag("pvrdma: %s:%d: dropped a connection datagram: %s",
                 iface->md->dev_name, iface->port_num,
                 (wc->status != IBV_WC_SUCCESS) ? ibv_wc_status_str(wc->status) :
                 "malformed, wrong version or a MAC not ours");
        goto out;
    case PVRDMA_COMMON_UD_RECEIVED:
        break;
    }

    msg = rx;
    if (pvrdma_common_addr_unpack(msg->addr, sizeof(msg->addr), &peer) != 0) {
        ucs_diag("pvrdma: ignoring a malformed connection message");
        ++iface->ud.dgram.dropped;
        goto out;
    }
    /* it must come from the UD QP and GID it names: replies go there, and
     * channels are found by them */
    if (!pvrdma_common_ud_from(&iface->ud.dgram, wc, rx,
                               be32toh(msg->src_ud_qpn), &peer.gid)) {
        ucs_diag("pvrdma: %s:%d: dropped a connection message (type %d) "
                 "from UD qp 0x%x claiming qp 0x%x or another GID",
                 iface->md->dev_name, iface->port_num, msg->hdr.type,
                 wc->src_qp, be32toh(msg->src_ud_qpn));
        goto out;
    }
    /* replies are keyed with the sender's secret, which we have from its
     * address (the ep or disconnect they answer; none: a late reply to
     * something gone, ignored); the rest was checked with ours.  Then: not
     * seen before (replays) */
    key = NULL;
    if ((msg->hdr.type == UCT_PVRDMA_CONN_REP) ||
        (msg->hdr.type == UCT_PVRDMA_CONN_REJ) ||
        (msg->hdr.type == UCT_PVRDMA_CONN_BUSY) ||
        (msg->hdr.type == UCT_PVRDMA_CONN_DACK) ||
        (msg->hdr.type == UCT_PVRDMA_CONN_CLOSE_ACK) ||
        (msg->hdr.type == UCT_PVRDMA_CONN_CLOSE_NAK)) {
        key = uct_pvrdma_conn_reply_key(iface, msg, &peer);
        if (key == NULL) {
            goto out;
        }
    }
    if (!pvrdma_common_ud_accept(&iface->ud.dgram, wc, rx, key, &peer.gid)) {
        ucs_diag("pvrdma: %s:%d: dropped a connection message (type %d) "
                 "from UD qp 0x%x: replayed, or its MAC is not its sender's",
                 iface->md->dev_name, iface->port_num, msg->hdr.type,
                 wc->src_qp);
        goto out;
    }

    switch (msg->hdr.type) {
    case UCT_PVRDMA_CONN_REQ:
        uct_pvrdma_conn_handle_req(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_REP:
        uct_pvrdma_conn_handle_rep(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_REJ:
        uct_pvrdma_conn_handle_rej(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_BUSY:
        uct_pvrdma_conn_handle_busy(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_DISC:
        uct_pvrdma_conn_handle_disc(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_RTU:
        uct_pvrdma_conn_handle_rtu(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_DACK:
        uct_pvrdma_conn_handle_dack(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_CLOSE:
        uct_pvrdma_budget_handle_close(iface, msg, &peer);
        break;
    case UCT_PVRDMA_CONN_CLOSE_ACK:
    case UCT_PVRDMA_CONN_CLOSE_NAK:
        /* the key lookup found the ep, and that it is the peer's */
        uct_pvrdma_budget_handle_reply(iface,
                uct_pvrdma_conn_find_ep(iface, be64toh(msg->conn_id)), msg,
                msg->hdr.type == UCT_PVRDMA_CONN_CLOSE_ACK);
        break;
    default:
        ucs_diag("pvrdma: ignoring connection message of type %d",
                 msg->hdr.type);
        break;
    }

out:
    ret = pvrdma_common_ud_repost(&iface->ud.dgram, wc);
    if (ret != 0) {
        ucs_error("pvrdma: ibv_post_recv(UD qp 0x%x) failed: %s",
                  iface->ud.dgram.qp->qp_num, strerror(ret));
    }
}
