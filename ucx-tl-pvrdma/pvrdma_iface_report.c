/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_iface_report.c
 * @brief What an iface of the UCT "pvrdma" transport says about itself: the
 *        cost of its connections, its receive pool, and at close its
 *        counters (the bed's tests read several of these lines: keep their
 *        wording, or change the tests with them).
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

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


/* Debug level: receive buffers taken from the pool and what the pool holds
 * (registered); tests/bed/ucx.sh asserts that connection churn does not
 * grow them.  Keep the wording: it is parsed. */
void uct_pvrdma_iface_print_rx_pool(uct_pvrdma_iface_t *iface,
                                    const char *why)
{
    ucs_mpool_chunk_t *chunk;
    size_t elems = 0;

    if (!ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
        return;
    }

    for (chunk = iface->rx_mp.data->chunks; chunk != NULL;
         chunk = chunk->next) {
        elems += chunk->num_elems;
    }
    ucs_debug("pvrdma: %s:%d: iface %p receive pool: %u buffers in use, "
              "%zu in the pool (%zu KiB), %u chans (%s)", iface->md->dev_name,
              iface->port_num, iface, iface->bufs.rx_descs_inuse, elems,
              (size_t)(elems * iface->rx_mp.data->elem_size / UCS_KBYTE),
              iface->conn.num_chans, why);
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


/* At iface close, after its channels are gone: its counters */
void uct_pvrdma_iface_report_close(uct_pvrdma_iface_t *iface)
{
    /* tests/bed/ucx.sh asserts from these that the CQ budget held (the
     * burst test fills it on purpose) and that churn leaks no buffers */
    ucs_debug("pvrdma: %s:%d: iface %p CQ budget: %" PRIu64 " sends "
              "refused for a full CQ budget, %" PRIu64 " signals forced by "
              "it, at most %u sends in flight, smallest receive queue %u "
              "of %u", iface->md->dev_name, iface->port_num, iface,
              iface->op_count.cq_full, iface->op_count.forced_signals,
              iface->op_count.tx_outstanding_max, iface->op_count.rx_len_min,
              iface->config.rx_queue_len);
    uct_pvrdma_iface_print_rx_pool(iface, "iface closed");

    /* tests/bed/ucx.sh reads this to see which way credits went */
    ucs_debug("pvrdma: %s:%d: iface %p closed; credits returned: %" PRIu64
              " in AM immediates, %" PRIu64 " by WRITE/SEND",
              iface->md->dev_name, iface->port_num, iface,
              iface->op_count.credits_by_imm, iface->op_count.credits_by_msg);
    /* The bed tests read this to prove which mode the run used: GETs by
     * RDMA READ or not (UCX_PVRDMA_RDMA_READ), PUTs by RDMA WRITE or
     * send/recv only (UCX_PVRDMA_RDMA_WRITE), CQ armed or polled
     * (UCX_PVRDMA_CQ_IDLE_POLLS).  Keep the wording: they parse it. */
    ucs_debug("pvrdma: %s:%d: iface %p ops: %" PRIu64 " RDMA READs (largest "
              "%" PRIu64 " B), %" PRIu64 " RDMA WRITEs (largest %" PRIu64
              " B), %" PRIu64 " CQ arms, %" PRIu64 " CQ events; %" PRIu64
              " keepalive probes",
              iface->md->dev_name, iface->port_num, iface,
              iface->op_count.rdma_reads, iface->op_count.rdma_read_max,
              iface->op_count.rdma_writes, iface->op_count.rdma_write_max,
              iface->op_count.cq_arms, iface->op_count.cq_events,
              iface->watch.keepalives);
    /* tests/bed/ucx.sh reads this: the capped pool really ran dry */
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
    /* datagrams on the connection QP that failed common's checks: on a
     * fabric shared with other tenants, worth a line when there were any */
    ucs_log(((iface->ud.dgram.dropped > 0) || (iface->ud.dgram.resets > 0)) ?
            UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_DEBUG,
            "pvrdma: %s:%d: iface %p: %" PRIu64 " connection datagrams "
            "dropped (%" PRIu64 " without a valid MAC, %" PRIu64 " replayed, %"
            PRIu64 " not from the address they claim), connection QP reset %"
            PRIu64 " times, %zu address handles cached",
            iface->md->dev_name, iface->port_num, iface, iface->ud.dgram.dropped,
            iface->ud.dgram.forged, iface->ud.dgram.replayed,
            iface->ud.dgram.spoofed,
            iface->ud.dgram.resets, ucs_list_length(&iface->ud.ahs));
    /* tests/bed/ucx.sh (uct conn: abandoned connections) parses this */
    ucs_log(((iface->conn.chans_reaped > 0) ||
             (iface->conn.reqs_capped > 0)) ?
            UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_DEBUG,
            "pvrdma: %s:%d: iface %p: %" PRIu64 " accepted connections "
            "closed unconfirmed after UCX_PVRDMA_CONN_TIMEOUT, %" PRIu64
            " connection requests not answered at "
            "UCX_PVRDMA_CONN_PENDING_MAX (%u)", iface->md->dev_name,
            iface->port_num, iface, iface->conn.chans_reaped,
            iface->conn.reqs_capped, iface->config.conn_pending_max);
}
