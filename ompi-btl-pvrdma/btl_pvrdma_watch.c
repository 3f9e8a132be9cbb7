/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_watch.c
 * @brief The BTL's watch over its peers: the stall kick, the keepalive and
 *        the stall report.  Their timing is common/pvrdma_watch.h's (the
 *        UCX transport's pvrdma_stall.c uses the same); what a kick or a
 *        probe is (a credit-only SEND, or a zero-length RDMA WRITE at 0
 *        credits) is mca_btl_pvrdma_send_kick's (btl_pvrdma_frag.c).
 */
#include "opal_config.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_watch.h"

#include <inttypes.h>

/** Seconds without any completion, connection step or post while work is
 *  waiting, before the state is reported (btl_base_verbose 10). */
#define MCA_BTL_PVRDMA_STALL_REPORT_S 60

/** Say what this process waits for when nothing has moved for a long time
 *  although sends, RDMA or credit returns are waiting: the state a hang
 *  would otherwise hide (an idle rank waiting in MPI_Recv says nothing). */
static void stall_report(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_endpoint_t *ep;

    MCA_BTL_PVRDMA_VERBOSE(10, "stalled %d s: %u sends queued, %u of %u send WRs in flight "
                           "(%u signalled), %u receives posted, %u credit returns owed",
                           MCA_BTL_PVRDMA_STALL_REPORT_S, module->pending_count,
                           module->sq_posted, module->plan.send_budget,
                           module->sends_outstanding, module->recvs_posted,
                           module->credits_owed_count);
    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        size_t queued = opal_list_get_size(&ep->pending);
        struct ibv_qp_init_attr qi;
        struct ibv_qp_attr qa;

        if (0 == queued && 0 == ep->ring_count && !ep->credits_owed &&
            !MCA_BTL_PVRDMA_VERBOSE_ON(20)) {
            continue;
        }
        if (NULL == ep->qp || 0 != ibv_query_qp(ep->qp, &qa, IBV_QP_STATE, &qi)) {
            qa.qp_state = IBV_QPS_UNKNOWN;
        }
        MCA_BTL_PVRDMA_VERBOSE(10, "stalled: peer %s state %d (QP state %d): %zu queued, %u WRs "
                               "posted (%u unsignalled, %u RDMA), credits: may send %u, owe %u%s; "
                               "%" PRIu64 " messages sent, %" PRIu64 " received",
                               OPAL_NAME_PRINT(ep->proc->proc_name), ep->state,
                               (int) qa.qp_state, queued,
                               ep->ring_count, ep->unsignalled, ep->rdma_outstanding,
                               ep->credits.send, ep->credits.owed,
                               ep->credits_owed ? " (return not posted)" : "",
                               ep->sends_posted, ep->recvs_done);
    }
}

/** Progress calls between two clock reads of the stall watch (the clock is
 *  a vDSO read, no VM exit; the send queues are looked at once a second). */
#define MCA_BTL_PVRDMA_WATCH_CALLS 1024
/** Kicks per stall: after these the peer is left to RC's own retries and
 *  the stall report (btl_base_verbose 10). */
#define MCA_BTL_PVRDMA_KICKS_MAX 5

/** How long a WR may legitimately wait: RC resends a request after the ACK
 *  timeout (4.096 us x 2^rc_timeout) up to rc_retry_count times and then
 *  fails it.  A kick before that only adds traffic to a fabric that is
 *  already resending (rxe bed, 4 x 8 ranks with a 2.1 s ACK timeout: 855
 *  kicks at 10 s in one all-to-all, none needed).  0: no ACK timeout. */
static uint64_t rc_retry_window_us(void)
{
    const mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;

    if (c->rc_timeout <= 0 || c->rc_timeout > 31) {
        return 0;
    }
    return ((4096ull << c->rc_timeout) / 1000u) * (uint64_t) (c->rc_retry_count + 1);
}

/**
 * Kick peers whose send queue has held WRs for btl_pvrdma_stall_kick
 * seconds (at least rc_retry_window_us()) without one of them completing.
 * Most WRs are unsignalled, so a lost last SEND shows nothing: SoftRoCE
 * under load was seen to neither resend nor fail one (both QPs RTS, the
 * peer one message short, for minutes).  A new signalled request on the QP
 * ends that either way: the responder acknowledges everything before it or
 * answers the gap with a sequence NAK, and the requester resends from the
 * gap; a dead peer makes it fail with retry-exceeded, which is reported.  A
 * kick is a credit-only message (a SEND, so it works where RDMA WRITE does
 * not, as on QEMU's PVRDMA model).  A peer that is merely idle after our
 * last unsignalled WRs gets one such message, which retires them.
 * @return true when @p ep's ring is empty (the keepalive's case).
 */
static bool kick_watch(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                       uint64_t now, uint64_t kick_us)
{
    if (0 == ep->ring_count) {
        /* idle: a new period starts with the next WR */
        pvrdma_common_watch_reset(&ep->kick_watch);
        return true;
    }
    if (!pvrdma_common_watch_due(&ep->kick_watch, ep->sends_retired, now, kick_us,
                                 MCA_BTL_PVRDMA_KICKS_MAX)) {
        return false;
    }
    uint32_t posted = ep->ring_count, unsignalled = ep->unsignalled;

    if (OPAL_SUCCESS == mca_btl_pvrdma_send_kick(module, ep)) {
        pvrdma_common_watch_acted(&ep->kick_watch);
        module->stall_kicks++;
        MCA_BTL_PVRDMA_VERBOSE(10, "kicked peer %s: %u WRs posted (%u unsignalled), none "
                               "completed for %" PRIu64 " s (kick %u of %d)",
                               OPAL_NAME_PRINT(ep->proc->proc_name), posted, unsignalled,
                               (now - ep->kick_watch.since) / 1000000u, ep->kick_watch.count,
                               MCA_BTL_PVRDMA_KICKS_MAX);
    }
    return false;
}

/**
 * Probe a connected peer that has shown no sign of life for
 * btl_pvrdma_keepalive seconds while our send queue to it is empty: nothing
 * received from it, nothing of ours retired by it.  A rank that only waits
 * to receive has nothing outstanding, so RC would never report a peer whose
 * process, VM or link died and the job would wait for ever.  The probe is a
 * signalled credit-only SEND (as a kick): a live peer's device acknowledges
 * it (the peer's process need not be in MPI) and the peer's next look sees
 * it as a sign of life from us, so two idle peers exchange about one
 * message per period; a dead one fails it with retry-exceeded within RC's
 * retry window, which ends the job through the completion-error path
 * (both hosts, the device and the status).  Without a credit (the peer
 * holds all of them) the probe waits for the next look.
 */
static void keepalive_watch(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                            uint64_t now, uint64_t alive_us)
{
    if (!pvrdma_common_watch_due(&ep->alive_watch, ep->recvs_done + ep->sends_retired, now,
                                 alive_us, 0) ||
        OPAL_SUCCESS != mca_btl_pvrdma_send_kick(module, ep)) {
        return;
    }
    module->keepalives++;
    /* its completion is the next sign of life */
    pvrdma_common_watch_restart(&ep->alive_watch, now);
    MCA_BTL_PVRDMA_VERBOSE(20, "keepalive probe to peer %s (silent for %d s)",
                           OPAL_NAME_PRINT(ep->proc->proc_name),
                           mca_btl_pvrdma_component.keepalive_s);
}

/** Look at every connected peer about once a second: the stall kick and
 *  the keepalive.  Only while sends are posted or keepalives are on; the
 *  clock is read every 1024 progress calls (a vDSO read, no VM exit); the
 *  loop itself touches no device. */
void mca_btl_pvrdma_peer_watch(mca_btl_pvrdma_module_t *module)
{
    uint64_t kick_us = (uint64_t) mca_btl_pvrdma_component.stall_kick_s * 1000000u;
    uint64_t alive_us = (uint64_t) mca_btl_pvrdma_component.keepalive_s * 1000000u;
    uint64_t window, now;
    mca_btl_pvrdma_endpoint_t *ep;

    if (0 == module->sq_posted && 0 == alive_us) {
        return;
    }
    if (module->fatal || ++module->watch_calls < MCA_BTL_PVRDMA_WATCH_CALLS) {
        return;
    }
    module->watch_calls = 0;
    now = pvrdma_common_now_us();
    if (now < module->watch_next_us) {
        return;
    }
    module->watch_next_us = now + 1000000u;
    window = rc_retry_window_us();
    if (0 != kick_us && kick_us < window) {
        kick_us = window;
    }
    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        if (MCA_BTL_PVRDMA_EP_CONNECTED != ep->state) {
            pvrdma_common_watch_reset(&ep->kick_watch);
            pvrdma_common_watch_reset(&ep->alive_watch);
            continue;
        }
        if (kick_watch(module, ep, now, kick_us) && 0 != alive_us) {
            keepalive_watch(module, ep, now, alive_us);
        }
    }
}

/** Track progress; report once per period while work waits and nothing moves. */
void mca_btl_pvrdma_stall_watch(mca_btl_pvrdma_module_t *module, int count)
{
    uint64_t now;

    /* at level 20 a rank that merely waits reports too */
    if (count > 0 || (0 == module->pending_count && 0 == module->sq_posted &&
                      0 == module->credits_owed_count && !MCA_BTL_PVRDMA_VERBOSE_ON(20))) {
        module->idle_polls = 0;
        return;
    }
    /* the clock is read only now and then: this is the idle path */
    if (0 != (++module->idle_polls & 0xffff)) {
        return;
    }
    now = pvrdma_common_now_us();
    if (0 == module->idle_since_us || module->idle_polls == 0x10000) {
        module->idle_since_us = now;
    } else if (now - module->idle_since_us >= MCA_BTL_PVRDMA_STALL_REPORT_S * 1000000ull) {
        module->idle_since_us = now;
        stall_report(module);
    }
}
