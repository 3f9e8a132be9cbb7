/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_auth.h
 * @brief common/: authenticating connection datagrams (auth.c, issue 37): a
 *        MAC keyed by a secret that only the job's out-of-band exchange
 *        carries, and a replay window per sender.
 *
 * The MAC is libsodium's crypto_generichash (BLAKE2b) keyed with the 16-byte
 * secret, 16 bytes long, over the whole message (its MAC field taken as
 * zero) and the destination QP number: a datagram cannot be altered, sent
 * to another QP, or made without the key.  BLAKE2b because it is a keyed
 * hash made for exactly this (no HMAC construction on top), libsodium's
 * default, and fast on ~100 bytes (about 1 µs; a connection costs a handful
 * of datagrams).  Replays of a datagram that was sent once
 * are refused by its sequence number: each sending QP counts from the wall
 * clock in ns at its start (so a later QP with an earlier one's number
 * starts above it), and the receiver keeps, per sender (source GID and QP), the
 * highest number seen and which of the 64 before it were seen.
 */
#ifndef PVRDMA_AUTH_H
#define PVRDMA_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PVRDMA_COMMON_AUTH_KEY_LEN 16   /**< the secret */
#define PVRDMA_COMMON_AUTH_MAC_LEN 16

/** @brief libsodium's one-time initialisation (thread safe, idempotent).
 *  @return 0, or EIO when libsodium cannot initialise. */
int pvrdma_common_auth_init(void);

/**
 * @brief The MAC of @p len bytes at @p msg whose MAC field starts at
 *        @p mac_off (taken as zero), for destination QP @p dest_qpn, keyed
 *        with @p key, into @p mac.
 */
void pvrdma_common_auth_mac(uint8_t mac[PVRDMA_COMMON_AUTH_MAC_LEN],
                            const uint8_t key[PVRDMA_COMMON_AUTH_KEY_LEN],
                            const void *msg, size_t len, size_t mac_off,
                            uint32_t dest_qpn);

/** @brief Whether the MAC field of @p msg is right (constant time). */
bool pvrdma_common_auth_verify(const uint8_t key[PVRDMA_COMMON_AUTH_KEY_LEN],
                               const void *msg, size_t len, size_t mac_off,
                               uint32_t dest_qpn);

/** The replay window of one sender. */
struct pvrdma_common_replay_entry {
    uint8_t  src[16];   /**< source GID */
    uint32_t qpn;       /**< source QP */
    uint64_t top;       /**< highest sequence number seen */
    uint64_t seen;      /**< bit i: top - i was seen */
    uint64_t used;      /**< last use, for eviction */
};

/** Replay windows of up to @c cap senders; the least recently heard from
 *  is forgotten when a new one needs room (then one old datagram of it
 *  could be accepted once more: the cap is far above a job's peers). */
struct pvrdma_common_replay {
    struct pvrdma_common_replay_entry *e;
    uint32_t n, cap;
    uint64_t clock;
    uint64_t evicted;
    uint64_t superseded; /**< refused as older than the window (64 or more
                              behind the highest seen), not as seen before:
                              a sender's own datagram that waited too long
                              (a repeated one is the network's or a replay) */
    uint64_t refused_back; /**< of the last refusal: how far its number was
                                behind the highest seen (0: that one itself),
                                for the caller's log */
};

/** @brief Room for @p cap senders.  @return 0 or ENOMEM. */
int pvrdma_common_replay_init(struct pvrdma_common_replay *r, uint32_t cap);
void pvrdma_common_replay_fini(struct pvrdma_common_replay *r);

/**
 * @brief Whether sequence number @p seq of sender (@p src, @p qpn) is new:
 *        true records it; false for one seen before or older than the 64
 *        before the highest seen.  Pure (but for the table).
 */
bool pvrdma_common_replay_fresh(struct pvrdma_common_replay *r,
                                const uint8_t src[16], uint32_t qpn,
                                uint64_t seq);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_AUTH_H */
