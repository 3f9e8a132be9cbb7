/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_gid.h
 * @brief common/: GID choice: which GID table entry a port uses (gid.c, gid_table.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_GID_H
#define PVRDMA_GID_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** GID entry types (values independent of libibverbs' enum). */
enum pvrdma_common_gid_type {
    PVRDMA_COMMON_GID_TYPE_NONE    = 0, /**< empty/unknown entry */
    PVRDMA_COMMON_GID_TYPE_IB      = 1, /**< InfiniBand */
    PVRDMA_COMMON_GID_TYPE_ROCE_V1 = 2, /**< RoCE v1 (IB/RoCE v1) */
    PVRDMA_COMMON_GID_TYPE_ROCE_V2 = 3  /**< RoCE v2 (UDP encapsulated) */
};

/** One GID table entry. */
struct pvrdma_common_gid_entry {
    uint32_t index;                     /**< GID table index */
    union ibv_gid gid;                  /**< the GID (all zero: empty) */
    enum pvrdma_common_gid_type type;   /**< entry type */
};

/** @brief All 16 bytes zero.  Pure. */
bool pvrdma_common_gid_is_zero(const union ibv_gid *gid);
/** @brief ::ffff:a.b.c.d.  Pure. */
bool pvrdma_common_gid_is_ipv4_mapped(const union ibv_gid *gid);
/** @brief fe80::/10.  Pure. */
bool pvrdma_common_gid_is_link_local(const union ibv_gid *gid);
/** @brief Text form (inet_ntop IPv6).  @p buf >= 46 bytes.  Pure. */
const char *pvrdma_common_gid_str(const union ibv_gid *gid, char *buf, size_t len);
/** @brief "IB", "RoCE v1", "RoCE v2", "none".  Pure. */
const char *pvrdma_common_gid_type_str(enum pvrdma_common_gid_type type);

/**
 * @brief Choose the GID to use from a GID table.  Pure.
 *
 * Without a forced index, preference (lowest index wins within a tier):
 *  1. RoCE v2 with an IPv4-mapped GID (::ffff:a.b.c.d)
 *  2. RoCE v2, not link-local
 *  3. RoCE v1 with an IPv4-mapped GID
 *  4. RoCE v1, any non-zero GID
 *  5. any other non-zero GID (RoCE v2 link-local, IB)
 * With @p forced_index >= 0 that entry is used if it exists and is not
 * empty.
 *
 * @param entries      (IN)  the table (may contain empty entries)
 * @param count        (IN)  number of entries
 * @param forced_index (IN)  -1 for automatic choice, else a GID index
 * @param chosen       (OUT) position in @p entries of the choice
 * @param err, err_len (OUT) message on error
 * @return 0; ENOENT no usable GID at all; ERANGE forced index not in the
 *         table; ENODATA forced index names an empty entry; EINVAL NULL.
 */
int pvrdma_common_gid_choose(const struct pvrdma_common_gid_entry *entries,
                             size_t count, int forced_index, size_t *chosen,
                             char *err, size_t err_len);

/**
 * @brief Read a port's whole GID table (gid_tbl_len entries, empty ones
 *        included as type NONE) with ibv_query_gid_ex(), or ibv_query_gid()
 *        plus sysfs gid_attrs/types where that is missing.
 * @param entries (OUT) malloc'ed array, free() it
 * @return 0 or errno.
 */
int pvrdma_common_gid_table_read(struct ibv_context *ctx, uint8_t port_num,
                                 const struct ibv_port_attr *port_attr,
                                 struct pvrdma_common_gid_entry **entries,
                                 size_t *count);

/**
 * @brief Read the GID table and choose the GID (RoCE); for InfiniBand link
 *        layer the LID addresses the port, and the GID is index
 *        @p forced_index or 0 (optional: a zero GID is accepted there).
 * @return 0 or an errno as pvrdma_common_gid_choose(), with @p err filled.
 */
int pvrdma_common_gid_select(struct ibv_context *ctx, uint8_t port_num,
                             const struct ibv_port_attr *port_attr,
                             int forced_index,
                             struct pvrdma_common_gid_entry *out,
                             char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_GID_H */
