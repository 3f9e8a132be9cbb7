/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_md.h
 * @brief Memory domain and component of the UCT "pvrdma" transport.
 *
 * One memory domain per verbs device.  Registrations go through UCX's
 * registration cache because every reg_mr/dereg_mr on PVRDMA is a command
 * through a single, VM-wide serialised command slot.
 */
#ifndef UCT_PVRDMA_MD_H
#define UCT_PVRDMA_MD_H

#include <uct/base/uct_md.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/topo/base/topo.h>

#include <pthread.h>

#include <pvrdma_common.h>

#include "pvrdma_compat.h"

#define UCT_PVRDMA_NAME           "pvrdma"
#define UCT_PVRDMA_CONFIG_PREFIX  "PVRDMA_"


/** Memory domain configuration (UCX_PVRDMA_* variables). */
typedef struct uct_pvrdma_md_config {
    uct_md_config_t        super;
    int                    rcache_enable;  /**< use the registration cache */
    uct_pvrdma_rcache_config_t rcache;     /**< UCX_PVRDMA_RCACHE_* */
    size_t                 max_reg;        /**< user limit on one MR, or inf */
    double                 reg_cost_overhead; /**< reg_cost.c, seconds */
    double                 reg_cost_growth;   /**< reg_cost.m, seconds/byte */
    int                    fork_init;      /**< UCS_YES/NO/TRY: ibv_fork_init */
} uct_pvrdma_md_config_t;


/** Ports whose RDMA WRITE probe result the md keeps (higher: not cached). */
#define UCT_PVRDMA_MD_PROBE_PORTS  8


/** Result of the RDMA WRITE probe of a port, cached in the md. */
typedef enum {
    UCT_PVRDMA_WRITE_UNKNOWN = 0,   /**< not probed yet */
    UCT_PVRDMA_WRITE_OK,
    UCT_PVRDMA_WRITE_BROKEN
} uct_pvrdma_write_probe_t;


/** Memory domain: one verbs device and its protection domain. */
typedef struct uct_pvrdma_md {
    uct_md_t               super;
    struct ibv_context     *ctx;          /**< opened verbs device */
    struct ibv_pd          *pd;           /**< protection domain */
    ucs_rcache_t           *rcache;       /**< NULL when disabled */
    struct ibv_device_attr dev_attr;      /**< device capabilities */
    int                    is_pvrdma;     /**< PVRDMA quirks apply */
    ucs_sys_device_t       sys_dev;       /**< PCI function, for UCP's
                                               distance-based selection */
    size_t                 max_reg;       /**< largest registration */
    ucs_linear_func_t      reg_cost;      /**< registration cost model */
    char                   dev_name[PVRDMA_COMMON_DEV_NAME_MAX];
    pthread_mutex_t        probe_lock;    /**< ifaces of several workers */
    uct_pvrdma_write_probe_t write_probe[UCT_PVRDMA_MD_PROBE_PORTS + 1];
} uct_pvrdma_md_t;


/**
 * Memory handle.  Begins with the rcache region so the same structure serves
 * both the cached and the direct registration path.
 */
typedef struct uct_pvrdma_memh {
    ucs_rcache_region_t    super;   /**< used only with the rcache */
    struct ibv_mr          *mr;     /**< the verbs registration */
    int                    cached;  /**< owned by the rcache */
} uct_pvrdma_memh_t;


/** Packed remote key: the 32-bit rkey of the MR. */
typedef struct uct_pvrdma_packed_rkey {
    uint32_t               rkey;
} UCS_S_PACKED uct_pvrdma_packed_rkey_t;


extern uct_component_t uct_pvrdma_component;


/**
 * Does RDMA WRITE work on this port?  Runs the loopback probe the first time
 * a port is asked about and caches the answer in the md (UCP opens many
 * ifaces per md; the probe costs a CQ, a QP and an MR).
 */
int uct_pvrdma_md_rdma_write_ok(uct_pvrdma_md_t *md,
                                const struct pvrdma_common_probe_port *port);


/** lkey of a memory handle returned by this memory domain. */
static UCS_F_ALWAYS_INLINE uint32_t uct_pvrdma_memh_lkey(uct_mem_h memh)
{
    return ((uct_pvrdma_memh_t*)memh)->mr->lkey;
}

#endif
