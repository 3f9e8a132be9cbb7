/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_scale.h
 * @brief common/: what connections cost, and how many fit (scale.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_SCALE_H
#define PVRDMA_SCALE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Fewest receives per peer that still stream: credit returns need a few. */
#define PVRDMA_COMMON_SCALE_RECV_MIN     8
/** Default ceiling of the send WRs in flight on all QPs of one process. */
#define PVRDMA_COMMON_SCALE_SEND_BUDGET  1024

/** Inputs: the job, the device's CQ limit and the transport's knobs. */
struct pvrdma_common_scale_request {
    uint32_t peers;            /**< peers one process may connect to; 0: unknown */
    uint32_t procs_per_device; /**< processes of the job sharing the device */
    uint32_t qps_per_peer;     /**< RC QPs a connection takes (BTL 1, UCX 2) */
    uint32_t cq_max;           /**< largest CQ: max_cqe, the knob, or what the
                                    device accepted at creation */
    uint32_t send_budget;      /**< send WRs in flight, all QPs; 0: auto */
    uint32_t max_send_wr;      /**< send queue of one QP */
    uint32_t send_sge;         /**< SGEs per send WR (sizes the QP ring) */
    uint32_t recv_per_peer;    /**< receives per peer wanted (per-QP queues) */
    bool     use_srq;          /**< receives on one shared queue */
    uint32_t srq_depth;        /**< its depth */
    uint64_t buf_size;         /**< bytes of one receive buffer */
};

/**
 * The plan.  One CQ per process holds every completion that can be due at
 * once: a QP in error flushes all its WRs, unsignalled ones too, so the
 * CQ is sized for send_budget (send WRs in flight on all QPs together)
 * plus every posted receive.  Nothing is ever resized (PVRDMA has no
 * resize_cq).
 */
struct pvrdma_common_scale_plan {
    uint32_t cq_depth;       /**< CQ entries to create */
    uint32_t send_budget;    /**< send WRs in flight on all QPs */
    uint32_t recv_per_peer;  /**< per-QP receives (= credits); 0 with SRQ */
    uint32_t srq_depth;      /**< receives on the SRQ; 0 without */
    uint32_t recv_room;      /**< CQ entries for per-QP receives */
    uint32_t peers_fit_cq;   /**< peers whose receives fit the CQ at
                                  recv_per_peer (UINT32_MAX with SRQ) */
    uint32_t peers_fit_cq_min; /**< the same at PVRDMA_COMMON_SCALE_RECV_MIN */
    uint32_t peers_fit_qp;   /**< peers per process within max_qp when all
                                  procs_per_device processes connect as many */
    bool     recv_reduced;   /**< recv_per_peer lowered so peers fit the CQ */
    uint64_t mem_per_peer;   /**< locked bytes a connection adds (receive
                                  buffers, QP rings; estimate) */
    uint64_t mem_fixed;      /**< locked bytes without peers (CQ ring, SRQ
                                  buffers; estimate) */
};

/**
 * @brief Plan the CQ, send budget and per-peer receives.  Pure.
 *
 * Without SRQ the receives per peer are lowered (not below
 * PVRDMA_COMMON_SCALE_RECV_MIN) until @c peers fit the CQ; the CQ is then
 * sized for exactly @c peers (as large as allowed when peers is 0).
 *
 * @return 0; EINVAL for NULL arguments, a cq_max too small for the send
 *         budget plus one peer, or zero queue sizes.
 */
int pvrdma_common_scale_plan(const struct ibv_device_attr *dev,
                             const struct pvrdma_common_scale_request *req,
                             struct pvrdma_common_scale_plan *plan);

/** @brief Locked bytes of one RC QP's send ring of @p max_send_wr WRs with
 *  @p send_sge SGEs each (PVRDMA's WQE sizes; an estimate).  Pure. */
uint64_t pvrdma_common_scale_sq_ring(uint32_t max_send_wr, uint32_t send_sge);

/** @brief Locked bytes of @p receives posted receives of @p buf_size bytes
 *  each, buffers and WQEs (an estimate).  Pure. */
uint64_t pvrdma_common_scale_recv_mem(uint64_t receives, uint64_t buf_size);

/** @brief Locked bytes of a CQ of @p cq_depth entries (an estimate).  Pure. */
uint64_t pvrdma_common_scale_cq_mem(uint32_t cq_depth);

/** @brief Locked bytes at @p peers connected peers under @p plan.  Pure. */
uint64_t pvrdma_common_scale_mem(const struct pvrdma_common_scale_plan *plan,
                                 uint32_t peers);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_SCALE_H */
