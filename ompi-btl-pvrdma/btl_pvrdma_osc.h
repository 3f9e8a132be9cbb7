/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_osc.h
 * @brief The one-sided module: a second BTL module on the same device, QPs,
 *        CQ and registrations, offering RDMA WRITE, RDMA READ and network
 *        atomics to osc rdma while ob1 keeps the main module's WRITE
 *        rendezvous (btl_pvrdma_osc.c says why two modules).
 */
#ifndef MCA_BTL_PVRDMA_OSC_H
#define MCA_BTL_PVRDMA_OSC_H

#include "btl_pvrdma.h"
#include "btl_pvrdma_endpoint.h"

BEGIN_C_DECLS

typedef struct mca_btl_pvrdma_osc_module_t {
    mca_btl_base_module_t super;
    /** whose device, endpoints and registrations it uses; NULL once that
     *  module was finalized (the framework finalizes both, in any order) */
    mca_btl_pvrdma_module_t *main;
} mca_btl_pvrdma_osc_module_t;

/** @brief The handle the one-sided module gives the BML for @p ep's peer. */
static inline struct mca_btl_base_endpoint_t *
mca_btl_pvrdma_osc_handle(mca_btl_pvrdma_endpoint_t *ep)
{
    return (struct mca_btl_base_endpoint_t *) (void *) &ep->osc;
}

/** @brief The endpoint behind a handle of the one-sided module (NULL: none). */
static inline mca_btl_pvrdma_endpoint_t *
mca_btl_pvrdma_osc_endpoint(struct mca_btl_base_endpoint_t *handle)
{
    return (NULL == handle) ? NULL : ((struct mca_btl_pvrdma_osc_handle *) (void *) handle)->ep;
}

/** @brief The main module behind the one-sided module @p btl. */
static inline mca_btl_pvrdma_module_t *mca_btl_pvrdma_osc_main(struct mca_btl_base_module_t *btl)
{
    return ((mca_btl_pvrdma_osc_module_t *) btl)->main;
}

/** @brief The one-sided module of @p main (which offers atomics), with
 *  its limits copied from @p main; NULL when out of memory. */
mca_btl_pvrdma_osc_module_t *mca_btl_pvrdma_osc_module_create(mca_btl_pvrdma_module_t *main);

END_C_DECLS

#endif
