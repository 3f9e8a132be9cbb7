/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_rma.c
 * @brief RMA of the UCT "pvrdma" transport (what UCP's rendezvous uses):
 *        PUT by RDMA WRITE, GET by RDMA READ, short, bcopy and zcopy.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

#include <uct/base/uct_iov.inl>


/*
 * Count an RDMA WR just posted for the user (iface->op_count, printed at
 * close): the bed tests assert from these counts whether GETs went by RDMA
 * READ and PUTs by RDMA WRITE.  Every user READ and WRITE is posted by
 * uct_pvrdma_ep_rdma_post, and only those: the credit-return WRITEs
 * (pvrdma_chan.c, counted in op_count.credits_by_msg) and the zero-length
 * flush WRITE (uct_pvrdma_ep_flush) carry no user data and are not
 * counted.
 * @p opcode is a constant at every call site, so this is one increment and
 * one comparison.
 */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_iface_count_rdma(uct_pvrdma_iface_t *iface,
                            enum ibv_wr_opcode opcode, size_t length)
{
    if (opcode == IBV_WR_RDMA_READ) {
        ++iface->op_count.rdma_reads;
        iface->op_count.rdma_read_max = ucs_max(iface->op_count.rdma_read_max,
                                                (uint64_t)length);
    } else {
        ++iface->op_count.rdma_writes;
        iface->op_count.rdma_write_max =
                ucs_max(iface->op_count.rdma_write_max, (uint64_t)length);
    }
}


/* Post one user RDMA READ or WRITE of @p length bytes (the sum of @p sge) */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_rdma_post(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                        enum ibv_wr_opcode opcode, struct ibv_sge *sge,
                        int num_sge, size_t length, uint64_t remote_addr,
                        uct_rkey_t rkey, uct_pvrdma_tx_desc_t *desc,
                        int signal)
{
    struct ibv_send_wr wr;
    ucs_status_t status;

    wr.sg_list             = sge;
    wr.num_sge             = num_sge;
    wr.opcode              = opcode;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = (uint32_t)rkey;

    status = uct_pvrdma_ep_post(iface, ep, &wr, signal);
    if (ucs_unlikely(status != UCS_OK)) {
        if (desc != NULL) {
            ucs_mpool_put_inline(desc);
        }
        return status;
    }

    uct_pvrdma_iface_count_rdma(iface, opcode, length);
    if (desc != NULL) {
        uct_pvrdma_ep_track_desc(ep, desc);
    }
    return UCS_OK;
}


/* @p put: the operation is an RDMA WRITE (needs a WRITE connection) */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_get_desc(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                       int put, uct_pvrdma_tx_desc_t **desc_p)
{
    uct_pvrdma_tx_desc_t *desc;
    ucs_status_t status;

    status = uct_pvrdma_ep_check_tx_op(iface, ep, put);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    UCT_TL_IFACE_GET_TX_DESC(&iface->super, &iface->tx_mp, desc, {
        uct_pvrdma_iface_tx_mp_empty(iface);
        return UCS_ERR_NO_RESOURCE;
    });
    uct_pvrdma_tx_desc_reset(desc);
    *desc_p = desc;
    return UCS_OK;
}


ucs_status_t uct_pvrdma_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                     unsigned length, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;

    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "put_short");

    status = uct_pvrdma_ep_get_desc(iface, ep, 1, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    memcpy(desc + 1, buffer, length);
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = length;
    sge.lkey   = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, PUT, SHORT, length);
    return uct_pvrdma_ep_rdma_post(iface, ep, IBV_WR_RDMA_WRITE, &sge, 1,
                                   length, remote_addr, rkey, desc, 0);
}


ssize_t uct_pvrdma_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                void *arg, uint64_t remote_addr,
                                uct_rkey_t rkey)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;
    size_t length;

    status = uct_pvrdma_ep_get_desc(iface, ep, 1, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    length = pack_cb(desc + 1, arg);
    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "put_bcopy");
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = length;
    sge.lkey   = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, PUT, BCOPY, length);
    status = uct_pvrdma_ep_rdma_post(iface, ep, IBV_WR_RDMA_WRITE, &sge, 1,
                                     length, remote_addr, rkey, desc, 0);
    return (status == UCS_OK) ? (ssize_t)length : status;
}


/* Zero-copy RDMA: a descriptor is needed only to carry the completion. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_rdma_zcopy(uct_ep_h tl_ep, enum ibv_wr_opcode opcode,
                         const uct_iov_t *iov, size_t iovcnt,
                         uint64_t remote_addr, uct_rkey_t rkey,
                         uct_completion_t *comp, size_t max_length,
                         const char *name)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    struct ibv_sge sge[iface->config.tx_max_sge];
    uct_pvrdma_tx_desc_t *desc = NULL;
    ucs_status_t status;
    size_t length;
    int num_sge;

    UCT_CHECK_IOV_SIZE(iovcnt, (size_t)iface->config.tx_max_sge, name);
    UCT_CHECK_LENGTH(uct_iov_total_length(iov, iovcnt), 0, max_length, name);

    if (comp != NULL) {
        status = uct_pvrdma_ep_get_desc(iface, ep,
                                        opcode == IBV_WR_RDMA_WRITE, &desc);
        if (ucs_unlikely(status != UCS_OK)) {
            return status;
        }
        desc->comp = comp;
    } else {
        status = uct_pvrdma_ep_check_tx_op(iface, ep,
                                           opcode == IBV_WR_RDMA_WRITE);
        if (ucs_unlikely(status != UCS_OK)) {
            return status;
        }
    }

    num_sge = uct_pvrdma_iov_to_sge(sge, iov, iovcnt, &length);
    status  = uct_pvrdma_ep_rdma_post(iface, ep, opcode, sge, num_sge, length,
                                      remote_addr, rkey, desc, comp != NULL);
    if (status != UCS_OK) {
        return status;
    }
    /* @p opcode is a constant at each caller: one of the two remains */
    if (opcode == IBV_WR_RDMA_WRITE) {
        UCT_TL_EP_STAT_OP(&ep->super, PUT, ZCOPY, length);
    } else {
        UCT_TL_EP_STAT_OP(&ep->super, GET, ZCOPY, length);
    }
    return UCS_INPROGRESS;
}


ucs_status_t uct_pvrdma_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);

    return uct_pvrdma_ep_rdma_zcopy(tl_ep, IBV_WR_RDMA_WRITE, iov, iovcnt,
                                    remote_addr, rkey, comp,
                                    iface->config.max_put_zcopy, "put_zcopy");
}


ucs_status_t uct_pvrdma_ep_get_bcopy(uct_ep_h tl_ep,
                                     uct_unpack_callback_t unpack_cb,
                                     void *arg, size_t length,
                                     uint64_t remote_addr, uct_rkey_t rkey,
                                     uct_completion_t *comp)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_sge sge;
    ucs_status_t status;

    if (!iface->profile.rdma_read_ok) {
        return UCS_ERR_UNSUPPORTED;
    }

    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "get_bcopy");

    status = uct_pvrdma_ep_get_desc(iface, ep, 0, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    desc->unpack_cb  = unpack_cb;
    desc->unpack_arg = arg;
    desc->length     = length;
    desc->comp       = comp;
    sge.addr         = (uintptr_t)(desc + 1);
    sge.length       = length;
    sge.lkey         = desc->lkey;

    UCT_TL_EP_STAT_OP(&ep->super, GET, BCOPY, length);
    status = uct_pvrdma_ep_rdma_post(iface, ep, IBV_WR_RDMA_READ, &sge, 1,
                                     length, remote_addr, rkey, desc, 1);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}


ucs_status_t uct_pvrdma_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);

    if (!iface->profile.rdma_read_ok) {
        return UCS_ERR_UNSUPPORTED;
    }
    return uct_pvrdma_ep_rdma_zcopy(tl_ep, IBV_WR_RDMA_READ, iov, iovcnt,
                                    remote_addr, rkey, comp,
                                    iface->config.max_get_zcopy, "get_zcopy");
}
