/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_endpoint.h
 * @brief Per-peer state: RC QP, connection state, credits, send ring.
 */
#ifndef MCA_BTL_PVRDMA_ENDPOINT_H
#define MCA_BTL_PVRDMA_ENDPOINT_H

#include "btl_pvrdma.h"
#include "btl_pvrdma_frag.h"

#include "opal/util/proc.h"

BEGIN_C_DECLS

/** Connection states (the transitions are in btl_pvrdma_cm.c). */
enum {
    MCA_BTL_PVRDMA_EP_CLOSED = 0,   /**< no QP yet */
    MCA_BTL_PVRDMA_EP_CONNECTING,   /**< QP in INIT, request sent */
    MCA_BTL_PVRDMA_EP_ACCEPTED,     /**< QP in RTS, waiting to hear the peer is RTS */
    MCA_BTL_PVRDMA_EP_CONNECTED,    /**< both QPs in RTS */
    MCA_BTL_PVRDMA_EP_FAILED,
    MCA_BTL_PVRDMA_EP_WAITING,      /**< no QP: waits for a slot of the budget */
    MCA_BTL_PVRDMA_EP_CLOSING       /**< connected; we asked the peer to close */
};

/** Modules that added a peer (endpoint->users): the endpoint is closed
 *  when the last of them deletes it. */
enum {
    MCA_BTL_PVRDMA_EP_USER_PML = 1,  /**< the main module (ob1) */
    MCA_BTL_PVRDMA_EP_USER_OSC = 2   /**< the one-sided module (osc rdma) */
};

/** What the one-sided module (btl_pvrdma_osc.c) hands the BML for a peer:
 *  an address of its own, not the endpoint's, because ob1 uses an
 *  RDMA-capable BTL for point-to-point only when that endpoint is also one
 *  of the peer's eager (send) endpoints. */
struct mca_btl_pvrdma_osc_handle {
    struct mca_btl_base_endpoint_t *ep;
};

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    mca_btl_pvrdma_module_t *module;
    opal_proc_t *proc;
    int state;
    uint8_t users;           /**< MCA_BTL_PVRDMA_EP_USER_* that added the peer */
    struct mca_btl_pvrdma_osc_handle osc;  /**< the one-sided module's handle */

    /* connection manager */
    struct pvrdma_common_addr_info peer_cm;  /**< peer's UD CM address (modex) */
    uint32_t peer_qkey;
    uint8_t peer_secret[PVRDMA_COMMON_UD_SECRET_LEN]; /**< from the modex */
    struct ibv_ah *cm_ah;
    uint64_t cm_seq;         /**< our last connection datagram's number to it
                                  (pvrdma_common_ud_send_seq; 0: none yet) */
    int cm_tries;            /**< messages resent in this attempt */
    uint64_t cm_first_us;    /**< this attempt's first message went then */
    uint64_t cm_deadline_us; /**< no answer by then: resend (backing off) */

    /* connection budget (btl_pvrdma_budget.c) */
    uint64_t last_use;       /**< module->budget.tick when last used (LRU) */
    uint64_t wait_since_us;  /**< WAITING since */
    uint64_t close_retry_us; /**< a refused close is not asked again before */
    uint32_t closed_qpn;     /**< our QP of the last connection closed */
    uint32_t closed_peer_qpn; /**< the peer's QP of it */
    bool had_connection;     /**< a connection was closed: the next is a reopen */
    uint16_t close_attempt;  /**< our close attempt on this connection (0: none yet) */
    uint16_t refused_attempt; /**< the peer's attempt we refused: its copies too */

    /* RC QP */
    struct ibv_qp *qp;
    uint32_t psn;
    struct pvrdma_common_addr_info peer_rc;  /**< peer's RC QP address */
    uint32_t rx_grant;       /**< receives we posted for the peer (its credits) */
    uint32_t cq_need;        /**< CQ entries this QP may use (module->cq_committed) */

    /* eager flow control */
    struct pvrdma_common_credits credits;

    /* send queue: posted WRs in order, for selective signalling */
    mca_btl_pvrdma_frag_t **ring;
    uint32_t ring_size;
    uint32_t ring_head;
    uint32_t ring_count;
    uint32_t unsignalled;    /**< WRs posted since the last signalled one */
    uint32_t signal_interval;
    uint32_t max_inline;     /**< inline cap reported by the QP (PVRDMA: 0) */
    uint32_t rdma_outstanding; /**< put/get WRs not yet completed (flush) */
    uint32_t send_turn;      /**< module->progress_turn of the last direct send */

    /* receive buffers waiting to be reposted as one WR list */
    mca_btl_pvrdma_frag_t *repost_head;
    uint32_t repost_count;
    /** receive buffers posted on the QP (no SRQ): a closed connection's
     *  QP is destroyed at once and these go back to the free list, as
     *  QEMU's model never flushes them (btl_pvrdma_budget.c) */
    opal_list_t rx_posted;
    uint32_t srq_consumed;   /**< SRQ receives from this peer since the last refill */
    bool touched;            /**< received something in the current poll batch */
    uint64_t sends_posted;   /**< SEND WRs posted to the peer (credit-only ones too;
                                  not a zero-length WRITE probe: no receive) */
    uint64_t recvs_done;     /**< messages received from the peer */
    bool credits_owed;       /**< a credit return could not be posted: retried from progress */

    /* stall kick and keepalive (btl_pvrdma_watch.c) */
    uint64_t sends_retired;  /**< ring entries completed: the send queue's progress */
    struct pvrdma_common_watch kick_watch;  /**< on sends_retired, µs */
    struct pvrdma_common_watch alive_watch; /**< on recvs_done + sends_retired, µs */

    opal_list_t pending;     /**< fragments waiting for connection/credits/SQ */
};

typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;
typedef mca_btl_base_endpoint_t mca_btl_pvrdma_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_pvrdma_endpoint_t);

/** @brief The endpoint can post right now (fast-path check). */
static inline bool mca_btl_pvrdma_endpoint_ready(const mca_btl_pvrdma_endpoint_t *ep)
{
    return OPAL_LIKELY(MCA_BTL_PVRDMA_EP_CONNECTED == ep->state);
}

/** @brief Free send-queue slots of the endpoint. */
static inline uint32_t mca_btl_pvrdma_endpoint_sq_free(const mca_btl_pvrdma_endpoint_t *ep)
{
    const mca_btl_pvrdma_module_t *module = ep->module;
    uint32_t ring = ep->ring_size - ep->ring_count;
    uint32_t budget = module->sq_posted < module->plan.send_budget ?
                      module->plan.send_budget - module->sq_posted : 0;

    /* room on this QP and in the CQ's share for sends of all QPs */
    return ring < budget ? ring : budget;
}

/** @brief The endpoint of the process named @p name, or NULL when this
 *  module has none yet (no lookup beyond its own table). */
mca_btl_pvrdma_endpoint_t *mca_btl_pvrdma_endpoint_lookup(mca_btl_pvrdma_module_t *module,
                                                          opal_process_name_t name);

/** @brief Find or create the endpoint of @p proc (no QP yet). */
mca_btl_pvrdma_endpoint_t *mca_btl_pvrdma_endpoint_get(mca_btl_pvrdma_module_t *module,
                                                       opal_proc_t *proc);

/** @brief Create the RC QP (to INIT) and post its receives. */
int mca_btl_pvrdma_endpoint_create_qp(mca_btl_pvrdma_endpoint_t *ep);

/** @brief Bring the QP to RTR/RTS towards @p peer_rc with @p grant credits. */
int mca_btl_pvrdma_endpoint_connect_qp(mca_btl_pvrdma_endpoint_t *ep,
                                       const struct pvrdma_common_addr_info *peer_rc,
                                       uint32_t peer_grant);

/** @brief Post the endpoint's queued receive buffers as one WR list. */
int mca_btl_pvrdma_endpoint_repost(mca_btl_pvrdma_endpoint_t *ep);
/** Repost once a batch of consumed receives waits (see REPOST_BATCH). */
int mca_btl_pvrdma_endpoint_repost_batched(mca_btl_pvrdma_endpoint_t *ep);

/**
 * @brief Post a send WR (eager, credit or RDMA) and track it in the ring.
 *        Caller checked the SQ (and credits for eager messages).
 * @param force_signal (IN) request a completion for this WR
 */
int mca_btl_pvrdma_endpoint_post(mca_btl_pvrdma_endpoint_t *ep, mca_btl_pvrdma_frag_t *frag,
                                 bool force_signal);

/**
 * @brief Post @p n WRs as one WR list: one ibv_post_send, one doorbell.
 *        Caller checked the SQ for all of them (and took their credits).
 * @param signal_last (IN) request a completion for the last WR
 */
int mca_btl_pvrdma_endpoint_post_list(mca_btl_pvrdma_endpoint_t *ep,
                                      mca_btl_pvrdma_frag_t **frags, uint32_t n,
                                      bool signal_last);

/** @brief Should a send to @p ep wait in its queue for the WR list the
 *  progress turn posts (btl_pvrdma_send_coalesce)? */
static inline bool mca_btl_pvrdma_endpoint_coalesce(const mca_btl_pvrdma_endpoint_t *ep)
{
    const mca_btl_pvrdma_module_t *module = ep->module;

    return mca_btl_pvrdma_component.send_coalesce &&
           (module->in_upcalls || ep->send_turn == module->progress_turn);
}

/** @brief Complete every ring entry up to and including @p frag; their
 *  callbacks go to @p done. */
void mca_btl_pvrdma_endpoint_ring_complete(mca_btl_pvrdma_endpoint_t *ep,
                                           mca_btl_pvrdma_frag_t *frag, int status,
                                           mca_btl_pvrdma_done_t *done);

/** @brief Queue @p frag behind earlier work (connection, credits, SQ). */
void mca_btl_pvrdma_endpoint_queue(mca_btl_pvrdma_endpoint_t *ep, mca_btl_pvrdma_frag_t *frag);

/** @brief Start the queued fragments that can go now.  @return count. */
int mca_btl_pvrdma_endpoint_progress_pending(mca_btl_pvrdma_endpoint_t *ep);

/** @brief Start connecting now, whatever the budget (start_connect and
 *  btl_pvrdma_budget.c, which decide when). */
int mca_btl_pvrdma_endpoint_connect_now(mca_btl_pvrdma_endpoint_t *ep);

/** @brief Ensure a connection is being set up (lazy, first use); with the
 *  budget full it waits for a slot (btl_pvrdma_budget.h). */
int mca_btl_pvrdma_endpoint_start_connect(mca_btl_pvrdma_endpoint_t *ep);

/** @brief Destroy the connection's QP; the endpoint goes back to CLOSED
 *  with nothing of that connection left (ring, credits, counts, chained
 *  and posted receives), ready to connect again (btl_pvrdma_budget.c).
 *  @param cq_need (OUT) CQ entries promised to its receives, for the
 *  caller to give back
 *  @return receive buffers taken back from the QP. */
uint32_t mca_btl_pvrdma_endpoint_destroy_conn(mca_btl_pvrdma_endpoint_t *ep,
                                              uint32_t *cq_need);

/** @brief Tear down the QP and release everything the endpoint holds. */
void mca_btl_pvrdma_endpoint_close(mca_btl_pvrdma_endpoint_t *ep);

END_C_DECLS

#endif
