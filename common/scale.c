/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file scale.c
 * @brief What a connection costs and how many fit one process.  Pure.
 *
 * Why one CQ sized at start-up: PVRDMA has no resize_cq (rdma-core's
 * vmw_pvrdma provider leaves it out), and every CQ a progress call polls
 * costs a doorbell (a VM exit) when it is empty, so several CQs would make
 * every idle poll dearer.  A CQ is cheap in entries (a real ESXi 7 device
 * takes 262144; QEMU's model 4096 at most), so the CQ is made as deep as
 * the job needs: send WRs in flight on all QPs together (a QP in error
 * flushes every posted WR, unsignalled ones too, so they all count) plus
 * every posted receive.  Where that does not fit (QEMU's model without
 * SRQ) each peer gets fewer receives, down to a floor that still streams.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_scale.h"

#include <errno.h>
#include <string.h>

/* Sizes of PVRDMA's work queue entries (rdma-core providers/vmw_pvrdma:
 * a send WQE is its header, about 64 bytes, plus 16 bytes per SGE, rounded
 * up to a power of two; a receive WQE 16 bytes plus its SGE), and of one
 * CQE.  Used only for the locked-memory estimate. */
#define SQ_WQE_HDR_BYTES 64u
#define SGE_BYTES        16u
#define RQ_WQE_BYTES     32u
#define CQE_BYTES        64u

static uint64_t pow2_up(uint64_t v)
{
    uint64_t p = 1;

    while (p < v) {
        p <<= 1;
    }
    return p;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return (a < b) ? a : b;
}

int pvrdma_common_scale_plan(const struct ibv_device_attr *dev,
                             const struct pvrdma_common_scale_request *req,
                             struct pvrdma_common_scale_plan *plan)
{
    uint32_t rx_floor, room, r, procs, qps;
    uint64_t sq_ring;

    if ((dev == NULL) || (req == NULL) || (plan == NULL) ||
        (req->max_send_wr == 0) ||
        (req->use_srq ? (req->srq_depth == 0) : (req->recv_per_peer == 0))) {
        return EINVAL;
    }
    /* a peer that asks for fewer receives than the floor keeps its value */
    rx_floor = req->use_srq ? 1 :
               min_u32(req->recv_per_peer, PVRDMA_COMMON_SCALE_RECV_MIN);
    if (req->cq_max < rx_floor + 1) {
        return EINVAL;
    }

    memset(plan, 0, sizeof(*plan));
    plan->send_budget = (req->send_budget > 0) ? req->send_budget :
                        min_u32(PVRDMA_COMMON_SCALE_SEND_BUDGET,
                                req->cq_max / 4);
    if (plan->send_budget > req->cq_max - rx_floor) {
        plan->send_budget = req->cq_max - rx_floor;
    }
    if (plan->send_budget == 0) {
        plan->send_budget = 1;
    }
    room = req->cq_max - plan->send_budget;

    if (req->use_srq) {
        plan->srq_depth        = min_u32(req->srq_depth, room);
        plan->cq_depth         = plan->send_budget + plan->srq_depth;
        plan->peers_fit_cq     = UINT32_MAX;
        plan->peers_fit_cq_min = UINT32_MAX;
    } else {
        r = req->recv_per_peer;
        if ((req->peers > 0) && ((uint64_t)req->peers * r > room)) {
            r = room / req->peers;
            if (r < rx_floor) {
                r = rx_floor;
            }
            plan->recv_reduced = true;
        }
        plan->recv_per_peer = r;
        if (req->peers > 0) {
            uint64_t want = (uint64_t)plan->send_budget +
                            (uint64_t)req->peers * r;

            plan->cq_depth = (want < req->cq_max) ? (uint32_t)want :
                             req->cq_max;
        } else {
            plan->cq_depth = req->cq_max;
        }
        plan->recv_room        = plan->cq_depth - plan->send_budget;
        plan->peers_fit_cq     = plan->recv_room / r;
        plan->peers_fit_cq_min = room / rx_floor;
    }

    procs = (req->procs_per_device > 0) ? req->procs_per_device : 1;
    qps   = (req->qps_per_peer > 0) ? req->qps_per_peer : 1;
    if (dev->max_qp <= 0) {
        plan->peers_fit_qp = UINT32_MAX;
    } else {
        /* each process also has one UD QP for connection set-up */
        uint32_t per_proc = (uint32_t)dev->max_qp / procs;

        plan->peers_fit_qp = (per_proc > 1) ? (per_proc - 1) / qps : 0;
    }

    sq_ring = pvrdma_common_scale_sq_ring(req->max_send_wr, req->send_sge);
    plan->mem_per_peer = qps * sq_ring +
                         pvrdma_common_scale_recv_mem(plan->recv_per_peer,
                                                      req->buf_size);
    plan->mem_fixed    = pvrdma_common_scale_cq_mem(plan->cq_depth) +
                         pvrdma_common_scale_recv_mem(plan->srq_depth,
                                                      req->buf_size);
    return 0;
}

uint64_t pvrdma_common_scale_sq_ring(uint32_t max_send_wr, uint32_t send_sge)
{
    return (uint64_t)max_send_wr *
           pow2_up(SQ_WQE_HDR_BYTES + SGE_BYTES * (uint64_t)send_sge);
}

uint64_t pvrdma_common_scale_recv_mem(uint64_t receives, uint64_t buf_size)
{
    return receives * (buf_size + RQ_WQE_BYTES);
}

uint64_t pvrdma_common_scale_cq_mem(uint32_t cq_depth)
{
    return (uint64_t)cq_depth * CQE_BYTES;
}

uint64_t pvrdma_common_scale_mem(const struct pvrdma_common_scale_plan *plan,
                                 uint32_t peers)
{
    if (plan == NULL) {
        return 0;
    }
    return plan->mem_fixed + (uint64_t)peers * plan->mem_per_peer;
}
