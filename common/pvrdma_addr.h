/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_addr.h
 * @brief common/: the RC connection address on the wire (addr.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_ADDR_H
#define PVRDMA_ADDR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "pvrdma_gid.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Wire format version stored in pvrdma_common_addr::version. */
#define PVRDMA_COMMON_ADDR_VERSION 1

/**
 * Wire form of an RC connection address: only byte arrays, multi-byte
 * integers big-endian, so the layout is the same on every compiler and
 * host.  Exactly PVRDMA_COMMON_ADDR_WIRE_SIZE bytes.  Never access the
 * fields directly: use pack/unpack.
 */
struct pvrdma_common_addr {
    uint8_t version;        /**< PVRDMA_COMMON_ADDR_VERSION */
    uint8_t link_layer;     /**< IBV_LINK_LAYER_* */
    uint8_t gid_type;       /**< enum pvrdma_common_gid_type */
    uint8_t mtu;            /**< enum ibv_mtu (active/profile MTU) */
    uint8_t reserved;       /**< 0; ignored on receipt */
    uint8_t max_dest_rd_atomic; /**< responder depth of this QP (0: no
                                     incoming RDMA READ) */
    uint8_t lid[2];         /**< big-endian */
    uint8_t qpn[4];         /**< big-endian, 24 bits used */
    uint8_t psn[4];         /**< big-endian, 24 bits used */
    uint8_t gid[16];        /**< raw GID */
};

/** Size of struct pvrdma_common_addr on the wire. */
#define PVRDMA_COMMON_ADDR_WIRE_SIZE 32

/** Host form of a connection address. */
struct pvrdma_common_addr_info {
    union ibv_gid gid;
    uint32_t qpn;           /**< 24-bit QP number */
    uint32_t psn;           /**< 24-bit initial packet sequence number */
    uint16_t lid;           /**< LID (InfiniBand), 0 on RoCE */
    enum ibv_mtu mtu;
    enum pvrdma_common_gid_type gid_type;
    uint8_t  link_layer;    /**< IBV_LINK_LAYER_* */
    uint8_t  max_dest_rd_atomic;
};

/**
 * Returned by pvrdma_common_addr_check_compat() when the peer uses another
 * link layer or GID type: the two ports cannot talk to each other.
 */
#define PVRDMA_COMMON_EADDR_MISMATCH EPROTONOSUPPORT

/**
 * @brief Host form -> wire form.  Pure.
 * @return 0; EINVAL if qpn/psn exceed 24 bits or mtu is invalid.
 */
int pvrdma_common_addr_pack(const struct pvrdma_common_addr_info *info,
                            struct pvrdma_common_addr *wire);

/**
 * @brief Wire form -> host form.  Pure.
 * @param len (IN) bytes available at @p wire
 * @return 0; EINVAL if len < PVRDMA_COMMON_ADDR_WIRE_SIZE; EPROTO for an
 *         unknown version or invalid field values.
 */
int pvrdma_common_addr_unpack(const void *wire, size_t len,
                              struct pvrdma_common_addr_info *info);

/**
 * @brief Can a local port with @p local connect to @p remote?  Pure.
 * @return 0; PVRDMA_COMMON_EADDR_MISMATCH when link layer or GID type
 *         differ; EINVAL when the remote address is unusable (zero GID on
 *         RoCE, LID 0 on InfiniBand).  @p err explains.
 */
int pvrdma_common_addr_check_compat(const struct pvrdma_common_addr_info *local,
                                    const struct pvrdma_common_addr_info *remote,
                                    char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_ADDR_H */
