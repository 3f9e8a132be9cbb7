/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_cm.h
 * @brief Connection set-up over one UD QP per module.
 *
 * Debian's Open MPI has no rdmacm CPC, and the modex is only exchanged
 * once at start-up, so RC QP numbers (created lazily) travel in small UD
 * datagrams addressed with the CM address every process publishes in the
 * modex.  Protocol: REQ (my RC QP, credits I grant you) -> REP (same,
 * sent once the replier's QP is RTS) -> RTU (the requester's QP is RTS).
 * Both sides may send REQ at once: each side simply connects its single QP
 * to the QP number it learns, so the pair is consistent either way.
 * Lost datagrams are covered by resending REQ/REP on a timer.  CLOSE ->
 * CLOSE_ACK / CLOSE_NAK close an idle connection for the budget
 * (btl_pvrdma_budget.h).
 */
#ifndef MCA_BTL_PVRDMA_CM_H
#define MCA_BTL_PVRDMA_CM_H

#include "btl_pvrdma.h"

BEGIN_C_DECLS

struct mca_btl_base_endpoint_t;

/** Connection messages from processes this module has no endpoint for yet
 *  wait here (GRH and message as received, and the completion) until
 *  mca_btl_pvrdma_cm_resolve() looks their processes up without the module
 *  lock.  The CM CQ is never polled for more than fit (the rest wait in the
 *  CQ): at 8 x 20 ranks, with Open MPI's endpoints made on first use, 16 and
 *  a full poll dropped 20,176 requests in 14 minutes, each resent 2 s later. */
#define MCA_BTL_PVRDMA_CM_DEFER_MAX 32

typedef struct mca_btl_pvrdma_cm_deferred_t {
    struct ibv_wc wc;
    uint8_t slot[PVRDMA_COMMON_UD_GRH_LEN + 128];
} mca_btl_pvrdma_cm_deferred_t;

typedef struct mca_btl_pvrdma_cm_t {
    struct ibv_cq *cq;                  /**< the UD QP's receives */
    struct ibv_cq *scq;                 /**< its sends: freeing a slot to send
                                             never handles a newer datagram
                                             before older ones polled already */
    struct pvrdma_common_ud ud;         /**< QP, slots, checks, Q_Key (common/ud.c) */
    struct pvrdma_common_addr_info local;
    mca_btl_pvrdma_cm_deferred_t deferred[MCA_BTL_PVRDMA_CM_DEFER_MAX];
    int ndeferred;
    uint64_t deferred_dropped;          /**< ... that found no room (resent) */
    bool polling;                       /**< inside cm_poll: not again */
} mca_btl_pvrdma_cm_t;

/** @brief Create the UD QP, post its receives and fill the modex data. */
int mca_btl_pvrdma_cm_open(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_modex_t *modex);

/** @brief Destroy the CM resources. */
void mca_btl_pvrdma_cm_close(mca_btl_pvrdma_module_t *module);

/** @brief Send a connection request to the endpoint's peer. */
int mca_btl_pvrdma_cm_send_req(struct mca_btl_base_endpoint_t *ep);

/** @brief Send a close message (MCA_BTL_PVRDMA_CLOSE_*, with what
 *  btl_pvrdma_budget.h says it carries); a request arms the resend timer. */
struct mca_btl_pvrdma_close_info_t;
int mca_btl_pvrdma_cm_send_close(struct mca_btl_base_endpoint_t *ep, int kind,
                                 const struct mca_btl_pvrdma_close_info_t *info);

/** @brief The peer's QP is known to be RTS: the endpoint can send. */
void mca_btl_pvrdma_cm_connected(struct mca_btl_base_endpoint_t *ep);
/** @brief Connect this process's own loopback endpoint (osc rdma's atomics
 *  on its own window) directly, without datagrams. */
int mca_btl_pvrdma_cm_connect_self(struct mca_btl_base_endpoint_t *ep);

/** @brief Poll the CM CQ when due and resend timed-out requests. @return events */
int mca_btl_pvrdma_cm_progress(mca_btl_pvrdma_module_t *module);

/**
 * @brief Handle the connection datagrams that are waiting now, in order
 *        (nothing when called from inside their handling).  For a rank
 *        that starts many connections in one MPI call (Open MPI makes
 *        endpoints on first use: an Isend to every peer creates a QP for
 *        each): it answers its peers' requests meanwhile.  At 8 x 20 ranks
 *        without it, no connection completed for 10 minutes while the
 *        ranks created their 134 QPs each.
 */
void mca_btl_pvrdma_cm_serve(mca_btl_pvrdma_module_t *module);

/**
 * @brief Handle the deferred messages from processes without an endpoint:
 *        their opal_proc_t is looked up with the module lock released
 *        (called with it held, returns with it held).  opal_proc_for_name
 *        takes ompi_proc_lock, which a thread adding a peer holds while it
 *        waits for the module lock in our add_procs (issue 34).
 */
void mca_btl_pvrdma_cm_resolve(mca_btl_pvrdma_module_t *module);

END_C_DECLS

#endif
