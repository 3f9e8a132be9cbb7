/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_atomic.h
 * @brief Network atomics (btl_atomic_op/fop/cswap) for osc rdma.
 */
#ifndef MCA_BTL_PVRDMA_ATOMIC_H
#define MCA_BTL_PVRDMA_ATOMIC_H

#include "btl_pvrdma.h"

BEGIN_C_DECLS

int mca_btl_pvrdma_atomic_op(struct mca_btl_base_module_t *btl,
                             struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
                             mca_btl_base_registration_handle_t *remote_handle,
                             mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata);

int mca_btl_pvrdma_atomic_fop(struct mca_btl_base_module_t *btl,
                              struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                              uint64_t remote_address,
                              mca_btl_base_registration_handle_t *local_handle,
                              mca_btl_base_registration_handle_t *remote_handle,
                              mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                              mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                              void *cbdata);

int mca_btl_pvrdma_atomic_cswap(struct mca_btl_base_module_t *btl,
                                struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                                uint64_t remote_address,
                                mca_btl_base_registration_handle_t *local_handle,
                                mca_btl_base_registration_handle_t *remote_handle,
                                uint64_t compare, uint64_t value, int flags, int order,
                                mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                                void *cbdata);

/** @brief Register the 8 bytes non-fetching atomics return into (when
 *  module->atomics_ok). */
int mca_btl_pvrdma_atomic_init(mca_btl_pvrdma_module_t *module);
/** @brief Release what mca_btl_pvrdma_atomic_init() took; print the counts
 *  (btl_base_verbose 10). */
void mca_btl_pvrdma_atomic_fini(mca_btl_pvrdma_module_t *module);

END_C_DECLS

#endif
