/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_ud.c
 * @brief The iface's UD QP that carries connection messages: its address
 *        handles, sending one datagram, its recovery from the error state,
 *        set-up and clean-up (the messages themselves: pvrdma_conn.c).
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"
#include "pvrdma_conn_msg.h"


/* ----------------------------------------------------------------------- */
/*  Address handles                                                        */
/* ----------------------------------------------------------------------- */

/* One address handle per peer host (GID, LID), kept until the iface closes:
 * creating one is a hypervisor command on PVRDMA.  The cache never shrinks,
 * and needs not: only datagrams whose MAC was made with this iface's key
 * (pvrdma_common_ud_accept: job members, who got the key in the worker
 * address) or our own connects reach a caller, so it holds at most one
 * entry per host of the job (issue 34, item 7). */
struct ibv_ah *uct_pvrdma_ud_get_ah(uct_pvrdma_iface_t *iface,
                                    const union ibv_gid *gid, uint16_t lid)
{
    uct_pvrdma_ah_t *entry;

    ucs_list_for_each(entry, &iface->ud.ahs, list) {
        if ((entry->lid == lid) && !memcmp(&entry->gid, gid, sizeof(*gid))) {
            return entry->ah;
        }
    }

    entry = ucs_calloc(1, sizeof(*entry), "pvrdma ah");
    if (entry == NULL) {
        return NULL;
    }

    entry->ah = pvrdma_common_ud_ah_create(iface->md->pd, &iface->qp_params,
                                           gid, lid);
    if (entry->ah == NULL) {
        /* on RoCE the kernel resolves the peer's MAC here: under load that
         * can time out (ETIMEDOUT) and work a moment later, so the caller
         * tries again with its next resend (issue 34) */
        ucs_diag("pvrdma: %s:%d: ibv_create_ah failed: %m (tried again "
                 "with the next resend)", iface->md->dev_name,
                 iface->port_num);
        ucs_free(entry);
        return NULL;
    }

    entry->gid = *gid;
    entry->lid = lid;
    ucs_list_add_tail(&iface->ud.ahs, &entry->list);
    return entry->ah;
}


/* ----------------------------------------------------------------------- */
/*  UD send                                                                */
/* ----------------------------------------------------------------------- */

/* One connection message (a uct_pvrdma_conn_msg_t) to @p dest_qpn; dropped
 * when every UD send slot is busy (each message is resent or answered
 * again: pvrdma_conn.c) */
void uct_pvrdma_ud_send(uct_pvrdma_iface_t *iface, struct ibv_ah *ah,
                        uint32_t dest_qpn, const uint8_t *key,
                        enum pvrdma_common_ud_keyed keyed, const void *msg)
{
    void *buf = pvrdma_common_ud_tx_get(&iface->ud.dgram);
    int ret;

    if (buf == NULL) {
        /* requests are retried, duplicate requests get the reply again.
         * Said at the 1st, 2nd, 4th, ... time: a peer whose replies all go
         * this way looks dead to its requesters (CONN_TIMEOUT) */
        ++iface->ud.tx_full;
        if (ucs_is_pow2(iface->ud.tx_full)) {
            ucs_diag("pvrdma: %s:%d: every UD send slot busy: a connection "
                     "message not sent (%" PRIu64 " so far; the last send "
                     "completed %.3f s ago)", iface->md->dev_name,
                     iface->port_num, iface->ud.tx_full,
                     (iface->ud.tx_done_at == 0) ? -1.0 :
                     ucs_time_to_sec(ucs_get_time() - iface->ud.tx_done_at));
        }
        return;
    }

    memcpy(buf, msg, sizeof(uct_pvrdma_conn_msg_t));
    ret = pvrdma_common_ud_send(&iface->ud.dgram, buf, ah, dest_qpn,
                                UCT_PVRDMA_UD_QKEY, key, keyed);
    if (ret != 0) {
        ucs_diag("pvrdma: ibv_post_send(UD qp 0x%x) failed: %s",
                 iface->ud.dgram.qp->qp_num, strerror(ret));
        return;
    }

    /* the UD send completion must be seen even if the CQ was armed */
    uct_pvrdma_iface_wakeup_poll(iface);
}


/*
 * The connection QP went to the error state (a completion failed: on
 * SoftRoCE one datagram longer than a receive did that before the sink,
 * issue 41): every receive is lost.  Called after each CQ poll; @p drained
 * says that poll began after the previous call and left the CQ empty.
 * Step 1 resets the QP (none of its old WRs completes any more); step 2,
 * at the first such poll after it, when none of its old completions is in
 * the shared CQ any more (so old and new never exceed its CQ entries),
 * brings it back with every receive posted.  Its QP number stays: peers
 * reach it again at once, and resend what was lost.
 */
void uct_pvrdma_ud_recover(uct_pvrdma_iface_t *iface, int drained)
{
    struct pvrdma_common_ud *ud = &iface->ud.dgram;
    const char *step;
    int ret;

    if (ud->broken) {
        ucs_diag("pvrdma: %s:%d: connection QP 0x%x is in the error state "
                 "(%s): resetting it", iface->md->dev_name, iface->port_num,
                 ud->qp->qp_num, ud->broken_by);
        step = "reset";
        ret  = pvrdma_common_ud_reset(ud);
    } else if (drained) {
        step = "restart";
        ret  = pvrdma_common_ud_restart(ud);
        if (ret == 0) {
            ucs_diag("pvrdma: %s:%d: connection QP 0x%x back, its receives "
                     "posted again (%" PRIu64 " resets)", iface->md->dev_name,
                     iface->port_num, ud->qp->qp_num, ud->resets);
        }
    } else {
        return;
    }
    if (ret != 0) {
        /* connections to and from this iface now time out with their own
         * errors: say why once */
        ucs_error("pvrdma: %s:%d: connection QP 0x%x: %s failed: %s",
                  iface->md->dev_name, iface->port_num, ud->qp->qp_num, step,
                  strerror(ret));
        ud->broken = ud->resetting = false;
    }
}


/* ----------------------------------------------------------------------- */
/*  Setup                                                                  */
/* ----------------------------------------------------------------------- */

ucs_status_t uct_pvrdma_ud_init(uct_pvrdma_iface_t *iface)
{
    struct pvrdma_common_ud_attr attr;
    const char *what;
    int ret;

    ucs_list_head_init(&iface->ud.ahs);
    iface->ud.rx_len  = ucs_min(iface->ud.rx_len,
                                iface->md->dev_attr.max_qp_wr);

    if (iface->cq_acct.budget < iface->ud.rx_len + UCT_PVRDMA_UD_TX_LEN +
                                iface->config.tx_queue_len) {
        ucs_error("pvrdma: %s:%d: the completion queue has %u entries, the "
                  "connection QP (UCX_PVRDMA_UD_RX_QUEUE_LEN=%u + %u) and one "
                  "send queue (UCX_PVRDMA_TX_QUEUE_LEN=%u) need more: raise "
                  "UCX_PVRDMA_CQ_LEN or lower those", iface->md->dev_name,
                  iface->port_num, iface->cq_acct.budget, iface->ud.rx_len,
                  UCT_PVRDMA_UD_TX_LEN, iface->config.tx_queue_len);
        return UCS_ERR_INVALID_PARAM;
    }

    memset(&attr, 0, sizeof(attr));
    attr.pd       = iface->md->pd;
    attr.cq       = iface->cq;
    attr.port_num = iface->port_num;
    attr.qkey     = UCT_PVRDMA_UD_QKEY;
    attr.version  = UCT_PVRDMA_CONN_VERSION;
    attr.rx_count = iface->ud.rx_len;
    attr.tx_count = UCT_PVRDMA_UD_TX_LEN;
    attr.msg_size = sizeof(uct_pvrdma_conn_msg_t);
    ret = pvrdma_common_ud_open(&iface->ud.dgram, &attr, &what);
    if (ret != 0) {
        ucs_error("pvrdma: %s:%d: %s failed: %s", iface->md->dev_name,
                  iface->port_num, what, strerror(ret));
        return (ret == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    /* tests/bed/stray.sh aims its stray datagrams with this line */
    ucs_debug("pvrdma: %s:%d: iface %p: connection QP 0x%x (Q_Key 0x%x, "
              "messages of %zu B, version %d)", iface->md->dev_name,
              iface->port_num, iface, iface->ud.dgram.qp->qp_num,
              UCT_PVRDMA_UD_QKEY, sizeof(uct_pvrdma_conn_msg_t),
              UCT_PVRDMA_CONN_VERSION);
    iface->cq_acct.budget      -= iface->ud.rx_len + UCT_PVRDMA_UD_TX_LEN;
    iface->cq_acct.rx_reserved += iface->ud.rx_len + UCT_PVRDMA_UD_TX_LEN;
    return UCS_OK;
}


void uct_pvrdma_ud_cleanup(uct_pvrdma_iface_t *iface)
{
    uct_pvrdma_ah_t *entry, *tmp;

    /* the QP before its address handles */
    pvrdma_common_ud_close(&iface->ud.dgram);
    ucs_list_for_each_safe(entry, tmp, &iface->ud.ahs, list) {
        ibv_destroy_ah(entry->ah);
        ucs_free(entry);
    }
}
