/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_endpoint.c
 * @brief Endpoints: modex lookup, RC QP creation and transitions, the
 *        in-order send ring (selective signalling) and pending queues.
 */
#include "opal_config.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btl_pvrdma_compat.h"
#include "opal/util/show_help.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_budget.h"
#include "btl_pvrdma_cm.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_error.h"
#include "btl_pvrdma_frag.h"
#include "btl_pvrdma_rdma.h"

static void endpoint_construct(mca_btl_pvrdma_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->state = MCA_BTL_PVRDMA_EP_CLOSED;
    ep->users = 0;
    ep->osc.ep = ep;
    ep->cm_ah = NULL;
    ep->cm_seq = 0;
    ep->cm_tries = 0;
    ep->cm_first_us = 0;
    ep->qp = NULL;
    ep->ring = NULL;
    ep->ring_size = ep->ring_head = ep->ring_count = ep->unsignalled = 0;
    ep->send_turn = 0;   /* module turns start at 1: the first send goes at once */
    ep->repost_head = NULL;
    ep->repost_count = 0;
    ep->srq_consumed = 0;
    ep->cq_need = 0;
    ep->rdma_outstanding = 0;
    ep->touched = false;
    ep->credits_owed = false;
    ep->sends_posted = 0;
    ep->recvs_done = 0;
    ep->sends_retired = 0;
    ep->last_use = ep->wait_since_us = ep->close_retry_us = 0;
    ep->closed_qpn = ep->closed_peer_qpn = 0;
    ep->had_connection = false;
    ep->close_attempt = ep->refused_attempt = 0;
    memset(&ep->kick_watch, 0, sizeof(ep->kick_watch));
    memset(&ep->alive_watch, 0, sizeof(ep->alive_watch));
    OBJ_CONSTRUCT(&ep->pending, opal_list_t);
    OBJ_CONSTRUCT(&ep->rx_posted, opal_list_t);
}

static void endpoint_destruct(mca_btl_pvrdma_endpoint_t *ep)
{
    OBJ_DESTRUCT(&ep->pending);
    OBJ_DESTRUCT(&ep->rx_posted);
    free(ep->ring);
}

OBJ_CLASS_INSTANCE(mca_btl_pvrdma_endpoint_t, opal_list_item_t, endpoint_construct,
                   endpoint_destruct);

static uint64_t name_key(opal_process_name_t name)
{
    uint64_t key;

    memcpy(&key, &name, sizeof(key));
    return key;
}

mca_btl_pvrdma_endpoint_t *mca_btl_pvrdma_endpoint_lookup(mca_btl_pvrdma_module_t *module,
                                                          opal_process_name_t name)
{
    mca_btl_pvrdma_endpoint_t *ep = NULL;

    if (OPAL_SUCCESS != opal_hash_table_get_value_uint64(&module->proc_to_ep, name_key(name),
                                                         (void **) &ep)) {
        return NULL;
    }
    return ep;
}

mca_btl_pvrdma_endpoint_t *mca_btl_pvrdma_endpoint_get(mca_btl_pvrdma_module_t *module,
                                                       opal_proc_t *proc)
{
    mca_btl_pvrdma_endpoint_t *ep = NULL;
    mca_btl_pvrdma_modex_t *modex = NULL;
    struct pvrdma_common_addr_info peer;
    char err[256] = "";
    size_t size = 0;
    int rc;

    ep = mca_btl_pvrdma_endpoint_lookup(module, proc->proc_name);
    if (NULL != ep) {
        return ep;
    }

    OPAL_MODEX_RECV(rc, &mca_btl_pvrdma_component.super.btl_version, &proc->proc_name,
                    (void **) &modex, &size);
    if (OPAL_SUCCESS != rc || NULL == modex || size < sizeof(*modex)) {
        MCA_BTL_PVRDMA_VERBOSE(5, "no pvrdma address published by %s", OPAL_NAME_PRINT(proc->proc_name));
        free(modex);
        return NULL;
    }
    rc = pvrdma_common_addr_unpack(modex->cm_addr, sizeof(modex->cm_addr), &peer);
    if (0 == rc) {
        rc = pvrdma_common_addr_check_compat(&module->cm->local, &peer, err, sizeof(err));
    }
    if (0 != rc) {
        char *host = pvrdma_compat_proc_hostname(proc);
        opal_show_help(MCA_BTL_PVRDMA_HELP, "gid type mismatch", true, opal_process_info.nodename,
                       NULL != host ? host : "(unknown)", module->port.dev_name,
                       (int) module->port.port_num, err[0] ? err : "unreadable address");
        free(host);
        free(modex);
        return NULL;
    }

    ep = OBJ_NEW(mca_btl_pvrdma_endpoint_t);
    if (NULL == ep) {
        free(modex);
        return NULL;
    }
    ep->module = module;
    ep->proc = proc;
    ep->peer_cm = peer;
    ep->peer_qkey = ntohl(modex->qkey);
    memcpy(ep->peer_secret, modex->secret, sizeof(ep->peer_secret));
    free(modex);
    opal_list_append(&module->endpoints, &ep->super);
    (void) opal_hash_table_set_value_uint64(&module->proc_to_ep, name_key(proc->proc_name), ep);
    return ep;
}

/* The fragment of a receive WR in a chain (they are linked by wr.recv.next). */
static mca_btl_pvrdma_frag_t *recv_wr_frag(struct ibv_recv_wr *wr)
{
    return NULL == wr ? NULL :
        (mca_btl_pvrdma_frag_t *) ((char *) wr - offsetof(mca_btl_pvrdma_frag_t, wr.recv));
}

/* Receives chained but not posted go back to the free list. */
static void release_chain(mca_btl_pvrdma_endpoint_t *ep)
{
    while (NULL != ep->repost_head) {
        mca_btl_pvrdma_frag_t *frag = ep->repost_head;

        ep->repost_head = recv_wr_frag(frag->wr.recv.next);
        mca_btl_pvrdma_frag_return(frag);
    }
    ep->repost_count = 0;
}

/** Post @p n fresh receive buffers on a new QP's receive queue (buffers a
 *  closed connection's upcalls chained after its close go back first: the
 *  queue takes n). */
static int post_qp_receives(mca_btl_pvrdma_endpoint_t *ep, uint32_t n)
{
    release_chain(ep);
    for (uint32_t i = 0; i < n; ++i) {
        mca_btl_pvrdma_frag_t *frag = mca_btl_pvrdma_frag_get(&ep->module->recv_frags);

        if (NULL == frag) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        frag->endpoint = ep;
        frag->wr.recv.next = NULL == ep->repost_head ? NULL : &ep->repost_head->wr.recv;
        ep->repost_head = frag;
        ep->repost_count++;
    }
    return mca_btl_pvrdma_endpoint_repost(ep);
}

/* The CQ has no room for another peer's receives: say which limit, the
 * numbers and the knobs (the job is aborted by error_connect). */
static void error_cq_full(mca_btl_pvrdma_endpoint_t *ep, uint32_t need)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    const struct pvrdma_common_scale_plan *pl = &module->plan;
    char why[512];

    snprintf(why, sizeof(why),
             "completion queue full: its %u entries are %u send WRs in flight + "
             "%u peers x %u receives; peer %u needs %u more (job: %u peers). Raise "
             "btl_pvrdma_cq_depth (device max_cqe %d; QEMU's model takes 4096 at most), "
             "lower btl_pvrdma_recv_queue_depth or btl_pvrdma_send_budget, or use "
             "btl_pvrdma_srq 1 where the device has SRQs",
             pl->cq_depth, pl->send_budget, module->peers_connected, pl->recv_per_peer,
             module->peers_connected + 1, need, module->job_peers,
             module->port.dev_attr.max_cqe);
    mca_btl_pvrdma_error_connect(ep, why, ENOSPC);
}

/* ibv_create_qp failed: name the device-wide QP limit when it is the cause. */
static void error_create_qp(mca_btl_pvrdma_endpoint_t *ep, int err)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    char why[384];

    snprintf(why, sizeof(why),
             "ibv_create_qp (RC) for peer %u; the device allows %d QPs for all %d processes "
             "on it (%u peers each at one QP per peer and one for connection set-up): "
             "fewer ranks per VM or a device with more QPs",
             module->peers_connected + 1, module->port.dev_attr.max_qp,
             opal_process_info.num_local_peers + 1, module->plan.peers_fit_qp);
    mca_btl_pvrdma_error_connect(ep, why, err);
}

/* Destroy the RC QP of @p ep, if any, and forget its number.  The
 * receives still posted on it go back to the free list now: the device
 * writes no more into them, and a completion of theirs left in the CQ
 * (SoftRoCE) no longer matches them (mca_btl_pvrdma_frag_t.rx_qpn).
 * @return how many were taken back. */
static uint32_t destroy_qp(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    opal_list_item_t *item;
    uint32_t n = 0;

    if (NULL == ep->qp) {
        return 0;
    }
    (void) opal_hash_table_remove_value_uint32(&module->qpn_to_ep, ep->qp->qp_num);
    (void) ibv_destroy_qp(ep->qp);
    ep->qp = NULL;
    module->peers_connected--;
    while (NULL != (item = opal_list_remove_first(&ep->rx_posted))) {
        mca_btl_pvrdma_frag_t *frag = (mca_btl_pvrdma_frag_t *) item;

        frag->posted = false;
        mca_btl_pvrdma_frag_return(frag);
        n++;
    }
    module->recvs_posted -= n < module->recvs_posted ? n : module->recvs_posted;
    return n;
}

/* The chained receives and the send ring go (a QP that is no more, or is
 * being replaced). */
static void release_chain_and_ring(mca_btl_pvrdma_endpoint_t *ep)
{
    release_chain(ep);
    free(ep->ring);
    ep->ring = NULL;
    ep->ring_size = ep->ring_count = ep->ring_head = ep->unsignalled = 0;
}

/* Undo a half-made connection: QP, CQ and SRQ reservations, ring. */
static void rollback_qp(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    module->cq_committed -= ep->cq_need;
    ep->cq_need = 0;
    if (NULL != module->srq && ep->rx_grant > 0) {
        module->srq_target = module->srq_target > ep->rx_grant ?
                             module->srq_target - ep->rx_grant : 0;
    }
    ep->rx_grant = 0;
    (void) destroy_qp(ep);
    release_chain_and_ring(ep);
}

int mca_btl_pvrdma_endpoint_create_qp(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    struct ibv_qp_cap cap;
    uint32_t grant = module->plan.recv_per_peer, need;
    int rc;

    /* Every QP shares one CQ, never resized: a peer's receives must fit
     * the room the plan left for them (sends are budgeted module-wide in
     * mca_btl_pvrdma_endpoint_post), or the CQ could overflow (fatal). */
    need = NULL != module->srq ? 0 : grant;
    if (module->cq_committed + need > module->plan.recv_room) {
        error_cq_full(ep, need);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->cq_committed += need;
    ep->cq_need = need;

    memset(&cap, 0, sizeof(cap));
    cap.max_send_wr = module->profile.max_send_wr;
    cap.max_recv_wr = grant;
    cap.max_send_sge = module->profile.send_sge;
    cap.max_recv_sge = 1;
    cap.max_inline_data = module->profile.max_inline;
    ep->qp = pvrdma_common_rc_qp_create(module->pd, module->cq, module->srq, &cap);
    if (NULL == ep->qp) {
        rc = errno;
        rollback_qp(ep);
        error_create_qp(ep, rc);
        return OPAL_ERROR;
    }
    if (++module->peers_connected > module->peers_max) {
        module->peers_max = module->peers_connected;
    }
    if (ep->had_connection) {
        module->budget.reopens++;
    }
    /* the QP's reported caps are the final word (PVRDMA: inline 0) */
    ep->max_inline = cap.max_inline_data;
    ep->ring_size = cap.max_send_wr < module->profile.max_send_wr ?
        cap.max_send_wr : module->profile.max_send_wr;
    ep->ring = calloc(ep->ring_size, sizeof(*ep->ring));
    if (NULL == ep->ring) {
        rollback_qp(ep);
        mca_btl_pvrdma_error_connect(ep, "send ring allocation", ENOMEM);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ep->signal_interval = (uint32_t) (c->signal_interval > 0 ? c->signal_interval : 1);
    if (ep->signal_interval > ep->ring_size / 2) {
        ep->signal_interval = ep->ring_size / 2 > 0 ? ep->ring_size / 2 : 1;
    }
    ep->psn = pvrdma_common_psn_new();

    rc = pvrdma_common_qp_to_init(ep->qp, &module->qp_params);
    if (0 != rc) {
        rollback_qp(ep);
        mca_btl_pvrdma_error_connect(ep, "ibv_modify_qp (RESET->INIT)", rc);
        return OPAL_ERROR;
    }
    (void) opal_hash_table_set_value_uint32(&module->qpn_to_ep, ep->qp->qp_num, ep);

    if (NULL != module->srq) {
        /* Every peer gets its own credits; the SRQ holds enough receives
         * for all of them up to its depth (beyond that RNR retry covers). */
        grant = c->recv_queue_depth > 0 ? (uint32_t) c->recv_queue_depth : 64;
        module->srq_target += grant;
        if (module->srq_target > module->profile.srq_depth) {
            module->srq_target = module->profile.srq_depth;
        }
        ep->rx_grant = grant;
        rc = mca_btl_pvrdma_srq_refill(module);
    } else {
        ep->rx_grant = grant;
        rc = post_qp_receives(ep, grant);
    }
    if (OPAL_SUCCESS != rc) {
        /* free-list growth or registration failed: nothing of this peer
         * stays behind (a posted receive goes with its destroyed QP) */
        rollback_qp(ep);
        mca_btl_pvrdma_error_connect(ep, "receive buffers (free list growth or memory "
                                     "registration; check ulimit -l)", ENOMEM);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int mca_btl_pvrdma_endpoint_connect_qp(mca_btl_pvrdma_endpoint_t *ep,
                                       const struct pvrdma_common_addr_info *peer_rc,
                                       uint32_t peer_grant)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    uint32_t threshold;
    int rc;

    rc = pvrdma_common_qp_to_rtr(ep->qp, &module->qp_params, peer_rc);
    if (0 != rc) {
        struct ibv_qp_attr qa;
        struct ibv_qp_init_attr qi;
        char why[256], gid[64];

        /* say what the QP and the peer's address were: a transition from
         * the wrong state and a bad address look alike (EINVAL) */
        snprintf(why, sizeof(why), "ibv_modify_qp (INIT->RTR): qp 0x%x in state %d, "
                 "endpoint state %d, to qp 0x%x mtu %d gid %s", ep->qp->qp_num,
                 0 == ibv_query_qp(ep->qp, &qa, IBV_QP_STATE, &qi) ? (int) qa.qp_state : -1,
                 (int) ep->state, peer_rc->qpn, (int) peer_rc->mtu,
                 pvrdma_common_gid_str(&peer_rc->gid, gid, sizeof(gid)));
        mca_btl_pvrdma_error_connect(ep, why, rc);
        return OPAL_ERROR;
    }
    rc = pvrdma_common_qp_to_rts(ep->qp, &module->qp_params, peer_rc, ep->psn);
    if (0 != rc) {
        mca_btl_pvrdma_error_connect(ep, "ibv_modify_qp (RTR->RTS)", rc);
        return OPAL_ERROR;
    }
    ep->peer_rc = *peer_rc;
    threshold = c->credit_threshold > 0 ? (uint32_t) c->credit_threshold : ep->rx_grant / 2;
    rc = pvrdma_common_credits_init(&ep->credits, peer_grant > 0 ? peer_grant : 1,
                                    (uint32_t) (c->credit_reserved > 0 ? c->credit_reserved : 1),
                                    threshold > 0 ? threshold : 1);
    if (0 != rc) {
        mca_btl_pvrdma_error_connect(ep, "credit set-up", rc);
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

int mca_btl_pvrdma_endpoint_repost_batched(mca_btl_pvrdma_endpoint_t *ep)
{
    /* a quarter of the queue at most: the peer keeps 3/4 of its credits
     * while consumed buffers wait (their credits go back with them) */
    uint32_t batch = ep->rx_grant / 4;

    if (batch > MCA_BTL_PVRDMA_REPOST_BATCH) {
        batch = MCA_BTL_PVRDMA_REPOST_BATCH;
    }
    if (ep->repost_count < (batch > 0 ? batch : 1)) {
        return OPAL_SUCCESS;
    }
    return mca_btl_pvrdma_endpoint_repost(ep);
}

int mca_btl_pvrdma_endpoint_repost(mca_btl_pvrdma_endpoint_t *ep)
{
    struct ibv_recv_wr *bad;
    uint32_t n = ep->repost_count;
    int rc;

    if (0 == n) {
        return OPAL_SUCCESS;
    }
    if (OPAL_UNLIKELY(NULL == ep->qp)) {
        /* closed while these buffers were in an upcall of another thread:
         * the next QP gets fresh ones */
        release_chain(ep);
        return OPAL_SUCCESS;
    }
    /* the whole list costs one doorbell */
    rc = ibv_post_recv(ep->qp, &ep->repost_head->wr.recv, &bad);
    if (OPAL_UNLIKELY(0 != rc)) {
        mca_btl_pvrdma_error_post(ep, "ibv_post_recv", rc);
        return OPAL_ERROR;
    }
    /* listed as posted on this QP, for destroy_qp and the poller */
    for (mca_btl_pvrdma_frag_t *frag = ep->repost_head; NULL != frag;
         frag = recv_wr_frag(frag->wr.recv.next)) {
        frag->posted = true;
        frag->rx_qpn = ep->qp->qp_num;
        opal_list_append(&ep->rx_posted, &frag->base.super.super);
    }
    ep->repost_head = NULL;
    ep->repost_count = 0;
    ep->module->recvs_posted += n;
    if (MCA_BTL_PVRDMA_EP_CLOSED != ep->state) {
        pvrdma_common_credits_consumed(&ep->credits, n);
    }
    return OPAL_SUCCESS;
}

/** Set @p frag's WR for posting after the ones already accounted, and
 *  account it (ring, counts) as posted: decides whether it is signalled. */
static void post_prepare(mca_btl_pvrdma_endpoint_t *ep, mca_btl_pvrdma_frag_t *frag,
                         bool force_signal)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    bool signal;

    /* a CQE is needed when someone waits for this WR (callback, RDMA
     * completion); otherwise every signal_interval-th WR reports for all
     * before it */
    signal = force_signal || frag->callback || NULL != frag->rdma_cbfunc ||
             ++ep->unsignalled >= ep->signal_interval;
    /* The WR that takes the last entry of the send budget must report:
     * with the budget full of unsignalled WRs nothing would complete and
     * every peer's sends would wait for ever. */
    if (module->sq_posted + 1 >= module->plan.send_budget) {
        signal = true;
    }
    frag->wr.send.wr_id = (uintptr_t) frag;
    frag->wr.send.next = NULL;
    frag->wr.send.send_flags = signal ? IBV_SEND_SIGNALED : 0;
    if (IBV_WR_SEND == frag->wr.send.opcode && frag->sge.length <= ep->max_inline) {
        frag->wr.send.send_flags |= IBV_SEND_INLINE;
    }
    frag->posted = true;
    frag->signalled = signal;
    /* the PML waits for this one's completion (see only_waiting) */
    frag->awaited = signal && (frag->callback || NULL != frag->rdma_cbfunc);
    if (frag->awaited) {
        module->sends_awaited++;
    }
    ep->last_use = ++module->budget.tick;
    if (MCA_BTL_PVRDMA_FRAG_SEND == frag->kind) {
        /* only a SEND takes a receive at the peer: the close agreement
         * compares this with the peer's recvs_done, and a zero-length
         * WRITE probe (keepalive or kick at 0 credits) counted here made
         * that pair refuse every close for the rest of the job */
        if (IBV_WR_SEND == frag->wr.send.opcode) {
            ep->sends_posted++;
        }
    } else if (MCA_BTL_PVRDMA_FRAG_RDMA == frag->kind) {
        /* counted for the bed tests, which assert the rendezvous mode from
         * them (see mca_btl_pvrdma_module_t); the module lock is held */
        uint64_t len = frag->sge.length;

        if (IBV_WR_RDMA_WRITE == frag->wr.send.opcode) {
            module->rdma_writes++;
            if (len > module->rdma_write_max) {
                module->rdma_write_max = len;
            }
        } else if (IBV_WR_RDMA_READ == frag->wr.send.opcode) {
            module->rdma_reads++;
            if (len > module->rdma_read_max) {
                module->rdma_read_max = len;
            }
        } else if (IBV_WR_ATOMIC_FETCH_AND_ADD == frag->wr.send.opcode) {
            module->atomic_fadds++;
        } else if (IBV_WR_ATOMIC_CMP_AND_SWP == frag->wr.send.opcode) {
            module->atomic_cswaps++;
        }
    }
    ep->ring[(ep->ring_head + ep->ring_count) % ep->ring_size] = frag;
    ep->ring_count++;
    module->sq_posted++;
    if (signal) {
        ep->unsignalled = 0;
        module->sends_outstanding++;
    }
}

int mca_btl_pvrdma_endpoint_post_list(mca_btl_pvrdma_endpoint_t *ep,
                                      mca_btl_pvrdma_frag_t **frags, uint32_t n,
                                      bool signal_last)
{
    struct ibv_send_wr *bad;
    int rc;

    if (0 == n) {
        return OPAL_SUCCESS;
    }
    for (uint32_t i = 0; i < n; ++i) {
        post_prepare(ep, frags[i], signal_last && i + 1 == n);
        if (i > 0) {
            frags[i - 1]->wr.send.next = &frags[i]->wr.send;
        }
    }
    rc = ibv_post_send(ep->qp, &frags[0]->wr.send, &bad);
    if (OPAL_UNLIKELY(0 != rc)) {
        /* fatal for the module (a device that refuses a WR it has room
         * for): the WRs from bad on stay in the ring, never completed */
        mca_btl_pvrdma_error_post(ep, "ibv_post_send", rc);
        return OPAL_ERROR;
    }
    ep->module->send_posts++;
    ep->module->send_wrs += n;
    return OPAL_SUCCESS;
}

int mca_btl_pvrdma_endpoint_post(mca_btl_pvrdma_endpoint_t *ep, mca_btl_pvrdma_frag_t *frag,
                                 bool force_signal)
{
    return mca_btl_pvrdma_endpoint_post_list(ep, &frag, 1, force_signal);
}

void mca_btl_pvrdma_endpoint_ring_complete(mca_btl_pvrdma_endpoint_t *ep,
                                           mca_btl_pvrdma_frag_t *frag, int status,
                                           mca_btl_pvrdma_done_t *done)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    mca_btl_pvrdma_frag_t *f;

    /* RC completes in posting order: everything before a signalled WR is done */
    while (ep->ring_count > 0) {
        f = ep->ring[ep->ring_head];
        ep->ring_head = (ep->ring_head + 1) % ep->ring_size;
        ep->ring_count--;
        ep->sends_retired++;
        module->sq_posted--;
        if (MCA_BTL_PVRDMA_FRAG_RDMA == f->kind) {
            mca_btl_pvrdma_rdma_done(f, status, done);
        } else {
            mca_btl_pvrdma_frag_send_done(f, status, done);
        }
        if (f == frag) {
            break;
        }
    }
}

void mca_btl_pvrdma_endpoint_queue(mca_btl_pvrdma_endpoint_t *ep, mca_btl_pvrdma_frag_t *frag)
{
    opal_list_append(&ep->pending, &frag->base.super.super);
    ep->module->pending_count++;
    if (MCA_BTL_PVRDMA_EP_CLOSED == ep->state) {
        (void) mca_btl_pvrdma_endpoint_start_connect(ep);
    }
}

/** Should the queue of @p ep wait for a fuller list (HOLD_LOW)?  Only
 *  while coalescing, only for sends the PML waits for (it keeps polling
 *  for them: pending_count keeps the rank out of the idle wait), and only
 *  behind a signalled WR, whose completion retires the whole ring and so
 *  ends the hold: an unsignalled tail could keep the ring full for ever. */
static bool pending_hold(mca_btl_pvrdma_endpoint_t *ep)
{
    const mca_btl_pvrdma_frag_t *first;

    if (!mca_btl_pvrdma_component.send_coalesce || ep->ring_count <= MCA_BTL_PVRDMA_HOLD_LOW ||
        0 != ep->unsignalled || opal_list_get_size(&ep->pending) >= MCA_BTL_PVRDMA_POST_BATCH) {
        return false;
    }
    first = (const mca_btl_pvrdma_frag_t *) opal_list_get_first(&ep->pending);
    return first->callback || NULL != first->rdma_cbfunc;
}

int mca_btl_pvrdma_endpoint_progress_pending(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_frag_t *frag, *batch[MCA_BTL_PVRDMA_LIST_MAX];
    uint32_t n = 0;
    int count = 0;

    if (pending_hold(ep)) {
        ep->module->send_holds++;
        return 0;
    }

    /* every fragment that can go now, as WR lists of up to LIST_MAX:
     * a whole message's fragments or a burst cost one doorbell */
    while (MCA_BTL_PVRDMA_EP_CONNECTED == ep->state && !opal_list_is_empty(&ep->pending)) {
        frag = (mca_btl_pvrdma_frag_t *) opal_list_get_first(&ep->pending);
        if (mca_btl_pvrdma_endpoint_sq_free(ep) <= n) {
            break;
        }
        if (MCA_BTL_PVRDMA_FRAG_SEND == frag->kind) {
            if (!pvrdma_common_credits_take(&ep->credits, false)) {
                break;
            }
            frag->hdr->credits = (uint16_t) pvrdma_common_credits_piggyback(&ep->credits);
        }
        (void) opal_list_remove_first(&ep->pending);
        ep->module->pending_count--;
        batch[n++] = frag;
        if (MCA_BTL_PVRDMA_LIST_MAX == n) {
            if (OPAL_SUCCESS != mca_btl_pvrdma_endpoint_post_list(ep, batch, n, false)) {
                return count;
            }
            count += (int) n;
            n = 0;
        }
    }
    if (n > 0 && OPAL_SUCCESS == mca_btl_pvrdma_endpoint_post_list(ep, batch, n, false)) {
        count += (int) n;
    }
    return count;
}

int mca_btl_pvrdma_endpoint_start_connect(mca_btl_pvrdma_endpoint_t *ep)
{
    if (MCA_BTL_PVRDMA_EP_CLOSED != ep->state) {
        return OPAL_SUCCESS;
    }
    if (mca_btl_pvrdma_budget_full(ep->module) &&
        0 != opal_compare_proc(ep->proc->proc_name, OPAL_PROC_MY_NAME)) {
        mca_btl_pvrdma_budget_wait(ep);   /* its sends stay queued */
        return OPAL_SUCCESS;
    }
    return mca_btl_pvrdma_endpoint_connect_now(ep);
}

int mca_btl_pvrdma_endpoint_connect_now(mca_btl_pvrdma_endpoint_t *ep)
{
    int rc;

    rc = mca_btl_pvrdma_endpoint_create_qp(ep);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    ep->state = MCA_BTL_PVRDMA_EP_CONNECTING;
    ep->module->connecting_count++;
    ep->cm_tries = 0;
    MCA_BTL_PVRDMA_VERBOSE(10, "connecting to %s (qp 0x%x)", OPAL_NAME_PRINT(ep->proc->proc_name),
                   ep->qp->qp_num);
    if (0 == opal_compare_proc(ep->proc->proc_name, OPAL_PROC_MY_NAME)) {
        return mca_btl_pvrdma_cm_connect_self(ep);
    }
    (void) mca_btl_pvrdma_cm_send_req(ep); /* a lost/failed send is redone by the timer */
    mca_btl_pvrdma_cm_serve(ep->module);
    return OPAL_SUCCESS;
}

uint32_t mca_btl_pvrdma_endpoint_destroy_conn(mca_btl_pvrdma_endpoint_t *ep,
                                              uint32_t *cq_need)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    uint32_t rx;

    *cq_need = ep->cq_need;
    ep->cq_need = 0;
    if (NULL != module->srq && ep->rx_grant > 0) {
        module->srq_target = module->srq_target > ep->rx_grant ?
                             module->srq_target - ep->rx_grant : 0;
    }
    ep->rx_grant = 0;
    ep->srq_consumed = 0;
    rx = destroy_qp(ep);
    release_chain_and_ring(ep);
    if (ep->credits_owed) {
        ep->credits_owed = false;
        module->credits_owed_count--;
    }
    /* the counts the next close agreement compares start again */
    ep->sends_posted = ep->recvs_done = ep->sends_retired = 0;
    ep->refused_attempt = 0;
    memset(&ep->kick_watch, 0, sizeof(ep->kick_watch));
    memset(&ep->alive_watch, 0, sizeof(ep->alive_watch));
    ep->state = MCA_BTL_PVRDMA_EP_CLOSED;
    return rx;
}

void mca_btl_pvrdma_endpoint_close(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    if (MCA_BTL_PVRDMA_EP_CONNECTING == ep->state || MCA_BTL_PVRDMA_EP_ACCEPTED == ep->state ||
        MCA_BTL_PVRDMA_EP_CLOSING == ep->state) {
        module->connecting_count--;
    }
    if (MCA_BTL_PVRDMA_EP_CLOSING == ep->state) {
        module->budget.closing--;
    } else if (MCA_BTL_PVRDMA_EP_WAITING == ep->state) {
        module->budget.waiting--;
    }
    module->cq_committed -= ep->cq_need;
    ep->cq_need = 0;
    module->sq_posted -= ep->ring_count;
    (void) destroy_qp(ep);
    if (NULL != ep->cm_ah) {
        (void) ibv_destroy_ah(ep->cm_ah);
        ep->cm_ah = NULL;
    }
    if (ep->credits_owed) {
        ep->credits_owed = false;
        module->credits_owed_count--;
    }
    module->pending_count -= (uint32_t) opal_list_get_size(&ep->pending);
    /* fragments still queued or in flight go away with the free lists */
    while (NULL != opal_list_remove_first(&ep->pending)) {
    }
    ep->ring_count = 0;
    ep->state = MCA_BTL_PVRDMA_EP_CLOSED;
}
