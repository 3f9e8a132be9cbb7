/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_conn_msg.h
 * @brief The UCT "pvrdma" transport's connection messages on the wire (the
 *        protocol is described in pvrdma_conn.c; the UD QP that carries
 *        them is pvrdma_ud.c's), and what the two halves of the exchange
 *        (pvrdma_conn.c, pvrdma_conn_passive.c) share.
 */
#ifndef UCT_PVRDMA_CONN_MSG_H
#define UCT_PVRDMA_CONN_MSG_H

#include "pvrdma.h"


#define UCT_PVRDMA_UD_QKEY       0x1ee7a330u
#define UCT_PVRDMA_UD_TX_LEN     PVRDMA_COMMON_UD_TX_MAX
#define UCT_PVRDMA_CONN_VERSION  8  /* 2: ep_tag, 3: common header, 4: secrets,
                                       5: RTU, 6: DACK, 7: MACs (issue 37),
                                       8: CLOSE (issue 36) */
/* credits a peer can grant: at most a receive queue (larger is not ours) */
#define UCT_PVRDMA_CONN_CREDITS_MAX  65536u


enum {
    UCT_PVRDMA_CONN_REQ  = 1,
    UCT_PVRDMA_CONN_REP  = 2,
    UCT_PVRDMA_CONN_REJ  = 3,
    UCT_PVRDMA_CONN_DISC = 4,
    UCT_PVRDMA_CONN_RTU  = 5,
    UCT_PVRDMA_CONN_DACK = 6,
    /* the connection budget's (pvrdma_budget.c): remote_addr carries the
     * AMs the ep sent (CLOSE) or the channel received (answers), credits
     * the close attempt */
    UCT_PVRDMA_CONN_CLOSE     = 7,  /* ep -> iface: may we close? */
    UCT_PVRDMA_CONN_CLOSE_ACK = 8,  /* iface -> ep: closed here */
    UCT_PVRDMA_CONN_CLOSE_NAK = 9,  /* iface -> ep: AMs still to handle */
    /* iface -> requester: alive, but no CQ entries for the connection's
     * receives now; it answers a resent REQ once they are free (a peer
     * that predates it ignores the type) */
    UCT_PVRDMA_CONN_BUSY      = 10
};

/* BUSY answers that each restart a connecting ep's CONN_TIMEOUT, at most:
 * a peer that stays busy for longer than this many timeouts is stuck, and
 * the ep fails saying so */
#define UCT_PVRDMA_CONN_BUSY_MAX  10


/* conn_msg.flags; 0 from a peer that predates them means "WRITE works" */
#define UCT_PVRDMA_CONN_F_SEND_ONLY  UCS_BIT(0)
#define UCT_PVRDMA_CONN_F_EP_TAG     UCS_BIT(1)  /* REQ: ep_tag is valid */


typedef struct uct_pvrdma_conn_msg {
    struct pvrdma_common_ud_hdr hdr; /**< type, flags (UCT_PVRDMA_CONN_F_*);
                                          version checked by common/ud.c */
    uint32_t src_ud_qpn;
    uint64_t conn_id;
    uint8_t  addr[PVRDMA_COMMON_ADDR_WIRE_SIZE];
    uint64_t remote_addr;
    uint32_t rkey;
    uint32_t credits;
    uint16_t ep_tag;
    uint16_t reserved2;
    uint8_t  reserved3[16]; /**< zero (version 6 carried the requester's
                                 secret here, in clear) */
} UCS_S_PACKED uct_pvrdma_conn_msg_t;



/* Shared by pvrdma_conn.c (active side, dispatch) and
 * pvrdma_conn_passive.c; defined in pvrdma_conn.c */
void uct_pvrdma_conn_pack_addr(uct_pvrdma_iface_t *iface, uint32_t qpn,
                               uint32_t psn, void *wire);
void uct_pvrdma_conn_msg_init(uct_pvrdma_iface_t *iface,
                              uct_pvrdma_conn_msg_t *msg, uint8_t type,
                              uint64_t conn_id);
void uct_pvrdma_conn_reply(uct_pvrdma_iface_t *iface, struct ibv_ah *ah,
                           uint32_t dest_qpn, const void *msg);
void uct_pvrdma_conn_check_ud(uct_pvrdma_iface_t *iface, int *looked);

/* When to resend, at @p now, a connection message not answered yet whose
 * CONN_TIMEOUT ends at @p deadline (pvrdma_conn.c says why it backs off) */
ucs_time_t uct_pvrdma_conn_next_resend(const uct_pvrdma_iface_t *iface,
                                       ucs_time_t deadline, ucs_time_t now);

/* pvrdma_budget.c */
void uct_pvrdma_budget_handle_close(uct_pvrdma_iface_t *iface,
                                    const uct_pvrdma_conn_msg_t *msg,
                                    const struct pvrdma_common_addr_info *peer);
void uct_pvrdma_budget_handle_reply(uct_pvrdma_iface_t *iface,
                                    uct_pvrdma_ep_t *ep,
                                    const uct_pvrdma_conn_msg_t *msg,
                                    int agreed);

/* pvrdma_conn_passive.c */
uct_pvrdma_chan_t *
uct_pvrdma_conn_find_chan(uct_pvrdma_iface_t *iface,
                          const union ibv_gid *gid, uint32_t ud_qpn,
                          uint64_t conn_id);
void uct_pvrdma_conn_progress_chans(uct_pvrdma_iface_t *iface,
                                    ucs_time_t now, int *looked);
void uct_pvrdma_conn_handle_req(uct_pvrdma_iface_t *iface,
                                const uct_pvrdma_conn_msg_t *req,
                                const struct pvrdma_common_addr_info *peer);
void uct_pvrdma_conn_handle_rtu(uct_pvrdma_iface_t *iface,
                                const uct_pvrdma_conn_msg_t *msg,
                                const struct pvrdma_common_addr_info *peer);
void uct_pvrdma_conn_handle_disc(uct_pvrdma_iface_t *iface,
                                 const uct_pvrdma_conn_msg_t *msg,
                                 const struct pvrdma_common_addr_info *peer);

#endif /* UCT_PVRDMA_CONN_MSG_H */
