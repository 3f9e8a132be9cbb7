/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_stall.c
 * @brief Say what an iface waits for when nothing has completed for a long
 *        time although it waits for completions or has pending sends.
 *
 * A hung job otherwise shows nothing: a rank stuck in MPI_Finalize on a
 * flush, or one waiting for credits, looks the same as one computing.  RC
 * reports a lost peer within RETRY_COUNT x TIMEOUT (about 2 s by default),
 * so a signalled WR that neither completes nor fails for a minute is a
 * device or fabric fault (seen with SoftRoCE under load: one RDMA WRITE,
 * QP in RTS, no completion for minutes) and is reported as a warning; eps
 * that only wait for the peer's credits are reported at diag level (the
 * peer may simply be busy).  Reported once per stall; costs one
 * ucs_get_time() per progress call that found nothing while work waits.
 * Before the report, eps whose signalled WRs wait are kicked (see
 * uct_pvrdma_ep_kick): on the SoftRoCE bed that is what ends such a stall.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

#include <inttypes.h>


/** Nothing completed for this long while work waits: report. */
#define UCT_PVRDMA_STALL_REPORT_S   60

/** Signalled WRs waited this long (RC gives up after TIMEOUT x RETRY_COUNT,
 *  2.1 s by default): kick their eps (uct_pvrdma_ep_kick), again after as
 *  long each time, at most UCT_PVRDMA_STALL_KICKS times per stall. */
#define UCT_PVRDMA_STALL_KICK_S     10
#define UCT_PVRDMA_STALL_KICKS      5


/* No stall seen, the keepalive not looked yet, no probe posted. */
void uct_pvrdma_iface_watch_init(uct_pvrdma_iface_watch_t *watch)
{
    memset(watch, 0, sizeof(*watch));
}


static const char *uct_pvrdma_qp_state_name(struct ibv_qp *qp)
{
    static const char *names[] = {
        [IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
        [IBV_QPS_RTR]   = "RTR",   [IBV_QPS_RTS]  = "RTS",
        [IBV_QPS_SQD]   = "SQD",   [IBV_QPS_SQE]  = "SQE",
        [IBV_QPS_ERR]   = "ERR"
    };
    struct ibv_qp_init_attr init_attr;
    struct ibv_qp_attr attr;

    /* a device command, but only once per stall */
    if ((qp == NULL) ||
        (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init_attr) != 0) ||
        ((unsigned)attr.qp_state >= ucs_static_array_size(names))) {
        return "unknown";
    }
    return names[attr.qp_state];
}


static void uct_pvrdma_iface_stall_report(uct_pvrdma_iface_t *iface)
{
    ucs_log_level_t level = (iface->cq_acct.tx_signaled > 0) ?
                            UCS_LOG_LEVEL_WARN : UCS_LOG_LEVEL_DIAG;
    char gid[64];
    uct_pvrdma_ep_t *ep;
    uct_pvrdma_chan_t *chan;

    if (!ucs_log_is_enabled(level)) {
        return;
    }
    ucs_log(level, "pvrdma: %s:%d: nothing completed for %d s: %u send WRs "
            "in flight (%u signalled), CQ budget %u (%u held), %u eps with "
            "pending sends, %u connecting, %u chans, %u kicks",
            iface->md->dev_name, iface->port_num, UCT_PVRDMA_STALL_REPORT_S,
            iface->cq_acct.tx_outstanding, iface->cq_acct.tx_signaled,
            iface->cq_acct.budget, iface->cq_acct.held,
            (unsigned)ucs_list_length(&iface->pending_eps),
            iface->conn.num_connecting, iface->conn.num_chans,
            iface->watch.stall_kicks);

    ucs_list_for_each(ep, &iface->eps, list) {
        if ((ep->txq.signaled == 0) && ucs_queue_is_empty(&ep->pending)) {
            continue;
        }
        ucs_log(level, "pvrdma: stalled ep %p to %s ud qp 0x%x: state %d, "
                "QP 0x%x %s, WRs posted %" PRIu64 " retired %" PRIu64
                " (%u signalled, %u unsignalled, %u free), may send %u, "
                "pending %s", ep, pvrdma_common_gid_str(&ep->peer_gid, gid,
                                                       sizeof(gid)),
                ep->peer_ud_qpn, (int)ep->state,
                (ep->txq.qp != NULL) ? ep->txq.qp->qp_num : 0,
                uct_pvrdma_qp_state_name(ep->txq.qp), ep->txq.posted_sn,
                ep->txq.acked_sn, ep->txq.signaled, ep->txq.unsignaled,
                ep->txq.avail, ep->credits.send,
                ucs_queue_is_empty(&ep->pending) ? "none" : "yes");
    }

    ucs_list_for_each(chan, &iface->chans, list) {
        if ((chan->txq.signaled == 0) && !chan->credits_deferred &&
            !chan->rx_short) {
            continue;
        }
        ucs_log(level, "pvrdma: stalled chan %p from %s: QP 0x%x %s, credit "
                "WRs %u signalled, %u receives posted of %u, owes %u "
                "credits%s%s", chan,
                pvrdma_common_gid_str(&chan->peer_gid, gid, sizeof(gid)),
                (chan->txq.qp != NULL) ? chan->txq.qp->qp_num : 0,
                uct_pvrdma_qp_state_name(chan->txq.qp), chan->txq.signaled,
                chan->rx_posted, chan->rx_len, chan->credits.owed,
                chan->credits_deferred ? ", return deferred" : "",
                chan->rx_short ? ", refill failed" : "");
    }
}


/*
 * The kick, per ep (issue 34: it was per iface, and any completion on the
 * iface, a keepalive probe to another idle ep among them, restarted its
 * clock, so one ep's stalled WR on a busy iface was never kicked): an ep
 * whose signalled WRs have waited UCT_PVRDMA_STALL_KICK_S with nothing of
 * it retired (acked_sn unchanged) is kicked (uct_pvrdma_ep_kick), again
 * after as long each time, at most UCT_PVRDMA_STALL_KICKS times per stall.
 */
static void uct_pvrdma_ep_kick_watch(uct_pvrdma_iface_t *iface,
                                     uct_pvrdma_ep_t *ep, ucs_time_t now)
{
    if (!pvrdma_common_watch_due(&ep->kick, ep->txq.acked_sn, now,
                                 ucs_time_from_sec(UCT_PVRDMA_STALL_KICK_S),
                                 UCT_PVRDMA_STALL_KICKS) ||
        !uct_pvrdma_ep_kick(ep)) {
        return;
    }
    pvrdma_common_watch_acted(&ep->kick);
    ++iface->watch.stall_kicks;
    ucs_diag("pvrdma: %s:%d: ep %p: %u signalled WRs neither completed nor "
             "failed for %.0f s: kicked with a zero-length WRITE (%u/%d)",
             iface->md->dev_name, iface->port_num, ep, ep->txq.signaled,
             ucs_time_to_sec(now - ep->kick.since), ep->kick.count,
             UCT_PVRDMA_STALL_KICKS);
}


void uct_pvrdma_iface_stall_watch(uct_pvrdma_iface_t *iface, unsigned count)
{
    double waited;

    if ((count > 0) ||
        ((iface->cq_acct.tx_signaled == 0) &&
         ucs_list_is_empty(&iface->pending_eps))) {
        iface->watch.stall_since    = 0;
        iface->watch.stall_reported = 0;
        iface->watch.stall_kicks    = 0;
        return;
    }

    if (iface->watch.stall_since == 0) {
        iface->watch.stall_since = ucs_get_time();
        return;
    }

    waited = ucs_time_to_sec(ucs_get_time() - iface->watch.stall_since);
    if (!iface->watch.stall_reported &&
        (waited >= UCT_PVRDMA_STALL_REPORT_S)) {
        iface->watch.stall_reported = 1;
        uct_pvrdma_iface_stall_report(iface);
    }
}


/** Progress calls between two clock reads of the keepalive (ucs_get_time
 *  is a TSC read, no VM exit); the eps are looked at once a second. */
#define UCT_PVRDMA_WATCH_CALLS      1024


/*
 * Keepalive (UCX_PVRDMA_KEEPALIVE): a rank that only waits to receive has
 * nothing in flight, so RC never reports a peer whose process, VM or link
 * died, and the receive would wait for ever.  A connected ep whose peer has
 * shown no sign of life for the period (no WR of ours retired, no credits
 * returned) while no signalled WR is in flight is probed (its last,
 * unsignalled WRs would never show a completion: seen on the bed, an ep
 * whose last AM was unsignalled was never probed and a dead peer's link
 * went unnoticed) with uct_pvrdma_ep_probe: a live peer's device
 * acknowledges it, a dead one fails it within RC's retry window (TIMEOUT x (RETRY_COUNT + 1), 2.1 s by default) and the ep fails
 * through UCT error handling (fatal when UCP has no error callback, as under
 * Open MPI's pml ucx).  Cost: one WRITE doorbell and one completion per
 * silent ep per period; nothing at the peer's process.  An ep with a
 * signalled WR in flight is left to RC (it completes or fails) and the
 * stall kick, which this once-a-second look also runs (per ep, whether or
 * not the keepalive is on).
 */
/* The passive side (issue 34): a confirmed channel is freed by its peer
 * ep's DISC, resent until acknowledged; if the peer died, or gave up
 * resending, only a probe finds out.  A channel that received nothing for
 * KEEPALIVE is probed (uct_pvrdma_chan_probe): cost as for eps. */
static void uct_pvrdma_chans_keepalive(uct_pvrdma_iface_t *iface,
                                       ucs_time_t now)
{
    uct_pvrdma_chan_t *chan;

    ucs_list_for_each(chan, &iface->chans, list) {
        if (chan->txq.signaled > 0) {
            /* a probe in flight: its completion is the answer */
            pvrdma_common_watch_reset(&chan->alive);
        } else if (pvrdma_common_watch_due(&chan->alive, chan->rx_total, now,
                                           iface->config.keepalive, 0) &&
                   uct_pvrdma_chan_probe(chan)) {
            ++iface->watch.keepalives;
            pvrdma_common_watch_restart(&chan->alive, now);
            ucs_debug("pvrdma: keepalive probe on chan %p", chan);
        }
    }
}


void uct_pvrdma_iface_keepalive_watch(uct_pvrdma_iface_t *iface)
{
    uct_pvrdma_ep_t *ep, *probed = NULL;
    unsigned num_probed = 0;
    ucs_time_t now;

    if (((iface->config.keepalive == 0) &&
         (iface->cq_acct.tx_signaled == 0)) ||
        (++iface->watch.calls < UCT_PVRDMA_WATCH_CALLS)) {
        return;
    }
    iface->watch.calls = 0;
    now                = ucs_get_time();
    if (now < iface->watch.next) {
        return;
    }
    iface->watch.next = now + ucs_time_from_sec(1.0);

    ucs_list_for_each(ep, &iface->eps, list) {
        if (ep->txq.signaled > 0) {
            uct_pvrdma_ep_kick_watch(iface, ep, now);
        } else {
            pvrdma_common_watch_reset(&ep->kick);
        }
        if (iface->config.keepalive == 0) {
            continue;
        }
        if ((ep->state != UCT_PVRDMA_EP_CONNECTED) || (ep->txq.signaled > 0)) {
            pvrdma_common_watch_reset(&ep->alive);
            continue;
        }
        if (pvrdma_common_watch_due(&ep->alive,
                                    ep->txq.acked_sn + ep->credits_seen, now,
                                    iface->config.keepalive, 0) &&
            uct_pvrdma_ep_probe(ep, now)) {
            probed = (probed == NULL) ? ep : probed;
            ++num_probed;
        }
    }
    if (num_probed > 0) {
        /* diag, not debug: the bed's faults test reads it without debug
         * logging, which slows a job's start-up on the emulated bed by
         * ~20 s; one line per round, not per ep: at 8 x 20 (159 eps per
         * rank) a line per ep was 200,000 lines in 20 minutes */
        ucs_diag("pvrdma: keepalive probe on ep %p (%u eps probed this "
                 "round)", probed, num_probed);
    }
    if (iface->config.keepalive != 0) {
        uct_pvrdma_chans_keepalive(iface, now);
    }
}
