/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma.h
 * @brief Types and prototypes of the UCT "pvrdma" transport: reliable
 *        connected (RC) QPs over VMware PVRDMA or any RoCE/IB verbs device,
 *        connected by the transport itself (CONNECT_TO_IFACE).
 *
 * Design: docs/design.md, section "How a message travels", subsection
 * "The UCX transport (from pvrdma.h)": its paragraphs "Connection
 * establishment", "Receives", "Credits", "Send/recv-only connections" and
 * "Completions" (the CQ budget) were this comment; later notes that say
 * "see ... in pvrdma.h" mean them.
 */
#ifndef UCT_PVRDMA_H
#define UCT_PVRDMA_H

#include "pvrdma_md.h"

#include <uct/base/uct_iface.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/queue.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/khash.h>
#include <ucs/time/time.h>
#include <ucs/sys/math.h>
#include <ucs/arch/bitops.h>


/** Interface configuration (UCX_PVRDMA_* variables). */
typedef struct uct_pvrdma_iface_config {
    uct_iface_config_t         super;
    size_t                     seg_size;       /**< largest AM / bcopy */
    unsigned                   tx_queue_len;   /**< send WRs per QP */
    unsigned                   rx_queue_len;   /**< receives per connection */
    unsigned                   rx_batch;       /**< repost/credit batch */
    unsigned                   tx_moderation;  /**< signal every N sends */
    unsigned                   tx_max_sge;     /**< 0: from the device */
    unsigned                   cq_len;         /**< 0: auto */
    unsigned                   poll_batch;     /**< CQEs per ibv_poll_cq */
    int                        cq_idle_polls;  /**< -1 auto, 0 never arm */
    int                        rdma_read;      /**< UCS_YES/NO/TRY */
    int                        rdma_write;     /**< UCS_YES/NO/TRY */
    unsigned                   max_rd_atomic;  /**< initiator depth */
    int                        gid_index;      /**< -1 automatic choice */
    size_t                     path_mtu;       /**< 0 (auto) or bytes */
    unsigned                   timeout;        /**< ACK timeout exponent */
    unsigned                   retry_count;    /**< transport retries */
    unsigned                   rnr_retry;      /**< RNR retries (7 = inf) */
    double                     conn_timeout;   /**< seconds */
    double                     conn_retry;     /**< seconds */
    unsigned                   conn_pending_max; /**< unconfirmed chans */
    double                     keepalive;      /**< seconds, 0 off */
    int                        idle_wait;      /**< UCS_AUTO: PVRDMA only */
    double                     idle_spin;      /**< seconds (idle wait) */
    double                     idle_poll_interval; /**< seconds, 0 off */
    unsigned                   idle_poll_scale; /**< x an empty poll, 0 off */
    unsigned                   idle_spin_scale; /**< spin pace, x an empty poll */
    int                        idle_spin_adapt; /**< the pace follows the finds */
    unsigned                   ud_rx_len;      /**< UD receives */
    size_t                     max_get_zcopy;  /**< largest single READ */
    size_t                     max_put_zcopy;  /**< largest single WRITE */
    int                        credit_imm;     /**< credits in AM immediates */
    int                        tx_coalesce;    /**< sends of a progress turn
                                                    as one WR list */
    unsigned long              max_connections; /**< eps with an RC QP at
                                                     once (ULUNITS: auto,
                                                     inf) */
    uct_iface_mpool_config_t   tx_mp;          /**< send buffers */
    uct_iface_mpool_config_t   rx_mp;          /**< receive buffers */
} uct_pvrdma_iface_config_t;


typedef struct uct_pvrdma_iface  uct_pvrdma_iface_t;
typedef struct uct_pvrdma_ep     uct_pvrdma_ep_t;
typedef struct uct_pvrdma_chan   uct_pvrdma_chan_t;


/** Which kind of QP a completion belongs to. */
typedef enum {
    UCT_PVRDMA_QP_EP,       /**< active side of a connection (uct_ep) */
    UCT_PVRDMA_QP_CHAN      /**< passive side (receives AMs) */
} uct_pvrdma_qp_kind_t;


/**
 * Send-queue bookkeeping shared by eps and passive channels.  WRs get
 * sequence numbers; a signalled WR carries its number in wr_id.
 */
typedef struct uct_pvrdma_txq {
    struct ibv_qp              *qp;
    uct_pvrdma_qp_kind_t       kind;
    uint16_t                   avail;       /**< free send WQEs */
    uint16_t                   moderation;  /**< signal every N WRs */
    uint16_t                   unsignaled;  /**< WRs since the last signal */
    uint16_t                   signaled;    /**< signalled WRs in flight */
    uint64_t                   posted_sn;   /**< last posted WR */
    uint64_t                   acked_sn;    /**< last retired WR */
    ucs_list_link_t            hash_link;   /**< iface qp lookup bucket */
} uct_pvrdma_txq_t;


/** SGEs an AM may have to wait in a batch (PVRDMA's max_sge is 4); one
 *  with more is posted at once. */
#define UCT_PVRDMA_BATCH_SGE       4
/** AMs an ep holds for one WR list at most: one more posts them. */
#define UCT_PVRDMA_BATCH_MAX       32


/** Send descriptor: bounce buffer and/or completion to fire. */
typedef struct uct_pvrdma_tx_desc {
    ucs_queue_elem_t           queue;       /**< in ep->outstanding */
    uint64_t                   sn;          /**< retired with this WR */
    uct_completion_t           *comp;       /**< user completion, or NULL */
    uct_unpack_callback_t      unpack_cb;   /**< get_bcopy only */
    void                       *unpack_arg;
    uint32_t                   length;      /**< get_bcopy length */
    uint32_t                   lkey;        /**< of the buffer below */
    /* an AM waiting in its ep's batch (pvrdma_tx_batch.c): its WR, linked
     * to the next one's, and its SGEs */
    struct ibv_send_wr         wr;
    struct ibv_sge             sge[UCT_PVRDMA_BATCH_SGE];
    /* payload follows */
} uct_pvrdma_tx_desc_t;


/** Receive descriptor (header precedes user headroom and payload). */
typedef struct uct_pvrdma_rx_desc {
    uct_pvrdma_chan_t          *chan;       /**< channel it is posted to,
                                                 NULL when not posted */
    ucs_list_link_t            list;        /**< in chan->rx_descs while
                                                 posted: a destroyed QP's
                                                 flushes may never reach
                                                 the CQ, so the channel
                                                 returns them itself */
    uint32_t                   lkey;
} uct_pvrdma_rx_desc_t;


/**
 * Fewest receives a channel is given when the CQ is short: below this the
 * credit batches (3/4 of the queue) get so small that every few messages
 * cost a credit return.  The credit protocol itself needs 2 (one reserved
 * credit, and a send/recv-only batch of ceil(len / CREDIT_RX_LEN) <= len-1).
 */
#define UCT_PVRDMA_RX_MIN          8

/** A new channel takes at most 1/this of the CQ entries still free for
 *  receives (or 1/(2 x the job's peers not yet connected) when that is
 *  more, uct_pvrdma_chan_rx_share): the budget then shrinks geometrically
 *  and lasts for about
 *  DIV * (1 + ln(free / (DIV * RX_MIN))) more peers instead of
 *  free / RX_QUEUE_LEN.  Simulated with the defaults (one ep and one
 *  channel per peer): QEMU's 4096-entry CQ, send/recv only: 188 peers
 *  (the first get 38 receives); a real ESXi device with CQ_LEN 65536: 1221
 *  peers, the first 923 with all 64 receives; 96 is the smallest divisor
 *  that gets QEMU's model past the paper's 159 peers. */
#define UCT_PVRDMA_RX_SHARE_DIV    96


/**
 * Receives reposted (and credits returned) per batch for a receive queue of
 * @p queue_len: RX_BATCH, but at most three quarters of the queue, so the
 * peer still has a quarter of its credits while a return travels.  Not half:
 * a queue the CQ share shortened (QEMU's model: 38 of 64) then kept batches
 * of 19, and a 1 MiB message cost 8.5 send doorbells on each side (7.0 with
 * batches of 28; nested tier, issue 38); full queues (64) keep RX_BATCH's 32.
 */
static inline unsigned uct_pvrdma_rx_batch(unsigned rx_batch,
                                           unsigned queue_len)
{
    /* the quarter rounded up: at least one credit stays with the peer,
     * which the credit protocol needs (its reserved credit) */
    return ucs_max(1, ucs_min(rx_batch, queue_len - (queue_len + 3) / 4));
}


/** Registered 8-byte credit counters, handed out one per ep. */
typedef struct uct_pvrdma_slot_chunk {
    ucs_list_link_t            list;
    struct ibv_mr              *mr;
    uint64_t                   used;        /**< bitmap of slots in use */
    volatile uint64_t          slots[64];   /**< written by peers */
} uct_pvrdma_slot_chunk_t;


/**
 * Connection-protocol state of an ep.  The order matters: an ep can send
 * AMs (and GETs) when state >= CONNECTED_SR and PUTs only when state ==
 * CONNECTED, so each hot path still tests one comparison.  CLOSED and
 * CLOSING are the connection budget's (pvrdma_budget.c): an ep without an
 * RC QP, reopened by its next send, and one whose close waits for the
 * peer's agreement.
 */
typedef enum {
    UCT_PVRDMA_EP_CONNECTING,
    UCT_PVRDMA_EP_FAILED,
    UCT_PVRDMA_EP_CLOSED,        /**< no QP (budget): the next send reopens */
    UCT_PVRDMA_EP_CLOSING,       /**< CLOSE sent, waiting for the answer */
    UCT_PVRDMA_EP_CONNECTED_SR,  /**< connected, send/recv only (no PUT) */
    UCT_PVRDMA_EP_CONNECTED      /**< connected, RDMA WRITE usable */
} uct_pvrdma_ep_state_t;


/**
 * Receives an ep keeps posted for credit messages on a send/recv-only
 * connection.  Sent in the CONN_REQ; the channel sizes its credit batches
 * from it (see pvrdma_chan.c).
 */
#define UCT_PVRDMA_CREDIT_RX_LEN   4

/** wr_id tag of those receives (rx descriptors are at least 8-aligned). */
#define UCT_PVRDMA_CREDIT_RX_TAG   1ul
/** ... and all of their wr_id: the high bit tells them from the ep's send
 *  sequence numbers in flush completions, whose opcode is not valid. */
#define UCT_PVRDMA_CREDIT_RX_WRID  (UCS_BIT(63) | UCT_PVRDMA_CREDIT_RX_TAG)


/**
 * Header in front of every AM an iface without RDMA WRITE sends (plain
 * SEND, no immediate data: QEMU's device model drops immediates).
 */
typedef struct uct_pvrdma_am_hdr {
    uint8_t                    am_id;
    uint8_t                    magic;       /**< UCT_PVRDMA_AM_HDR_MAGIC */
    uint8_t                    reserved[2]; /**< keeps the payload aligned */
    uint32_t                   credit_imm;  /**< what the immediate data
                                                 would carry (network order):
                                                 credits for the reverse
                                                 connection and the ep tag
                                                 (pvrdma_credit_imm.c), or
                                                 the AM id alone */
} UCS_S_PACKED uct_pvrdma_am_hdr_t;

#define UCT_PVRDMA_AM_HDR_MAGIC    0xa5


/* Immediate data of an AM on a connection with RDMA WRITE: AM id, credits
 * for the reverse connection, ep tag (layout: pvrdma_common_imm_pack) */
_Static_assert(PVRDMA_COMMON_IMM_ID_MASK == UCT_AM_ID_MAX - 1,
               "the AM id field of the immediate data is UCT_AM_ID_BITS wide");


/** The active side of a connection. */
struct uct_pvrdma_ep {
    uct_base_ep_t              super;
    uct_pvrdma_txq_t           txq;
    uct_pvrdma_ep_state_t      state;
    ucs_status_t               status;      /**< error when FAILED */
    int                        fence;       /**< next WR gets IBV_SEND_FENCE */
    ucs_queue_head_t           outstanding; /**< tx descs by sn */
    ucs_queue_head_t           pending;     /**< uct_pending_req_t */
    int                        dispatching; /**< a pending request's callback
                                                 runs: it may send (see
                                                 uct_pvrdma_ep_check_tx_op) */
    ucs_list_link_t            list;        /**< iface->eps */
    ucs_list_link_t            pending_link;/**< iface->pending_eps */
    int                        in_pending_list;

    /* flow control */
    struct pvrdma_common_credits credits;
    uct_pvrdma_slot_chunk_t    *slot_chunk;
    unsigned                   slot_index;
    uint64_t                   credits_seen; /**< cumulative value consumed */

    /* keepalive and stall kick (pvrdma_stall.c; timing: common/pvrdma_watch.h,
     * in UCS ticks) */
    struct pvrdma_common_watch alive;       /**< on acked_sn + credits_seen */
    struct pvrdma_common_watch kick;        /**< on acked_sn, while a
                                                 signalled WR waits */
    const char                 *fail_why;   /**< completion status of the
                                                 failure, for its message */

    /* send/recv-only connection: credit messages land in these slots */
    struct {
        uct_pvrdma_slot_chunk_t *chunk;
        unsigned               index;
    }                          credit_rx[UCT_PVRDMA_CREDIT_RX_LEN];
    unsigned                   credit_rx_len; /**< 0: credits by WRITE */

    /* credits in AM immediates (pvrdma_credit_imm.c) */
    uint16_t                   credit_tag;  /**< peers name this ep by it */
    int                        has_credit_tag;
    uct_pvrdma_chan_t          *rev_chan;   /**< its credits ride our AMs */

    /* AMs that go as one WR list at the end of the progress turn
     * (pvrdma_tx_batch.c) */
    struct {
        uct_pvrdma_tx_desc_t   *head;
        uct_pvrdma_tx_desc_t   *tail;
        unsigned               len;
        ucs_list_link_t        link;        /**< iface->tx_batch.eps while
                                                 len > 0 */
        unsigned               turn;        /**< iface->tx_batch.turn of
                                                 the last WR posted at once */
    }                          batch;

    /* the connection budget (pvrdma_budget.c) */
    struct {
        uint64_t               am_sent;     /**< AMs posted on this QP: the
                                                 peer's channel must have
                                                 received as many to agree
                                                 to a close */
        uint64_t               lru_sn;      /**< posted_sn when last looked */
        ucs_time_t             lru_time;    /**< ... and when it changed */
        ucs_time_t             refused;     /**< the peer's last CLOSE_NAK */
        ucs_time_t             wait_since;  /**< waiting for a slot */
        ucs_time_t             next_retry;  /**< CLOSE resent at */
        ucs_time_t             deadline;    /**< ... given up at */
        uint32_t               attempt;     /**< of the CLOSE open */
        unsigned               opens;       /**< QPs it had: > 0, a reopen */
        int                    closing_sr;  /**< state to go back to on a
                                                 refusal: CONNECTED_SR */
        int                    waiting;     /**< on iface->budget.waiting */
        ucs_list_link_t        wait_link;
    }                          budget;

    /* remote side */
    uint64_t                   flush_addr;  /**< peer scratch word */
    uint32_t                   flush_rkey;

    /* connection establishment */
    uint64_t                   conn_id;
    union ibv_gid              peer_gid;
    uint16_t                   peer_lid;
    uint32_t                   peer_ud_qpn;
    uint8_t                    peer_secret[PVRDMA_COMMON_UD_SECRET_LEN]; /**< iface addr */
    struct ibv_ah              *ah;         /**< to the peer's UD QP */
    uint32_t                   psn;
    ucs_time_t                 next_retry;
    ucs_time_t                 deadline;
    unsigned                   busy_answers; /**< BUSY of this connect */
};


/** The passive side of a connection: receives AMs from one peer ep. */
struct uct_pvrdma_chan {
    uct_pvrdma_txq_t           txq;         /**< credit returns only */
    uct_pvrdma_iface_t         *iface;
    ucs_list_link_t            list;        /**< iface->chans */
    unsigned                   rx_posted;   /**< receives in the QP */
    unsigned                   rx_len;      /**< receives it keeps posted
                                                 (<= RX_QUEUE_LEN, see
                                                 UCT_PVRDMA_RX_SHARE_DIV);
                                                 granted to the peer */
    unsigned                   rx_batch;    /**< repost/credit batch */
    ucs_list_link_t            rx_descs;    /**< posted uct_pvrdma_rx_desc_t */
    int                        rx_short;    /**< in iface->rx_short_chans */
    ucs_list_link_t            rx_short_link;
    struct pvrdma_common_credits credits;   /**< receiver role */
    uct_pvrdma_slot_chunk_t    *src_chunk;  /**< holds the total returned */
    unsigned                   src_index;
    uint64_t                   credit_addr; /**< peer ep's slot */
    uint32_t                   credit_rkey;
    /* send/recv-only connection */
    int                        send_credits;    /**< return credits by SEND */
    int                        credit_inflight; /**< a credit SEND posted */
    unsigned                   rx_hdr_len;  /**< AM header in front (0/8) */
    size_t                     rx_offset;   /**< receive start in a desc */
    unsigned                   rx_length;   /**< receive length */
    /* credits in AM immediates (pvrdma_credit_imm.c) */
    int                        peer_has_tag; /**< peer ep gave a tag */
    uint16_t                   peer_ep_tag;
    uct_pvrdma_ep_t            *rev_ep;     /**< our AMs carry our credits */
    int                        credits_deferred; /**< in deferred_chans */
    ucs_list_link_t            deferred_link;
    /* identity, for duplicate requests */
    union ibv_gid              peer_gid;
    uint32_t                   peer_ud_qpn;
    uint64_t                   conn_id;
    uint16_t                   peer_lid;
    uint8_t                    rep[128];    /**< reply, resent on dup REQ */
    unsigned                   rep_len;
    /* until the requester confirms (RTU, or anything received on the QP):
     * the reply is resent every CONN_RETRY, and the channel is closed
     * after CONN_TIMEOUT (pvrdma_conn.c) */
    int                        unconfirmed;
    ucs_time_t                 deadline;
    ucs_time_t                 next_rep;
    /* keepalive (pvrdma_stall.c): a confirmed channel whose peer ep sent
     * nothing for KEEPALIVE is probed, so that a peer that died or
     * destroyed its ep without a DISC getting through frees it */
    uint64_t                   rx_total;    /**< receives completed */
    uint32_t                   close_refused; /**< the last close attempt of
                                                   the peer ep we refused:
                                                   its late copies are
                                                   refused too
                                                   (pvrdma_budget.c) */
    struct pvrdma_common_watch alive;       /**< on rx_total */
};


/** Cached address handle to a peer's UD QP. */
typedef struct uct_pvrdma_ah {
    ucs_list_link_t            list;
    union ibv_gid              gid;
    uint16_t                   lid;
    struct ibv_ah              *ah;
} uct_pvrdma_ah_t;


/** A disconnect of a destroyed ep, resent until the peer's iface
 *  acknowledges it (DACK) or CONN_TIMEOUT passes (pvrdma_conn.c): a lost
 *  DISC would leave the peer's passive channel (RC QP, receives, CQ
 *  budget) open until its iface closes. */
typedef struct uct_pvrdma_disc {
    ucs_list_link_t            list;
    union ibv_gid              peer_gid;
    uint32_t                   peer_ud_qpn;
    uint8_t                    peer_secret[PVRDMA_COMMON_UD_SECRET_LEN];
    struct ibv_ah              *ah;        /**< from the AH cache */
    uint64_t                   conn_id;
    uint32_t                   qpn;        /**< the destroyed ep's RC QP */
    uint32_t                   psn;
    ucs_time_t                 next_retry;
    ucs_time_t                 deadline;
} uct_pvrdma_disc_t;


/** An iface's eps by credit tag. */
KHASH_MAP_INIT_INT(uct_pvrdma_ep_tags, uct_pvrdma_ep_t*)


#define UCT_PVRDMA_QP_HASH_SIZE  64
/** Arm the CQ once the idle wait has backed off this long (as the BTL's
 *  btl_pvrdma_idle_arm; common/cq_notify.c says why not at once). */
#define UCT_PVRDMA_ARM_AFTER_US 10000


/*
 * The iface's state, a group per concern.  The iface is not zeroed
 * (UCS_CLASS_NEW mallocs it), so its class init resets each group whole
 * with the group's own init (memset): a field added to a group is reset
 * with it.  Configuration and resources (md, port, profile, config, QPs,
 * CQ, pools, lists) stay in the iface itself and are set up by its init.
 */

/** CQ entry accounting (see "Completions" above): what the CQ's entries
 *  are reserved for, so that it never overflows.  Reset by
 *  uct_pvrdma_iface_cq_acct_init; budget is then set from the CQ's depth
 *  (uct_pvrdma_iface_init_cq). */
typedef struct uct_pvrdma_iface_cq_acct {
    unsigned                   budget;      /**< CQEs not reserved for
                                                 receives or zombies: the
                                                 most send WRs in flight */
    unsigned                   tx_outstanding; /**< send WRs posted, not
                                                    retired (also the
                                                    unsignalled ones) */
    unsigned                   tx_signaled; /**< signalled WRs in flight */
    unsigned                   tx_awaited;  /**< tx descs in flight whose completion
                                                 UCT's user waits for (a uct_completion_t,
                                                 a get_bcopy unpack): only these keep
                                                 a waiting worker polling */
    unsigned                   rx_reserved; /**< CQEs reserved for receives */
    unsigned                   zombie_new;  /**< CQEs of QPs destroyed since
                                                 the current poll began */
    unsigned                   zombie_wait; /**< ... before the wait began:
                                                 free once a poll drains the
                                                 CQ or zombie_left more
                                                 entries are polled */
    unsigned                   zombie_left; /**< entries to poll before the
                                                 zombie_wait ones surely were */
    unsigned                   zombie_counted; /**< waits that ended by that
                                                    count (the CQ never
                                                    drained) */
    unsigned                   held;        /**< of budget, kept from new
                                                 sends for a connection
                                                 request that waits for CQ
                                                 entries (pvrdma_chan.c) */
} uct_pvrdma_iface_cq_acct_t;

/** CQ events (see the end of "Completions" above): the armed wait both
 *  plugins share (common/cq_notify.c: the completion channel, the CQ's arm
 *  state, the safety poll) and this transport's count of empty polls, its
 *  other reason to arm (pvrdma_progress.c).  Reset by
 *  uct_pvrdma_iface_notify_init; the channel is created with the CQ
 *  (uct_pvrdma_iface_init_cq) and destroyed by
 *  uct_pvrdma_iface_notify_cleanup. */
typedef struct uct_pvrdma_iface_notify {
    struct pvrdma_common_cq_notify cq;
    unsigned                   empty_polls;
} uct_pvrdma_iface_notify_t;

/** Connections (pvrdma_conn.c, pvrdma_conn_passive.c, pvrdma_chan.c): what
 *  is being connected and disconnected, and what became of it.  Reset by
 *  uct_pvrdma_iface_conn_init. */
typedef struct uct_pvrdma_iface_conn {
    unsigned                   num_connecting;  /**< eps in CONNECTING */
    unsigned                   num_unconfirmed; /**< chans not confirmed */
    unsigned                   num_chans;       /**< on the iface's chans */
    unsigned                   job_peers;       /**< peers in the job, as the
                                                     launcher says; 0: unknown
                                                     (uct_pvrdma_chan_rx_share) */
    const char                *job_peers_src;   /**< the variable that said
                                                     it (the plan line) */
    unsigned                   num_discs;       /**< on the iface's discs */
    uint64_t                   discs_acked;
    uint64_t                   discs_expired;   /**< no DACK in CONN_TIMEOUT */
    uint64_t                   chans_reaped;    /**< closed unconfirmed */
    uint64_t                   reqs_capped;     /**< requests dropped at
                                                     CONN_PENDING_MAX */
    uint64_t                   reqs_busy;       /**< requests answered BUSY
                                                     (no CQ entries now) */
    uint64_t                   busy_heard;      /**< BUSY answers to ours */
    uint64_t                   seq;             /**< an ep's connection id
                                                     is iface_uuid + ++seq */
} uct_pvrdma_iface_conn_t;

/** The connection budget (pvrdma_budget.c): at most max eps hold an RC QP;
 *  the least recently used idle one is closed, with its peer's agreement,
 *  for an ep that needs one.  Reset by uct_pvrdma_iface_budget_init. */
typedef struct uct_pvrdma_iface_budget {
    unsigned                   max;         /**< UCX_PVRDMA_MAX_CONNECTIONS */
    char                       why[128];    /**< how max was chosen (the
                                                 plan line says it) */
    unsigned                   held;        /**< eps holding an RC QP */
    unsigned                   held_max;    /**< most at once */
    unsigned                   closing;     /**< eps in CLOSING */
    unsigned                   num_waiting; /**< on the waiting list */
    ucs_list_link_t            waiting;     /**< eps waiting for a slot */
    uint32_t                   attempt;     /**< last CLOSE attempt number */
    ucs_time_t                 next_look;   /**< over the budget: next look
                                                 for an idle ep to close */
    uint64_t                   closes;      /**< closed by agreement */
    uint64_t                   reopens;     /**< closed eps connected again */
    uint64_t                   refusals;    /**< CLOSE_NAKs received */
    uint64_t                   overruns;    /**< connected over the budget:
                                                 no slot within CONN_TIMEOUT */
    uint64_t                   close_timeouts; /**< CLOSEs never answered */
    uint64_t                   agreed;      /**< peers' CLOSEs we agreed to */
    uint64_t                   declined;    /**< ... we refused */
} uct_pvrdma_iface_budget_t;

/** Credit tags (pvrdma_credit_imm.c): the eps by the tag peers name them
 *  by.  Set up by uct_pvrdma_iface_ep_tags_init, freed by
 *  uct_pvrdma_iface_ep_tags_cleanup. */
typedef struct uct_pvrdma_iface_ep_tags {
    khash_t(uct_pvrdma_ep_tags) map;
    uint16_t                   next;        /**< the next tag to try */
} uct_pvrdma_iface_ep_tags_t;

/** The stall watch and the keepalive (pvrdma_stall.c).  Reset by
 *  uct_pvrdma_iface_watch_init. */
typedef struct uct_pvrdma_iface_watch {
    ucs_time_t                 stall_since;    /**< 0, or when progress
                                                    began to find nothing
                                                    while work waits */
    int                        stall_reported; /**< once per stall */
    unsigned                   stall_kicks;    /**< in this stall */
    unsigned                   calls;          /**< progress calls since the
                                                    keepalive read the clock */
    ucs_time_t                 next;           /**< its next look */
    uint64_t                   keepalives;     /**< probes posted */
} uct_pvrdma_iface_watch_t;

/** Use of the buffer pools (rx_mp, tx_mp; made in pvrdma_iface_init.c).
 *  Reset by uct_pvrdma_iface_bufs_init. */
typedef struct uct_pvrdma_iface_bufs {
    unsigned                   rx_descs_inuse;  /**< taken from rx_mp */
    int                        tx_mp_exhausted; /**< a get found tx_mp empty
                                                     and it could not grow */
} uct_pvrdma_iface_bufs_t;

/* What this iface did, printed at close (pvrdma_iface_report.c; reset by
 * uct_pvrdma_iface_op_count_init).  The bed tests prove from the counts in
 * "iface %p ops: ..." which mode a run used (GET by RDMA READ or not, PUT
 * by RDMA WRITE or send/recv only, CQ armed or polled), so they count WRs
 * posted and events taken, not calls.  Plain increments: an iface is
 * driven by one thread (multi-threaded workers are refused in the iface
 * constructor). */
typedef struct uct_pvrdma_iface_op_count {
    uint64_t                   rdma_reads;     /**< READ WRs (get_bcopy/zcopy) */
    uint64_t                   rdma_read_max;  /**< bytes of the largest one */
    uint64_t                   rdma_writes;    /**< WRITE WRs of user data
                                                    (put_short/bcopy/zcopy);
                                                    not credit or flush WRITEs */
    uint64_t                   rdma_write_max; /**< bytes of the largest one */
    /* the CQ budget at work (UCX_PVRDMA_CQ_LEN), printed at close */
    uint64_t                   cq_full;        /**< sends refused because
                                                    the CQ budget was full */
    uint64_t                   forced_signals; /**< WRs signalled because
                                                    they took the last free
                                                    CQ entry */
    unsigned                   tx_outstanding_max;
    unsigned                   rx_len_min;     /**< smallest chan queue */
    uint64_t                   tx_mp_empty;    /**< gets that found tx_mp
                                                    empty and not growing */
    /* which way credits went */
    uint64_t                   credits_by_imm; /**< returned in AM imms */
    uint64_t                   credits_by_msg; /**< by WRITE or SEND */
    /* send doorbells (issue 38) */
    uint64_t                   tx_posts;       /**< ibv_post_send on RC QPs */
    uint64_t                   tx_wrs;         /**< WRs they carried */
    uint64_t                   cq_polls;       /**< ibv_poll_cq calls on the CQ */
    uint64_t                   tx_counted;     /**< WRs counted as posted (also
                                                    those waiting in a batch) */
} uct_pvrdma_iface_op_count_t;


struct uct_pvrdma_iface {
    uct_base_iface_t           super;
    uct_pvrdma_md_t            *md;
    uint8_t                    port_num;
    struct ibv_port_attr       port_attr;
    struct pvrdma_common_profile    profile;
    struct pvrdma_common_gid_entry  gid;
    struct pvrdma_common_qp_params  qp_params;
    struct pvrdma_common_addr_info  dev_info;  /**< local device address */
    uint64_t                   iface_uuid;

    struct ibv_cq              *cq;
    uct_pvrdma_iface_notify_t  notify;      /**< CQ events */
    uct_pvrdma_iface_cq_acct_t cq_acct;     /**< CQ entries */
    ucs_list_link_t            rx_short_chans; /**< refill failed: retried
                                                    from progress */

    /* UD connection QP */
    struct {
        struct pvrdma_common_ud dgram;      /**< QP, slots, checks (common/ud.c) */
        unsigned               rx_len;      /**< receive buffers */
        ucs_list_link_t        ahs;         /**< uct_pvrdma_ah_t cache */
        uint64_t               tx_full;     /**< messages not sent: every
                                                 send slot was busy */
        ucs_time_t             tx_done_at;  /**< last send completion */
    } ud;

    ucs_mpool_t                tx_mp;
    ucs_mpool_t                rx_mp;
    uct_pvrdma_iface_bufs_t    bufs;
    uct_recv_desc_t            release_desc;
    size_t                     rx_payload_offset; /**< from rx desc */
    size_t                     rx_headroom_offset;

    ucs_list_link_t            qp_hash[UCT_PVRDMA_QP_HASH_SIZE];
    ucs_list_link_t            eps;
    ucs_list_link_t            chans;
    ucs_list_link_t            discs;       /**< uct_pvrdma_disc_t */
    ucs_list_link_t            pending_eps;
    ucs_list_link_t            slot_chunks;
    ucs_list_link_t            deferred_chans; /**< owe a credit WRITE */
    uct_pvrdma_iface_ep_tags_t ep_tags;
    uct_pvrdma_iface_conn_t    conn;
    uct_pvrdma_iface_budget_t  budget;      /**< connection (QP) budget */
    uct_pvrdma_iface_op_count_t op_count;
    /** Send coalescing (UCX_PVRDMA_TX_COALESCE, pvrdma_tx_batch.c) */
    struct {
        ucs_list_link_t        eps;         /**< eps with a batch */
        unsigned               turn;        /**< progress calls so far */
        unsigned               flush_turn;  /**< turn in which a flush without a
                                                 completion last returned INPROGRESS
                                                 (its caller polls: keep polling) */
        int                    in_progress; /**< completions or pending
                                                 requests are being handled:
                                                 their AMs wait for the
                                                 turn's WR lists */
    }                          tx_batch;

    /** bounded idle wait (common/idle_wait.c): a worker that only waits
     *  for messages polls the CQ at most once per IDLE_POLL_INTERVAL */
    struct pvrdma_common_idle_wait idle;
    uct_pvrdma_iface_watch_t   watch;       /**< stall watch, keepalive */
    /* the port's retry counters when opened: the difference is printed at
     * close (device-wide; tells a lost packet from a slow one) */
    struct pvrdma_common_retry_counters retries_at_open;
    volatile uint64_t          *scratch;    /**< target of flush writes */
    struct ibv_mr              *scratch_mr;
    int                        rdma_write_ok; /**< 0: send-only iface */

    struct {
        size_t                 seg_size;
        unsigned               tx_queue_len;
        unsigned               rx_queue_len;
        unsigned               rx_batch;
        unsigned               tx_moderation;
        unsigned               tx_max_sge;
        unsigned               max_inline;  /**< inline bytes; 0 on PVRDMA */
        unsigned               poll_batch;
        unsigned               idle_polls;
        size_t                 max_put_zcopy;
        size_t                 max_get_zcopy;
        ucs_time_t             conn_timeout;
        ucs_time_t             conn_retry;
        unsigned               conn_pending_max;
        ucs_time_t             keepalive;   /**< 0: off */
        int                    credit_imm;
        int                    tx_coalesce;
    } config;
};


/* pvrdma_md.c */
ucs_status_t uct_pvrdma_query_tl_devices(uct_md_h md,
                                         uct_tl_device_resource_t **devices_p,
                                         unsigned *num_devices_p);

/* pvrdma_iface.c */
uint32_t uct_pvrdma_iface_addr_qpn(const uct_iface_addr_t *addr);
void uct_pvrdma_iface_addr_secret(const uct_iface_addr_t *addr, uint8_t *secret);
int uct_pvrdma_dev_addr_unpack(const uct_device_addr_t *addr,
                               struct pvrdma_common_addr_info *info);

/* pvrdma_iface_report.c */
void uct_pvrdma_iface_op_count_init(uct_pvrdma_iface_op_count_t *op_count);
void uct_pvrdma_iface_report_close(uct_pvrdma_iface_t *iface,
                                   unsigned chans_open);
void uct_pvrdma_iface_print_cost(uct_pvrdma_iface_t *iface, const char *why,
                                 const uct_pvrdma_chan_t *chan);
void uct_pvrdma_iface_report_chan_close(uct_pvrdma_iface_t *iface);
void uct_pvrdma_iface_report_plan(uct_pvrdma_iface_t *iface);

/* pvrdma_iface_init.c */
void uct_pvrdma_iface_cq_acct_init(uct_pvrdma_iface_cq_acct_t *acct);
void uct_pvrdma_iface_notify_init(uct_pvrdma_iface_notify_t *notify);
void uct_pvrdma_iface_notify_cleanup(uct_pvrdma_iface_notify_t *notify);
void uct_pvrdma_iface_bufs_init(uct_pvrdma_iface_bufs_t *bufs);
ucs_status_t uct_pvrdma_iface_create_rc_qp(uct_pvrdma_iface_t *iface,
                                           unsigned max_recv_wr,
                                           struct ibv_qp **qp_p);

/* pvrdma_progress.c */
void uct_pvrdma_iface_qp_add(uct_pvrdma_iface_t *iface, uct_pvrdma_txq_t *txq);
void uct_pvrdma_iface_qp_remove(uct_pvrdma_iface_t *iface,
                                uct_pvrdma_txq_t *txq);
ucs_status_t uct_pvrdma_wc_to_status(enum ibv_wc_status wc_status);
void uct_pvrdma_iface_zombie_add(uct_pvrdma_iface_t *iface, unsigned count);
void uct_pvrdma_iface_wakeup_poll(uct_pvrdma_iface_t *iface);
void uct_pvrdma_iface_progress_pending(uct_pvrdma_iface_t *iface);

/* pvrdma_tx_batch.c */
void uct_pvrdma_iface_tx_batch_init(uct_pvrdma_iface_t *iface);
void uct_pvrdma_ep_batch_add(uct_pvrdma_iface_t *iface, uct_pvrdma_ep_t *ep,
                             const struct ibv_send_wr *wr,
                             uct_pvrdma_tx_desc_t *desc, int signal);
void uct_pvrdma_ep_batch_post(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_batch_drop(uct_pvrdma_ep_t *ep);
void uct_pvrdma_iface_batches_post(uct_pvrdma_iface_t *iface);

/* pvrdma_ep.c */
int uct_pvrdma_ep_probe(uct_pvrdma_ep_t *ep, ucs_time_t now);
ucs_status_t uct_pvrdma_ep_open_qp(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_close_qp(uct_pvrdma_ep_t *ep);
int uct_pvrdma_ep_retire(uct_pvrdma_ep_t *ep);
UCS_CLASS_DECLARE_NEW_FUNC(uct_pvrdma_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_pvrdma_ep_t, uct_ep_t);
ucs_status_t uct_pvrdma_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                 uct_completion_t *comp);
ucs_status_t uct_pvrdma_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t uct_pvrdma_ep_check(uct_ep_h tl_ep, unsigned flags,
                                 uct_completion_t *comp);
ucs_status_t uct_pvrdma_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                       unsigned flags);
void uct_pvrdma_ep_pending_purge(uct_ep_h tl_ep,
                                 uct_pending_purge_callback_t cb, void *arg);
void uct_pvrdma_ep_send_completion(uct_pvrdma_ep_t *ep, uint64_t sn);
void uct_pvrdma_ep_set_failed(uct_pvrdma_ep_t *ep, ucs_status_t status);
void uct_pvrdma_ep_dispatch_pending(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_schedule_pending(uct_pvrdma_ep_t *ep);
int uct_pvrdma_ep_has_resources(uct_pvrdma_ep_t *ep);
unsigned uct_pvrdma_ep_retire_all_unsignaled(uct_pvrdma_iface_t *iface);
int uct_pvrdma_ep_kick(uct_pvrdma_ep_t *ep);

/* pvrdma_am.c */
ucs_status_t uct_pvrdma_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t hdr,
                                    const void *payload, unsigned length);
ssize_t uct_pvrdma_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                               uct_pack_callback_t pack_cb, void *arg,
                               unsigned flags);
ucs_status_t uct_pvrdma_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                    const void *header, unsigned header_length,
                                    const uct_iov_t *iov, size_t iovcnt,
                                    unsigned flags, uct_completion_t *comp);
/* the same for a send/recv-only iface (uct_pvrdma_iface_use_sr_ops) */
ucs_status_t uct_pvrdma_ep_am_short_sr(uct_ep_h tl_ep, uint8_t id,
                                       uint64_t hdr, const void *payload,
                                       unsigned length);
ssize_t uct_pvrdma_ep_am_bcopy_sr(uct_ep_h tl_ep, uint8_t id,
                                  uct_pack_callback_t pack_cb, void *arg,
                                  unsigned flags);
ucs_status_t uct_pvrdma_ep_am_zcopy_sr(uct_ep_h tl_ep, uint8_t id,
                                       const void *header,
                                       unsigned header_length,
                                       const uct_iov_t *iov, size_t iovcnt,
                                       unsigned flags, uct_completion_t *comp);

/* pvrdma_rma.c */
ucs_status_t uct_pvrdma_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                     unsigned length, uint64_t remote_addr,
                                     uct_rkey_t rkey);
ssize_t uct_pvrdma_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                void *arg, uint64_t remote_addr,
                                uct_rkey_t rkey);
ucs_status_t uct_pvrdma_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_pvrdma_ep_get_bcopy(uct_ep_h tl_ep,
                                     uct_unpack_callback_t unpack_cb,
                                     void *arg, size_t length,
                                     uint64_t remote_addr, uct_rkey_t rkey,
                                     uct_completion_t *comp);
ucs_status_t uct_pvrdma_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                     size_t iovcnt, uint64_t remote_addr,
                                     uct_rkey_t rkey, uct_completion_t *comp);

/* pvrdma_sr.c (the send/recv-only mode: QEMU's device model only) */
uint32_t uct_pvrdma_chan_am_hdr(uct_pvrdma_chan_t *chan,
                                const struct ibv_wc *wc, const void *data,
                                uint32_t *length_p);
void uct_pvrdma_iface_use_sr_ops(uct_pvrdma_iface_t *iface);
void uct_pvrdma_chan_send_credits(uct_pvrdma_chan_t *chan,
                                  struct ibv_send_wr *wr, uint32_t count);
ucs_status_t uct_pvrdma_ep_start_send_credits(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_handle_credit_rx(uct_pvrdma_ep_t *ep, struct ibv_wc *wc);

/* pvrdma_ud.c */
ucs_status_t uct_pvrdma_ud_init(uct_pvrdma_iface_t *iface);
void uct_pvrdma_ud_cleanup(uct_pvrdma_iface_t *iface);
void uct_pvrdma_ud_recover(uct_pvrdma_iface_t *iface, int drained);
struct ibv_ah *uct_pvrdma_ud_get_ah(uct_pvrdma_iface_t *iface,
                                    const union ibv_gid *gid, uint16_t lid);
void uct_pvrdma_ud_send(uct_pvrdma_iface_t *iface, struct ibv_ah *ah,
                        uint32_t dest_qpn, const uint8_t *key,
                        enum pvrdma_common_ud_keyed keyed, const void *msg);

/* pvrdma_conn.c */
void uct_pvrdma_iface_conn_init(uct_pvrdma_iface_conn_t *conn);
void uct_pvrdma_ud_handle_wc(uct_pvrdma_iface_t *iface, struct ibv_wc *wc);
ucs_status_t uct_pvrdma_conn_start(uct_pvrdma_ep_t *ep);
void uct_pvrdma_conn_progress(uct_pvrdma_iface_t *iface);
void uct_pvrdma_conn_disconnect(uct_pvrdma_ep_t *ep);
void uct_pvrdma_conn_discs_cleanup(uct_pvrdma_iface_t *iface);

/* pvrdma_budget.c (its messages' handlers: pvrdma_conn_msg.h) */
ucs_status_t uct_pvrdma_iface_budget_init(uct_pvrdma_iface_t *iface,
                                          const uct_pvrdma_iface_config_t *config);
ucs_status_t uct_pvrdma_budget_connect(uct_pvrdma_ep_t *ep);
void uct_pvrdma_budget_progress(uct_pvrdma_iface_t *iface, ucs_time_t now,
                                int *looked);
void uct_pvrdma_budget_ep_cleanup(uct_pvrdma_ep_t *ep);
unsigned uct_pvrdma_budget_job_peers(const char **src_p);
struct pvrdma_common_counters;
void uct_pvrdma_budget_counters_add(uct_pvrdma_iface_t *iface,
                                    struct pvrdma_common_counters *c);

/* pvrdma_conn_passive.c (the rest of it: pvrdma_conn_msg.h) */
void uct_pvrdma_conn_chan_confirmed(uct_pvrdma_chan_t *chan);

/* pvrdma_chan.c */
int uct_pvrdma_chan_probe(uct_pvrdma_chan_t *chan);
/** Receives a new channel gets when @p free_rx CQ entries are free for
 *  receives and @p chans channels are open (uct_pvrdma_chan_rx_len; the
 *  plan line simulates it). */
unsigned uct_pvrdma_chan_rx_share(const uct_pvrdma_iface_t *iface,
                                  unsigned free_rx, unsigned chans);
ucs_status_t uct_pvrdma_chan_create(uct_pvrdma_iface_t *iface,
                                    const struct pvrdma_common_addr_info *peer,
                                    uint32_t local_psn, uint64_t credit_addr,
                                    uint32_t credit_rkey, int send_credits,
                                    unsigned peer_credit_rx, int rx_am_hdr,
                                    uct_pvrdma_chan_t **chan_p);
void uct_pvrdma_chan_handle_wc(uct_pvrdma_chan_t *chan, struct ibv_wc *wc,
                               int is_recv);
void uct_pvrdma_chan_destroy(uct_pvrdma_chan_t *chan);
void uct_pvrdma_chan_return_credits(uct_pvrdma_chan_t *chan, int may_defer);
void uct_pvrdma_iface_refill_short_chans(uct_pvrdma_iface_t *iface);

/* pvrdma_credit_imm.c */
void uct_pvrdma_iface_ep_tags_init(uct_pvrdma_iface_ep_tags_t *tags);
void uct_pvrdma_iface_ep_tags_cleanup(uct_pvrdma_iface_ep_tags_t *tags);
void uct_pvrdma_ep_tag_add(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_tag_remove(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_pair_chan(uct_pvrdma_ep_t *ep);
void uct_pvrdma_ep_unpair_chan(uct_pvrdma_ep_t *ep);
void uct_pvrdma_chan_pair_ep(uct_pvrdma_chan_t *chan);
void uct_pvrdma_chan_unpair_ep(uct_pvrdma_chan_t *chan);
void uct_pvrdma_chan_credit_imm_rx(uct_pvrdma_chan_t *chan, uint32_t imm);
void uct_pvrdma_chan_defer_credits(uct_pvrdma_chan_t *chan);
void uct_pvrdma_iface_return_deferred_credits(uct_pvrdma_iface_t *iface);

/* pvrdma_slot.c */
ucs_status_t uct_pvrdma_slot_get(uct_pvrdma_iface_t *iface,
                                 uct_pvrdma_slot_chunk_t **chunk_p,
                                 unsigned *index_p);
void uct_pvrdma_slot_put(uct_pvrdma_slot_chunk_t *chunk, unsigned index);
void uct_pvrdma_slots_cleanup(uct_pvrdma_iface_t *iface);

/* pvrdma_stall.c (stall report, kick, keepalive) */
void uct_pvrdma_iface_watch_init(uct_pvrdma_iface_watch_t *watch);
void uct_pvrdma_iface_stall_watch(uct_pvrdma_iface_t *iface, unsigned count);
void uct_pvrdma_iface_keepalive_watch(uct_pvrdma_iface_t *iface);

#endif
