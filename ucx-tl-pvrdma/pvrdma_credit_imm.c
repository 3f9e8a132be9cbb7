/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_credit_imm.c
 * @brief Credits returned in the immediate data of active messages that go
 *        the other way, instead of an RDMA WRITE of their own.
 *
 * Between ifaces A and B, A's ep X sends to B's channel X, and B's ep Y to
 * A's channel Y (one QP pair per direction).  Channel X owes credits to ep
 * X.  When B has an ep to A's iface (Y), channel X is paired with it: Y's
 * next AM carries them in its immediate data (layout: common/pvrdma_credits.h),
 * together with the tag ep X gave in its CONN_REQ.  A's channel Y finds ep X
 * by that tag in A's iface and adds the credits.  The tag is checked against
 * the peer the channel is connected to, and tags are not reused until 65536
 * later eps, so credits still in flight to a destroyed ep are dropped, never
 * given to another ep.
 *
 * Credits returned this way and those returned by WRITE are disjoint: the
 * WRITE carries the cumulative count of WRITE-returned credits only.
 *
 * A request/reply exchange receives and replies in different progress calls
 * (the reply is sent by the user after progress returns), so a channel that
 * owes a batch waits one progress call before it falls back to the WRITE.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"


/* No ep tagged; the first tag handed out is 0. */
void uct_pvrdma_iface_ep_tags_init(uct_pvrdma_iface_ep_tags_t *tags)
{
    memset(tags, 0, sizeof(*tags));
    kh_init_inplace(uct_pvrdma_ep_tags, &tags->map);
}


void uct_pvrdma_iface_ep_tags_cleanup(uct_pvrdma_iface_ep_tags_t *tags)
{
    kh_destroy_inplace(uct_pvrdma_ep_tags, &tags->map);
}


/* Give the ep a tag peers can name it by (none if 65536 eps exist). */
void uct_pvrdma_ep_tag_add(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    unsigned tries;
    khiter_t iter;
    int ret;

    ep->has_credit_tag = 0;
    if (!iface->config.credit_imm) {
        return;
    }

    for (tries = 0; tries <= UINT16_MAX; ++tries) {
        iter = kh_put(uct_pvrdma_ep_tags, &iface->ep_tags.map,
                      iface->ep_tags.next++, &ret);
        if (ret < 0) {
            return; /* no memory: credits come by WRITE */
        } else if (ret > 0) {
            kh_value(&iface->ep_tags.map, iter) = ep;
            ep->credit_tag     = kh_key(&iface->ep_tags.map, iter);
            ep->has_credit_tag = 1;
            return;
        }
        /* that tag is still in use after wrapping around: try the next */
    }
}


void uct_pvrdma_ep_tag_remove(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    khiter_t iter;

    if (!ep->has_credit_tag) {
        return;
    }

    iter = kh_get(uct_pvrdma_ep_tags, &iface->ep_tags.map, ep->credit_tag);
    if (iter != kh_end(&iface->ep_tags.map)) {
        kh_del(uct_pvrdma_ep_tags, &iface->ep_tags.map, iter);
    }
    ep->has_credit_tag = 0;
}


/* Both ends are connected to the same peer iface. */
static int uct_pvrdma_same_peer(const uct_pvrdma_ep_t *ep,
                                const uct_pvrdma_chan_t *chan)
{
    return (ep->peer_ud_qpn == chan->peer_ud_qpn) &&
           !memcmp(&ep->peer_gid, &chan->peer_gid, sizeof(ep->peer_gid));
}


/* The ep is connected (its AMs carry the immediate's word in immediate
 * data, or on a send/recv-only connection in their header) and free. */
static int uct_pvrdma_ep_can_carry(const uct_pvrdma_ep_t *ep)
{
    return ((ep->state == UCT_PVRDMA_EP_CONNECTED) ||
            (ep->state == UCT_PVRDMA_EP_CONNECTED_SR)) &&
           (ep->rev_chan == NULL);
}


/* Its peer gave a tag and what the channel can owe fits the immediate's
 * field.  (On a send/recv-only connection the credits the AMs do not
 * carry still go by SEND: the rules of uct_pvrdma_chan_send_credits hold,
 * each such SEND just returns fewer.) */
static int uct_pvrdma_chan_can_ride(const uct_pvrdma_chan_t *chan)
{
    return chan->iface->config.credit_imm && chan->peer_has_tag &&
           (chan->rev_ep == NULL) &&
           (chan->rx_len <= PVRDMA_COMMON_IMM_CREDITS_MAX);
}


static void uct_pvrdma_pair(uct_pvrdma_ep_t *ep, uct_pvrdma_chan_t *chan)
{
    ep->rev_chan  = chan;
    chan->rev_ep  = ep;
    ucs_debug("pvrdma: ep %p carries the credits of channel qp 0x%x", ep,
              chan->txq.qp->qp_num);
}


/* The ep just connected: carry the credits of a channel from its peer. */
void uct_pvrdma_ep_pair_chan(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_chan_t *chan;

    if (!uct_pvrdma_ep_can_carry(ep)) {
        return;
    }

    ucs_list_for_each(chan, &iface->chans, list) {
        if (uct_pvrdma_chan_can_ride(chan) &&
            uct_pvrdma_same_peer(ep, chan)) {
            uct_pvrdma_pair(ep, chan);
            return;
        }
    }
}


/* The channel was just accepted: find an ep to its peer to carry credits. */
void uct_pvrdma_chan_pair_ep(uct_pvrdma_chan_t *chan)
{
    uct_pvrdma_ep_t *ep;

    if (!uct_pvrdma_chan_can_ride(chan)) {
        return;
    }

    ucs_list_for_each(ep, &chan->iface->eps, list) {
        if (uct_pvrdma_ep_can_carry(ep) && uct_pvrdma_same_peer(ep, chan)) {
            uct_pvrdma_pair(ep, chan);
            return;
        }
    }
}


/* The ep fails or goes: its channel's credits go by WRITE again. */
void uct_pvrdma_ep_unpair_chan(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_chan_t *chan = ep->rev_chan;

    if (chan == NULL) {
        return;
    }

    ep->rev_chan = NULL;
    chan->rev_ep = NULL;
    uct_pvrdma_chan_return_credits(chan, 0);
}


void uct_pvrdma_chan_unpair_ep(uct_pvrdma_chan_t *chan)
{
    if (chan->credits_deferred) {
        ucs_list_del(&chan->deferred_link);
        chan->credits_deferred = 0;
    }
    if (chan->rev_ep != NULL) {
        chan->rev_ep->rev_chan = NULL;
        chan->rev_ep           = NULL;
    }
}


/* The ep named by @p tag in an immediate that arrived on @p chan, or NULL
 * (with the reason logged) if it is gone or not one of that peer's. */
static uct_pvrdma_ep_t *
uct_pvrdma_chan_credit_ep(uct_pvrdma_chan_t *chan, uint16_t tag,
                          uint32_t credits)
{
    uct_pvrdma_iface_t *iface = chan->iface;
    uct_pvrdma_ep_t *ep       = chan->rev_ep;
    khiter_t iter;

    /* Usually both ends paired the same two connections, so the ep the
     * credits are for is the one that carries this channel's credits back:
     * paired means connected and to the same peer, no lookup needed. */
    if ((ep != NULL) && ep->has_credit_tag && (ep->credit_tag == tag)) {
        return ep;
    }

    iter = kh_get(uct_pvrdma_ep_tags, &iface->ep_tags.map, tag);
    if (iter == kh_end(&iface->ep_tags.map)) {
        ucs_debug("pvrdma: %u credits for a destroyed ep (tag %u) dropped",
                  credits, tag);
        return NULL;
    }

    /* a CLOSING ep's connection is still its own: if the peer refuses the
     * close, it sends on with these credits (pvrdma_budget.c) */
    ep = kh_value(&iface->ep_tags.map, iter);
    if (!uct_pvrdma_same_peer(ep, chan) ||
        ((ep->state < UCT_PVRDMA_EP_CONNECTED_SR) &&
         (ep->state != UCT_PVRDMA_EP_CLOSING))) {
        ucs_diag("pvrdma: qp 0x%x: %u credits for ep %p (tag %u) of another "
                 "peer or not connected, dropped", chan->txq.qp->qp_num,
                 credits, ep, tag);
        return NULL;
    }
    return ep;
}


/* An AM from the peer carried credits for one of our eps. */
void uct_pvrdma_chan_credit_imm_rx(uct_pvrdma_chan_t *chan, uint32_t imm)
{
    uint32_t credits = pvrdma_common_imm_credits(imm);
    uct_pvrdma_ep_t *ep;

    ep = uct_pvrdma_chan_credit_ep(chan, pvrdma_common_imm_tag(imm), credits);
    if (ep == NULL) {
        return;
    }

    if (pvrdma_common_credits_add(&ep->credits, credits) != 0) {
        ucs_diag("pvrdma: ep %p: peer returned more credits than it was "
                 "given", ep);
    }
    uct_pvrdma_ep_schedule_pending(ep);
}


void uct_pvrdma_chan_defer_credits(uct_pvrdma_chan_t *chan)
{
    if (!chan->credits_deferred) {
        ucs_list_add_tail(&chan->iface->deferred_chans, &chan->deferred_link);
        chan->credits_deferred = 1;
    }
}


/* Start of a progress call: what no AM carried since the last one goes by
 * WRITE now.  The list is taken first: a channel whose send queue or CQ
 * budget is still full defers itself again, onto the iface's list, for the
 * next call (not this loop, which would spin). */
void uct_pvrdma_iface_return_deferred_credits(uct_pvrdma_iface_t *iface)
{
    ucs_list_link_t batch;
    uct_pvrdma_chan_t *chan;

    ucs_list_head_init(&batch);
    ucs_list_splice_tail(&batch, &iface->deferred_chans);
    ucs_list_head_init(&iface->deferred_chans);
    while (!ucs_list_is_empty(&batch)) {
        chan = ucs_list_extract_head(&batch, uct_pvrdma_chan_t, deferred_link);
        chan->credits_deferred = 0;
        uct_pvrdma_chan_return_credits(chan, 0);
    }
}
