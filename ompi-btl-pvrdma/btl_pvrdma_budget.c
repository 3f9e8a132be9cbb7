/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_budget.c
 * @brief The connection budget: which connection to close for a new peer,
 *        and the close agreement (see
 *        btl_pvrdma_budget.h for the why and the protocol).
 */
#include "opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/proc.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_budget.h"
#include "btl_pvrdma_cm.h"
#include "btl_pvrdma_endpoint.h"

/* A peer that refused to close is not asked again sooner (it kicked
 * what kept its send queue from emptying: a round trip or two). */
#define BUDGET_REFUSED_US 20000u
/* Closes asked at once, at most (each a datagram round trip). */
#define BUDGET_CLOSING_MAX 4u
/* How often a waiting endpoint looks for a connection to close. */
#define BUDGET_LOOK_US 5000u
/* A connection waits this many connect timeouts for a slot before it is
 * made over the budget (liveness: a budget never stops a job). */
#define BUDGET_PATIENCE 5u

void mca_btl_pvrdma_budget_init(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    uint32_t fit = module->plan.peers_fit_qp;

    memset(&module->budget, 0, sizeof(module->budget));
    /* auto: the device's QPs shared by the processes on it (the plan), so
     * a VM never asks its device for more than it has */
    module->budget.max = c->max_connections > 0 ? (uint32_t) c->max_connections :
                         (fit > 0 ? fit : UINT32_MAX);
    if (module->budget.max < 2) {
        module->budget.max = 2;   /* a peer and the loopback QP */
    }
    MCA_BTL_PVRDMA_VERBOSE(5, "%s:%d: connection budget %u RC QPs (%s): %s",
                           module->port.dev_name, module->port.port_num, module->budget.max,
                           c->max_connections > 0 ? "btl_pvrdma_max_connections" :
                           "auto: max_qp shared by the processes on the device",
                           (module->job_peers > 0 && module->budget.max > module->job_peers) ?
                           "every peer of the job fits, nothing is ever closed" :
                           "the least recently used idle connection is closed for a new peer");
}

static bool ep_is_self(const mca_btl_pvrdma_endpoint_t *ep)
{
    return 0 == opal_compare_proc(ep->proc->proc_name, OPAL_PROC_MY_NAME);
}

/** Nothing of ours queued and no RDMA in flight: the connection may be
 *  closed once its send ring has retired too. */
static bool ep_closable(mca_btl_pvrdma_endpoint_t *ep)
{
    return opal_list_is_empty(&ep->pending) && 0 == ep->rdma_outstanding && !ep_is_self(ep);
}

/** Nothing of ours queued or in flight on the connection. */
static bool ep_quiet(mca_btl_pvrdma_endpoint_t *ep)
{
    return ep_closable(ep) && 0 == ep->ring_count;
}

static void close_info_fill(const mca_btl_pvrdma_endpoint_t *ep,
                            mca_btl_pvrdma_close_info_t *info)
{
    info->from_qpn = ep->qp->qp_num;
    info->conn_qpn = ep->peer_rc.qpn;
    info->sent = ep->sends_posted;
    info->received = ep->recvs_done;
    info->attempt = ep->close_attempt;
}

void mca_btl_pvrdma_budget_wait(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    ep->state = MCA_BTL_PVRDMA_EP_WAITING;
    ep->wait_since_us = pvrdma_common_now_us();
    module->budget.waiting++;
    module->budget.next_look_us = 0;   /* look for a connection to close now */
    MCA_BTL_PVRDMA_VERBOSE(20, "connection to %s waits for a slot (%u of %u RC QPs held)",
                           OPAL_NAME_PRINT(ep->proc->proc_name), module->peers_connected,
                           module->budget.max);
}

/** Close our side of an agreed close: the QP is destroyed at once and its
 *  receive buffers taken back (a device need not flush them: QEMU's model
 *  never does), the endpoint is CLOSED and reconnects at once if work for
 *  the peer queued meanwhile. */
static void close_finish(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    uint32_t qpn, peer_qpn = ep->peer_rc.qpn, rx, cq;

    if (NULL == ep->qp) {
        return;   /* closed already (a nested handling of the same close) */
    }
    qpn = ep->qp->qp_num;
    if (MCA_BTL_PVRDMA_EP_CLOSING == ep->state) {
        module->budget.closing--;
        module->connecting_count--;
    }
    rx = mca_btl_pvrdma_endpoint_destroy_conn(ep, &cq);
    module->budget.rx_reclaimed += rx;
    /* Its CQ share is free at once: both sides agreed that every message
     * was received (so none of its receives can complete) and every send
     * retired, and a QP destroyed without the error state flushes nothing.
     * (Holding the share until a poll emptied the CQ made a busy rank's
     * connects fail "CQ full" at 4 x 8 with per-QP queues.) */
    module->cq_committed -= cq;
    ep->closed_qpn = qpn;
    ep->closed_peer_qpn = peer_qpn;
    ep->had_connection = true;
    module->budget.closes++;
    module->budget.next_look_us = 0;
    MCA_BTL_PVRDMA_VERBOSE(10, "closed the idle connection to %s (qp 0x%x -> 0x%x) for the "
                           "budget of %u RC QPs (%" PRIu64 " closed so far)",
                           OPAL_NAME_PRINT(ep->proc->proc_name), qpn, peer_qpn,
                           module->budget.max, module->budget.closes);
    if (!opal_list_is_empty(&ep->pending)) {
        (void) mca_btl_pvrdma_endpoint_start_connect(ep);
    }
}

void mca_btl_pvrdma_budget_close_req(mca_btl_pvrdma_endpoint_t *ep,
                                     const mca_btl_pvrdma_close_info_t *info)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    mca_btl_pvrdma_close_info_t reply;

    if (NULL == ep->qp || ep->qp->qp_num != info->conn_qpn ||
        ep->peer_rc.qpn != info->from_qpn) {
        /* our agreement to a close we already did was lost: say it again */
        if (info->conn_qpn == ep->closed_qpn && info->from_qpn == ep->closed_peer_qpn) {
            reply = (mca_btl_pvrdma_close_info_t) {.from_qpn = ep->closed_qpn,
                                                   .conn_qpn = ep->closed_peer_qpn,
                                                   .attempt = info->attempt};
            (void) mca_btl_pvrdma_cm_send_close(ep, MCA_BTL_PVRDMA_CLOSE_ACK, &reply);
        }
        return;   /* else a connection older than that: nothing to answer */
    }
    /* A copy of an attempt we refused is refused again: the requester
     * may have had our refusal, gone back to sending, and a later copy
     * must not find us agreeing to close under its new messages. */
    if (info->attempt != ep->refused_attempt &&
        (MCA_BTL_PVRDMA_EP_CONNECTED == ep->state || MCA_BTL_PVRDMA_EP_CLOSING == ep->state) &&
        ep_quiet(ep) && ep->recvs_done == info->sent && ep->sends_posted == info->received) {
        /* every message either side sent was received and handled.
         * Closed before the reply goes: sending may poll the connection
         * CQ (a full ring) and handle the peer's resent CLOSE inside */
        close_info_fill(ep, &reply);
        reply.attempt = info->attempt;
        close_finish(ep);
        (void) mca_btl_pvrdma_cm_send_close(ep, MCA_BTL_PVRDMA_CLOSE_ACK, &reply);
        return;
    }
    if (info->attempt != ep->refused_attempt) {
        module->budget.refusals++;
        ep->refused_attempt = info->attempt;
    }
    close_info_fill(ep, &reply);
    reply.attempt = info->attempt;
    (void) mca_btl_pvrdma_cm_send_close(ep, MCA_BTL_PVRDMA_CLOSE_NAK, &reply);
    /* trailing unsignalled sends keep our ring from emptying: a signalled
     * credit message retires them, so the next request can be agreed */
    if (ep->ring_count > 0 && ep->unsignalled > 0 && MCA_BTL_PVRDMA_EP_CONNECTED == ep->state) {
        (void) mca_btl_pvrdma_send_kick(module, ep);
    }
}

void mca_btl_pvrdma_budget_close_reply(mca_btl_pvrdma_endpoint_t *ep,
                                       const mca_btl_pvrdma_close_info_t *info, bool agreed)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    if (MCA_BTL_PVRDMA_EP_CLOSING != ep->state || NULL == ep->qp ||
        ep->qp->qp_num != info->conn_qpn || ep->peer_rc.qpn != info->from_qpn ||
        ep->close_attempt != info->attempt) {
        return;   /* a reply to an older request */
    }
    if (agreed) {
        close_finish(ep);
        return;
    }
    module->budget.closing--;
    module->connecting_count--;
    module->budget.refusals++;
    ep->state = MCA_BTL_PVRDMA_EP_CONNECTED;
    ep->close_retry_us = pvrdma_common_now_us() + BUDGET_REFUSED_US;
    module->budget.next_look_us = 0;   /* another one may be idle */
    (void) mca_btl_pvrdma_endpoint_progress_pending(ep);
}

bool mca_btl_pvrdma_budget_refuse(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    uint64_t patience = BUDGET_PATIENCE *
                        (uint64_t) mca_btl_pvrdma_component.connect_timeout_ms * 1000u;

    if (!mca_btl_pvrdma_budget_full(module) ||
        (MCA_BTL_PVRDMA_EP_WAITING == ep->state &&
         pvrdma_common_now_us() - ep->wait_since_us > patience)) {
        if (MCA_BTL_PVRDMA_EP_WAITING == ep->state) {
            if (mca_btl_pvrdma_budget_full(module)) {
                module->budget.overruns++;
            }
            module->budget.waiting--;
            ep->state = MCA_BTL_PVRDMA_EP_CLOSED;
        }
        return false;
    }
    if (MCA_BTL_PVRDMA_EP_CLOSED == ep->state) {
        mca_btl_pvrdma_budget_wait(ep);
    }
    return true;
}

void mca_btl_pvrdma_budget_busy(mca_btl_pvrdma_endpoint_t *ep,
                                const mca_btl_pvrdma_close_info_t *info)
{
    if (MCA_BTL_PVRDMA_EP_CONNECTING != ep->state || NULL == ep->qp ||
        ep->qp->qp_num != info->conn_qpn) {
        return;
    }
    /* it will connect to us: ask again only as a reminder, and never run
     * out of retries while a busy peer makes room */
    ep->cm_tries = 0;
    ep->cm_first_us = pvrdma_common_now_us();
    ep->cm_deadline_us = ep->cm_first_us +
                         (uint64_t) mca_btl_pvrdma_component.connect_timeout_ms * 1000u;
}

void mca_btl_pvrdma_budget_close_implied(mca_btl_pvrdma_endpoint_t *ep)
{
    if (MCA_BTL_PVRDMA_EP_CLOSING == ep->state) {
        close_finish(ep);
    }
}

/** Ask the least recently used quiet connection's peer to close it.
 *  @return true when a request went out (or a kick that prepares one). */
static bool make_room(mca_btl_pvrdma_module_t *module, uint64_t now)
{
    mca_btl_pvrdma_endpoint_t *ep, *best = NULL;
    mca_btl_pvrdma_close_info_t info;

    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        if (MCA_BTL_PVRDMA_EP_CONNECTED != ep->state || now < ep->close_retry_us ||
            !ep_closable(ep)) {
            continue;
        }
        if (NULL == best || ep->last_use < best->last_use) {
            best = ep;
        }
    }
    if (NULL == best) {
        return false;
    }
    if (best->ring_count > 0) {
        /* its last sends went unsignalled: retire them first */
        if (best->unsignalled > 0) {
            (void) mca_btl_pvrdma_send_kick(module, best);
        }
        best->close_retry_us = now + BUDGET_LOOK_US;
        return true;
    }
    best->state = MCA_BTL_PVRDMA_EP_CLOSING;
    best->cm_tries = 0;
    if (0 == ++best->close_attempt) {
        best->close_attempt = 1;   /* 0 is "none" */
    }
    module->budget.closing++;
    module->connecting_count++;   /* the CM polls and runs its timer */
    close_info_fill(best, &info);
    (void) mca_btl_pvrdma_cm_send_close(best, MCA_BTL_PVRDMA_CLOSE_REQ, &info);
    return true;
}

int mca_btl_pvrdma_budget_progress(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    mca_btl_pvrdma_endpoint_t *ep;
    uint64_t now;
    int count = 0;

    if (0 == module->budget.waiting && module->peers_connected <= module->budget.max) {
        return 0;
    }
    now = pvrdma_common_now_us();
    /* free slots to the waiting, or over the budget after the connect
     * timeout: a budget must never stop a job */
    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        bool late;

        if (MCA_BTL_PVRDMA_EP_WAITING != ep->state) {
            continue;
        }
        late = now - ep->wait_since_us > BUDGET_PATIENCE * (uint64_t) c->connect_timeout_ms * 1000u;
        if (!mca_btl_pvrdma_budget_full(module) || late) {
            if (mca_btl_pvrdma_budget_full(module)) {
                module->budget.overruns++;
                MCA_BTL_PVRDMA_VERBOSE(5, "connection to %s made over the budget of %u RC "
                                       "QPs: no idle connection could be closed in %u ms",
                                       OPAL_NAME_PRINT(ep->proc->proc_name),
                                       module->budget.max,
                                       BUDGET_PATIENCE * (unsigned) c->connect_timeout_ms);
            }
            module->budget.waiting--;
            ep->state = MCA_BTL_PVRDMA_EP_CLOSED;
            (void) mca_btl_pvrdma_endpoint_connect_now(ep);
            count++;
        }
    }
    /* as many closes at once as connections want a slot (or are over) */
    if (now >= module->budget.next_look_us) {
        uint32_t want = module->budget.waiting +
                        (module->peers_connected > module->budget.max ?
                         module->peers_connected - module->budget.max : 0);

        module->budget.next_look_us = now + BUDGET_LOOK_US;
        for (uint32_t tries = 0; tries < BUDGET_CLOSING_MAX && module->budget.closing < want &&
                                 module->budget.closing < BUDGET_CLOSING_MAX; ++tries) {
            if (!make_room(module, now)) {
                break;
            }
            count++;
        }
    }
    return count;
}
