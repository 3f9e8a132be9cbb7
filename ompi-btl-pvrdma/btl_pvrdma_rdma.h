/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_rdma.h
 * @brief RDMA WRITE/READ (btl_put/btl_get) and flush.
 */
#ifndef MCA_BTL_PVRDMA_RDMA_H
#define MCA_BTL_PVRDMA_RDMA_H

#include "btl_pvrdma.h"
#include "btl_pvrdma_frag.h"

BEGIN_C_DECLS

int mca_btl_pvrdma_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       void *local_address, uint64_t remote_address,
                       mca_btl_base_registration_handle_t *local_handle,
                       mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                       int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                       void *cbdata);

int mca_btl_pvrdma_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       void *local_address, uint64_t remote_address,
                       mca_btl_base_registration_handle_t *local_handle,
                       mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                       int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                       void *cbdata);

/** @brief One RDMA WRITE or READ of @p size bytes (split into WRs of at
 *  most max_msg_size, posted as one list); @p osc: it came through the
 *  one-sided module, whose handle the completion reports. */
int mca_btl_pvrdma_rdma(mca_btl_pvrdma_module_t *module, struct mca_btl_base_endpoint_t *ep,
                        enum ibv_wr_opcode opcode, void *local_address, uint64_t remote_address,
                        mca_btl_base_registration_handle_t *local_handle,
                        mca_btl_base_registration_handle_t *remote_handle, size_t size,
                        bool osc, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                        void *cbdata);

/** @brief Post the RDMA or atomic WRs @p list (one operation, its last WR
 *  reports to the caller) on @p ep now, or queue them in order behind
 *  what waits there (connecting, or a full send queue). */
int mca_btl_pvrdma_rdma_post(mca_btl_pvrdma_module_t *module, struct mca_btl_base_endpoint_t *ep,
                             mca_btl_pvrdma_frag_t **list, uint64_t count);

int mca_btl_pvrdma_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);

/** @brief An RDMA WR completed (in ring order): bookkeeping now, callback
 *  and release in @p done (mca_btl_pvrdma_done_run). */
void mca_btl_pvrdma_rdma_done(mca_btl_pvrdma_frag_t *frag, int status,
                              mca_btl_pvrdma_done_t *done);

END_C_DECLS

#endif
