/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_cm.c
 * @brief UD datagram connection manager for the RC QPs (see btl_pvrdma_cm.h).
 */
#include "opal_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/util/proc.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_budget.h"
#include "btl_pvrdma_cm.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_error.h"

/* Receives for the requests of every peer at once: at 159 peers 32 of them
 * lost most of a burst of requests in the device (a datagram that finds no
 * receive is dropped unseen), each resent 2 s later.  128 cost about 20 KiB of buffers. */
#define CM_NRECV 128
#define CM_NSEND 32
#define CM_QKEY 0x50564d41u   /* "PVMA"; high bit clear: not a controlled Q_Key */
#define CM_VERSION 5          /* 2: common header, 3: with the receiver's secret,
                                 4: a MAC keyed by it instead (issue 37),
                                 5: the close messages of the budget (issue 36) */

enum { CM_REQ = 1, CM_REP = 2, CM_RTU = 3, CM_CLOSE = 4, CM_CLOSE_ACK = 5, CM_CLOSE_NAK = 6,
       CM_BUSY = 7 };

/** One connection-manager datagram. */
typedef struct cm_msg_t {
    struct pvrdma_common_ud_hdr hdr;  /**< type; version checked by common/ud.c */
    uint32_t grant;                 /**< network order: credits for the receiver */
    opal_process_name_t src;
    opal_process_name_t dst;
    uint8_t rc_addr[PVRDMA_COMMON_ADDR_WIRE_SIZE]; /**< the sender's RC QP */
    /* close messages only (network order; btl_pvrdma_budget.h) */
    uint32_t conn_qpn;              /**< the receiver's RC QP of the connection */
    uint64_t sent;                  /**< SENDs the sender posted on it */
    uint64_t received;              /**< messages the sender handled on it */
} cm_msg_t;

/* a deferred message keeps its GRH and body (mca_btl_pvrdma_cm_deferred_t) */
_Static_assert(sizeof(cm_msg_t) <= sizeof(((mca_btl_pvrdma_cm_deferred_t *) 0)->slot) -
                                       PVRDMA_COMMON_UD_GRH_LEN,
               "cm_msg_t must fit a deferred slot");

int mca_btl_pvrdma_cm_open(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_modex_t *modex)
{
    mca_btl_pvrdma_cm_t *cm = calloc(1, sizeof(*cm));
    struct pvrdma_common_ud_attr attr = {0};
    struct pvrdma_common_addr wire;
    const char *what = NULL;
    int rc = 0;

    if (NULL == cm) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->cm = cm;

    /* requests arrive on the receive CQ while a process waits: it is armed
     * with the data CQ (the send CQ only completes our own datagrams,
     * which a waiting process has none of) */
    cm->cq = ibv_create_cq(module->ctx, CM_NRECV, NULL,
                           pvrdma_common_cq_notify_channel(&module->notify), 0);
    cm->scq = (NULL != cm->cq) ? ibv_create_cq(module->ctx, CM_NSEND, NULL, NULL, 0) : NULL;
    if (NULL == cm->scq) {
        mca_btl_pvrdma_error_verbs(module, "ibv_create_cq (connection manager)", errno);
        return OPAL_ERROR;
    }
    (void) pvrdma_common_cq_notify_add(&module->notify, cm->cq);
    attr.pd = module->pd;
    attr.cq = cm->cq;
    attr.send_cq = cm->scq;
    attr.port_num = module->port.port_num;
    attr.qkey = CM_QKEY;
    attr.version = CM_VERSION;
    attr.rx_count = CM_NRECV;
    attr.tx_count = CM_NSEND;
    attr.msg_size = sizeof(cm_msg_t);
    rc = pvrdma_common_ud_open(&cm->ud, &attr, &what);
    if (0 != rc) {
        mca_btl_pvrdma_error_verbs(module, what, rc);
        return OPAL_ERROR;
    }

    /* tests/bed/stray.sh aims its stray datagrams with this line */
    MCA_BTL_PVRDMA_VERBOSE(10, "connection QP 0x%x on %s:%d (Q_Key 0x%x, messages of %zu B, "
                           "version %d)", cm->ud.qp->qp_num, module->port.dev_name,
                           (int) module->port.port_num, CM_QKEY, sizeof(cm_msg_t), CM_VERSION);
    memset(&cm->local, 0, sizeof(cm->local));
    cm->local.gid = module->gid.gid;
    cm->local.qpn = cm->ud.qp->qp_num;
    cm->local.lid = module->port.port_attr.lid;
    cm->local.mtu = module->profile.mtu;
    cm->local.gid_type = module->gid.type;
    cm->local.link_layer = module->port.link_layer;
    cm->local.max_dest_rd_atomic = module->profile.max_dest_rd_atomic;
    if (0 != pvrdma_common_addr_pack(&cm->local, &wire)) {
        return OPAL_ERR_BAD_PARAM;
    }
    memset(modex, 0, sizeof(*modex));
    memcpy(modex->cm_addr, &wire, sizeof(modex->cm_addr));
    modex->qkey = htonl(cm->ud.qkey);
    memcpy(modex->secret, cm->ud.secret, sizeof(modex->secret));
    return OPAL_SUCCESS;
}

void mca_btl_pvrdma_cm_close(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;

    if (NULL == cm) {
        return;
    }
    pvrdma_common_ud_close(&cm->ud);
    if (cm->cq) {
        (void) ibv_destroy_cq(cm->cq);
    }
    if (cm->scq) {
        (void) ibv_destroy_cq(cm->scq);
    }
    free(cm);
    module->cm = NULL;
}

/** Drain the CM CQs; @return number of completions handled. */
static int cm_poll(mca_btl_pvrdma_module_t *module);
/** Drain the send CQ alone (free send slots); @return false on a CQ error. */
static bool cm_poll_sends(mca_btl_pvrdma_module_t *module);
static void cm_arm_timer(mca_btl_pvrdma_endpoint_t *ep);

static int cm_send_msg(mca_btl_pvrdma_endpoint_t *ep, uint8_t type, uint32_t my_qpn,
                       const mca_btl_pvrdma_close_info_t *close);

static int cm_send(mca_btl_pvrdma_endpoint_t *ep, uint8_t type)
{
    return cm_send_msg(ep, type, ep->qp->qp_num, NULL);
}

int mca_btl_pvrdma_cm_send_close(mca_btl_pvrdma_endpoint_t *ep, int kind,
                                 const mca_btl_pvrdma_close_info_t *info)
{
    static const uint8_t types[] = {
        [MCA_BTL_PVRDMA_CLOSE_REQ] = CM_CLOSE,
        [MCA_BTL_PVRDMA_CLOSE_ACK] = CM_CLOSE_ACK,
        [MCA_BTL_PVRDMA_CLOSE_NAK] = CM_CLOSE_NAK,
        [MCA_BTL_PVRDMA_CONN_BUSY] = CM_BUSY,
    };

    if (MCA_BTL_PVRDMA_CLOSE_REQ == kind) {
        cm_arm_timer(ep);
    }
    return cm_send_msg(ep, types[kind], info->from_qpn, info);
}

static int cm_send_msg(mca_btl_pvrdma_endpoint_t *ep, uint8_t type, uint32_t my_qpn,
                       const mca_btl_pvrdma_close_info_t *close)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    mca_btl_pvrdma_cm_t *cm = module->cm;
    struct pvrdma_common_addr_info info;
    cm_msg_t *msg;
    int rc;

    if (NULL == ep->cm_ah) {
        ep->cm_ah = pvrdma_common_ud_ah_create(module->pd, &module->qp_params,
                                               &ep->peer_cm.gid, ep->peer_cm.lid);
        if (NULL == ep->cm_ah) {
            /* On RoCE the kernel resolves the peer's MAC here, and under
             * load that can time out (ETIMEDOUT) and work a moment later:
             * the retry timer tries again, and only a peer that stays out
             * of reach ends in "connect timeout".  (This printed "verbs
             * call failed ... the BTL is not used on this host", Error 110,
             * in a 4 x 20 job that went on and passed: issue 34.) */
            MCA_BTL_PVRDMA_VERBOSE(5, "ibv_create_ah for %s failed: %s (tried again with the "
                                   "next request)", OPAL_NAME_PRINT(ep->proc->proc_name),
                                   strerror(errno));
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }

    msg = pvrdma_common_ud_tx_get(&cm->ud);
    if (NULL == msg) {
        /* sends only: handling receives here would act on datagrams newer
         * than those the caller's poll holds, out of turn */
        (void) cm_poll_sends(module);
        msg = pvrdma_common_ud_tx_get(&cm->ud);
        if (NULL == msg) {
            return OPAL_ERR_OUT_OF_RESOURCE; /* the retry timer sends it again */
        }
    }
    msg->hdr.type = type;
    /* close messages carry the attempt in the grant's place */
    msg->grant = htonl(NULL != close ? close->attempt : ep->rx_grant);
    msg->src = OPAL_PROC_MY_NAME;
    msg->dst = ep->proc->proc_name;
    msg->conn_qpn = htonl(NULL != close ? close->conn_qpn : 0);
    msg->sent = htobe64(NULL != close ? close->sent : 0);
    msg->received = htobe64(NULL != close ? close->received : 0);

    memset(&info, 0, sizeof(info));
    info = cm->local;
    info.qpn = my_qpn;
    info.psn = ep->psn;
    (void) pvrdma_common_addr_pack(&info, (struct pvrdma_common_addr *) msg->rc_addr);

    /* numbered per peer: a datagram the peer holds until it knows us stays
     * inside its replay window (pvrdma_common_ud_send_seq) */
    rc = pvrdma_common_ud_send_seq(&cm->ud, msg, ep->cm_ah, ep->peer_cm.qpn, ep->peer_qkey,
                                   ep->peer_secret, PVRDMA_COMMON_UD_KEYED_RECEIVER,
                                   &ep->cm_seq);
    if (0 != rc) {
        MCA_BTL_PVRDMA_VERBOSE(5, "connection message post failed: %s", strerror(rc));
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    MCA_BTL_PVRDMA_VERBOSE(20, "sent connection message %d to %s (qp 0x%x)", type,
                   OPAL_NAME_PRINT(ep->proc->proc_name), info.qpn);
    return OPAL_SUCCESS;
}

/* When to resend an unanswered connection message (request, reply, close
 * request).  The first resend comes after btl_pvrdma_connect_timeout; then
 * the gap grows with the time the peer has not answered, up to 8 x the
 * timeout, with up to 1/8 of jitter: at 8 x 20 ranks on the bed node1's
 * ranks start last, and every other rank's 140 endpoints to them resent in
 * step every 2 s (the UCX transport backs off since 2026-12-02).  The give-up
 * stays connect_retries x connect_timeout after the first message
 * (cm_check_timers). */
static void cm_arm_timer(mca_btl_pvrdma_endpoint_t *ep)
{
    uint64_t now = pvrdma_common_now_us();
    uint64_t base = (uint64_t) mca_btl_pvrdma_component.connect_timeout_ms * 1000u;
    uint64_t gap = base, mix;

    if (0 == ep->cm_tries) {
        ep->cm_first_us = now;
    } else {
        gap = now - ep->cm_first_us;
        gap = (gap < base) ? base : (gap > 8 * base) ? 8 * base : gap;
        /* jitter from the endpoint and the clock (no shared RNG state) */
        mix = ((uintptr_t) ep ^ now) * UINT64_C(0x9e3779b97f4a7c15);
        gap -= (mix >> 32) % (gap / 8 + 1);
    }
    ep->cm_deadline_us = now + gap;
}

int mca_btl_pvrdma_cm_send_req(mca_btl_pvrdma_endpoint_t *ep)
{
    cm_arm_timer(ep);
    return cm_send(ep, CM_REQ);
}

int mca_btl_pvrdma_cm_connect_self(mca_btl_pvrdma_endpoint_t *ep)
{
    struct pvrdma_common_addr_info info = ep->module->cm->local;
    int rc;

    /* a loopback QP is its own peer: nothing to exchange */
    info.qpn = ep->qp->qp_num;
    info.psn = ep->psn;
    rc = mca_btl_pvrdma_endpoint_connect_qp(ep, &info, ep->rx_grant);
    if (OPAL_SUCCESS == rc) {
        mca_btl_pvrdma_cm_connected(ep);
    }
    return rc;
}

void mca_btl_pvrdma_cm_connected(mca_btl_pvrdma_endpoint_t *ep)
{
    if (MCA_BTL_PVRDMA_EP_CONNECTING == ep->state || MCA_BTL_PVRDMA_EP_ACCEPTED == ep->state) {
        ep->module->connecting_count--;
    }
    ep->state = MCA_BTL_PVRDMA_EP_CONNECTED;
    ep->last_use = ++ep->module->budget.tick;   /* new: not the LRU one */
    if (MCA_BTL_PVRDMA_VERBOSE_ON(10)) {
        char *host = pvrdma_compat_proc_hostname(ep->proc);

        MCA_BTL_PVRDMA_VERBOSE(10, "connected to %s on %s:%d (qp 0x%x -> 0x%x)",
                               NULL != host ? host : "(unknown)", ep->module->port.dev_name,
                               ep->module->port.port_num, ep->qp->qp_num, ep->peer_rc.qpn);
        free(host);
    }
    (void) mca_btl_pvrdma_endpoint_progress_pending(ep);
}

/** Drop a datagram that passed common's checks (its MAC was made with our secret) but
 *  not ours: counted with the others, said at verbose level. */
static void cm_drop(mca_btl_pvrdma_module_t *module, const char *why, const cm_msg_t *msg)
{
    module->cm->ud.dropped++;
    MCA_BTL_PVRDMA_VERBOSE(5, "dropped a connection message (type %d) claiming to come from "
                           "%s: %s", (int) msg->hdr.type, OPAL_NAME_PRINT(msg->src), why);
}

/* A connection grant is at most a receive queue: more is not from us.
 * Credits go back in a 16-bit header field: 65536 would wrap to 0. */
#define CM_GRANT_MAX UINT16_MAX

static void cm_handle(mca_btl_pvrdma_module_t *module, const cm_msg_t *msg,
                      const struct ibv_wc *wc)
{
    struct pvrdma_common_addr_info peer;
    mca_btl_pvrdma_endpoint_t *ep;
    opal_process_name_t dst = msg->dst, src = msg->src;
    uint32_t grant = ntohl(msg->grant);

    if (0 != opal_compare_proc(dst, OPAL_PROC_MY_NAME)) {
        cm_drop(module, "addressed to another process", msg);
        return;
    }
    /* only a process of this job can be a peer (and only one of the job
     * knows our secret, which makes its MAC): no proc and no modex lookup
     * for any other name */
    if (src.jobid != OPAL_PROC_MY_NAME.jobid || 0 == opal_compare_proc(src, OPAL_PROC_MY_NAME) ||
        (module->job_peers > 0 && src.vpid > module->job_peers)) {
        cm_drop(module, "not a process of this job", msg);
        return;
    }
    if (0 != pvrdma_common_addr_unpack(msg->rc_addr, sizeof(msg->rc_addr), &peer) ||
        grant > CM_GRANT_MAX) {
        cm_drop(module, "malformed address or grant", msg);
        return;
    }
    ep = mca_btl_pvrdma_endpoint_lookup(module, src);
    if (NULL == ep) {
        /* its proc is looked up without the module lock (cm_resolve);
         * more than fit are dropped: their senders resend */
        mca_btl_pvrdma_cm_t *cm = module->cm;

        if (cm->ndeferred < MCA_BTL_PVRDMA_CM_DEFER_MAX) {
            mca_btl_pvrdma_cm_deferred_t *d = &cm->deferred[cm->ndeferred++];

            d->wc = *wc;
            memcpy(d->slot, (const uint8_t *) msg - PVRDMA_COMMON_UD_GRH_LEN,
                   PVRDMA_COMMON_UD_GRH_LEN + sizeof(*msg));
        } else {
            cm->deferred_dropped++;
            MCA_BTL_PVRDMA_VERBOSE(5, "dropped a connection message (type %d) from %s: %d "
                                   "from unknown processes wait already (it resends)",
                                   (int) msg->hdr.type, OPAL_NAME_PRINT(src),
                                   MCA_BTL_PVRDMA_CM_DEFER_MAX);
        }
        return;
    }
    if (MCA_BTL_PVRDMA_EP_FAILED == ep->state) {
        return;
    }
    /* the peer's CM QP and GID are in its modex: the datagram must come
     * from there, whatever the message says */
    if (!pvrdma_common_ud_from(&module->cm->ud, wc, msg, ep->peer_cm.qpn, &ep->peer_cm.gid)) {
        const uint8_t *grh = (const uint8_t *) msg - PVRDMA_COMMON_UD_GRH_LEN;
        char want[64];

        MCA_BTL_PVRDMA_VERBOSE(5, "dropped a connection message (type %d) claiming to come "
                               "from %s: sent from qp 0x%x (its qp 0x%x), GRH %s, source "
                               "%02x%02x:...:%02x%02x%02x%02x / %u.%u.%u.%u, its GID %s",
                               (int) msg->hdr.type, OPAL_NAME_PRINT(src), wc->src_qp,
                               ep->peer_cm.qpn, (wc->wc_flags & IBV_WC_GRH) ? "present" : "absent",
                               grh[8], grh[9], grh[20], grh[21], grh[22], grh[23], grh[32],
                               grh[33], grh[34], grh[35],
                               pvrdma_common_gid_str(&ep->peer_cm.gid, want, sizeof(want)));
        return;
    }
    /* the RC address it offers must be on the GID the peer's modex
     * published (its connection QP's): a member of the job cannot point us
     * at a third host */
    if (0 != memcmp(&peer.gid, &ep->peer_cm.gid, sizeof(peer.gid)) ||
        peer.lid != ep->peer_cm.lid) {
        cm_drop(module, "RC address not on the GID its modex published", msg);
        return;
    }
    /* a datagram of the peer's seen before (a replay; counted) */
    if (!pvrdma_common_ud_accept(&module->cm->ud, wc, msg, NULL, &ep->peer_cm.gid)) {
        /* how far behind its newest: 0 a repeat of that one, under 64 a
         * repeat of an older one, 64 or more too old to tell (superseded) */
        MCA_BTL_PVRDMA_VERBOSE(5, "dropped a connection message (type %d) from %s: replayed "
                               "(%" PRIu64 " behind the newest seen from it; state %d, "
                               "qp 0x%x)", (int) msg->hdr.type, OPAL_NAME_PRINT(src),
                               module->cm->ud.replay.refused_back, (int) ep->state,
                               peer.qpn);
        return;
    }

    if (CM_CLOSE == msg->hdr.type || CM_CLOSE_ACK == msg->hdr.type ||
        CM_CLOSE_NAK == msg->hdr.type || CM_BUSY == msg->hdr.type) {
        mca_btl_pvrdma_close_info_t info = {
            .from_qpn = peer.qpn, .conn_qpn = ntohl(msg->conn_qpn),
            .sent = be64toh(msg->sent), .received = be64toh(msg->received),
            .attempt = (uint16_t) grant};

        if (CM_CLOSE == msg->hdr.type) {
            mca_btl_pvrdma_budget_close_req(ep, &info);
        } else if (CM_BUSY == msg->hdr.type) {
            mca_btl_pvrdma_budget_busy(ep, &info);
        } else {
            mca_btl_pvrdma_budget_close_reply(ep, &info, CM_CLOSE_ACK == msg->hdr.type);
        }
        return;
    }

    switch (msg->hdr.type) {
    case CM_REQ:
        /* a new connection from a peer we asked to close: it agreed (its
         * reply was lost), or it would not have closed its side */
        if (MCA_BTL_PVRDMA_EP_CLOSING == ep->state && peer.qpn != ep->peer_rc.qpn) {
            mca_btl_pvrdma_budget_close_implied(ep);
        }
        /* no slot of our budget for it: we connect to the peer ourselves
         * once one is free (the requests then cross: each side connects
         * its one QP to the other's), and say so (BUSY) */
        if ((MCA_BTL_PVRDMA_EP_CLOSED == ep->state || MCA_BTL_PVRDMA_EP_WAITING == ep->state) &&
            mca_btl_pvrdma_budget_refuse(ep)) {
            mca_btl_pvrdma_close_info_t busy = {.from_qpn = 0, .conn_qpn = peer.qpn};

            (void) mca_btl_pvrdma_cm_send_close(ep, MCA_BTL_PVRDMA_CONN_BUSY, &busy);
            return;
        }
        /* as for REP: the state says ACCEPTED before the REP is sent */
        if (MCA_BTL_PVRDMA_EP_CLOSED == ep->state) {
            if (OPAL_SUCCESS != mca_btl_pvrdma_endpoint_create_qp(ep)) {
                return;
            }
            module->connecting_count++;
            ep->state = MCA_BTL_PVRDMA_EP_CONNECTING;
        }
        if (MCA_BTL_PVRDMA_EP_CONNECTING == ep->state) {
            if (OPAL_SUCCESS != mca_btl_pvrdma_endpoint_connect_qp(ep, &peer, grant)) {
                return;
            }
            ep->state = MCA_BTL_PVRDMA_EP_ACCEPTED;
            ep->cm_tries = 0;
            cm_arm_timer(ep);
        } else if (peer.qpn != ep->peer_rc.qpn) {
            MCA_BTL_PVRDMA_VERBOSE(5, "ignoring request for an older connection from %s",
                           OPAL_NAME_PRINT(src));
            return;
        }
        (void) cm_send(ep, CM_REP);
        break;
    case CM_REP:
        /* The state changes before the RTU goes out, so that a resent REP
         * finds the QP connected (connecting it again fails INIT->RTR on
         * an RTS QP, EINVAL: seen at 32 ranks, when a full send ring made
         * cm_send handle received datagrams; it polls only sends now). */
        if (MCA_BTL_PVRDMA_EP_CONNECTING == ep->state) {
            if (OPAL_SUCCESS != mca_btl_pvrdma_endpoint_connect_qp(ep, &peer, grant)) {
                return;
            }
            mca_btl_pvrdma_cm_connected(ep);
        } else if (MCA_BTL_PVRDMA_EP_CLOSED == ep->state || peer.qpn != ep->peer_rc.qpn) {
            return;
        } else if (MCA_BTL_PVRDMA_EP_ACCEPTED == ep->state) {
            mca_btl_pvrdma_cm_connected(ep);
        }
        (void) cm_send(ep, CM_RTU);
        break;
    case CM_RTU:
        if (MCA_BTL_PVRDMA_EP_ACCEPTED == ep->state && peer.qpn == ep->peer_rc.qpn) {
            mca_btl_pvrdma_cm_connected(ep);
        }
        break;
    default:
        break;
    }
}

/** A completion said the CM QP is in the error state (on SoftRoCE one
 *  datagram longer than a receive did that before the sink, issue 41):
 *  reset it, drain what its old WRs left in its CQ, bring it back.  Its
 *  QP number stays, so the peers reach it again at once; the datagrams
 *  lost meanwhile are resent by their senders' timers. */
static void cm_recover(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;
    const char *why = cm->ud.broken_by;
    struct ibv_wc wc[8];
    int rc, n;

    rc = pvrdma_common_ud_reset(&cm->ud);
    /* the CQs are the CM QP's alone: everything in them now is from before */
    while (0 == rc && (n = ibv_poll_cq(cm->cq, 8, wc)) != 0) {
        rc = (n < 0) ? EIO : 0;
    }
    while (0 == rc && (n = ibv_poll_cq(cm->scq, 8, wc)) != 0) {
        rc = (n < 0) ? EIO : 0;
    }
    if (0 == rc) {
        rc = pvrdma_common_ud_restart(&cm->ud);
    }
    if (0 != rc) {
        mca_btl_pvrdma_error_device(module, "resetting the connection QP", rc);
        return;
    }
    MCA_BTL_PVRDMA_VERBOSE(5, "connection QP 0x%x was in the error state (%s): reset, its "
                           "receives posted again (%" PRIu64 " resets)", cm->ud.qp->qp_num,
                           why, cm->ud.resets);
}

static bool cm_poll_sends(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;
    struct ibv_wc wc[8];
    const void *msg;
    int n = 0;

    /* only while a send is in flight: an empty poll is a doorbell */
    while (0 != cm->ud.tx_busy && (n = ibv_poll_cq(cm->scq, 8, wc)) > 0) {
        for (int i = 0; i < n; ++i) {
            if (PVRDMA_COMMON_UD_SEND_FAILED == pvrdma_common_ud_complete(&cm->ud, &wc[i], &msg)) {
                MCA_BTL_PVRDMA_VERBOSE(5, "connection message send failed: %s",
                                       ibv_wc_status_str(wc[i].status));
            }
        }
    }
    return 0 == cm->ud.tx_busy || n >= 0;
}

static int cm_poll(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;
    struct ibv_wc wc[8];
    const void *msg;
    int n = 0, count = 0;

    cm->polling = true;
    if (!cm_poll_sends(module)) {
        n = -1;
    }
    /* at most as many as the deferred list has room for: each could be
     * from a process we have no endpoint for yet (cm_handle) */
    while (n >= 0 && cm->ndeferred < MCA_BTL_PVRDMA_CM_DEFER_MAX &&
           (n = ibv_poll_cq(cm->cq, MCA_BTL_PVRDMA_CM_DEFER_MAX - cm->ndeferred < 8
                                        ? MCA_BTL_PVRDMA_CM_DEFER_MAX - cm->ndeferred
                                        : 8, wc)) > 0) {
        for (int i = 0; i < n; ++i) {
            switch (pvrdma_common_ud_complete(&cm->ud, &wc[i], &msg)) {
            case PVRDMA_COMMON_UD_SEND_FAILED:   /* not on this CQ */
            case PVRDMA_COMMON_UD_SENT:
            case PVRDMA_COMMON_UD_STALE:
                continue;
            case PVRDMA_COMMON_UD_RECEIVED:
                cm_handle(module, msg, &wc[i]);
                break;
            case PVRDMA_COMMON_UD_DROPPED:
                MCA_BTL_PVRDMA_VERBOSE(5, "dropped a connection datagram: %s",
                                       IBV_WC_SUCCESS != wc[i].status
                                           ? ibv_wc_status_str(wc[i].status)
                                           : "malformed, wrong version or a MAC not ours");
                break;
            }
            if (0 != pvrdma_common_ud_repost(&cm->ud, &wc[i])) {
                MCA_BTL_PVRDMA_VERBOSE(1, "could not repost a connection-manager receive");
            }
            count++;
        }
        if (OPAL_UNLIKELY(cm->ud.broken)) {
            break;   /* the rest of the CQ is the broken QP's flushes */
        }
    }
    cm->polling = false;
    if (n < 0) {
        /* a broken CQ would otherwise leave every connection waiting: end
         * the job with the device's name (as for the data CQ) */
        mca_btl_pvrdma_error_device(module, "ibv_poll_cq (connection CQ)", EIO);
    } else if (OPAL_UNLIKELY(cm->ud.broken)) {
        cm_recover(module);
    }
    return count;
}

/** Resend requests/replies whose answer is overdue; give up after the retries. */
static void cm_check_timers(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_endpoint_t *ep;
    uint64_t now = pvrdma_common_now_us();
    bool looked = false;

    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        if ((MCA_BTL_PVRDMA_EP_CONNECTING != ep->state &&
             MCA_BTL_PVRDMA_EP_ACCEPTED != ep->state &&
             MCA_BTL_PVRDMA_EP_CLOSING != ep->state) || now < ep->cm_deadline_us) {
            continue;
        }
        /* no answer in time: is our own connection QP still alive?  A
         * device that flushes nothing on the error state says so only
         * here; once per look, a device command */
        if (!looked) {
            looked = true;
            if (pvrdma_common_ud_check_state(&module->cm->ud)) {
                cm_recover(module);
            }
        }
        ++ep->cm_tries;
        if (now - ep->cm_first_us >= (uint64_t) mca_btl_pvrdma_component.connect_retries *
                                         (uint64_t) mca_btl_pvrdma_component.connect_timeout_ms *
                                         1000u) {
            mca_btl_pvrdma_error_connect_timeout(ep);
            return;
        }
        if (0 == ep->cm_tries % 30) {
            MCA_BTL_PVRDMA_VERBOSE(5, "still connecting to %s after %d tries: state %d, "
                                   "qp 0x%x, its qp 0x%x, %" PRIu64 " datagrams sent to it",
                                   OPAL_NAME_PRINT(ep->proc->proc_name), ep->cm_tries,
                                   (int) ep->state, NULL != ep->qp ? ep->qp->qp_num : 0, ep->peer_rc.qpn,
                                   0 == ep->cm_seq ? 0 : ep->cm_seq - module->cm->ud.seq_base);
        }
        if (MCA_BTL_PVRDMA_EP_CLOSING == ep->state) {
            mca_btl_pvrdma_close_info_t info = {
                .from_qpn = ep->qp->qp_num, .conn_qpn = ep->peer_rc.qpn,
                .sent = ep->sends_posted, .received = ep->recvs_done,
                .attempt = ep->close_attempt};

            (void) mca_btl_pvrdma_cm_send_close(ep, MCA_BTL_PVRDMA_CLOSE_REQ, &info);
            continue;
        }
        cm_arm_timer(ep);
        (void) cm_send(ep, MCA_BTL_PVRDMA_EP_CONNECTING == ep->state ? CM_REQ : CM_REP);
    }
}

void mca_btl_pvrdma_cm_resolve(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;
    mca_btl_pvrdma_cm_deferred_t d[MCA_BTL_PVRDMA_CM_DEFER_MAX];
    opal_proc_t *procs[MCA_BTL_PVRDMA_CM_DEFER_MAX];
    int n = cm->ndeferred;

    memcpy(d, cm->deferred, (size_t) n * sizeof(d[0]));
    cm->ndeferred = 0;
    OPAL_THREAD_UNLOCK(&module->lock);
    for (int i = 0; i < n; ++i) {
        const cm_msg_t *msg = (const void *) (d[i].slot + PVRDMA_COMMON_UD_GRH_LEN);

        procs[i] = opal_proc_for_name(msg->src);
    }
    OPAL_THREAD_LOCK(&module->lock);
    cm->polling = true;   /* these first: they are older than what the CQ holds */
    for (int i = 0; i < n; ++i) {
        /* the endpoint first (modex), then the message as if just received */
        if (NULL != procs[i] && NULL != mca_btl_pvrdma_endpoint_get(module, procs[i])) {
            cm_handle(module, (const void *) (d[i].slot + PVRDMA_COMMON_UD_GRH_LEN), &d[i].wc);
        }
    }
    cm->polling = false;
}

void mca_btl_pvrdma_cm_serve(mca_btl_pvrdma_module_t *module)
{
    if (NULL != module->cm && !module->cm->polling) {
        (void) cm_poll(module);
    }
}

int mca_btl_pvrdma_cm_progress(mca_btl_pvrdma_module_t *module)
{
    int count = 0;

    /* An empty poll is a doorbell (a VM exit on PVRDMA): while nothing is
     * being connected, only look for incoming requests now and then. */
    if (0 == module->connecting_count && 0 == module->cm->ud.tx_busy &&
        0 == module->budget.waiting &&
        ++module->cm_idle_count < (uint32_t) mca_btl_pvrdma_component.cm_poll_interval) {
        return 0;
    }
    module->cm_idle_count = 0;
    count = cm_poll(module);
    if (count > 0) {
        /* something came: look again at the next call, not 64 later (a
         * flood of strays must not keep a peer's request waiting) */
        module->cm_idle_count = (uint32_t) mca_btl_pvrdma_component.cm_poll_interval;
    }
    if (module->connecting_count > 0) {
        cm_check_timers(module);
    }
    count += mca_btl_pvrdma_budget_progress(module);
    return count;
}
