/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_qp.h
 * @brief common/: RC QPs: creation, state transitions, address vectors, PSNs (qp.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_QP_H
#define PVRDMA_QP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "pvrdma_addr.h"
#include "pvrdma_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of the RC QP transitions (local side). */
struct pvrdma_common_qp_params {
    uint8_t  port_num;        /**< local port */
    uint16_t pkey_index;      /**< 0 */
    /** INIT access flags; 0 means LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ. */
    unsigned access_flags;
    enum ibv_mtu mtu;         /**< local MTU; path MTU = min(local, remote) */
    uint8_t  link_layer;      /**< local link layer; Ethernet -> GRH */
    uint8_t  sgid_index;      /**< local GID index (RoCE) */
    uint8_t  hop_limit;       /**< GRH hop limit (64) */
    uint8_t  traffic_class;   /**< GRH traffic class (0) */
    uint8_t  sl;              /**< service level (0) */
    uint8_t  max_dest_rd_atomic; /**< responder depth (RTR) */
    uint8_t  min_rnr_timer;   /**< RTR (12 = 0.64 ms) */
    uint8_t  timeout;         /**< RTS local ACK timeout exponent (14) */
    uint8_t  retry_cnt;       /**< RTS (7) */
    uint8_t  rnr_retry;       /**< RTS (7 = infinite) */
    uint8_t  max_rd_atomic;   /**< initiator depth (RTS) */
};

/**
 * @brief Create an RC QP whose send and receive completions go to @p cq
 *        (receives from @p srq when not NULL: then no receive queue).
 *
 * Asks for @p cap; when the provider refuses and inline data was asked
 * for, asks again without (PVRDMA has none).
 * @param cap (IN/OUT) wanted; on success what the provider granted
 * @return the QP in RESET, or NULL with errno.
 */
struct ibv_qp *pvrdma_common_rc_qp_create(struct ibv_pd *pd, struct ibv_cq *cq,
                                          struct ibv_srq *srq,
                                          struct ibv_qp_cap *cap);

/**
 * @brief Fill @p buf with @p len bytes from the kernel's CSPRNG (getrandom;
 *        the connection secrets).  @return 0 or errno.
 */
int pvrdma_common_random_bytes(void *buf, size_t len);

/** @brief A random first PSN (24 bits) for a new QP. */
uint32_t pvrdma_common_psn_new(void);

/** @brief Fill the defaults given in the field comments.  Pure. */
void pvrdma_common_qp_params_init(struct pvrdma_common_qp_params *params);

/**
 * @brief Defaults, then the port and what the profile allows (MTU, RDMA
 *        READ depths).  Pure.  The plugin sets its timer and retry knobs.
 */
void pvrdma_common_qp_params_from_profile(struct pvrdma_common_qp_params *p,
                                          const struct pvrdma_common_profile *profile,
                                          uint8_t port_num, uint8_t link_layer,
                                          uint8_t sgid_index);

/**
 * @brief ibv_modify_qp() with one error convention: 0 or a positive errno
 *        (providers return -1 with errno, or the errno itself).
 */
int pvrdma_common_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                            int mask);

/** @brief RESET -> INIT.  @return 0 or errno of ibv_modify_qp(). */
int pvrdma_common_qp_to_init(struct ibv_qp *qp,
                             const struct pvrdma_common_qp_params *params);

/**
 * @brief INIT -> RTR towards @p remote.
 *
 * Path MTU is min(params->mtu, remote->mtu); on Ethernet the AH carries a
 * GRH with the remote GID, params->sgid_index and hop limit; on
 * InfiniBand the remote LID.  max_dest_rd_atomic comes from @p params.
 */
int pvrdma_common_qp_to_rtr(struct ibv_qp *qp,
                            const struct pvrdma_common_qp_params *params,
                            const struct pvrdma_common_addr_info *remote);

/**
 * @brief RTR -> RTS with the local @p sq_psn.  max_rd_atomic is
 *        min(params->max_rd_atomic, remote->max_dest_rd_atomic) when
 *        @p remote is not NULL.
 */
int pvrdma_common_qp_to_rts(struct ibv_qp *qp,
                            const struct pvrdma_common_qp_params *params,
                            const struct pvrdma_common_addr_info *remote,
                            uint32_t sq_psn);

/** @brief Any state -> ERR (flushes outstanding work).  @return 0/errno. */
int pvrdma_common_qp_to_err(struct ibv_qp *qp);

/**
 * @brief The address vector towards @p dgid / @p dlid from the local side
 *        in @p p (port, SL, GID index, hop limit, traffic class).  Pure.
 *
 * On Ethernet (RoCE) the GRH carries the addressing; on InfiniBand the LID
 * does and a non-zero GID adds a GRH.  RC QPs (RTR) and UD address handles
 * both use it, so the two cannot disagree about how a peer is reached.
 */
void pvrdma_common_ah_attr_fill(struct ibv_ah_attr *ah,
                                const struct pvrdma_common_qp_params *p,
                                const union ibv_gid *dgid, uint16_t dlid);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_QP_H */
