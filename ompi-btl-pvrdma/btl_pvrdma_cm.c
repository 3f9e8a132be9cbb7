/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_cm.c
 * @brief UD datagram connection manager for the RC QPs (see btl_pvrdma_cm.h).
 */
#include "opal_config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/util/proc.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_cm.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_error.h"

#define CM_NRECV 32
#define CM_NSEND 16
#define CM_GRH 40
#define CM_SLOT 128
#define CM_QKEY 0x50564d41u   /* "PVMA"; high bit clear: not a controlled Q_Key */
#define CM_SEND_BIT (1ull << 63)
#define CM_VERSION 1

enum { CM_REQ = 1, CM_REP = 2, CM_RTU = 3 };

/** One connection-manager datagram. */
typedef struct cm_msg_t {
    uint8_t type;
    uint8_t version;
    uint8_t pad[2];
    uint32_t grant;                 /**< network order: credits for the receiver */
    opal_process_name_t src;
    opal_process_name_t dst;
    uint8_t rc_addr[PVRDMA_COMMON_ADDR_WIRE_SIZE];
} cm_msg_t;

static uint64_t cm_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static int cm_post_recv(mca_btl_pvrdma_cm_t *cm, uint32_t slot)
{
    struct ibv_sge sge = {.addr = (uintptr_t) (cm->buf + slot * CM_SLOT),
                          .length = CM_SLOT, .lkey = cm->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

    return ibv_post_recv(cm->qp, &wr, &bad);
}

int mca_btl_pvrdma_cm_open(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_modex_t *modex)
{
    mca_btl_pvrdma_cm_t *cm = calloc(1, sizeof(*cm));
    struct ibv_qp_init_attr init = {0};
    struct ibv_qp_attr attr;
    struct pvrdma_common_addr wire;
    const char *what = NULL;
    int rc = 0;

    if (NULL == cm) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->cm = cm;
    cm->qkey = CM_QKEY;

    /* whole pages: QEMU's pvrdma model refuses MRs that cross a page */
    cm->buf = pvrdma_common_page_alloc((size_t) (CM_NRECV + CM_NSEND) * CM_SLOT);
    if (NULL == cm->buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    cm->mr = ibv_reg_mr(module->pd, cm->buf, (CM_NRECV + CM_NSEND) * CM_SLOT,
                        IBV_ACCESS_LOCAL_WRITE);
    if (NULL == cm->mr) {
        what = "ibv_reg_mr (connection manager)";
        goto err;
    }
    cm->cq = ibv_create_cq(module->ctx, CM_NRECV + CM_NSEND, NULL, NULL, 0);
    if (NULL == cm->cq) {
        what = "ibv_create_cq (connection manager)";
        goto err;
    }
    init.send_cq = cm->cq;
    init.recv_cq = cm->cq;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = CM_NSEND;
    init.cap.max_recv_wr = CM_NRECV;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    cm->qp = ibv_create_qp(module->pd, &init);
    if (NULL == cm->qp) {
        what = "ibv_create_qp (UD, connection manager)";
        goto err;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = module->port.port_num;
    attr.qkey = cm->qkey;
    rc = ibv_modify_qp(cm->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (0 == rc) {
        attr.qp_state = IBV_QPS_RTR;
        rc = ibv_modify_qp(cm->qp, &attr, IBV_QP_STATE);
    }
    if (0 == rc) {
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn = 0;
        rc = ibv_modify_qp(cm->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    if (0 != rc) {
        errno = rc;
        what = "ibv_modify_qp (UD, connection manager)";
        goto err;
    }
    for (uint32_t i = 0; i < CM_NRECV; ++i) {
        rc = cm_post_recv(cm, i);
        if (0 != rc) {
            errno = rc;
            what = "ibv_post_recv (connection manager)";
            goto err;
        }
    }

    memset(&cm->local, 0, sizeof(cm->local));
    cm->local.gid = module->gid.gid;
    cm->local.qpn = cm->qp->qp_num;
    cm->local.lid = module->port.port_attr.lid;
    cm->local.mtu = module->profile.mtu;
    cm->local.gid_type = module->gid.type;
    cm->local.link_layer = module->port.link_layer;
    cm->local.flags = module->port.is_pvrdma ? PVRDMA_COMMON_ADDR_F_PVRDMA : 0;
    if (module->profile.rdma_read_ok) {
        cm->local.flags |= PVRDMA_COMMON_ADDR_F_READ_INIT | PVRDMA_COMMON_ADDR_F_READ_TARGET;
    }
    cm->local.max_dest_rd_atomic = module->profile.max_dest_rd_atomic;
    if (0 != pvrdma_common_addr_pack(&cm->local, &wire)) {
        return OPAL_ERR_BAD_PARAM;
    }
    memset(modex, 0, sizeof(*modex));
    memcpy(modex->cm_addr, &wire, sizeof(modex->cm_addr));
    modex->gid_index = (uint8_t) module->gid.index;
    modex->qkey = htonl(cm->qkey);
    return OPAL_SUCCESS;

err:
    mca_btl_pvrdma_error_verbs(module, what, errno);
    return OPAL_ERROR;
}

void mca_btl_pvrdma_cm_close(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;

    if (NULL == cm) {
        return;
    }
    if (cm->qp) {
        (void) ibv_destroy_qp(cm->qp);
    }
    if (cm->cq) {
        (void) ibv_destroy_cq(cm->cq);
    }
    if (cm->mr) {
        (void) ibv_dereg_mr(cm->mr);
    }
    free(cm->buf);
    free(cm);
    module->cm = NULL;
}

/** Drain the CM CQ; @return number of completions handled. */
static int cm_poll(mca_btl_pvrdma_module_t *module);

static int cm_send(mca_btl_pvrdma_endpoint_t *ep, uint8_t type)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    mca_btl_pvrdma_cm_t *cm = module->cm;
    struct pvrdma_common_addr_info info;
    struct ibv_send_wr wr, *bad;
    struct ibv_sge sge;
    cm_msg_t *msg;
    uint32_t slot;
    int rc;

    if (NULL == ep->cm_ah) {
        struct ibv_ah_attr ah = {0};

        ah.port_num = module->port.port_num;
        ah.dlid = ep->peer_cm.lid;
        if (IBV_LINK_LAYER_ETHERNET == module->port.link_layer ||
            !pvrdma_common_gid_is_zero(&ep->peer_cm.gid)) {
            ah.is_global = 1;
            ah.grh.dgid = ep->peer_cm.gid;
            ah.grh.sgid_index = (uint8_t) module->gid.index;
            ah.grh.hop_limit = 64;
        }
        ep->cm_ah = ibv_create_ah(module->pd, &ah);
        if (NULL == ep->cm_ah) {
            mca_btl_pvrdma_error_verbs(module, "ibv_create_ah (connection manager)", errno);
            return OPAL_ERROR;
        }
    }

    if (cm->sends_outstanding >= CM_NSEND) {
        (void) cm_poll(module);
        if (cm->sends_outstanding >= CM_NSEND) {
            return OPAL_ERR_OUT_OF_RESOURCE; /* the retry timer sends it again */
        }
    }
    slot = CM_NRECV + (cm->send_next++ % CM_NSEND);
    msg = (cm_msg_t *) (cm->buf + slot * CM_SLOT);
    memset(msg, 0, sizeof(*msg));
    msg->type = type;
    msg->version = CM_VERSION;
    msg->grant = htonl(ep->rx_grant);
    msg->src = OPAL_PROC_MY_NAME;
    msg->dst = ep->proc->proc_name;

    memset(&info, 0, sizeof(info));
    info = cm->local;
    info.qpn = ep->qp->qp_num;
    info.psn = ep->psn;
    (void) pvrdma_common_addr_pack(&info, (struct pvrdma_common_addr *) msg->rc_addr);

    sge.addr = (uintptr_t) msg;
    sge.length = sizeof(*msg);
    sge.lkey = cm->mr->lkey;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = CM_SEND_BIT | slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ep->cm_ah;
    wr.wr.ud.remote_qpn = ep->peer_cm.qpn;
    wr.wr.ud.remote_qkey = ep->peer_qkey;
    rc = ibv_post_send(cm->qp, &wr, &bad);
    if (0 != rc) {
        MCA_BTL_PVRDMA_VERBOSE(5, "connection message post failed: %s", strerror(rc));
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    cm->sends_outstanding++;
    MCA_BTL_PVRDMA_VERBOSE(20, "sent connection message %d to %s (qp 0x%x)", type,
                   OPAL_NAME_PRINT(ep->proc->proc_name), info.qpn);
    return OPAL_SUCCESS;
}

static void cm_arm_timer(mca_btl_pvrdma_endpoint_t *ep)
{
    ep->cm_deadline_us = cm_now_us() +
        (uint64_t) mca_btl_pvrdma_component.connect_timeout_ms * 1000u;
}

int mca_btl_pvrdma_cm_send_req(mca_btl_pvrdma_endpoint_t *ep)
{
    cm_arm_timer(ep);
    return cm_send(ep, CM_REQ);
}

void mca_btl_pvrdma_cm_connected(mca_btl_pvrdma_endpoint_t *ep)
{
    if (MCA_BTL_PVRDMA_EP_CONNECTING == ep->state || MCA_BTL_PVRDMA_EP_ACCEPTED == ep->state) {
        ep->module->connecting_count--;
    }
    ep->state = MCA_BTL_PVRDMA_EP_CONNECTED;
    MCA_BTL_PVRDMA_VERBOSE(10, "connected to %s on %s:%d (qp 0x%x -> 0x%x)",
                   opal_get_proc_hostname(ep->proc), ep->module->port.dev_name,
                   ep->module->port.port_num, ep->qp->qp_num, ep->peer_rc.qpn);
    (void) mca_btl_pvrdma_endpoint_progress_pending(ep);
}

static void cm_handle(mca_btl_pvrdma_module_t *module, const cm_msg_t *msg)
{
    struct pvrdma_common_addr_info peer;
    mca_btl_pvrdma_endpoint_t *ep;
    opal_process_name_t dst = msg->dst, src = msg->src;
    opal_proc_t *proc;
    uint32_t grant = ntohl(msg->grant);

    if (CM_VERSION != msg->version || 0 != opal_compare_proc(dst, OPAL_PROC_MY_NAME)) {
        return; /* stale or foreign datagram */
    }
    if (0 != pvrdma_common_addr_unpack(msg->rc_addr, sizeof(msg->rc_addr), &peer)) {
        return;
    }
    proc = opal_proc_for_name(src);
    if (NULL == proc) {
        return;
    }
    ep = mca_btl_pvrdma_endpoint_get(module, proc);
    if (NULL == ep || MCA_BTL_PVRDMA_EP_FAILED == ep->state) {
        return;
    }

    switch (msg->type) {
    case CM_REQ:
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
        /* The state changes before the RTU goes out: cm_send polls this CQ
         * when its ring is full and so can handle the peer's resent REP
         * inside this call, which must find the QP connected (connecting
         * it again fails INIT->RTR on an RTS QP, EINVAL: seen at 32 ranks). */
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

static int cm_poll(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_cm_t *cm = module->cm;
    struct ibv_wc wc[8];
    int n, count = 0;

    while ((n = ibv_poll_cq(cm->cq, 8, wc)) > 0) {
        for (int i = 0; i < n; ++i) {
            if (wc[i].wr_id & CM_SEND_BIT) {
                cm->sends_outstanding--;
                if (IBV_WC_SUCCESS != wc[i].status) {
                    MCA_BTL_PVRDMA_VERBOSE(5, "connection message send failed: %s",
                                   ibv_wc_status_str(wc[i].status));
                }
                continue;
            }
            if (IBV_WC_SUCCESS == wc[i].status && wc[i].byte_len >= CM_GRH + sizeof(cm_msg_t)) {
                cm_handle(module, (const cm_msg_t *) (cm->buf + wc[i].wr_id * CM_SLOT + CM_GRH));
            }
            if (0 != cm_post_recv(cm, (uint32_t) wc[i].wr_id)) {
                MCA_BTL_PVRDMA_VERBOSE(1, "could not repost a connection-manager receive");
            }
            count++;
        }
    }
    return count;
}

/** Resend requests/replies whose answer is overdue; give up after the retries. */
static void cm_check_timers(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_endpoint_t *ep;
    uint64_t now = cm_now_us();

    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        if ((MCA_BTL_PVRDMA_EP_CONNECTING != ep->state &&
             MCA_BTL_PVRDMA_EP_ACCEPTED != ep->state) || now < ep->cm_deadline_us) {
            continue;
        }
        if (++ep->cm_tries > mca_btl_pvrdma_component.connect_retries) {
            mca_btl_pvrdma_error_connect_timeout(ep);
            return;
        }
        cm_arm_timer(ep);
        (void) cm_send(ep, MCA_BTL_PVRDMA_EP_CONNECTING == ep->state ? CM_REQ : CM_REP);
    }
}

int mca_btl_pvrdma_cm_progress(mca_btl_pvrdma_module_t *module)
{
    int count = 0;

    /* An empty poll is a doorbell (a VM exit on PVRDMA): while nothing is
     * being connected, only look for incoming requests now and then. */
    if (0 == module->connecting_count && 0 == module->cm->sends_outstanding &&
        ++module->cm_idle_count < (uint32_t) mca_btl_pvrdma_component.cm_poll_interval) {
        return 0;
    }
    module->cm_idle_count = 0;
    count = cm_poll(module);
    if (module->connecting_count > 0) {
        cm_check_timers(module);
    }
    return count;
}
