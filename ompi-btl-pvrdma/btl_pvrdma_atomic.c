/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_atomic.c
 * @brief Network atomics for osc rdma: 64-bit fetch-and-add and
 *        compare-and-swap, the two operations verbs has (IBV_WR_ATOMIC_*),
 *        offered only where the device reports atomic_cap (module->atomics_ok),
 *        through the one-sided module (btl_pvrdma_osc.c): @p btl and
 *        @p endpoint here are that module and its handles.
 *        Everything else (32-bit, other operations) is refused, so osc rdma
 *        builds it from these under its own locks; nothing here is a
 *        read-modify-write done by the CPU.
 *
 * An atomic is one RDMA WR on the peer's RC QP: posted like a put or get
 * (mca_btl_pvrdma_rdma_post: queued while the peer connects), completed in
 * ring order, counted in rdma_outstanding so btl_flush waits for it.
 */
#include "opal_config.h"

#include <stdlib.h>

#include "btl_pvrdma.h"
#include "btl_pvrdma_atomic.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_error.h"
#include "btl_pvrdma_osc.h"
#include "btl_pvrdma_rdma.h"

/** One atomic WR: fetched value into @p local (8 bytes, @p lkey). */
static int pvrdma_atomic(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                         enum ibv_wr_opcode opcode, void *local, uint32_t lkey,
                         mca_btl_base_registration_handle_t *local_handle,
                         uint64_t remote_address, uint32_t rkey, uint64_t compare_add,
                         uint64_t swap, mca_btl_base_rdma_completion_fn_t cbfunc,
                         void *cbcontext, void *cbdata)
{
    mca_btl_pvrdma_frag_t *frag;

    if (OPAL_UNLIKELY(remote_address & 7)) {
        return OPAL_ERR_BAD_PARAM; /* the responder refuses unaligned atomics */
    }
    frag = mca_btl_pvrdma_frag_get(&module->rdma_frags);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    frag->kind = MCA_BTL_PVRDMA_FRAG_RDMA;
    frag->rdma_osc = true;
    frag->endpoint = ep;
    frag->callback = false;
    frag->sge.addr = (uintptr_t) local;
    frag->sge.length = sizeof(uint64_t);
    frag->sge.lkey = lkey;
    frag->wr.send.sg_list = &frag->sge;
    frag->wr.send.num_sge = 1;
    frag->wr.send.opcode = opcode;
    frag->wr.send.wr.atomic.remote_addr = remote_address;
    frag->wr.send.wr.atomic.rkey = rkey;
    frag->wr.send.wr.atomic.compare_add = compare_add;
    frag->wr.send.wr.atomic.swap = swap;
    frag->rdma_cbfunc = cbfunc;
    frag->rdma_cbcontext = cbcontext;
    frag->rdma_cbdata = cbdata;
    frag->local_address = local;
    frag->local_handle = local_handle;
    return mca_btl_pvrdma_rdma_post(module, ep, &frag, 1);
}

/** What verbs cannot do atomically is refused, never emulated. */
static bool supported(const mca_btl_pvrdma_module_t *module, int flags)
{
    return module->atomics_ok && !(flags & MCA_BTL_ATOMIC_FLAG_32BIT) &&
           !(flags & MCA_BTL_ATOMIC_FLAG_FLOAT);
}

int mca_btl_pvrdma_atomic_fop(struct mca_btl_base_module_t *btl,
                              struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                              uint64_t remote_address,
                              mca_btl_base_registration_handle_t *local_handle,
                              mca_btl_base_registration_handle_t *remote_handle,
                              mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                              mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                              void *cbdata)
{
    mca_btl_pvrdma_module_t *module = mca_btl_pvrdma_osc_main(btl);
    mca_btl_pvrdma_endpoint_t *ep = mca_btl_pvrdma_osc_endpoint(endpoint);

    (void) order;
    if (OPAL_UNLIKELY(!supported(module, flags) || MCA_BTL_ATOMIC_ADD != op)) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return pvrdma_atomic(module, ep, IBV_WR_ATOMIC_FETCH_AND_ADD, local_address,
                         local_handle->lkey, local_handle, remote_address, remote_handle->rkey,
                         operand, 0, cbfunc, cbcontext, cbdata);
}

int mca_btl_pvrdma_atomic_op(struct mca_btl_base_module_t *btl,
                             struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
                             mca_btl_base_registration_handle_t *remote_handle,
                             mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata)
{
    mca_btl_pvrdma_module_t *module = mca_btl_pvrdma_osc_main(btl);
    mca_btl_pvrdma_endpoint_t *ep = mca_btl_pvrdma_osc_endpoint(endpoint);
    struct ibv_mr *scratch = module->atomic_scratch_mr;

    (void) order;
    if (OPAL_UNLIKELY(!supported(module, flags) || MCA_BTL_ATOMIC_ADD != op ||
                      NULL == scratch)) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    /* verbs always fetches: the old value lands in a scratch word that
     * every non-fetching atomic of this module shares (nobody reads it) */
    return pvrdma_atomic(module, ep, IBV_WR_ATOMIC_FETCH_AND_ADD, scratch->addr,
                         scratch->lkey, NULL, remote_address, remote_handle->rkey, operand, 0,
                         cbfunc, cbcontext, cbdata);
}

int mca_btl_pvrdma_atomic_cswap(struct mca_btl_base_module_t *btl,
                                struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                                uint64_t remote_address,
                                mca_btl_base_registration_handle_t *local_handle,
                                mca_btl_base_registration_handle_t *remote_handle,
                                uint64_t compare, uint64_t value, int flags, int order,
                                mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                                void *cbdata)
{
    mca_btl_pvrdma_module_t *module = mca_btl_pvrdma_osc_main(btl);
    mca_btl_pvrdma_endpoint_t *ep = mca_btl_pvrdma_osc_endpoint(endpoint);

    (void) order;
    if (OPAL_UNLIKELY(!supported(module, flags))) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return pvrdma_atomic(module, ep, IBV_WR_ATOMIC_CMP_AND_SWP, local_address,
                         local_handle->lkey, local_handle, remote_address, remote_handle->rkey,
                         compare, value, cbfunc, cbcontext, cbdata);
}

int mca_btl_pvrdma_atomic_init(mca_btl_pvrdma_module_t *module)
{
    void *word = NULL;

    module->atomic_scratch_mr = NULL;
    module->atomic_fadds = module->atomic_cswaps = 0;
    if (!module->atomics_ok) {
        return OPAL_SUCCESS;
    }
    if (0 != posix_memalign(&word, opal_cache_line_size, opal_cache_line_size)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->atomic_scratch_mr = ibv_reg_mr(module->pd, word, opal_cache_line_size,
                                           IBV_ACCESS_LOCAL_WRITE);
    if (NULL == module->atomic_scratch_mr) {
        mca_btl_pvrdma_error_verbs(module, "ibv_reg_mr (atomics scratch word)", errno);
        free(word);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

void mca_btl_pvrdma_atomic_fini(mca_btl_pvrdma_module_t *module)
{
    void *word;

    if (module->atomics_ok) {
        /* the bed's one-sided check reads this to prove that osc rdma ran
         * its atomics through this BTL */
        MCA_BTL_PVRDMA_VERBOSE(10, "atomics on %s:%d: %" PRIu64 " fetch-and-add, %" PRIu64
                               " compare-and-swap WRs", module->port.dev_name,
                               module->port.port_num, module->atomic_fadds,
                               module->atomic_cswaps);
    }
    if (NULL == module->atomic_scratch_mr) {
        return;
    }
    word = module->atomic_scratch_mr->addr;
    (void) ibv_dereg_mr(module->atomic_scratch_mr);
    module->atomic_scratch_mr = NULL;
    free(word);
}
