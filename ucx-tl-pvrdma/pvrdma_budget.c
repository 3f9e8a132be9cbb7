/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_budget.c
 * @brief The connection (QP) budget of a UCT "pvrdma" iface (issue 36): at
 *        most UCX_PVRDMA_MAX_CONNECTIONS eps hold an RC QP at once.  An ep
 *        that needs one while the budget is full waits (CLOSED, its sends
 *        answered NO_RESOURCE and queued by UCP) while the least recently
 *        used idle ep is closed with its peer's agreement; a closed ep is
 *        reopened by its next send.
 *
 * Why: every UCX connection costs an RC QP on each side (our ep, the
 * peer's passive channel), so a VM of p ranks that each talk to P peers
 * needs about 2 p P QPs, and a real ESXi PVRDMA device has 32,768 for every
 * process of the VM.  The default budget shares the device's max_qp among
 * the local processes, so a job that fits never closes anything.
 *
 * The close is an agreement over the connection datagrams (pvrdma_conn.c):
 *   CLOSE      ep -> peer iface: may we close connection conn_id?  Carries
 *              how many AMs the ep posted on it and an attempt number.
 *              Sent only for an ep with nothing queued, batched or in
 *              flight (every WR retired), so the count is final.
 *   CLOSE_ACK  the peer's channel received (and handed to UCT's user)
 *              exactly as many: it is destroyed, and the ep's QP with it.
 *              Also the answer when no such channel exists (a resent CLOSE
 *              after a lost ACK).
 *   CLOSE_NAK  some are still in its CQ: the ep goes back to sending and
 *              another (or the same, later) is asked.
 * So no AM, credit, rendezvous step or one-sided operation is lost: what
 * UCP sends later queues on the ep and opens a new connection (new QP,
 * connection id, credits), and registrations do not depend on the QP.
 * Close attempts are numbered: a late copy of a CLOSE the peer refused is
 * refused again (agreeing to it would destroy the channel of an ep that
 * went back to sending), and an answer counts only for the attempt still
 * open.  A CLOSE never answered within CONN_TIMEOUT fails the ep, as a
 * connection request does (the peer is gone or stuck; going back to
 * sending could meet a late agreement).  An ep that waited
 * CONN_TIMEOUT / 3 for a slot is connected over the budget (counted): a
 * budget never stops a job.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"
#include "pvrdma_conn_msg.h"
#include "pvrdma_counters.h"

#include <ucs/sys/string.h>
#include <stdlib.h>


/* How often an iface over its budget (eps connected after waiting too
 * long) looks for an idle ep to close when none waits: each look walks
 * the eps. */
#define UCT_PVRDMA_BUDGET_LOOK_MS  10


/* The first of @p num @p vars set to a positive number, and its name in
 * @p src_p; 0 when none is. */
static unsigned uct_pvrdma_budget_env_count(const char *const *vars,
                                            unsigned num, const char **src_p)
{
    const char *value;
    unsigned i;
    long n;

    for (i = 0; i < num; ++i) {
        value = getenv(vars[i]);
        if ((value != NULL) && ((n = strtol(value, NULL, 10)) > 0)) {
            *src_p = vars[i];
            return (unsigned)ucs_min(n, UINT_MAX);
        }
    }
    return 0;
}


/* Processes sharing the device, as the launcher says (Open MPI, MPICH and
 * Hydra, Slurm), else one per online CPU (a rank per core). */
static unsigned uct_pvrdma_budget_local_procs(const char **src_p)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE",
                                       "MPI_LOCALNRANKS",
                                       "SLURM_NTASKS_PER_NODE"};
    unsigned n = uct_pvrdma_budget_env_count(vars, ucs_static_array_size(vars),
                                             src_p);
    long cpus;

    if (n > 0) {
        return n;
    }
    *src_p = "online CPUs";
    cpus   = ucs_sys_get_num_cpus();
    return (cpus > 0) ? (unsigned)cpus : 1;
}


/* Peers of this process in the job, as the launcher says (Open MPI,
 * MPICH and Hydra, Slurm); 0 when none says.  The receive share and the
 * plan line use it: UCT is not told the job's size. */
unsigned uct_pvrdma_budget_job_peers(const char **src_p)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                       "SLURM_NTASKS"};
    unsigned n = uct_pvrdma_budget_env_count(vars, ucs_static_array_size(vars),
                                             src_p);

    if (n == 0) {
        *src_p = "job size unknown";
        return 0;
    }
    return n - 1;
}


ucs_status_t uct_pvrdma_iface_budget_init(uct_pvrdma_iface_t *iface,
                                          const uct_pvrdma_iface_config_t *config)
{
    uct_pvrdma_iface_budget_t *budget = &iface->budget;
    unsigned max_qp                   = (unsigned)iface->md->dev_attr.max_qp;
    char *why                         = budget->why;
    const char *src;
    unsigned procs;

    memset(budget, 0, sizeof(*budget));
    ucs_list_head_init(&budget->waiting);
    if (config->max_connections == 0) {
        ucs_error("pvrdma: invalid UCX_PVRDMA_MAX_CONNECTIONS=0: must be at "
                  "least 1, auto (max_qp shared by the local processes) or "
                  "inf (no budget)");
        return UCS_ERR_INVALID_PARAM;
    } else if (config->max_connections != UCS_ULUNITS_AUTO) {
        budget->max = (config->max_connections == UCS_ULUNITS_INF) ?
                      UINT_MAX : (unsigned)ucs_min(config->max_connections,
                                                   UINT_MAX);
        ucs_snprintf_zero(why, sizeof(budget->why),
                          "UCX_PVRDMA_MAX_CONNECTIONS");
    } else {
        /* two QPs per connection on each side: our ep's, and the passive
         * channel of the peer's ep to us; one QP stays for the UD QP */
        procs       = uct_pvrdma_budget_local_procs(&src);
        budget->max = (max_qp > procs) ? (max_qp - procs) / (2 * procs) : 1;
        ucs_snprintf_zero(why, sizeof(budget->why),
                          "auto: max_qp %u shared by %u processes (%s), 2 "
                          "QPs per connection", max_qp, procs, src);
    }
    if (budget->max < 1) {
        budget->max = 1;
    }
    ucs_debug("pvrdma: %s:%d: connection budget %u endpoints with an RC QP "
              "(%s)", iface->md->dev_name, iface->port_num, budget->max,
              why);
    return UCS_OK;
}


/* ----------------------------------------------------------------------- */
/*  The closer's side                                                      */
/* ----------------------------------------------------------------------- */

static void uct_pvrdma_budget_send_close(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    uct_pvrdma_conn_msg_t msg;

    uct_pvrdma_conn_msg_init(iface, &msg, UCT_PVRDMA_CONN_CLOSE, ep->conn_id);
    uct_pvrdma_conn_pack_addr(iface, ep->txq.qp->qp_num, ep->psn, msg.addr);
    msg.remote_addr = htobe64(ep->budget.am_sent);
    msg.credits     = htobe32(ep->budget.attempt);
    uct_pvrdma_ud_send(iface, ep->ah, ep->peer_ud_qpn, ep->peer_secret,
                       PVRDMA_COMMON_UD_KEYED_RECEIVER, &msg);
}


/* Nothing of ours queued or batched on the ep's connection */
static int uct_pvrdma_budget_ep_quiet(uct_pvrdma_ep_t *ep)
{
    return !ep->dispatching && ucs_queue_is_empty(&ep->pending) &&
           (ep->batch.len == 0);
}


/* ... nor in flight: its AM count is final, and closing it loses nothing */
static int uct_pvrdma_budget_ep_idle(uct_pvrdma_ep_t *ep)
{
    return ucs_queue_is_empty(&ep->outstanding) &&
           (ep->txq.posted_sn == ep->txq.acked_sn);
}


/* The least recently used idle ep, or NULL.  "Used" is sampled here: an ep
 * whose posted_sn moved since the last look was used now (no cost on the
 * send path).  An ep whose last WRs were unsignalled is not idle until a
 * zero-length WRITE retires them: that is posted, and it is taken next
 * time.  An ep the peer refused is left alone for CONN_RETRY. */
static uct_pvrdma_ep_t *uct_pvrdma_budget_pick(uct_pvrdma_iface_t *iface,
                                               ucs_time_t now)
{
    uct_pvrdma_ep_t *ep, *best = NULL;

    ucs_list_for_each(ep, &iface->eps, list) {
        if (!uct_pvrdma_ep_is_connected(ep)) {
            continue;
        }
        if (ep->txq.posted_sn != ep->budget.lru_sn) {
            ep->budget.lru_sn   = ep->txq.posted_sn;
            ep->budget.lru_time = now;
        }
        if ((ep->budget.refused != 0) &&
            (now - ep->budget.refused < iface->config.conn_retry)) {
            continue;
        }
        if (!uct_pvrdma_budget_ep_quiet(ep)) {
            continue;
        }
        if (!uct_pvrdma_budget_ep_idle(ep)) {
            /* only unsignalled WRs left, maybe: retire them (nothing is
             * posted while a signalled WR is on its way) */
            (void)uct_pvrdma_ep_retire(ep);
            continue;
        }
        if ((best == NULL) || (ep->budget.lru_time < best->budget.lru_time)) {
            best = ep;
        }
    }
    return best;
}


static void uct_pvrdma_budget_start_close(uct_pvrdma_ep_t *ep, ucs_time_t now)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if (++iface->budget.attempt == 0) {
        ++iface->budget.attempt; /* 0 is never an attempt */
    }
    ep->budget.attempt    = iface->budget.attempt;
    ep->budget.closing_sr = (ep->state == UCT_PVRDMA_EP_CONNECTED_SR);
    ep->budget.next_retry = now + iface->config.conn_retry;
    ep->budget.deadline   = now + iface->config.conn_timeout;
    ep->state             = UCT_PVRDMA_EP_CLOSING;
    ++iface->budget.closing;
    ucs_debug("pvrdma: closing idle ep %p qp 0x%x for the connection budget "
              "(%u of %u held, %u waiting): %" PRIu64 " AMs sent on it", ep,
              ep->txq.qp->qp_num, iface->budget.held, iface->budget.max,
              iface->budget.num_waiting, ep->budget.am_sent);
    uct_pvrdma_budget_send_close(ep);
}


/* The peer refused the close: the ep sends again, starting with what UCP
 * queued meanwhile. */
static void uct_pvrdma_budget_close_undone(uct_pvrdma_ep_t *ep, ucs_time_t now)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    --iface->budget.closing;
    ep->state          = ep->budget.closing_sr ? UCT_PVRDMA_EP_CONNECTED_SR :
                                                 UCT_PVRDMA_EP_CONNECTED;
    ep->budget.refused = now;
    uct_pvrdma_ep_schedule_pending(ep);
}


static void uct_pvrdma_budget_wait_del(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if (ep->budget.waiting) {
        ucs_list_del(&ep->budget.wait_link);
        ep->budget.waiting = 0;
        --iface->budget.num_waiting;
    }
}


/* Connect @p ep now (a slot is free, or it waited too long): a new QP and
 * connection exchange; @p over counts one made over the budget. */
static ucs_status_t uct_pvrdma_budget_open(uct_pvrdma_ep_t *ep, int over)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);
    int reopen                = (ep->budget.opens > 0);
    ucs_status_t status;

    status = uct_pvrdma_ep_open_qp(ep);
    if (status != UCS_OK) {
        return status;
    }
    uct_pvrdma_budget_wait_del(ep);
    iface->budget.reopens  += reopen;
    iface->budget.overruns += over;
    if (over) {
        ucs_debug("pvrdma: ep %p connects over the connection budget (%u of "
                  "%u held): no idle connection closed within %.1f s", ep,
                  iface->budget.held, iface->budget.max,
                  ucs_time_to_sec(iface->config.conn_timeout / 3));
    }
    return UCS_OK;
}


/* The ep needs an RC QP: at creation (its first connection) and when a
 * send finds it CLOSED.  Connects now if the budget has room, else waits
 * for a slot (progress closes an idle connection for it).  A QP the device
 * refuses is tried again from progress until CONN_TIMEOUT fails the ep. */
ucs_status_t uct_pvrdma_budget_connect(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    if (ep->budget.waiting) {
        return UCS_OK;
    }
    if ((iface->budget.held < iface->budget.max) &&
        (iface->budget.num_waiting == 0) &&
        (uct_pvrdma_budget_open(ep, 0) == UCS_OK)) {
        return UCS_OK;
    }
    ep->budget.waiting    = 1;
    ep->budget.wait_since = ucs_get_time();
    ucs_list_add_tail(&iface->budget.waiting, &ep->budget.wait_link);
    ++iface->budget.num_waiting;
    return UCS_OK;
}


/* From the connection progress, while eps wait for a slot, closes are open
 * or more eps than the budget hold a QP: resend or give up CLOSEs, connect
 * waiting eps as slots come free (or over the budget once they waited
 * CONN_TIMEOUT / 3), and ask one more idle peer to close while fewer
 * closes than waiting eps are open, or than eps over the budget. */
void uct_pvrdma_budget_progress(uct_pvrdma_iface_t *iface, ucs_time_t now,
                                int *looked)
{
    ucs_time_t patience = iface->config.conn_timeout / 3;
    uct_pvrdma_ep_t *ep;
    ucs_status_t status;
    int late;

    ucs_list_for_each(ep, &iface->eps, list) {
        if (iface->budget.closing == 0) {
            break;
        }
        if (ep->state != UCT_PVRDMA_EP_CLOSING) {
            continue;
        }
        if (now >= ep->budget.deadline) {
            ucs_log(iface->super.config.failure_level,
                    "pvrdma: %s:%d: no answer from the peer to closing an "
                    "idle connection (connection budget) within "
                    "UCX_PVRDMA_CONN_TIMEOUT (%.1f s)", iface->md->dev_name,
                    iface->port_num,
                    ucs_time_to_sec(iface->config.conn_timeout));
            ++iface->budget.close_timeouts;
            /* the error handler may destroy eps: stop iterating */
            uct_pvrdma_ep_set_failed(ep, UCS_ERR_ENDPOINT_TIMEOUT);
            return;
        } else if (now >= ep->budget.next_retry) {
            uct_pvrdma_conn_check_ud(iface, looked);
            ep->budget.next_retry = uct_pvrdma_conn_next_resend(
                    iface, ep->budget.deadline, now);
            uct_pvrdma_budget_send_close(ep);
        }
    }

    while (iface->budget.num_waiting > 0) {
        ep   = ucs_list_head(&iface->budget.waiting, uct_pvrdma_ep_t,
                             budget.wait_link);
        late = (now - ep->budget.wait_since >= patience);
        if ((iface->budget.held >= iface->budget.max) && !late) {
            break;
        }
        status = uct_pvrdma_budget_open(ep,
                                        iface->budget.held >= iface->budget.max);
        if (status == UCS_OK) {
            continue;
        }
        if (now - ep->budget.wait_since < iface->config.conn_timeout) {
            break; /* the device is out of QPs: again next time */
        }
        ucs_error("pvrdma: %s:%d: no RC QP for an endpoint within "
                  "UCX_PVRDMA_CONN_TIMEOUT: %s (%u held, budget %u; lower "
                  "UCX_PVRDMA_MAX_CONNECTIONS)", iface->md->dev_name,
                  iface->port_num, ucs_status_string(status),
                  iface->budget.held, iface->budget.max);
        uct_pvrdma_budget_wait_del(ep);
        /* the error handler may destroy eps: stop here */
        uct_pvrdma_ep_set_failed(ep, status);
        return;
    }

    /* a close per waiting ep; and eps connected over the budget (they
     * waited too long) are closed again once idle, looked for at most
     * every UCT_PVRDMA_BUDGET_LOOK */
    if ((iface->budget.num_waiting > iface->budget.closing) ||
        ((iface->budget.held > iface->budget.max + iface->budget.closing) &&
         (now >= iface->budget.next_look))) {
        iface->budget.next_look = now + ucs_time_from_msec(UCT_PVRDMA_BUDGET_LOOK_MS);
        ep = uct_pvrdma_budget_pick(iface, now);
        if (ep != NULL) {
            uct_pvrdma_budget_start_close(ep, now);
        }
    }
}


/* CLOSE_ACK / CLOSE_NAK for one of our eps (@p agreed: ACK) */
void uct_pvrdma_budget_handle_reply(uct_pvrdma_iface_t *iface,
                                    uct_pvrdma_ep_t *ep,
                                    const uct_pvrdma_conn_msg_t *msg,
                                    int agreed)
{
    if ((ep->state != UCT_PVRDMA_EP_CLOSING) ||
        (be32toh(msg->credits) != ep->budget.attempt)) {
        return; /* a late answer to an attempt already settled */
    }
    if (!agreed) {
        ucs_debug("pvrdma: peer refused to close ep %p: %" PRIu64 " of our %"
                  PRIu64 " AMs handled there", ep, be64toh(msg->remote_addr),
                  ep->budget.am_sent);
        ++iface->budget.refusals;
        uct_pvrdma_budget_close_undone(ep, ucs_get_time());
        return;
    }

    --iface->budget.closing;
    ++iface->budget.closes;
    uct_pvrdma_ep_close_qp(ep);
    if (!ucs_queue_is_empty(&ep->pending)) {
        /* UCP queued sends while the close was open: connect again */
        (void)uct_pvrdma_budget_connect(ep);
    }
}


/* ----------------------------------------------------------------------- */
/*  The peer's side                                                        */
/* ----------------------------------------------------------------------- */

/* CLOSE: agree when our channel has received every AM the ep says it sent
 * (they have been handed to UCT's user: receives are handled as they are
 * polled), else refuse; no channel: agree (it is gone already). */
void uct_pvrdma_budget_handle_close(uct_pvrdma_iface_t *iface,
                                    const uct_pvrdma_conn_msg_t *msg,
                                    const struct pvrdma_common_addr_info *peer)
{
    uint32_t ud_qpn  = be32toh(msg->src_ud_qpn);
    uint64_t conn_id = be64toh(msg->conn_id);
    uint64_t sent    = be64toh(msg->remote_addr);
    uct_pvrdma_conn_msg_t reply;
    uct_pvrdma_chan_t *chan;
    struct ibv_ah *ah;
    uint64_t received = sent;
    int agreed        = 1;

    ah = uct_pvrdma_ud_get_ah(iface, &peer->gid, peer->lid);
    if (ah == NULL) {
        return; /* the requester asks again */
    }
    chan = uct_pvrdma_conn_find_chan(iface, &peer->gid, ud_qpn, conn_id);
    if (chan != NULL) {
        received = chan->rx_total;
        /* an attempt not newer than one refused is a late copy */
        agreed   = (received == sent) &&
                   ((int32_t)(be32toh(msg->credits) - chan->close_refused) > 0);
        if (agreed) {
            ucs_debug("pvrdma: peer closes its connection on qp 0x%x for its "
                      "connection budget (%" PRIu64 " AMs)",
                      chan->txq.qp->qp_num, sent);
            ++iface->budget.agreed;
            uct_pvrdma_chan_destroy(chan);
        } else {
            /* the ep's attempts only grow (one counter per iface) */
            if ((int32_t)(be32toh(msg->credits) - chan->close_refused) > 0) {
                chan->close_refused = be32toh(msg->credits);
            }
            ++iface->budget.declined;
        }
    }

    uct_pvrdma_conn_msg_init(iface, &reply, agreed ? UCT_PVRDMA_CONN_CLOSE_ACK :
                                                     UCT_PVRDMA_CONN_CLOSE_NAK,
                             conn_id);
    reply.remote_addr = htobe64(received);
    reply.credits     = msg->credits; /* the attempt, as it came */
    uct_pvrdma_conn_reply(iface, ah, ud_qpn, &reply);
}


/* ----------------------------------------------------------------------- */
/*  Teardown and report                                                    */
/* ----------------------------------------------------------------------- */

/* The ep fails or is destroyed: off the budget's lists and counts (its QP,
 * if it has one, is counted off when it is destroyed). */
void uct_pvrdma_budget_ep_cleanup(uct_pvrdma_ep_t *ep)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                               uct_pvrdma_iface_t);

    uct_pvrdma_budget_wait_del(ep);
    if (ep->state == UCT_PVRDMA_EP_CLOSING) {
        --iface->budget.closing;
    }
}


void uct_pvrdma_budget_counters_add(uct_pvrdma_iface_t *iface,
                                    struct pvrdma_common_counters *c)
{
    pvrdma_common_counters_add(c, "conn_budget", iface->budget.max);
    pvrdma_common_counters_add(c, "conn_closes", iface->budget.closes);
    pvrdma_common_counters_add(c, "conn_reopens", iface->budget.reopens);
    pvrdma_common_counters_add(c, "conn_close_refusals", iface->budget.refusals);
    pvrdma_common_counters_add(c, "conn_overruns", iface->budget.overruns);
    pvrdma_common_counters_add(c, "conn_close_timeouts",
                               iface->budget.close_timeouts);
    pvrdma_common_counters_add(c, "conn_closes_agreed", iface->budget.agreed);
    pvrdma_common_counters_add(c, "eps_max", iface->budget.held_max);
}
