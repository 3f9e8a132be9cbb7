/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_ud.h
 * @brief common/: the UD QP of connection messages: slots, secrets, checks, recovery (ud.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_UD_H
#define PVRDMA_UD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "pvrdma_addr.h"
#include "pvrdma_auth.h"
#include "pvrdma_qp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Receives of a UD QP start with the 40-byte GRH area. */
#define PVRDMA_COMMON_UD_GRH_LEN 40
/** At most this many sends in flight (tx slots are a 64-bit map). */
#define PVRDMA_COMMON_UD_TX_MAX  64
/** wr_id bit of sends; receives carry their slot index. */
#define PVRDMA_COMMON_UD_TX_BIT  (UINT64_C(1) << 63)
/** wr_id bits 32..47: the QP's generation (pvrdma_common_ud_reset()), so a
 *  completion from before a reset is told from one after it. */
#define PVRDMA_COMMON_UD_GEN_SHIFT 32
/**
 * Every receive ends in a second SGE of this many bytes, one buffer shared
 * by all receives and never read: a datagram can be as long as the largest
 * IB MTU whatever our messages are, and on SoftRoCE (Linux 6.1,
 * rxe_resp.c: copy_data() fails with -EINVAL when the datagram is longer
 * than the receive, RESPST_ERR_MALFORMED_WQE, class A) one longer datagram
 * puts the whole UD QP into the error state (issue 41).
 */
#define PVRDMA_COMMON_UD_SINK_LEN 4096

#define PVRDMA_COMMON_UD_SECRET_LEN PVRDMA_COMMON_AUTH_KEY_LEN

/** Senders whose replay windows a UD QP keeps (pvrdma_auth.h). */
#define PVRDMA_COMMON_UD_REPLAY_CAP 4096

/** Whose secret keys a message's MAC (pvrdma_common_ud_hdr.keyed) */
enum pvrdma_common_ud_keyed {
    PVRDMA_COMMON_UD_KEYED_RECEIVER = 0, /**< the receiver's: checked by
                                              pvrdma_common_ud_complete() */
    PVRDMA_COMMON_UD_KEYED_SENDER   = 1  /**< the sender's (a reply to a
                                              peer that has our address):
                                              checked by the plugin with the
                                              key it has, in
                                              pvrdma_common_ud_accept() */
};

/**
 * The first bytes of every connection message of both plugins.  The
 * plugin owns type and flags; version, keyed, seq and mac are written by
 * pvrdma_common_ud_send() and checked on receipt.  Each UD QP draws a
 * secret at open (getrandom) that its owner publishes only out of band,
 * with its address (the BTL's modex, UCX's iface address): it never
 * travels in a datagram (issue 37).  @p mac is a MAC over the whole
 * message and the destination QP keyed with the receiver's secret (or,
 * @p keyed SENDER, the sender's, which the receiver has from the sender's
 * address), so only processes of the job can make a datagram that passes,
 * and only for the QP it was made for; @p seq (big-endian, the sending
 * QP's counter, or the sender's counter for this destination
 * (pvrdma_common_ud_send_seq), from the wall clock in ns at the QP's
 * start) makes a replayed one fail
 * (pvrdma_common_ud_accept).  A stray, forged or replayed datagram from
 * another job or tenant is dropped and counted.
 */
struct pvrdma_common_ud_hdr {
    uint8_t type;
    uint8_t version;
    uint8_t flags;
    uint8_t keyed;          /**< enum pvrdma_common_ud_keyed */
    uint8_t seq[8];
    uint8_t mac[PVRDMA_COMMON_AUTH_MAC_LEN];
};

/** What pvrdma_common_ud_open() builds. */
struct pvrdma_common_ud_attr {
    struct ibv_pd *pd;
    struct ibv_cq *cq;         /**< receive completions, and sends' unless: */
    struct ibv_cq *send_cq;    /**< NULL, or the send completions' own CQ, so
                                    that freeing a send slot never hands the
                                    caller a received datagram out of turn */
    uint8_t        port_num;
    uint32_t       qkey;       /**< own Q_Key (high bit clear) */
    uint8_t        version;    /**< of the plugin's message format */
    uint32_t       rx_count;   /**< receives kept posted */
    uint32_t       tx_count;   /**< sends in flight, <= PVRDMA_COMMON_UD_TX_MAX */
    uint32_t       msg_size;   /**< every message has exactly this size */
};

/** A UD QP with its registered receive and send slots. */
struct pvrdma_common_ud {
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t       *buf;        /**< rx slots (GRH + message), tx slots, sink */
    uint64_t       tx_busy;    /**< bitmap of tx slots in flight */
    uint64_t       resets;     /**< times the QP was found in error and reset */
    const char    *broken_by;  /**< what found it broken (for the log) */
    uint16_t       gen;        /**< generation of the WRs posted now */
    bool           broken;     /**< a completion failed: reset it */
    bool           resetting;  /**< reset; restart once the CQ is drained */
    uint64_t       dropped;    /**< received datagrams that failed the checks */
    uint64_t       forged;     /**< ... of which well formed but with a
                                    MAC that did not verify */
    uint64_t       replayed;   /**< ... of which seen before (replays) */
    uint64_t       tx_seq;     /**< sequence number of the last send */
    uint64_t       seq_base;   /**< tx_seq at open: where a destination's
                                    own counter starts */
    uint32_t       qpn;        /**< qp->qp_num: what our MACs are made for */
    struct pvrdma_common_replay replay; /**< per sender (auth.c) */
    uint64_t       spoofed;    /**< came from another QP/GID than they claim
                                    (counted by pvrdma_common_ud_from()) */
    uint8_t        secret[PVRDMA_COMMON_UD_SECRET_LEN]; /**< publish with the address */
    uint8_t        port_num;
    uint32_t       qkey;
    uint32_t       rx_count;
    uint32_t       tx_count;
    uint32_t       msg_size;
    uint8_t        version;
};

/** What one completion of the UD QP was. */
enum pvrdma_common_ud_event {
    PVRDMA_COMMON_UD_SENT,        /**< a send finished, its slot is free */
    PVRDMA_COMMON_UD_SEND_FAILED, /**< a send failed, its slot is free; the
                                       QP is broken */
    PVRDMA_COMMON_UD_RECEIVED,    /**< a message passed the checks; repost after */
    PVRDMA_COMMON_UD_DROPPED,     /**< a datagram failed the checks, or the
                                       receive failed (the QP is broken);
                                       repost (a no-op while broken) */
    PVRDMA_COMMON_UD_STALE        /**< a WR of before the last reset: nothing
                                       to do (its slot was posted again) */
};

/**
 * @brief Allocate and register the slots, create the UD QP on attr->cq,
 *        bring it to RTS and post every receive (one WR list).
 * @param what (OUT) on failure, the step that failed, for the message
 * @return 0 or errno; on failure nothing is left allocated.
 */
int pvrdma_common_ud_open(struct pvrdma_common_ud *ud,
                          const struct pvrdma_common_ud_attr *attr,
                          const char **what);

/** @brief Destroy the QP and free the slots (a zeroed @p ud is fine). */
void pvrdma_common_ud_close(struct pvrdma_common_ud *ud);

/**
 * @brief A zeroed free send slot of msg_size bytes to fill, or NULL when
 *        all are in flight (the caller's retry timer sends again).
 */
void *pvrdma_common_ud_tx_get(struct pvrdma_common_ud *ud);

/**
 * @brief Send the message in the slot @p msg (from pvrdma_common_ud_tx_get)
 *        to UD QP @p qpn / @p qkey through @p ah, signalled, with the next
 *        sequence number and a MAC keyed with @p key
 *        (PVRDMA_COMMON_UD_SECRET_LEN bytes): the receiver's secret from
 *        its published address (@p keyed RECEIVER), or our own (SENDER, a
 *        reply to a peer that has our address).
 * @return 0 or the errno of ibv_post_send (the slot stays free).
 */
int pvrdma_common_ud_send(struct pvrdma_common_ud *ud, void *msg,
                          struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
                          const uint8_t *key, enum pvrdma_common_ud_keyed keyed);

/**
 * @brief pvrdma_common_ud_send() with the sequence number taken from
 *        @p dest_seq, the caller's counter for this one destination (0:
 *        not used yet, it starts at the QP's seq_base).  A receiver then
 *        sees consecutive numbers from us, so a datagram it holds back
 *        (the BTL's deferred ones, from a peer not resolved yet) stays
 *        inside its 64-deep replay window however many datagrams we sent
 *        to others meanwhile (at 159 peers the QP's own counter moved
 *        past it: a "superseded replay", dropped and resent).
 */
int pvrdma_common_ud_send_seq(struct pvrdma_common_ud *ud, void *msg,
                              struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
                              const uint8_t *key, enum pvrdma_common_ud_keyed keyed,
                              uint64_t *dest_seq);

/**
 * @brief The message in a received UD buffer @p rx (GRH first), or NULL when
 *        the datagram is shorter than GRH + @p msg_size or carries another
 *        @p version; with a @p key (NULL: not checked), also when it is not
 *        keyed RECEIVER or its MAC for @p dest_qpn does not verify.  Pure.
 */
const void *pvrdma_common_ud_msg_check(const void *rx, uint32_t byte_len,
                                       uint32_t msg_size, uint8_t version,
                                       const uint8_t *key, uint32_t dest_qpn);

/**
 * @brief Account one completion of the UD QP; for RECEIVED, @p msg points
 *        to the checked message, valid until pvrdma_common_ud_repost().
 *
 * A completion that is not a success (an error, or a flush: nothing
 * destroys the QP while its CQ is polled) means the QP went to the error
 * state: every receive is lost and every later one too.  It sets
 * ud->broken; the owner then recovers the QP after its poll loop with
 * pvrdma_common_ud_reset() and, once the CQ holds no completion from before
 * the reset, pvrdma_common_ud_restart().  Pure (no verbs call).
 */
enum pvrdma_common_ud_event
pvrdma_common_ud_complete(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                          const void **msg);

/**
 * @brief Whether the QP is in the error state although no completion said
 *        so (ibv_query_qp: a device command, so only when a request had no
 *        answer in time), for a device that flushes nothing when a QP
 *        goes to the error state.  Sets ud->broken when it is.
 * @return true when ud->broken is set now.
 */
bool pvrdma_common_ud_check_state(struct pvrdma_common_ud *ud);

/**
 * @brief First step of recovering a broken UD QP: move it to RESET (the
 *        device drops every WR; none of them completes any more, those
 *        already in the CQ come out of pvrdma_common_ud_complete() as
 *        STALE) and begin a new generation.  The QP number stays: the peers'
 *        addresses of it stay valid.  No send slot is handed out until
 *        pvrdma_common_ud_restart().
 * @return 0 or errno (ibv_modify_qp).
 */
int pvrdma_common_ud_reset(struct pvrdma_common_ud *ud);

/**
 * @brief Second step, once every completion polled from the CQ was polled
 *        after pvrdma_common_ud_reset() returned and the CQ was found empty
 *        (so the QP's new WRs never share the CQ with its old ones): back to
 *        RTS, every receive posted again (one WR list), every send slot
 *        free; counts ud->resets.
 * @return 0 or errno.
 */
int pvrdma_common_ud_restart(struct pvrdma_common_ud *ud);

/**
 * @brief Whether the received datagram of @p wc (its buffer @p msg from
 *        pvrdma_common_ud_complete) came from UD QP @p qpn at @p gid, the
 *        address the message claims: the completion's source QP and the
 *        GRH's source GID (ibv_init_ah_from_wc).  A mismatch is counted in
 *        ud->spoofed and ud->dropped; the caller drops the message.
 */
bool pvrdma_common_ud_from(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                           const void *msg, uint32_t qpn,
                           const union ibv_gid *gid);

/**
 * @brief The last check before the plugin acts on a received message that
 *        passed pvrdma_common_ud_from() (so @p gid, the source it claims, is
 *        where it came from): a message keyed SENDER must verify with
 *        @p sender_key (the secret of the peer it answers, from that peer's
 *        address; NULL: we have none, dropped), and its sequence number
 *        must be new for its sender (@p gid, the completion's source QP).
 *        Counts a failure in ud->forged or ud->replayed and ud->dropped;
 *        the caller drops the message.
 */
bool pvrdma_common_ud_accept(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                             const void *msg, const uint8_t *sender_key,
                             const union ibv_gid *gid);

/** @brief Post the receive of @p wc again (nothing while the QP is broken
 *  or being reset: the restart posts every receive).  @return 0 or errno. */
int pvrdma_common_ud_repost(struct pvrdma_common_ud *ud, const struct ibv_wc *wc);

/** @brief An address handle to a peer's UD QP (pvrdma_common_ah_attr_fill).
 *  @return the AH or NULL with errno. */
struct ibv_ah *pvrdma_common_ud_ah_create(struct ibv_pd *pd,
                                          const struct pvrdma_common_qp_params *p,
                                          const union ibv_gid *dgid,
                                          uint16_t dlid);

struct pvrdma_common_counters;
/** @brief Append the UD QP's drop and reset counts to a counters line
 *         (dgram_dropped, dgram_forged, dgram_replayed, of those
 *         dgram_superseded (older than the window), dgram_spoofed,
 *         cm_qp_resets); @p ud NULL (never opened): zeros. */
void pvrdma_common_ud_counters_add(const struct pvrdma_common_ud *ud,
                                   struct pvrdma_common_counters *c);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_UD_H */
