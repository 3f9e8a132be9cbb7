/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_am.c
 * @brief Active messages of the UCT "pvrdma" transport (the eager path):
 *        am_short, am_bcopy and am_zcopy as SEND_WITH_IMM, the immediate
 *        carrying the AM id and credits owed to the peer; on a
 *        send/recv-only iface (QEMU's device model, see pvrdma_sr.c) as
 *        SEND with both in a header in front of the AM's bytes.
 *
 * Each op: one admission check (uct_pvrdma_ep_am_admit: connected, WQE,
 * CQ entry, receive credit, send buffer), fill, one post with one doorbell
 * (uct_pvrdma_ep_am_post).  Each op's body is written once, always inline,
 * with the mode as a compile-time flag (@p sr): the iface's ops table
 * holds the variant for its mode (uct_pvrdma_iface_use_sr_ops), so the
 * WRITE path never branches on it.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

#include <uct/base/uct_iov.inl>


/*
 * am_short where the device takes inline data (not PVRDMA, whose QPs have
 * max_inline_data 0 and never get here): the provider copies header and
 * payload into the WQE at post time, so no send buffer, no lkey lookup in
 * the device and nothing to release on completion.
 */
static UCS_F_NOINLINE ucs_status_t
uct_pvrdma_ep_am_short_inline(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                              uint8_t id, uint64_t hdr, const void *payload,
                              unsigned length)
{
    struct ibv_send_wr wr;
    struct ibv_sge sge[2];
    ucs_status_t status;
    uint32_t credits;

    status = uct_pvrdma_ep_am_admit(iface, ep, NULL);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    sge[0].addr   = (uintptr_t)&hdr;
    sge[0].length = sizeof(hdr);
    sge[0].lkey   = 0;
    sge[1].addr   = (uintptr_t)payload;
    sge[1].length = length;
    sge[1].lkey   = 0;
    wr.sg_list    = sge;
    wr.num_sge    = (length > 0) ? 2 : 1;
    wr.opcode     = IBV_WR_SEND_WITH_IMM;
    wr.imm_data   = uct_pvrdma_ep_am_imm(ep, id, &credits);
    wr.send_flags = IBV_SEND_INLINE;

    UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, sizeof(hdr) + length);
    return uct_pvrdma_ep_am_post(iface, ep, &wr, NULL, credits, 0);
}


/* The send/recv-only header (uct_pvrdma_am_hdr_t) at the start of @p desc's
 * buffer: the AM id, and the credits the ep's reverse channel owes (taken in
 * @p credits_p, given back by uct_pvrdma_ep_am_post if the post fails) */
static UCS_F_ALWAYS_INLINE void *
uct_pvrdma_am_sr_hdr_fill(uct_pvrdma_ep_t *ep, uct_pvrdma_tx_desc_t *desc,
                          uint8_t id, uint32_t *credits_p)
{
    uct_pvrdma_am_hdr_t *hdr = (uct_pvrdma_am_hdr_t*)(desc + 1);

    hdr->am_id      = id;
    hdr->magic      = UCT_PVRDMA_AM_HDR_MAGIC;
    hdr->credit_imm = uct_pvrdma_ep_am_imm(ep, id, credits_p);
    memset(hdr->reserved, 0, sizeof(hdr->reserved));
    return hdr + 1;
}


/* Bytes in front of the AM's own in the send buffer */
#define UCT_PVRDMA_AM_HDR_LEN(_sr)  ((_sr) ? sizeof(uct_pvrdma_am_hdr_t) : 0)


/* Start an AM in @p desc: the id and the credits owed go in the immediate
 * data, or (@p sr) in the header.  Returns where the AM's bytes go. */
static UCS_F_ALWAYS_INLINE void *
uct_pvrdma_am_begin(uct_pvrdma_ep_t *ep, uct_pvrdma_tx_desc_t *desc,
                    uint8_t id, int sr, struct ibv_send_wr *wr,
                    uint32_t *credits_p)
{
    wr->send_flags = 0;
    if (sr) {
        wr->opcode = IBV_WR_SEND;
        return uct_pvrdma_am_sr_hdr_fill(ep, desc, id, credits_p);
    }
    wr->opcode   = IBV_WR_SEND_WITH_IMM;
    wr->imm_data = uct_pvrdma_ep_am_imm(ep, id, credits_p);
    return desc + 1;
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_short_common(uct_ep_h tl_ep, uint8_t id, uint64_t hdr,
                              const void *payload, unsigned length, int sr)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    ucs_status_t status;
    uint32_t credits;

    UCT_CHECK_AM_ID(id);
    UCT_CHECK_LENGTH(sizeof(hdr) + length, 0, iface->config.seg_size,
                     "am_short");
    if (!sr && (sizeof(hdr) + length <= iface->config.max_inline)) {
        return uct_pvrdma_ep_am_short_inline(iface, ep, id, hdr, payload,
                                             length);
    }

    status = uct_pvrdma_ep_am_admit(iface, ep, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    /* no inline data on PVRDMA: copy into a registered buffer */
    uct_pvrdma_am_short_fill_data(uct_pvrdma_am_begin(ep, desc, id, sr, &wr,
                                                      &credits),
                                  hdr, payload, length);
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = UCT_PVRDMA_AM_HDR_LEN(sr) + sizeof(hdr) + length;
    sge.lkey   = desc->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;

    UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, sizeof(hdr) + length);
    return uct_pvrdma_ep_am_post(iface, ep, &wr, desc, credits, 0);
}


static UCS_F_ALWAYS_INLINE ssize_t
uct_pvrdma_ep_am_bcopy_common(uct_ep_h tl_ep, uint8_t id,
                              uct_pack_callback_t pack_cb, void *arg, int sr)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    ucs_status_t status;
    uint32_t credits;
    size_t length;

    UCT_CHECK_AM_ID(id);
    status = uct_pvrdma_ep_am_admit(iface, ep, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    length = pack_cb(uct_pvrdma_am_begin(ep, desc, id, sr, &wr, &credits),
                     arg);
    UCT_CHECK_LENGTH(length, 0, iface->config.seg_size, "am_bcopy");
    sge.addr   = (uintptr_t)(desc + 1);
    sge.length = UCT_PVRDMA_AM_HDR_LEN(sr) + length;
    sge.lkey   = desc->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;

    UCT_TL_EP_STAT_OP(&ep->super, AM, BCOPY, length);
    status = uct_pvrdma_ep_am_post(iface, ep, &wr, desc, credits, 0);
    return (status == UCS_OK) ? (ssize_t)length : status;
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_ep_am_zcopy_common(uct_ep_h tl_ep, uint8_t id, const void *header,
                              unsigned header_length, const uct_iov_t *iov,
                              size_t iovcnt, uct_completion_t *comp, int sr)
{
    uct_pvrdma_ep_t *ep       = ucs_derived_of(tl_ep, uct_pvrdma_ep_t);
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                               uct_pvrdma_iface_t);
    struct ibv_sge sge[iface->config.tx_max_sge];
    uct_pvrdma_tx_desc_t *desc;
    struct ibv_send_wr wr;
    ucs_status_t status;
    uint32_t credits;
    size_t length;

    UCT_PVRDMA_CHECK_AM_ZCOPY(iface, id, header_length, iov, iovcnt);

    status = uct_pvrdma_ep_am_admit(iface, ep, &desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    /* the header (and the send/recv-only AM header) from a send buffer,
     * the payload in place */
    memcpy(uct_pvrdma_am_begin(ep, desc, id, sr, &wr, &credits), header,
           header_length);
    sge[0].addr   = (uintptr_t)(desc + 1);
    sge[0].length = UCT_PVRDMA_AM_HDR_LEN(sr) + header_length;
    sge[0].lkey   = desc->lkey;
    wr.num_sge    = 1 + uct_pvrdma_iov_to_sge(&sge[1], iov, iovcnt, &length);
    wr.sg_list    = sge;
    desc->comp    = comp;

    UCT_TL_EP_STAT_OP(&ep->super, AM, ZCOPY, header_length + length);
    status = uct_pvrdma_ep_am_post(iface, ep, &wr, desc, credits,
                                   comp != NULL);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}


/* The ops, per mode */

ucs_status_t uct_pvrdma_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t hdr,
                                    const void *payload, unsigned length)
{
    return uct_pvrdma_ep_am_short_common(tl_ep, id, hdr, payload, length, 0);
}


ucs_status_t uct_pvrdma_ep_am_short_sr(uct_ep_h tl_ep, uint8_t id,
                                       uint64_t hdr, const void *payload,
                                       unsigned length)
{
    return uct_pvrdma_ep_am_short_common(tl_ep, id, hdr, payload, length, 1);
}


ssize_t uct_pvrdma_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                               uct_pack_callback_t pack_cb, void *arg,
                               unsigned flags UCS_V_UNUSED)
{
    return uct_pvrdma_ep_am_bcopy_common(tl_ep, id, pack_cb, arg, 0);
}


ssize_t uct_pvrdma_ep_am_bcopy_sr(uct_ep_h tl_ep, uint8_t id,
                                  uct_pack_callback_t pack_cb, void *arg,
                                  unsigned flags UCS_V_UNUSED)
{
    return uct_pvrdma_ep_am_bcopy_common(tl_ep, id, pack_cb, arg, 1);
}


ucs_status_t uct_pvrdma_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                    const void *header, unsigned header_length,
                                    const uct_iov_t *iov, size_t iovcnt,
                                    unsigned flags UCS_V_UNUSED,
                                    uct_completion_t *comp)
{
    return uct_pvrdma_ep_am_zcopy_common(tl_ep, id, header, header_length,
                                         iov, iovcnt, comp, 0);
}


ucs_status_t uct_pvrdma_ep_am_zcopy_sr(uct_ep_h tl_ep, uint8_t id,
                                       const void *header,
                                       unsigned header_length,
                                       const uct_iov_t *iov, size_t iovcnt,
                                       unsigned flags UCS_V_UNUSED,
                                       uct_completion_t *comp)
{
    return uct_pvrdma_ep_am_zcopy_common(tl_ep, id, header, header_length,
                                         iov, iovcnt, comp, 1);
}
