/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file credits.c
 * @brief Eager flow-control credit accounting.  Pure.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_credits.h"

#include <errno.h>
#include <string.h>

int pvrdma_common_credits_init(struct pvrdma_common_credits *c,
                               uint32_t initial, uint32_t reserved,
                               uint32_t threshold)
{
    if ((c == NULL) || (initial == 0)) {
        return EINVAL;
    }
    memset(c, 0, sizeof(*c));
    /* At least one credit must stay free for credit returns, or two peers
     * that used up their credits could wait for each other forever. */
    if (initial <= 1) {
        reserved = 0;
    } else if (reserved < 1) {
        reserved = 1;
    } else if (reserved > initial - 1) {
        reserved = initial - 1;
    }
    /* A peer blocked with no normal credits has made us owe at least
     * initial - reserved; the threshold must not exceed that. */
    if (threshold < 1) {
        threshold = 1;
    } else if (threshold > initial - reserved) {
        threshold = initial - reserved;
    }
    c->initial   = initial;
    c->send      = initial;
    c->reserved  = reserved;
    c->threshold = threshold;
    return 0;
}

bool pvrdma_common_credits_take(struct pvrdma_common_credits *c,
                                bool credit_msg)
{
    uint32_t floor = credit_msg ? 0 : c->reserved;

    if (c->send <= floor) {
        return false;
    }
    --c->send;
    return true;
}

void pvrdma_common_credits_untake(struct pvrdma_common_credits *c)
{
    if (c->send < c->initial) {
        ++c->send;
    }
}

int pvrdma_common_credits_add(struct pvrdma_common_credits *c, uint32_t n)
{
    if (n > c->initial - c->send) {
        c->send = c->initial;
        return ERANGE;
    }
    c->send += n;
    return 0;
}

void pvrdma_common_credits_consumed(struct pvrdma_common_credits *c,
                                    uint32_t n)
{
    c->owed += n;
}

uint32_t pvrdma_common_credits_piggyback(struct pvrdma_common_credits *c)
{
    uint32_t n = c->owed;

    c->owed = 0;
    c->returned += n;
    return n;
}

void pvrdma_common_credits_unpiggyback(struct pvrdma_common_credits *c,
                                      uint32_t n)
{
    c->owed += n;
    c->returned -= n;
}

void pvrdma_common_credits_initial_posted(struct pvrdma_common_credits *c)
{
    c->owed = 0;
}

uint32_t pvrdma_common_imm_pack(uint8_t am_id, uint32_t credits, uint16_t tag)
{
    return (uint32_t) (am_id & PVRDMA_COMMON_IMM_ID_MASK) |
           ((credits & PVRDMA_COMMON_IMM_CREDITS_MAX) <<
            PVRDMA_COMMON_IMM_CREDITS_SHIFT) |
           ((uint32_t) tag << PVRDMA_COMMON_IMM_TAG_SHIFT);
}

uint8_t pvrdma_common_imm_am_id(uint32_t imm)
{
    return (uint8_t) (imm & PVRDMA_COMMON_IMM_ID_MASK);
}

uint32_t pvrdma_common_imm_credits(uint32_t imm)
{
    return (imm >> PVRDMA_COMMON_IMM_CREDITS_SHIFT) &
           PVRDMA_COMMON_IMM_CREDITS_MAX;
}

uint16_t pvrdma_common_imm_tag(uint32_t imm)
{
    return (uint16_t) (imm >> PVRDMA_COMMON_IMM_TAG_SHIFT);
}

bool pvrdma_common_credits_need_return(const struct pvrdma_common_credits *c)
{
    return c->owed >= c->threshold;
}
