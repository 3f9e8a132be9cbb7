/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_slot.c
 * @brief Registered 8-byte words used for credit returns.
 *
 * Every active ep owns one slot into which the peer RDMA-WRITEs the
 * cumulative number of credits it returned, and every passive channel owns
 * one slot holding the value it writes (the local source of that WRITE must
 * be registered too, as PVRDMA has no inline data).  Slots come from chunks
 * of 64, each registered once, so connecting costs no extra ibv_reg_mr.
 */
#include "pvrdma.h"


ucs_status_t uct_pvrdma_slot_get(uct_pvrdma_iface_t *iface,
                                 uct_pvrdma_slot_chunk_t **chunk_p,
                                 unsigned *index_p)
{
    uct_pvrdma_slot_chunk_t *chunk;
    unsigned index;

    ucs_list_for_each(chunk, &iface->slot_chunks, list) {
        if (chunk->used != UINT64_MAX) {
            goto found;
        }
    }

    /* whole pages: QEMU's pvrdma model refuses registrations of heap memory
     * that shares a page with another registration (common/page.c) */
    chunk = pvrdma_common_page_alloc(sizeof(*chunk));
    if (chunk == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    chunk->mr = ibv_reg_mr(iface->md->pd, (void*)chunk->slots,
                           sizeof(chunk->slots),
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (chunk->mr == NULL) {
        ucs_error("pvrdma: %s: ibv_reg_mr(credit slots) failed: %m",
                  iface->md->dev_name);
        free(chunk);
        return UCS_ERR_IO_ERROR;
    }
    ucs_list_add_tail(&iface->slot_chunks, &chunk->list);

found:
    index               = ucs_ffs64(~chunk->used);
    chunk->used        |= UCS_BIT(index);
    chunk->slots[index] = 0;
    *chunk_p            = chunk;
    *index_p            = index;
    return UCS_OK;
}


void uct_pvrdma_slot_put(uct_pvrdma_slot_chunk_t *chunk, unsigned index)
{
    chunk->used &= ~UCS_BIT(index);
}


void uct_pvrdma_slots_cleanup(uct_pvrdma_iface_t *iface)
{
    uct_pvrdma_slot_chunk_t *chunk, *tmp;

    ucs_list_for_each_safe(chunk, tmp, &iface->slot_chunks, list) {
        ibv_dereg_mr(chunk->mr);
        free(chunk);
    }
    ucs_list_head_init(&iface->slot_chunks);
}
