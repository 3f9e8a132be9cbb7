/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_budget.h
 * @brief The connection (QP) budget of a BTL process: at most
 *        btl_pvrdma_max_connections RC QPs, by closing the least recently
 *        used idle connection, with the peer's agreement, when a new peer
 *        needs a slot, and reconnecting on demand (issue 36).
 *
 * Why: one RC QP per pair of ranks costs a VM p^2 (N - 1) QPs, and a real
 * ESXi PVRDMA device has 32,768 for every process of the VM.  The default
 * budget is the device's max_qp shared by the processes on it
 * (plan.peers_fit_qp), so a job below that never closes anything.
 *
 * Closing is a two-sided agreement over the connection datagrams
 * (btl_pvrdma_cm.c, CLOSE / CLOSE_ACK / CLOSE_NAK): the closer asks only
 * when it has nothing queued or in flight to the peer and says how many
 * messages it sent and received on the connection; the peer agrees only
 * when it too has nothing queued or in flight and both counts match its
 * own, i.e. every message either side sent has been received and handled.
 * So no message, credit, rendezvous or one-sided operation is lost: work
 * that arrives later queues on the endpoint and opens a new connection.
 * A peer that refuses (busy) is asked again later; until a slot is free a
 * new connection waits, and after btl_pvrdma_connect_timeout it goes ahead
 * over the budget (counted: never a hang for a budget).
 */
#ifndef MCA_BTL_PVRDMA_BUDGET_H
#define MCA_BTL_PVRDMA_BUDGET_H

#include "btl_pvrdma.h"

BEGIN_C_DECLS

struct mca_btl_base_endpoint_t;

/** The close messages (their wire types are btl_pvrdma_cm.c's). */
enum {
    MCA_BTL_PVRDMA_CLOSE_REQ,   /**< may we close this connection? */
    MCA_BTL_PVRDMA_CLOSE_ACK,   /**< yes: closed on the sender's side */
    MCA_BTL_PVRDMA_CLOSE_NAK,   /**< no: it has work on it */
    MCA_BTL_PVRDMA_CONN_BUSY    /**< a request we have no slot for yet: we
                                     connect to the requester once we do */
};

/** What a CLOSE / CLOSE_ACK / CLOSE_NAK says besides its type. */
typedef struct mca_btl_pvrdma_close_info_t {
    uint32_t from_qpn;   /**< the sender's RC QP of the connection */
    uint32_t conn_qpn;   /**< the receiver's RC QP of it, as the sender knows it */
    uint64_t sent;       /**< SENDs the sender posted on it */
    uint64_t received;   /**< messages the sender received and handled on it */
    uint16_t attempt;    /**< the requester's close attempt (never 0): copies of
                              one attempt get the same answer, a reply counts
                              only for the attempt still open */
} mca_btl_pvrdma_close_info_t;

/** @brief Set module->max_connections from the parameter or the plan. */
void mca_btl_pvrdma_budget_init(mca_btl_pvrdma_module_t *module);

/** @brief True when a new QP would exceed the budget. */
static inline bool mca_btl_pvrdma_budget_full(const mca_btl_pvrdma_module_t *module)
{
    return module->peers_connected >= module->budget.max;
}

/** @brief start_connect found the budget full: the endpoint waits for a
 *  slot (state WAITING) while an idle connection is closed for it. */
void mca_btl_pvrdma_budget_wait(struct mca_btl_base_endpoint_t *ep);

/** @brief From the CM progress: ask an idle peer to close, start waiting
 *  endpoints when slots are free, or over the budget once they waited too
 *  long.  @return events. */
int mca_btl_pvrdma_budget_progress(mca_btl_pvrdma_module_t *module);

/** @brief The peer asks to close (CM_CLOSE): agree and close, or refuse. */
void mca_btl_pvrdma_budget_close_req(struct mca_btl_base_endpoint_t *ep,
                                     const mca_btl_pvrdma_close_info_t *info);
/** @brief A connection request from the endpoint's peer (we have no QP
 *  for it): true when the budget has no slot for it now, so it waits
 *  (WAITING) and we connect to the peer once a slot is free; false when
 *  the request is to be accepted (a slot is free, or it waited too long). */
bool mca_btl_pvrdma_budget_refuse(struct mca_btl_base_endpoint_t *ep);
/** @brief The peer has no slot for our request yet (CM_BUSY): it connects
 *  to us when it has; keep the request without counting its retries. */
void mca_btl_pvrdma_budget_busy(struct mca_btl_base_endpoint_t *ep,
                                const mca_btl_pvrdma_close_info_t *info);
/** @brief The peer agreed (@p agreed) or refused our CM_CLOSE. */
void mca_btl_pvrdma_budget_close_reply(struct mca_btl_base_endpoint_t *ep,
                                       const mca_btl_pvrdma_close_info_t *info,
                                       bool agreed);
/** @brief A CLOSING endpoint's peer opened a new connection: it had agreed
 *  to close (its reply was lost), so close ours now. */
void mca_btl_pvrdma_budget_close_implied(struct mca_btl_base_endpoint_t *ep);

END_C_DECLS

#endif
