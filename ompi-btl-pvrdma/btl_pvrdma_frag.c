/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_frag.c
 * @brief The eager path: alloc/free/prepare_src/send/sendi.
 *
 * Data is always copied into a registered fragment buffer (registered once
 * per free-list chunk), so the user buffer is free as soon as the WR is
 * posted and most sends can report completion immediately (return 1),
 * which is what lets us request a CQE only every N-th send.
 */
#include "opal_config.h"

#include <string.h>

#include "opal/datatype/opal_convertor.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_frag.h"
#include "btl_pvrdma_osc.h"

static void frag_construct(mca_btl_pvrdma_frag_t *frag)
{
    frag->list = NULL;
    frag->endpoint = NULL;
    frag->hdr = NULL;
    frag->lkey = 0;
    frag->kind = 0;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->rdma_cbfunc = NULL;
    frag->rdma_osc = false;
}

OBJ_CLASS_INSTANCE(mca_btl_pvrdma_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

int mca_btl_pvrdma_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_pvrdma_frag_t *frag = (mca_btl_pvrdma_frag_t *) item;
    opal_free_list_t *list = (opal_free_list_t *) ctx;

    frag->list = list;
    frag->hdr = (mca_btl_pvrdma_hdr_t *) item->ptr;
    frag->lkey = NULL != item->registration ?
        ((mca_btl_pvrdma_reg_t *) item->registration)->handle.lkey : 0;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->segment.seg_addr.pval = NULL != frag->hdr ? (void *) (frag->hdr + 1) : NULL;
    frag->segment.seg_len = 0;
    frag->sge.addr = (uintptr_t) frag->hdr;
    frag->sge.length = (uint32_t) list->fl_payload_buffer_size;
    frag->sge.lkey = frag->lkey;
    memset(&frag->wr, 0, sizeof(frag->wr));
    if (NULL == frag->hdr) {
        frag->kind = MCA_BTL_PVRDMA_FRAG_RDMA;
    } else {
        /* receive WR template; send WRs are filled when posted */
        frag->wr.recv.wr_id = (uintptr_t) frag;
        frag->wr.recv.sg_list = &frag->sge;
        frag->wr.recv.num_sge = 1;
        frag->kind = MCA_BTL_PVRDMA_FRAG_RECV;
    }
    return OPAL_SUCCESS;
}

/** Turn a fragment into an eager send of header + seg_len bytes. */
static inline void frag_prepare_send(mca_btl_pvrdma_frag_t *frag, mca_btl_base_tag_t tag,
                                     uint8_t flags)
{
    frag->kind = MCA_BTL_PVRDMA_FRAG_SEND;
    frag->hdr->tag = tag;
    frag->hdr->flags = flags;
    frag->hdr->credits = 0;
    frag->sge.addr = (uintptr_t) frag->hdr;
    frag->sge.length = (uint32_t) (sizeof(mca_btl_pvrdma_hdr_t) + frag->segment.seg_len);
    frag->sge.lkey = frag->lkey;
    frag->wr.send.sg_list = &frag->sge;
    frag->wr.send.num_sge = 1;
    frag->wr.send.opcode = IBV_WR_SEND;
}

mca_btl_base_descriptor_t *mca_btl_pvrdma_alloc(struct mca_btl_base_module_t *btl,
                                                struct mca_btl_base_endpoint_t *endpoint,
                                                uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_btl_pvrdma_frag_t *frag;

    if (OPAL_UNLIKELY(size + sizeof(mca_btl_pvrdma_hdr_t) > module->frag_size)) {
        return NULL;
    }
    frag = mca_btl_pvrdma_frag_get(&module->send_frags);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->kind = MCA_BTL_PVRDMA_FRAG_SEND;
    frag->endpoint = endpoint;
    frag->segment.seg_addr.pval = frag->hdr + 1;
    frag->segment.seg_len = size;
    frag->base.des_segment_count = 1;
    frag->base.des_flags = flags;
    frag->base.order = order;
    return &frag->base;
}

int mca_btl_pvrdma_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_btl_pvrdma_frag_t *frag = (mca_btl_pvrdma_frag_t *) des;
    bool posted;

    /* under the lock: another thread's progress may be completing this
     * fragment's WR (frag_send_done tests pml_freed) */
    OPAL_THREAD_LOCK(&module->lock);
    posted = frag->posted;
    if (posted) {
        /* still being read by the HCA: give it back when the WR completes */
        frag->pml_freed = true;
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    if (!posted) {
        mca_btl_pvrdma_frag_return(frag);
    }
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_pvrdma_prepare_src(struct mca_btl_base_module_t *btl,
                                                      struct mca_btl_base_endpoint_t *endpoint,
                                                      struct opal_convertor_t *convertor,
                                                      uint8_t order, size_t reserve,
                                                      size_t *size, uint32_t flags)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    size_t room = module->frag_size - sizeof(mca_btl_pvrdma_hdr_t) - reserve;
    mca_btl_base_descriptor_t *des;
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data;
    int rc;

    if (*size > room) {
        *size = room;
    }
    des = mca_btl_pvrdma_alloc(btl, endpoint, order, reserve + *size, flags);
    if (OPAL_UNLIKELY(NULL == des)) {
        return NULL;
    }
    iov.iov_base = (IOVBASE_TYPE *) ((uintptr_t) des->des_segments[0].seg_addr.pval + reserve);
    iov.iov_len = max_data = *size;
    rc = opal_convertor_pack(convertor, &iov, &iov_count, &max_data);
    if (OPAL_UNLIKELY(rc < 0)) {
        mca_btl_pvrdma_frag_return((mca_btl_pvrdma_frag_t *) des);
        return NULL;
    }
    *size = max_data;
    des->des_segments[0].seg_len = reserve + max_data;
    return des;
}

/**
 * Send coalescing (btl_pvrdma_send_coalesce, issue 38): every ibv_post_send
 * is a doorbell, a VM exit on PVRDMA.  A send to an endpoint that already
 * had one posted in this progress turn, or that a PML callback makes inside
 * progress (the next fragments of a message when the previous completed,
 * a rendezvous ACK's data), is queued instead; the progress turn posts each
 * endpoint's queue as one WR list (endpoint_progress_pending).  A send that
 * is the first since progress ran goes at once, so a lone message never
 * waits.  Only fragments the BTL may give back itself (BTL-owned, no
 * callback asked) wait this way, so the PML sees them done at once.
 */
static bool frag_may_wait(const mca_btl_pvrdma_endpoint_t *ep, const mca_btl_pvrdma_frag_t *frag)
{
    return mca_btl_pvrdma_endpoint_coalesce(ep) &&
           (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) &&
           !(frag->base.des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK);
}

/** Queue @p frag (connected endpoint, module lock held) for this turn's
 *  WR list; a queue of POST_BATCH is posted at once rather than held. */
static void frag_wait(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                      mca_btl_pvrdma_frag_t *frag)
{
    frag->callback = false;
    mca_btl_pvrdma_endpoint_queue(ep, frag);
    if (opal_list_get_size(&ep->pending) >= MCA_BTL_PVRDMA_POST_BATCH && !module->in_upcalls) {
        (void) mca_btl_pvrdma_endpoint_progress_pending(ep);
    }
}

int mca_btl_pvrdma_send(struct mca_btl_base_module_t *btl,
                        struct mca_btl_base_endpoint_t *endpoint,
                        struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_btl_pvrdma_frag_t *frag = (mca_btl_pvrdma_frag_t *) descriptor;
    mca_btl_pvrdma_endpoint_t *ep = endpoint;
    bool callback;
    int rc;

    frag->endpoint = ep;
    frag_prepare_send(frag, tag, 0);

    OPAL_THREAD_LOCK(&module->lock);
    if (OPAL_LIKELY(mca_btl_pvrdma_endpoint_ready(ep) && opal_list_is_empty(&ep->pending) &&
                    !mca_btl_pvrdma_endpoint_coalesce(ep) &&
                    mca_btl_pvrdma_endpoint_sq_free(ep) > 0 &&
                    pvrdma_common_credits_take(&ep->credits, false))) {
        frag->hdr->credits = (uint16_t) pvrdma_common_credits_piggyback(&ep->credits);
        /* read before the unlock: once posted, another thread's progress
         * may complete the fragment and the PML recycle it */
        callback = !!(frag->base.des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK);
        frag->callback = callback;
        ep->send_turn = module->progress_turn;
        rc = mca_btl_pvrdma_endpoint_post(ep, frag, false);
        OPAL_THREAD_UNLOCK(&module->lock);
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
            return rc;
        }
        /* the data was copied: done, unless the PML asked for the callback */
        return callback ? OPAL_SUCCESS : 1;
    }
    if (mca_btl_pvrdma_endpoint_ready(ep) && frag_may_wait(ep, frag)) {
        /* copied and queued for this turn's WR list, and ours to return:
         * done for the PML, as if posted */
        frag_wait(module, ep, frag);
        OPAL_THREAD_UNLOCK(&module->lock);
        return 1;
    }
    /* queued: the PML gets its callback when the send really completes */
    frag->callback = true;
    frag->base.des_flags |= MCA_BTL_DES_SEND_ALWAYS_CALLBACK;
    mca_btl_pvrdma_endpoint_queue(ep, frag);
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

int mca_btl_pvrdma_sendi(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint,
                         struct opal_convertor_t *convertor, void *header, size_t header_size,
                         size_t payload_size, uint8_t order, uint32_t flags,
                         mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_btl_pvrdma_endpoint_t *ep = endpoint;
    const size_t total = header_size + payload_size;
    mca_btl_pvrdma_frag_t *frag = NULL;
    bool coalesce;
    int rc;

    OPAL_THREAD_LOCK(&module->lock);
    coalesce = mca_btl_pvrdma_endpoint_ready(ep) && mca_btl_pvrdma_endpoint_coalesce(ep);
    if (OPAL_UNLIKELY(!mca_btl_pvrdma_endpoint_ready(ep) ||
                      (!coalesce && !opal_list_is_empty(&ep->pending)) ||
                      total + sizeof(mca_btl_pvrdma_hdr_t) > module->frag_size ||
                      (!coalesce && 0 == mca_btl_pvrdma_endpoint_sq_free(ep)))) {
        goto out_of_resource;
    }
    frag = mca_btl_pvrdma_frag_get(&module->send_frags);
    if (OPAL_UNLIKELY(NULL == frag)) {
        goto out_of_resource;
    }
    if (OPAL_UNLIKELY(!coalesce && !pvrdma_common_credits_take(&ep->credits, false))) {
        mca_btl_pvrdma_frag_return(frag);
        frag = NULL;
        goto out_of_resource;
    }

    frag->endpoint = ep;
    frag->segment.seg_addr.pval = frag->hdr + 1;
    frag->segment.seg_len = total;
    frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    frag->base.order = order;
    if (header_size > 0) {
        memcpy(frag->hdr + 1, header, header_size);
    }
    if (payload_size > 0) {
        struct iovec iov = {.iov_base = (IOVBASE_TYPE *) ((uintptr_t) (frag->hdr + 1) + header_size),
                            .iov_len = payload_size};
        uint32_t iov_count = 1;
        size_t max_data = payload_size;

        (void) opal_convertor_pack(convertor, &iov, &iov_count, &max_data);
    }
    frag_prepare_send(frag, tag, 0);
    if (coalesce) {
        /* BTL-owned, no callback: queued for this turn's WR list */
        frag_wait(module, ep, frag);
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_SUCCESS;
    }
    frag->hdr->credits = (uint16_t) pvrdma_common_credits_piggyback(&ep->credits);
    ep->send_turn = module->progress_turn;
    rc = mca_btl_pvrdma_endpoint_post(ep, frag, false);
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;

out_of_resource:
    if (MCA_BTL_PVRDMA_EP_CLOSED == ep->state) {
        (void) mca_btl_pvrdma_endpoint_start_connect(ep);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    if (NULL != descriptor) {
        *descriptor = mca_btl_pvrdma_alloc(btl, endpoint, order, total, flags);
    }
    return OPAL_ERR_OUT_OF_RESOURCE;
}

void mca_btl_pvrdma_frag_send_done(mca_btl_pvrdma_frag_t *frag, int status,
                                   mca_btl_pvrdma_done_t *done)
{
    /* who gives the fragment back is known before the callback: in it the
     * PML may free it (mca_btl_pvrdma_free returns it at once, it is no
     * longer posted) and another thread may take it again, so nothing of
     * it is read after the callback (issue 34) */
    frag->done_return = (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) ||
                        frag->pml_freed;
    frag->posted = false;
    frag->signalled = false;
    mca_btl_pvrdma_done_add(done, frag, status);
}

void mca_btl_pvrdma_done_run(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_done_t *done)
{
    mca_btl_pvrdma_frag_t *frag, *next;

    for (frag = done->head; NULL != frag; frag = next) {
        next = frag->done_next;   /* the callback may free and reuse frag */
        if (MCA_BTL_PVRDMA_FRAG_RDMA == frag->kind) {
            if (NULL != frag->rdma_cbfunc) {
                /* to the module and endpoint handle the caller used */
                bool osc = frag->rdma_osc && NULL != module->osc;

                frag->rdma_cbfunc(osc ? &module->osc->super : &module->super,
                                  osc ? mca_btl_pvrdma_osc_handle(frag->endpoint)
                                      : frag->endpoint,
                                  frag->local_address, frag->local_handle,
                                  frag->rdma_cbcontext, frag->rdma_cbdata, frag->done_status);
            }
            mca_btl_pvrdma_frag_return(frag);
            continue;
        }
        bool ours = frag->done_return;

        if (frag->callback && NULL != frag->base.des_cbfunc) {
            frag->base.des_cbfunc(&module->super, frag->endpoint, &frag->base,
                                  frag->done_status);
        }
        if (ours) {
            mca_btl_pvrdma_frag_return(frag);
        }
    }
    mca_btl_pvrdma_done_init(done);
}

/** Post a header-only message carrying every credit we owe @p ep.
 *  @return OPAL_SUCCESS; OPAL_ERR_OUT_OF_RESOURCE when no send-queue slot or
 *  fragment is free now; OPAL_ERR_TEMP_OUT_OF_RESOURCE without a credit. */
static int post_credit_only(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                            bool signal)
{
    mca_btl_pvrdma_frag_t *frag;

    frag = 0 == mca_btl_pvrdma_endpoint_sq_free(ep) ? NULL
                                                    : mca_btl_pvrdma_frag_get(&module->send_frags);
    if (NULL == frag) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (!pvrdma_common_credits_take(&ep->credits, true)) {
        mca_btl_pvrdma_frag_return(frag);
        return OPAL_ERR_TEMP_OUT_OF_RESOURCE;
    }
    frag->endpoint = ep;
    frag->segment.seg_len = 0;
    frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    frag_prepare_send(frag, 0, MCA_BTL_PVRDMA_HDR_CREDIT_ONLY);
    frag->hdr->credits = (uint16_t) pvrdma_common_credits_piggyback(&ep->credits);
    return mca_btl_pvrdma_endpoint_post(ep, frag, signal);
}

/** A signalled zero-length RDMA WRITE to @p ep: it needs no receive at
 *  the peer, so no credit (a zero-byte WRITE carries no address or rkey
 *  that the responder checks).  @return as post_credit_only. */
static int post_write_probe(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_frag_t *frag;

    frag = 0 == mca_btl_pvrdma_endpoint_sq_free(ep) ? NULL
                                                    : mca_btl_pvrdma_frag_get(&module->send_frags);
    if (NULL == frag) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    frag->endpoint = ep;
    frag->segment.seg_len = 0;
    frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    frag_prepare_send(frag, 0, MCA_BTL_PVRDMA_HDR_CREDIT_ONLY);
    frag->sge.length = 0;
    frag->wr.send.num_sge = 0;
    frag->wr.send.opcode = IBV_WR_RDMA_WRITE;
    frag->wr.send.wr.rdma.remote_addr = 0;
    frag->wr.send.wr.rdma.rkey = 0;
    return mca_btl_pvrdma_endpoint_post(ep, frag, true);
}

int mca_btl_pvrdma_send_kick(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep)
{
    int rc;

    if (MCA_BTL_PVRDMA_EP_CONNECTED != ep->state || module->fatal) {
        return OPAL_ERR_UNREACH;
    }
    rc = post_credit_only(module, ep, true);
    /* At 0 credits (the peer holds every receive we may use) a kick or
     * keepalive probe by SEND cannot go, and a peer that died meanwhile
     * would never be found: where WRITE works, probe by a zero-length
     * WRITE instead (issue 34). */
    if (OPAL_ERR_TEMP_OUT_OF_RESOURCE == rc && module->rdma_write_ok) {
        rc = post_write_probe(module, ep);
    }
    return rc;
}

void mca_btl_pvrdma_send_credits(mca_btl_pvrdma_module_t *module,
                                 mca_btl_pvrdma_endpoint_t *ep)
{
    if (ep->credits_owed) {
        ep->credits_owed = false;
        module->credits_owed_count--;
    }
    if (MCA_BTL_PVRDMA_EP_CONNECTED != ep->state ||
        !pvrdma_common_credits_need_return(&ep->credits)) {
        return;
    }
    /* The send budget is shared by all peers and the peer may have nothing
     * more to send until it gets these credits (then no receive of ours
     * would ever call this again): a return that cannot go now is retried
     * from progress until it is posted, never dropped.  Without a credit
     * it waits for the peer's next message, which brings some. */
    if (OPAL_ERR_OUT_OF_RESOURCE == post_credit_only(module, ep, false)) {
        ep->credits_owed = true;
        module->credits_owed_count++;
    }
}
