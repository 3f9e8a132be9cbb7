/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_iface_report.c
 * @brief What an iface of the UCT "pvrdma" transport says about itself: the
 *        cost of its connections, its receive pool, and at close its
 *        counters: lines for people, and one machine-readable counters
 *        line per close (common/pvrdma_counters.h), which is what the bed's
 *        tests read.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"
#include "pvrdma_counters.h"
#include "pvrdma_scale.h"

#include <inttypes.h>


/* ----------------------------------------------------------------------- */
/*  Debug reports                                                          */
/* ----------------------------------------------------------------------- */

/* Every count 0 (printed at close, uct_pvrdma_iface_report_close). */
void uct_pvrdma_iface_op_count_init(uct_pvrdma_iface_op_count_t *op_count)
{
    memset(op_count, 0, sizeof(*op_count));
}


/* Debug level: what the connections of this iface cost (item "what a
 * connection costs" of the scaling work): CQ entries and receive buffers.
 * @p chan: the channel just created (its own queue), or NULL (average). */
void uct_pvrdma_iface_print_cost(uct_pvrdma_iface_t *iface, const char *why,
                                 const uct_pvrdma_chan_t *chan)
{
    size_t desc_size = iface->rx_mp.data->elem_size;
    size_t total = 0, per_peer;
    uct_pvrdma_chan_t *c;

    if (!ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
        return;
    }

    ucs_list_for_each(c, &iface->chans, list) {
        total += (size_t)c->rx_len * desc_size;
    }
    per_peer = (chan != NULL) ? (size_t)chan->rx_len * desc_size :
               (iface->conn.num_chans > 0) ? total / iface->conn.num_chans :
               (size_t)iface->config.rx_queue_len * desc_size;
    ucs_debug("pvrdma: %s:%d: %u chans, CQ %d entries (%u reserved for "
              "receives, %u sends in flight max), receive buffers %zu KiB "
              "per peer%s, %zu KiB in total (%s)", iface->md->dev_name,
              iface->port_num, iface->conn.num_chans, iface->cq->cqe,
              iface->cq_acct.rx_reserved, iface->cq_acct.budget,
              (size_t)(per_peer / UCS_KBYTE),
              (chan != NULL) ? " (this one)" : "", (size_t)(total / UCS_KBYTE),
              why);
}


/* What the plan line predicts: the receive queues of up to @p peers new
 * channels, each given uct_pvrdma_chan_rx_share of the CQ entries still
 * free for receives (and, on a send/recv-only connection, our ep's credit
 * receives), as uct_pvrdma_chan_rx_len gives them when nothing is in
 * flight.  Returns how many peers get one before the CQ is full. */
typedef struct {
    unsigned fit;       /* peers whose receives fit the CQ */
    uint64_t receives;  /* posted receives of those peers' channels */
    unsigned first;     /* receives of the first peer's channel */
    unsigned last;      /* ... and of the last one's */
} uct_pvrdma_plan_rx_t;

static void uct_pvrdma_iface_plan_rx(const uct_pvrdma_iface_t *iface,
                                     unsigned peers, uct_pvrdma_plan_rx_t *rx)
{
    unsigned floor  = iface->config.tx_queue_len;
    unsigned per_ep = iface->rdma_write_ok ? 0 : UCT_PVRDMA_CREDIT_RX_LEN;
    unsigned free_rx, want;

    memset(rx, 0, sizeof(*rx));
    free_rx = (iface->cq_acct.budget > floor) ?
              (iface->cq_acct.budget - floor) : 0;
    while (rx->fit < peers) {
        want = uct_pvrdma_chan_rx_share(iface, free_rx, rx->fit);
        if ((want == 0) || (want + per_ep > free_rx)) {
            /* (0 cannot happen: RX_QUEUE_LEN >= 4; it would never end) */
            break;
        }
        free_rx      -= want + per_ep;
        rx->receives += want;
        rx->first     = (rx->fit == 0) ? want : rx->first;
        rx->last      = want;
        ++rx->fit;
    }
}


/*
 * Info level, at open: what this iface's connections will cost (issue 36's
 * per-rank plan line; tests/bed/scale.sh checks it is printed).  Two lines
 * as the BTL's: the CQ, the QPs and receives of one connection, how many
 * peers fit the CQ and the connection budget; then the locked memory at
 * the job's peers, when the launcher says how many there are.  Memory is
 * an estimate from PVRDMA's WQE sizes (common/scale.c); send buffers are
 * taken on demand and not in it.
 */
void uct_pvrdma_iface_report_plan(uct_pvrdma_iface_t *iface)
{
    size_t buf_size = iface->rx_mp.data->elem_size;
    uint64_t ring   = pvrdma_common_scale_sq_ring(iface->config.tx_queue_len,
                                                  iface->config.tx_max_sge);
    uct_pvrdma_plan_rx_t all, job;
    unsigned peers, conns;
    uint64_t rx_mem, ring_mem, cq_mem;
    const char *src;

    if (!ucs_log_is_enabled(UCS_LOG_LEVEL_INFO)) {
        return;
    }

    peers  = iface->conn.job_peers;
    src    = iface->conn.job_peers_src;
    uct_pvrdma_iface_plan_rx(iface, UINT_MAX, &all);
    ucs_info("pvrdma: %s:%d: plan: CQ %d entries, %u kept for sends; a "
             "connection is 2 RC QPs (ours and the peer's) and %u-%u "
             "receives of %zu B (1/%u of the CQ's receive room left, or "
             "1/(2 x the job's peers not yet connected)); %u peers fit the "
             "CQ; budget %u connections (%s)",
             iface->md->dev_name, iface->port_num, iface->cq->cqe,
             iface->config.tx_queue_len,
             ucs_min(UCT_PVRDMA_RX_MIN, iface->config.rx_queue_len),
             iface->config.rx_queue_len, buf_size, UCT_PVRDMA_RX_SHARE_DIV,
             all.fit, iface->budget.max, iface->budget.why);

    cq_mem = pvrdma_common_scale_cq_mem(iface->cq->cqe);
    if (peers == 0) {
        ucs_info("pvrdma: %s:%d: locked memory: %" PRIu64 " KiB per peer "
                 "at first (%u receives, 2 QP rings), %" PRIu64 " KiB fixed "
                 "(CQ); %s", iface->md->dev_name, iface->port_num,
                 (pvrdma_common_scale_recv_mem(all.first, buf_size) +
                  2 * ring) >> 10, all.first, cq_mem >> 10, src);
        return;
    }

    conns = ucs_min(peers, iface->budget.max);
    uct_pvrdma_iface_plan_rx(iface, conns, &job);
    rx_mem   = pvrdma_common_scale_recv_mem(job.receives, buf_size);
    ring_mem = 2 * ring * conns;
    ucs_info("pvrdma: %s:%d: locked memory: %" PRIu64 " KiB at %u peers "
             "(%s - 1%s): receives %" PRIu64 " KiB (%u for the first peer, "
             "%u for the last%s), QP rings %" PRIu64 " KiB, CQ %" PRIu64
             " KiB", iface->md->dev_name, iface->port_num,
             (rx_mem + ring_mem + cq_mem) >> 10, peers, src,
             (conns < peers) ? ", connections held within the budget" : "",
             rx_mem >> 10, job.first, job.last,
             (job.fit < conns) ? "; the rest do not fit the CQ" : "",
             ring_mem >> 10, cq_mem >> 10);
}


/* Receive buffers the pool holds (registered), over all its chunks. */
static size_t uct_pvrdma_iface_rx_pool_size(uct_pvrdma_iface_t *iface)
{
    ucs_mpool_chunk_t *chunk;
    size_t elems = 0;

    for (chunk = iface->rx_mp.data->chunks; chunk != NULL;
         chunk = chunk->next) {
        elems += chunk->num_elems;
    }
    return elems;
}


/* Debug level: receive buffers taken from the pool and what the pool holds
 * (tests/bed/ucx.sh asserts from the counters that connection churn does
 * not grow them). */
static void uct_pvrdma_iface_print_rx_pool(uct_pvrdma_iface_t *iface,
                                           const char *why)
{
    size_t elems = uct_pvrdma_iface_rx_pool_size(iface);

    ucs_debug("pvrdma: %s:%d: iface %p receive pool: %u buffers in use, "
              "%zu in the pool (%zu KiB), %u chans (%s)", iface->md->dev_name,
              iface->port_num, iface, iface->bufs.rx_descs_inuse, elems,
              (size_t)(elems * iface->rx_mp.data->elem_size / UCS_KBYTE),
              iface->conn.num_chans, why);
}


/* After a passive channel is destroyed: its buffers are back in the pool. */
void uct_pvrdma_iface_report_chan_close(uct_pvrdma_iface_t *iface)
{
    struct pvrdma_common_counters c;

    if (!ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
        return;
    }
    uct_pvrdma_iface_print_rx_pool(iface, "connection closed");
    pvrdma_common_counters_begin(&c, "chan_close", iface->md->dev_name,
                                 iface->port_num);
    pvrdma_common_counters_add(&c, "rx_bufs_inuse", iface->bufs.rx_descs_inuse);
    pvrdma_common_counters_add(&c, "rx_pool_bufs",
                               uct_pvrdma_iface_rx_pool_size(iface));
    pvrdma_common_counters_add(&c, "chans", iface->conn.num_chans);
    ucs_debug("pvrdma: %s", pvrdma_common_counters_str(&c));
}


/* Whether the port retried while this iface had it open (verbs count
 * nothing per QP): at diag level when it did, so a benchmark run with
 * UCX_LOG_LEVEL=diag tells a lost packet from a slow one; debug otherwise. */
static void uct_pvrdma_iface_print_retries(uct_pvrdma_iface_t *iface)
{
    struct pvrdma_common_retry_counters now, delta;
    char text[160];

    if (!ucs_log_is_enabled(UCS_LOG_LEVEL_DIAG)) {
        return;
    }
    (void)pvrdma_common_retry_counters_read(iface->md->dev_name,
                                            iface->port_num, &now);
    pvrdma_common_retry_counters_since(&iface->retries_at_open, &now, &delta);
    ucs_log((delta.timeouts + delta.seq_naks + delta.rnr_naks +
             delta.duplicates > 0) ? UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_DEBUG,
            "pvrdma: %s:%d: iface %p: retries on the port while open (whole "
            "device): %s", iface->md->dev_name, iface->port_num, iface,
            pvrdma_common_retry_counters_str(&delta, text, sizeof(text)));
}


/* The machine-readable line of the iface's close: every count the bed
 * tests read, at diag level when something on a shared fabric or in the
 * connection set-up went wrong (as the lines for people), or the
 * connection budget closed connections, else debug. */
static void uct_pvrdma_iface_print_counters(uct_pvrdma_iface_t *iface,
                                            unsigned chans_open)
{
    ucs_log_level_t level = ((iface->ud.dgram.dropped > 0) ||
                             (iface->ud.dgram.resets > 0) ||
                             (iface->conn.chans_reaped > 0) ||
                             (iface->conn.reqs_capped > 0) ||
                             (iface->conn.discs_expired > 0) ||
                             (iface->budget.closes > 0) ||
                             (iface->budget.overruns > 0) ||
                             (chans_open > 0)) ?
                            UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_DEBUG;
    struct pvrdma_common_counters c;

    if (!ucs_log_is_enabled(level)) {
        return;
    }
    pvrdma_common_counters_begin(&c, "iface_close", iface->md->dev_name,
                                 iface->port_num);
    pvrdma_common_counters_add_ops(&c, iface->op_count.rdma_writes,
                                   iface->op_count.rdma_write_max,
                                   iface->op_count.rdma_reads,
                                   iface->op_count.rdma_read_max,
                                   iface->notify.cq.arms,
                                   iface->notify.cq.events);
    pvrdma_common_counters_add(&c, "cq_entries", (uint64_t)iface->cq->cqe);
    pvrdma_common_counters_add(&c, "cq_full", iface->op_count.cq_full);
    pvrdma_common_counters_add(&c, "forced_signals", iface->op_count.forced_signals);
    pvrdma_common_counters_add(&c, "tx_outstanding_max", iface->op_count.tx_outstanding_max);
    pvrdma_common_counters_add(&c, "rx_len_min", iface->op_count.rx_len_min);
    pvrdma_common_counters_add(&c, "rx_queue_len", iface->config.rx_queue_len);
    pvrdma_common_counters_add(&c, "rx_bufs_inuse", iface->bufs.rx_descs_inuse);
    pvrdma_common_counters_add(&c, "rx_pool_bufs", uct_pvrdma_iface_rx_pool_size(iface));
    pvrdma_common_counters_add(&c, "chans", chans_open);
    pvrdma_common_counters_add(&c, "credits_by_imm", iface->op_count.credits_by_imm);
    pvrdma_common_counters_add(&c, "credits_by_msg", iface->op_count.credits_by_msg);
    pvrdma_common_counters_add(&c, "send_posts", iface->op_count.tx_posts);
    pvrdma_common_counters_add(&c, "send_wrs", iface->op_count.tx_wrs);
    pvrdma_common_counters_add(&c, "tx_pool_dry", iface->op_count.tx_mp_empty);
    pvrdma_common_counters_add(&c, "keepalives", iface->watch.keepalives);
    pvrdma_common_counters_add(&c, "cq_polls", iface->op_count.cq_polls);
    pvrdma_common_idle_wait_counters_add(&iface->idle, &c);
    pvrdma_common_ud_counters_add(&iface->ud.dgram, &c);
    pvrdma_common_counters_add(&c, "ahs_cached", ucs_list_length(&iface->ud.ahs));
    pvrdma_common_counters_add(&c, "dgram_tx_full", iface->ud.tx_full);
    pvrdma_common_counters_add(&c, "chans_reaped", iface->conn.chans_reaped);
    pvrdma_common_counters_add(&c, "reqs_capped", iface->conn.reqs_capped);
    pvrdma_common_counters_add(&c, "reqs_busy", iface->conn.reqs_busy);
    pvrdma_common_counters_add(&c, "busy_heard", iface->conn.busy_heard);
    pvrdma_common_counters_add(&c, "zombie_waits_counted",
                               iface->cq_acct.zombie_counted);
    pvrdma_common_counters_add(&c, "discs_acked", iface->conn.discs_acked);
    pvrdma_common_counters_add(&c, "discs_expired", iface->conn.discs_expired);
    uct_pvrdma_budget_counters_add(iface, &c);
    ucs_log(level, "pvrdma: %s", pvrdma_common_counters_str(&c));
}


/* At iface close, after its channels are gone (@p chans_open: how many
 * peers left open until then): its counters, for people and for tests. */
void uct_pvrdma_iface_report_close(uct_pvrdma_iface_t *iface,
                                   unsigned chans_open)
{
    uct_pvrdma_iface_print_counters(iface, chans_open);
    if (!ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
        uct_pvrdma_iface_print_retries(iface);
        return;
    }
    ucs_debug("pvrdma: %s:%d: iface %p CQ budget: %" PRIu64 " sends "
              "refused for a full CQ budget, %" PRIu64 " signals forced by "
              "it, at most %u sends in flight, smallest receive queue %u "
              "of %u", iface->md->dev_name, iface->port_num, iface,
              iface->op_count.cq_full, iface->op_count.forced_signals,
              iface->op_count.tx_outstanding_max, iface->op_count.rx_len_min,
              iface->config.rx_queue_len);
    uct_pvrdma_iface_print_rx_pool(iface, "iface closed");
    ucs_debug("pvrdma: %s:%d: iface %p closed; credits returned: %" PRIu64
              " in AM immediates, %" PRIu64 " by WRITE/SEND",
              iface->md->dev_name, iface->port_num, iface,
              iface->op_count.credits_by_imm, iface->op_count.credits_by_msg);
    ucs_debug("pvrdma: %s:%d: iface %p ops: %" PRIu64 " RDMA READs (largest "
              "%" PRIu64 " B), %" PRIu64 " RDMA WRITEs (largest %" PRIu64
              " B), %" PRIu64 " CQ arms, %" PRIu64 " CQ events; %" PRIu64
              " keepalive probes",
              iface->md->dev_name, iface->port_num, iface,
              iface->op_count.rdma_reads, iface->op_count.rdma_read_max,
              iface->op_count.rdma_writes, iface->op_count.rdma_write_max,
              iface->notify.cq.arms, iface->notify.cq.events,
              iface->watch.keepalives);
    ucs_debug("pvrdma: %s:%d: iface %p send pool: ran dry %" PRIu64 " times "
              "(UCX_PVRDMA_TX_MAX_BUFS, or the locked-memory limit)",
              iface->md->dev_name, iface->port_num, iface,
              iface->op_count.tx_mp_empty);
    ucs_debug("pvrdma: %s:%d: iface %p idle wait: %" PRIu64 " CQ polls not "
              "rung (UCX_PVRDMA_IDLE_SPIN %" PRIu64 " us, then one poll per "
              "%" PRIu64 " us: UCX_PVRDMA_IDLE_POLL_INTERVAL %" PRIu64 " us, "
              "UCX_PVRDMA_IDLE_POLL_SCALE %" PRIu64 " x an empty poll's %"
              PRIu64 ".%02" PRIu64 " us)",
              iface->md->dev_name, iface->port_num, iface, iface->idle.skipped,
              iface->idle.spin_us, iface->idle.interval_us, iface->idle.poll_us,
              iface->idle.scale, iface->idle.cost_x16 / 16,
              (iface->idle.cost_x16 % 16) * 100 / 16);
    uct_pvrdma_iface_print_retries(iface);
    ucs_debug("pvrdma: %s:%d: iface %p: %" PRIu64 " connection datagrams "
              "dropped (%" PRIu64 " without a valid MAC, %" PRIu64 " replayed, %"
              PRIu64 " not from the address they claim), connection QP reset %"
              PRIu64 " times, %zu address handles cached; %" PRIu64
              " accepted connections closed unconfirmed after "
              "UCX_PVRDMA_CONN_TIMEOUT, %" PRIu64 " connection requests not "
              "answered at UCX_PVRDMA_CONN_PENDING_MAX (%u)",
              iface->md->dev_name, iface->port_num, iface, iface->ud.dgram.dropped,
              iface->ud.dgram.forged, iface->ud.dgram.replayed,
              iface->ud.dgram.spoofed, iface->ud.dgram.resets,
              ucs_list_length(&iface->ud.ahs), iface->conn.chans_reaped,
              iface->conn.reqs_capped, iface->config.conn_pending_max);
}
