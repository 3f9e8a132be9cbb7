/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_credits.h
 * @brief common/: eager flow-control credits and credits in immediate data (credits.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_CREDITS_H
#define PVRDMA_CREDITS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Per-peer credit state.  Each side posts @c initial receives for the peer
 * and starts with @c initial send credits.  Every received message (of any
 * kind) consumes one receive; once reposted it is "owed" back to the sender,
 * either piggybacked on outgoing messages or in an explicit credit-return
 * message once @c owed reaches @c threshold.  The last @c reserved send
 * credits can only be used by credit-return messages, so two peers that
 * both ran out of credits can always return them (no deadlock).
 */
struct pvrdma_common_credits {
    uint32_t initial;    /**< receives posted for the peer */
    uint32_t send;       /**< sender: messages we may still send */
    uint32_t reserved;   /**< credits kept for credit-return messages */
    uint32_t owed;       /**< receiver: reposted receives not yet returned */
    uint32_t threshold;  /**< send an explicit return at owed >= this */
    uint64_t returned;   /**< receiver: total credits given back (stats) */
};

/**
 * @brief Initialise.  Pure.  @p reserved is clamped to [1, initial-1] when
 *        initial > 1 (0 when initial <= 1); @p threshold to
 *        [1, initial - reserved] (so a blocked peer is always unblocked).
 * @return 0; EINVAL when initial is 0.
 */
int pvrdma_common_credits_init(struct pvrdma_common_credits *c,
                               uint32_t initial, uint32_t reserved,
                               uint32_t threshold);

/**
 * @brief Sender: take one credit for a message.  Pure.
 * @param credit_msg (IN) true for an explicit credit-return message, which
 *                        may use the reserved credits
 * @return true when a credit was taken (the message may be sent).
 */
bool pvrdma_common_credits_take(struct pvrdma_common_credits *c,
                                bool credit_msg);

/** @brief Sender: undo a take() whose post failed.  Pure. */
void pvrdma_common_credits_untake(struct pvrdma_common_credits *c);

/**
 * @brief Sender: the peer returned @p n credits.  Pure.
 * @return 0; ERANGE when that would exceed @c initial (protocol error; the
 *         credits are capped at @c initial).
 */
int pvrdma_common_credits_add(struct pvrdma_common_credits *c, uint32_t n);

/**
 * @brief Receiver: credits taken by piggyback() went nowhere (the post that
 *        was to carry them failed): owed again.  Pure.
 */
void pvrdma_common_credits_unpiggyback(struct pvrdma_common_credits *c,
                                      uint32_t n);

/**
 * @brief Receiver: the receives posted so far are the peer's initial
 *        credits (granted at connection time), not reposts owed back.  Pure.
 */
void pvrdma_common_credits_initial_posted(struct pvrdma_common_credits *c);

/*
 * Immediate data of an active message on a UCX connection with RDMA WRITE
 * (host order; the wire carries it big-endian):
 *   bits  0..4   AM id (UCT_AM_ID_BITS)
 *   bits  5..15  credits returned for the reverse connection (0: none)
 *   bits 16..31  tag of the receiver's ep those credits belong to
 * Credits fit: a channel never owes more than its receives, and channels
 * only piggyback when that is <= PVRDMA_COMMON_IMM_CREDITS_MAX.
 */
#define PVRDMA_COMMON_IMM_ID_MASK       0x1fu
#define PVRDMA_COMMON_IMM_CREDITS_SHIFT 5
#define PVRDMA_COMMON_IMM_CREDITS_MAX   0x7ffu
#define PVRDMA_COMMON_IMM_TAG_SHIFT     16

/** @brief Immediate data carrying @p am_id, @p credits and @p tag.  Pure. */
uint32_t pvrdma_common_imm_pack(uint8_t am_id, uint32_t credits, uint16_t tag);

/** @brief The AM id in @p imm.  Pure. */
uint8_t pvrdma_common_imm_am_id(uint32_t imm);

/** @brief The credits in @p imm (0: none).  Pure. */
uint32_t pvrdma_common_imm_credits(uint32_t imm);

/** @brief The ep tag in @p imm.  Pure. */
uint16_t pvrdma_common_imm_tag(uint32_t imm);

/** @brief Receiver: @p n receives from the peer were reposted.  Pure. */
void pvrdma_common_credits_consumed(struct pvrdma_common_credits *c,
                                    uint32_t n);

/**
 * @brief Receiver: take every owed credit to piggyback on an outgoing
 *        message (resets @c owed).  Pure.  @return the number to put in
 *        the header (may be 0).
 */
uint32_t pvrdma_common_credits_piggyback(struct pvrdma_common_credits *c);

/** @brief Receiver: owed >= threshold, send an explicit return.  Pure. */
bool pvrdma_common_credits_need_return(const struct pvrdma_common_credits *c);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_CREDITS_H */
