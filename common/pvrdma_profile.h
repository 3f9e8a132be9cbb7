/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_profile.h
 * @brief common/: queue depths, SGEs and inline size within the device limits (profile.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_PROFILE_H
#define PVRDMA_PROFILE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Value meaning "decide from the device" in profile requests. */
#define PVRDMA_COMMON_AUTO (-1)

/**
 * What the user (MCA parameters / UCX config) asked for.
 * For every field, 0 or PVRDMA_COMMON_AUTO (-1) means "auto", except where
 * noted: max_inline and the tri-states use -1 for auto and 0 for "off".
 * Initialise with pvrdma_common_profile_request_init().
 */
struct pvrdma_common_profile_request {
    int64_t max_send_wr;   /**< send queue depth */
    int64_t max_recv_wr;   /**< receive queue depth (per QP, without SRQ) */
    int64_t send_sge;      /**< SGEs per send WR */
    int64_t recv_sge;      /**< SGEs per receive WR */
    int64_t max_inline;    /**< -1 auto, 0 none, >0 bytes */
    int     use_srq;       /**< -1 auto, 0 no, 1 yes */
    int64_t srq_depth;     /**< SRQ receive depth */
    int64_t cq_depth;      /**< CQ entries */
    int64_t mtu;           /**< bytes (256..4096); auto = port active MTU */
    int64_t max_msg_size;  /**< largest single message/RDMA op in bytes */
    int     rdma_read;     /**< -1 auto, 0 never use RDMA READ, 1 use it */
    int64_t max_rd_atomic; /**< outstanding RDMA READs per QP (both roles) */
};

/** Bits of pvrdma_common_profile::clamped: which requests were reduced. */
enum {
    PVRDMA_COMMON_PROFILE_MAX_SEND_WR   = 1u << 0,
    PVRDMA_COMMON_PROFILE_MAX_RECV_WR   = 1u << 1,
    PVRDMA_COMMON_PROFILE_SEND_SGE      = 1u << 2,
    PVRDMA_COMMON_PROFILE_RECV_SGE      = 1u << 3,
    PVRDMA_COMMON_PROFILE_MAX_INLINE    = 1u << 4,
    PVRDMA_COMMON_PROFILE_USE_SRQ       = 1u << 5,
    PVRDMA_COMMON_PROFILE_SRQ_DEPTH     = 1u << 6,
    PVRDMA_COMMON_PROFILE_CQ_DEPTH      = 1u << 7,
    PVRDMA_COMMON_PROFILE_MTU           = 1u << 8,
    PVRDMA_COMMON_PROFILE_MAX_MSG_SIZE  = 1u << 9,
    PVRDMA_COMMON_PROFILE_RDMA_READ     = 1u << 10,
    PVRDMA_COMMON_PROFILE_MAX_RD_ATOMIC = 1u << 11,
    PVRDMA_COMMON_PROFILE_NUM_FIELDS    = 12
};

/** The resources to use, every value within the device caps. */
struct pvrdma_common_profile {
    uint32_t max_send_wr;   /**< <= max_qp_wr */
    uint32_t max_recv_wr;   /**< <= max_qp_wr */
    uint32_t send_sge;      /**< <= max_sge */
    uint32_t recv_sge;      /**< <= max_sge */
    /** Inline bytes to request at QP creation: always 0 on PVRDMA.  The
     *  QP's reported cap.max_inline_data is the final word. */
    uint32_t max_inline;
    bool     use_srq;       /**< only when max_srq > 0 */
    uint32_t srq_depth;     /**< <= max_srq_wr; 0 when !use_srq */
    uint32_t cq_depth;      /**< <= max_cqe */
    enum ibv_mtu mtu;       /**< <= port active MTU */
    uint32_t mtu_bytes;     /**< same, in bytes */
    /** Largest registration; on PVRDMA also <= 1 GiB (page directory). */
    uint64_t max_mr_size;
    uint64_t max_msg_size;  /**< <= port max_msg_sz and max_mr_size */
    /** RDMA READ can be used: device has max_qp_rd_atom > 0 and
     *  max_qp_init_rd_atom > 0 and the user did not disable it.  When false,
     *  rendezvous must use RDMA WRITE. */
    bool     rdma_read_ok;
    uint8_t  max_rd_atomic;      /**< initiator depth (RTS); 0 if !read_ok */
    uint8_t  max_dest_rd_atomic; /**< responder depth (RTR) */
    uint32_t clamped;       /**< PVRDMA_COMMON_PROFILE_* bits */
};

/** @brief Set every request field to auto.  Pure. */
void pvrdma_common_profile_request_init(struct pvrdma_common_profile_request *req);

/**
 * @brief Compute the profile from device/port attributes and a request.
 *        Pure.
 *
 * Auto values: send WR 256, recv WR 256 (SRQ depth 1024), send SGE
 * min(4, max_sge), recv SGE 1, inline 0 on PVRDMA else 64, SRQ when the
 * device has one with max_srq_wr >= 64, CQ send+recv depth, port MTU,
 * max_rd_atomic min(4, caps).  Every value is then clamped to the caps;
 * requests above a cap set the matching bit in @c clamped.
 *
 * @return 0; EINVAL for a NULL argument, a negative value other than -1,
 *         an invalid MTU (not 256/512/1024/2048/4096) or a device that
 *         cannot run RC at all (max_qp_wr, max_sge or max_cqe of 0).
 */
int pvrdma_common_profile_compute(const struct ibv_device_attr *dev_attr,
                                  const struct ibv_port_attr *port_attr,
                                  bool is_pvrdma,
                                  const struct pvrdma_common_profile_request *req,
                                  struct pvrdma_common_profile *profile);

/** @brief Name of one PVRDMA_COMMON_PROFILE_* bit ("max_send_wr"...).  Pure. */
const char *pvrdma_common_profile_field_name(uint32_t bit);

/**
 * @brief Write "send_sge, max_inline" style list of clamped fields.  Pure.
 * @return number of fields listed.
 */
int pvrdma_common_profile_clamped_str(const struct pvrdma_common_profile *profile,
                                      char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_PROFILE_H */
