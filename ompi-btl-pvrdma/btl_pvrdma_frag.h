/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_frag.h
 * @brief Fragments: eager send buffers, receive buffers and RDMA contexts.
 *
 * One class serves all three uses so that the send-queue ring of an
 * endpoint can hold any of them (completions arrive in posting order on
 * an RC QP, which is what makes selective signalling work).
 */
#ifndef MCA_BTL_PVRDMA_FRAG_H
#define MCA_BTL_PVRDMA_FRAG_H

#include "btl_pvrdma.h"

BEGIN_C_DECLS

/** Header in front of every eager message. */
typedef struct mca_btl_pvrdma_hdr_t {
    uint8_t tag;       /**< active-message tag */
    uint8_t flags;     /**< MCA_BTL_PVRDMA_HDR_* */
    uint16_t credits;  /**< eager credits returned to the receiver */
} mca_btl_pvrdma_hdr_t;

/** The message only returns credits; no upcall. */
#define MCA_BTL_PVRDMA_HDR_CREDIT_ONLY 0x01

enum {
    MCA_BTL_PVRDMA_FRAG_SEND = 1,
    MCA_BTL_PVRDMA_FRAG_RECV = 2,
    MCA_BTL_PVRDMA_FRAG_RDMA = 3
};

typedef struct mca_btl_pvrdma_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment;
    opal_free_list_t *list;
    struct mca_btl_base_endpoint_t *endpoint;
    mca_btl_pvrdma_hdr_t *hdr;   /**< start of the registered buffer */
    uint32_t lkey;
    uint8_t kind;
    bool posted;       /**< a WR using this fragment is in flight */
    uint32_t rx_qpn;   /**< receive on a QP (no SRQ): which QP it is posted on */
    bool pml_freed;    /**< btl_free() came while the WR was in flight */
    bool callback;     /**< call des_cbfunc when the WR completes */
    bool signalled;    /**< this WR asked for a CQE */
    bool awaited;      /**< ... and a callback waits for it (sends_awaited) */
    struct ibv_sge sge;
    union {
        struct ibv_send_wr send;
        struct ibv_recv_wr recv;
    } wr;

    /* RDMA operations */
    bool rdma_osc;     /**< report through the one-sided module and its handle */
    mca_btl_base_rdma_completion_fn_t rdma_cbfunc;
    void *rdma_cbcontext;
    void *rdma_cbdata;
    void *local_address;
    mca_btl_base_registration_handle_t *local_handle;
    int rdma_status;

    /* completed, its PML callback not run yet (mca_btl_pvrdma_done_t) */
    struct mca_btl_pvrdma_frag_t *done_next;
    int done_status;
    bool done_return;  /**< give it back after the callback */
} mca_btl_pvrdma_frag_t;

/**
 * Fragments whose WRs completed under the module lock; their PML callbacks
 * run after it is released (mca_btl_pvrdma_done_run).  A PML callback may
 * take Open MPI's own locks (ob1 asks the BML for a new peer's endpoint
 * under ompi_proc_lock, which a thread adding that peer holds while it
 * calls our add_procs, which takes the module lock): calling up with the
 * module lock held could deadlock two threads (issue 34).
 */
typedef struct mca_btl_pvrdma_done_t {
    mca_btl_pvrdma_frag_t *head;
    mca_btl_pvrdma_frag_t **tail;
} mca_btl_pvrdma_done_t;

static inline void mca_btl_pvrdma_done_init(mca_btl_pvrdma_done_t *done)
{
    done->head = NULL;
    done->tail = &done->head;
}

static inline void mca_btl_pvrdma_done_add(mca_btl_pvrdma_done_t *done,
                                           mca_btl_pvrdma_frag_t *frag, int status)
{
    frag->done_next = NULL;
    frag->done_status = status;
    *done->tail = frag;
    done->tail = &frag->done_next;
}

OBJ_CLASS_DECLARATION(mca_btl_pvrdma_frag_t);

/** @brief Free-list item init: point the fragment at its registered buffer. */
int mca_btl_pvrdma_frag_init(opal_free_list_item_t *item, void *ctx);

static inline mca_btl_pvrdma_frag_t *mca_btl_pvrdma_frag_get(opal_free_list_t *list)
{
    mca_btl_pvrdma_frag_t *frag = (mca_btl_pvrdma_frag_t *) opal_free_list_get(list);

    if (OPAL_LIKELY(NULL != frag)) {
        frag->posted = false;
        frag->pml_freed = false;
        frag->callback = false;
        frag->signalled = false;
    }
    return frag;
}

static inline void mca_btl_pvrdma_frag_return(mca_btl_pvrdma_frag_t *frag)
{
    opal_free_list_return(frag->list, &frag->base.super);
}

/* btl_pvrdma_frag.c: module ops of the eager path */
mca_btl_base_descriptor_t *mca_btl_pvrdma_alloc(struct mca_btl_base_module_t *btl,
                                                struct mca_btl_base_endpoint_t *endpoint,
                                                uint8_t order, size_t size, uint32_t flags);
int mca_btl_pvrdma_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_pvrdma_prepare_src(struct mca_btl_base_module_t *btl,
                                                      struct mca_btl_base_endpoint_t *endpoint,
                                                      struct opal_convertor_t *convertor,
                                                      uint8_t order, size_t reserve,
                                                      size_t *size, uint32_t flags);
int mca_btl_pvrdma_send(struct mca_btl_base_module_t *btl,
                        struct mca_btl_base_endpoint_t *endpoint,
                        struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_pvrdma_sendi(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint,
                         struct opal_convertor_t *convertor, void *header, size_t header_size,
                         size_t payload_size, uint8_t order, uint32_t flags,
                         mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor);

/**
 * @brief A send-queue WR of @p frag finished (in order): its bookkeeping
 *        now (module lock held), its callback and return in @p done.
 */
void mca_btl_pvrdma_frag_send_done(mca_btl_pvrdma_frag_t *frag, int status,
                                   mca_btl_pvrdma_done_t *done);

/**
 * @brief Run the callbacks of @p done in completion order and give the
 *        fragments back where their owners allow.  Module lock not held.
 */
void mca_btl_pvrdma_done_run(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_done_t *done);

/** @brief Send an explicit credit-return message if one is due. */
void mca_btl_pvrdma_send_credits(mca_btl_pvrdma_module_t *module,
                                 struct mca_btl_base_endpoint_t *endpoint);

/**
 * @brief Post a signalled credit-only message to @p endpoint whatever is
 *        owed: the stall watch's kick (btl_pvrdma_watch.c).  Uses a
 *        reserved credit and one receive of the peer, like a credit return.
 * @return OPAL_SUCCESS when posted; an error when the send queue, the
 *         fragments or the credits have no room now.
 */
int mca_btl_pvrdma_send_kick(mca_btl_pvrdma_module_t *module,
                             struct mca_btl_base_endpoint_t *endpoint);

END_C_DECLS

#endif
