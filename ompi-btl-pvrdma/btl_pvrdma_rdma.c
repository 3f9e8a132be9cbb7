/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_rdma.c
 * @brief Rendezvous data movement: btl_put (RDMA WRITE), btl_get (RDMA
 *        READ, offered to ob1 only with btl_pvrdma_rdma_read, to osc rdma
 *        through the one-sided module wherever the device can initiate
 *        READs) and btl_flush.  Transfers above the device's largest message or
 *        registration are split into several WRs, admitted together (the last one signalled).
 */
#include "opal_config.h"

#include "opal/runtime/opal_progress.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_rdma.h"

int mca_btl_pvrdma_rdma_post(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                             mca_btl_pvrdma_frag_t **list, uint64_t count)
{
    bool direct;
    int rc = OPAL_SUCCESS;

    OPAL_THREAD_LOCK(&module->lock);
    /* in order behind anything queued, and all pieces or none now */
    direct = mca_btl_pvrdma_endpoint_ready(ep) && opal_list_is_empty(&ep->pending) &&
             mca_btl_pvrdma_endpoint_sq_free(ep) >= count;
    ep->rdma_outstanding += (uint32_t) count;
    if (direct) {
        /* one WR list, one doorbell; the caller waits for the last piece:
         * signal it */
        rc = mca_btl_pvrdma_endpoint_post_list(ep, list, (uint32_t) count, true);
    } else {
        for (uint64_t i = 0; i < count; ++i) {
            mca_btl_pvrdma_endpoint_queue(ep, list[i]);
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

int mca_btl_pvrdma_rdma(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                        enum ibv_wr_opcode opcode, void *local_address, uint64_t remote_address,
                        mca_btl_base_registration_handle_t *local_handle,
                        mca_btl_base_registration_handle_t *remote_handle, size_t size,
                        bool osc, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                        void *cbdata)
{
    uint64_t chunk = module->profile.max_msg_size;
    uint64_t count = pvrdma_common_frag_count(size, chunk);
    mca_btl_pvrdma_frag_t *frags[8], **list = frags;
    int rc = OPAL_SUCCESS;

    if (0 == size) {
        count = 1; /* still complete through the queue, in order */
    }
    if (count > 8) {
        list = malloc(count * sizeof(*list)); /* > 8 x max_msg_size: rare and huge */
        if (NULL == list) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t off = 0, len = size;
        mca_btl_pvrdma_frag_t *frag = mca_btl_pvrdma_frag_get(&module->rdma_frags);

        if (OPAL_UNLIKELY(NULL == frag)) {
            for (uint64_t j = 0; j < i; ++j) {
                mca_btl_pvrdma_frag_return(list[j]);
            }
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        if (size > 0) {
            (void) pvrdma_common_frag_get(size, chunk, i, &off, &len);
        }
        frag->kind = MCA_BTL_PVRDMA_FRAG_RDMA;
        frag->endpoint = ep;
        frag->callback = false;
        frag->sge.addr = (uintptr_t) local_address + off;
        frag->sge.length = (uint32_t) len;
        frag->sge.lkey = local_handle->lkey;
        frag->wr.send.sg_list = &frag->sge;
        frag->wr.send.num_sge = 1;
        frag->wr.send.opcode = opcode;
        frag->wr.send.wr.rdma.remote_addr = remote_address + off;
        frag->wr.send.wr.rdma.rkey = remote_handle->rkey;
        frag->rdma_osc = osc;
        /* only the last piece reports to the caller */
        frag->rdma_cbfunc = (i + 1 == count) ? cbfunc : NULL;
        frag->rdma_cbcontext = cbcontext;
        frag->rdma_cbdata = cbdata;
        frag->local_address = local_address;
        frag->local_handle = local_handle;
        list[i] = frag;
    }

    rc = mca_btl_pvrdma_rdma_post(module, ep, list, count);
out:
    if (list != frags) {
        free(list);
    }
    return rc;
}

int mca_btl_pvrdma_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       void *local_address, uint64_t remote_address,
                       mca_btl_base_registration_handle_t *local_handle,
                       mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                       int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                       void *cbdata)
{
    (void) flags;
    (void) order;
    if (OPAL_UNLIKELY(!((mca_btl_pvrdma_module_t *) btl)->rdma_write_ok)) {
        return OPAL_ERR_NOT_AVAILABLE; /* WRITEs do not land on this device */
    }
    return mca_btl_pvrdma_rdma((mca_btl_pvrdma_module_t *) btl, endpoint, IBV_WR_RDMA_WRITE,
                               local_address, remote_address, local_handle, remote_handle, size,
                               false, cbfunc, cbcontext, cbdata);
}

int mca_btl_pvrdma_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       void *local_address, uint64_t remote_address,
                       mca_btl_base_registration_handle_t *local_handle,
                       mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                       int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                       void *cbdata)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;

    (void) flags;
    (void) order;
    if (OPAL_UNLIKELY(!module->profile.rdma_read_ok)) {
        return OPAL_ERR_NOT_AVAILABLE; /* device cannot initiate RDMA READ */
    }
    return mca_btl_pvrdma_rdma(module, endpoint, IBV_WR_RDMA_READ, local_address, remote_address,
                               local_handle, remote_handle, size, false, cbfunc, cbcontext,
                               cbdata);
}

void mca_btl_pvrdma_rdma_done(mca_btl_pvrdma_frag_t *frag, int status,
                              mca_btl_pvrdma_done_t *done)
{
    frag->posted = false;
    frag->endpoint->rdma_outstanding--;
    mca_btl_pvrdma_done_add(done, frag, status);   /* callback and return */
}

static bool rdma_busy(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *endpoint)
{
    mca_btl_pvrdma_endpoint_t *ep;

    if (NULL != endpoint) {
        return endpoint->rdma_outstanding > 0;
    }
    OPAL_LIST_FOREACH(ep, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        if (ep->rdma_outstanding > 0) {
            return true;
        }
    }
    return false;
}

int mca_btl_pvrdma_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;

    /* RDMA WRs are signalled (the last piece of each op), so the CQ will
     * report them; errors abort through the fatal path, so this ends. */
    bool busy;

    do {
        /* the endpoint list and counts under the lock: other threads may
         * add peers or complete RDMA ops meanwhile */
        OPAL_THREAD_LOCK(&module->lock);
        busy = rdma_busy(module, endpoint) && !module->fatal;
        OPAL_THREAD_UNLOCK(&module->lock);
        if (busy) {
            (void) mca_btl_pvrdma_module_progress(module);
        }
    } while (busy);
    return module->fatal ? OPAL_ERROR : OPAL_SUCCESS;
}
