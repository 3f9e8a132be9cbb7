/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_iface_init.c
 * @brief Resource set-up of a UCT "pvrdma" iface: device and port,
 *        configuration check, resource profile, address, RDMA WRITE or
 *        send/recv only, CQ and completion channel, RC QP creation and the
 *        buffer pools (called from the iface class in pvrdma_iface.c).
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

#include <ucs/arch/cpu.h>


/* ----------------------------------------------------------------------- */
/*  Device, port and profile                                               */
/* ----------------------------------------------------------------------- */

ucs_status_t
uct_pvrdma_iface_parse_dev_name(uct_pvrdma_iface_t *iface,
                                const char *dev_name)
{
    struct pvrdma_common_port_list list;
    char err[256];
    int ret;

    ret = pvrdma_common_port_list_parse(dev_name, &list, err, sizeof(err));
    if ((ret != 0) || (list.count != 1) ||
        (list.specs[0].port_num == PVRDMA_COMMON_PORT_ANY) ||
        strcmp(list.specs[0].dev_name, iface->md->dev_name)) {
        ucs_error("pvrdma: invalid device name '%s' for memory domain %s "
                  "(expected '%s:<port>')%s%s", dev_name, iface->md->dev_name,
                  iface->md->dev_name, (ret != 0) ? ": " : "",
                  (ret != 0) ? err : "");
        if (ret == 0) {
            pvrdma_common_port_list_free(&list);
        }
        return UCS_ERR_NO_DEVICE;
    }

    iface->port_num = list.specs[0].port_num;
    pvrdma_common_port_list_free(&list);

    if (iface->port_num > iface->md->dev_attr.phys_port_cnt) {
        ucs_error("pvrdma: %s has no port %d", iface->md->dev_name,
                  iface->port_num);
        return UCS_ERR_NO_DEVICE;
    }

    ret = ibv_query_port(iface->md->ctx, iface->port_num, &iface->port_attr);
    if (ret != 0) {
        ucs_error("pvrdma: ibv_query_port(%s) failed: %s", dev_name,
                  strerror(ret));
        return UCS_ERR_IO_ERROR;
    }

    if (iface->port_attr.state != IBV_PORT_ACTIVE) {
        ucs_error("pvrdma: port %s is not active", dev_name);
        return UCS_ERR_NO_DEVICE;
    }

    return UCS_OK;
}


/* One knob out of its range: the error names the variable, the value and
 * the range, so a user (and the bed test) sees which setting to fix. */
static int uct_pvrdma_config_out_of_range(const char *name, double value,
                                          double min, double max)
{
    if ((value >= min) && (value <= max)) {
        return 0;
    }
    if (max >= UINT_MAX) {
        ucs_error("pvrdma: invalid UCX_PVRDMA_%s=%.15g: must be at least %.15g", name,
                  value, min);
    } else {
        ucs_error("pvrdma: invalid UCX_PVRDMA_%s=%.15g: must be %.15g..%.15g", name,
                  value, min, max);
    }
    return 1;
}

static ucs_status_t
uct_pvrdma_iface_check_config(const uct_pvrdma_iface_config_t *config)
{
    int bad = 0;

    bad |= uct_pvrdma_config_out_of_range("TX_QUEUE_LEN", config->tx_queue_len,
                                          8, UINT_MAX);
    bad |= uct_pvrdma_config_out_of_range("RX_QUEUE_LEN", config->rx_queue_len,
                                          4, UINT_MAX);
    bad |= uct_pvrdma_config_out_of_range("SEG_SIZE", config->seg_size, 64,
                                          UCS_MBYTE);
    bad |= uct_pvrdma_config_out_of_range("POLL_BATCH", config->poll_batch, 1,
                                          256);
    bad |= uct_pvrdma_config_out_of_range("TIMEOUT", config->timeout, 0, 31);
    bad |= uct_pvrdma_config_out_of_range("RETRY_COUNT", config->retry_count,
                                          0, 7);
    bad |= uct_pvrdma_config_out_of_range("RNR_RETRY", config->rnr_retry, 0, 7);
    bad |= uct_pvrdma_config_out_of_range("UD_RX_QUEUE_LEN", config->ud_rx_len,
                                          4, UINT_MAX);
    bad |= uct_pvrdma_config_out_of_range("CQ_IDLE_POLLS",
                                          config->cq_idle_polls, -1, INT_MAX);
    /* connection times in seconds; not 0 */
    bad |= uct_pvrdma_config_out_of_range("CONN_TIMEOUT", config->conn_timeout,
                                          1e-3, 1e9);
    bad |= uct_pvrdma_config_out_of_range("CONN_RETRY", config->conn_retry,
                                          1e-3, 1e9);
    bad |= uct_pvrdma_config_out_of_range("CONN_PENDING_MAX",
                                          config->conn_pending_max, 1, 65536);
    bad |= uct_pvrdma_config_out_of_range("KEEPALIVE", config->keepalive,
                                          0, 1e9);
    /* idle wait, seconds: at most 1 s between polls */
    bad |= uct_pvrdma_config_out_of_range("IDLE_SPIN", config->idle_spin,
                                          0, 1e9);
    bad |= uct_pvrdma_config_out_of_range("IDLE_POLL_INTERVAL",
                                          config->idle_poll_interval, 0, 1);
    bad |= uct_pvrdma_config_out_of_range("IDLE_POLL_SCALE",
                                          config->idle_poll_scale, 0, 1e6);
    bad |= uct_pvrdma_config_out_of_range("IDLE_SPIN_SCALE",
                                          config->idle_spin_scale, 0, 1e6);
    if ((config->path_mtu != 0) &&
        ((config->path_mtu < 256) || (config->path_mtu > 4096) ||
         !ucs_is_pow2(config->path_mtu))) {
        ucs_error("pvrdma: invalid UCX_PVRDMA_PATH_MTU=%zu: must be 0 (the "
                  "port's active MTU), 256, 512, 1024, 2048 or 4096",
                  config->path_mtu);
        bad = 1;
    }
    return bad ? UCS_ERR_INVALID_PARAM : UCS_OK;
}


ucs_status_t
uct_pvrdma_iface_init_profile(uct_pvrdma_iface_t *iface,
                              const uct_pvrdma_iface_config_t *config)
{
    struct pvrdma_common_profile_request req;
    char err[256];
    ucs_status_t status;
    int ret;

    status = uct_pvrdma_iface_check_config(config);
    if (status != UCS_OK) {
        return status;
    }

    pvrdma_common_profile_request_init(&req);
    req.max_send_wr   = config->tx_queue_len;
    req.max_recv_wr   = config->rx_queue_len;
    req.send_sge      = (config->tx_max_sge == 0) ? PVRDMA_COMMON_AUTO :
                        (int64_t)config->tx_max_sge;
    req.recv_sge      = 1;
    /* the profile gives 0 on PVRDMA (no inline support there) */
    req.max_inline    = PVRDMA_COMMON_AUTO;
    req.use_srq       = 0;
    req.cq_depth      = config->cq_len;
    req.mtu           = (config->path_mtu == 0) ? PVRDMA_COMMON_AUTO :
                        (int64_t)config->path_mtu;
    req.rdma_read     = (config->rdma_read == UCS_NO)  ? 0 :
                        (config->rdma_read == UCS_YES) ? 1 :
                        PVRDMA_COMMON_AUTO;
    req.max_rd_atomic = config->max_rd_atomic;

    ret = pvrdma_common_profile_compute(&iface->md->dev_attr,
                                        &iface->port_attr,
                                        iface->md->is_pvrdma, &req,
                                        &iface->profile);
    if (ret != 0) {
        ucs_error("pvrdma: %s:%d: invalid resource settings: %s",
                  iface->md->dev_name, iface->port_num, strerror(ret));
        return UCS_ERR_INVALID_PARAM;
    }

    if (pvrdma_common_profile_clamped_str(&iface->profile, err,
                                          sizeof(err)) > 0) {
        ucs_diag("pvrdma: %s:%d: reduced to the device limits: %s",
                 iface->md->dev_name, iface->port_num, err);
    }

    if ((config->rdma_read == UCS_YES) && !iface->profile.rdma_read_ok) {
        ucs_warn("pvrdma: %s:%d: UCX_PVRDMA_RDMA_READ=yes but the device "
                 "cannot initiate RDMA READ (max_qp_rd_atom 0): GET disabled",
                 iface->md->dev_name, iface->port_num);
    }

    if (iface->profile.send_sge < 2) {
        ucs_error("pvrdma: %s:%d: need at least 2 send SGEs, device has %u",
                  iface->md->dev_name, iface->port_num,
                  iface->profile.send_sge);
        return UCS_ERR_UNSUPPORTED;
    }

    iface->config.seg_size      = config->seg_size;
    iface->config.tx_queue_len  = iface->profile.max_send_wr;
    iface->config.rx_queue_len  = iface->profile.max_recv_wr;
    /* as configured: each channel caps it by its own queue
     * (uct_pvrdma_rx_batch), which is never longer than rx_queue_len */
    iface->config.rx_batch      = config->rx_batch;
    iface->config.tx_moderation = ucs_max(1, ucs_min(config->tx_moderation,
                                          iface->config.tx_queue_len / 2));
    iface->config.tx_max_sge    = iface->profile.send_sge;
    /* inline am_short needs two SGEs (header, payload) */
    iface->config.max_inline    = (iface->config.tx_max_sge >= 2) ?
                                  iface->profile.max_inline : 0;
    iface->config.poll_batch    = config->poll_batch;
    iface->config.idle_polls    = (config->cq_idle_polls >= 0) ?
                                  config->cq_idle_polls :
                                  (iface->md->is_pvrdma ? 64 : 0);
    iface->config.max_put_zcopy = ucs_min(ucs_min(iface->profile.max_msg_size,
                                                  iface->md->max_reg),
                                          config->max_put_zcopy);
    iface->config.max_get_zcopy = ucs_min(ucs_min(iface->profile.max_msg_size,
                                                  iface->md->max_reg),
                                          config->max_get_zcopy);
    if ((iface->config.max_put_zcopy == 0) ||
        (iface->config.max_get_zcopy == 0)) {
        ucs_error("pvrdma: UCX_PVRDMA_MAX_PUT_ZCOPY and MAX_GET_ZCOPY must "
                  "be > 0");
        return UCS_ERR_INVALID_PARAM;
    }
    iface->config.conn_timeout  = ucs_time_from_sec(config->conn_timeout);
    iface->config.keepalive     = ucs_time_from_sec(config->keepalive);
    iface->config.conn_retry    = ucs_time_from_sec(config->conn_retry);
    iface->config.conn_pending_max = config->conn_pending_max;
    /* auto: on where empty polls are VM exits (on the oversubscribed
     * emulated bed over rxe, backing off only slowed jobs down) */
    pvrdma_common_idle_wait_init(&iface->idle,
                                 (uint64_t)(config->idle_spin * 1e6),
                                 ((config->idle_wait == UCS_YES) ||
                                  (config->idle_wait == UCS_TRY) ||
                                  ((config->idle_wait == UCS_AUTO) &&
                                   iface->md->is_pvrdma)) ?
                                 (uint64_t)(config->idle_poll_interval * 1e6) : 0,
                                 config->idle_poll_scale);
    pvrdma_common_idle_wait_spin_scale(&iface->idle, config->idle_spin_scale);
    pvrdma_common_idle_wait_spin_adapt(&iface->idle, config->idle_spin_adapt);
    iface->config.credit_imm    = config->credit_imm;
    iface->config.tx_coalesce   = config->tx_coalesce;

    /* The port's max_msg_sz caps RDMA operations (above), not the eager
     * segment, as in the BTL: QEMU's device model reports 1 KiB and does
     * not enforce it (a SEND of 64 KiB works there), and capping to it made
     * every AM on the nested tier at most 1 KiB (UCP then split messages
     * eight times as often).  A device that did enforce it fails the send
     * with a length error, reported, not corrupted. */
    if (iface->config.seg_size > iface->profile.max_msg_size) {
        ucs_diag("pvrdma: %s:%d: segments of %zu B although the port reports "
                 "max_msg_sz %" PRIu64 " (applied to RDMA operations only)",
                 iface->md->dev_name, iface->port_num, iface->config.seg_size,
                 iface->profile.max_msg_size);
    }
    return UCS_OK;
}


ucs_status_t
uct_pvrdma_iface_init_addr(uct_pvrdma_iface_t *iface,
                           const uct_pvrdma_iface_config_t *config)
{
    char err[256];
    int ret;

    ret = pvrdma_common_gid_select(iface->md->ctx, iface->port_num,
                                   &iface->port_attr, config->gid_index,
                                   &iface->gid, err, sizeof(err));
    if (ret != 0) {
        ucs_error("pvrdma: %s:%d: no usable GID (UCX_PVRDMA_GID_INDEX=%d): %s",
                  iface->md->dev_name, iface->port_num, config->gid_index,
                  err);
        return UCS_ERR_INVALID_PARAM;
    }

    memset(&iface->dev_info, 0, sizeof(iface->dev_info));
    iface->dev_info.gid                = iface->gid.gid;
    iface->dev_info.lid                = iface->port_attr.lid;
    iface->dev_info.mtu                = iface->profile.mtu;
    iface->dev_info.gid_type           = iface->gid.type;
    iface->dev_info.link_layer         = iface->port_attr.link_layer;
    iface->dev_info.max_dest_rd_atomic = iface->profile.max_dest_rd_atomic;

    pvrdma_common_qp_params_from_profile(&iface->qp_params, &iface->profile,
                                        iface->port_num,
                                        iface->port_attr.link_layer,
                                        iface->gid.index);
    iface->qp_params.timeout            = config->timeout;
    iface->qp_params.retry_cnt          = config->retry_count;
    iface->qp_params.rnr_retry          = config->rnr_retry;
    return UCS_OK;
}


/*
 * UCX_PVRDMA_RDMA_WRITE: may this iface RDMA-WRITE?  If not, it is
 * "send-only": no PUT, AMs as plain SENDs with a header (its own ops table
 * entries; the WRITE path is untouched), and its connections return credits
 * with SENDs (see "Send/recv-only connections" in docs/design.md).
 */
void
uct_pvrdma_iface_init_rdma_write(uct_pvrdma_iface_t *iface,
                                 const uct_pvrdma_iface_config_t *config)
{
    struct pvrdma_common_probe_port port;

    if (config->rdma_write == UCS_TRY) {
        memset(&port, 0, sizeof(port));
        port.port_num   = iface->port_num;
        port.link_layer = iface->port_attr.link_layer;
        port.gid_index  = iface->gid.index;
        port.lid        = iface->port_attr.lid;
        port.mtu        = iface->profile.mtu;
        iface->rdma_write_ok = uct_pvrdma_md_rdma_write_ok(iface->md, &port);
    } else {
        iface->rdma_write_ok = (config->rdma_write == UCS_YES);
    }

    ucs_debug("pvrdma: %s:%d: RDMA WRITE %s (UCX_PVRDMA_RDMA_WRITE=%s)",
              iface->md->dev_name, iface->port_num,
              iface->rdma_write_ok ? "used" : "not used: send/recv only",
              uct_pvrdma_ternary_names[config->rdma_write]);
    if (iface->rdma_write_ok) {
        return;
    }

    uct_pvrdma_iface_use_sr_ops(iface);
}


/* ----------------------------------------------------------------------- */
/*  Completion queue and RC QPs                                            */
/* ----------------------------------------------------------------------- */

/* Nothing reserved, nothing in flight; the budget is set when the CQ is
 * created (uct_pvrdma_iface_init_cq). */
void uct_pvrdma_iface_cq_acct_init(uct_pvrdma_iface_cq_acct_t *acct)
{
    memset(acct, 0, sizeof(*acct));
}


/* No completion channel (never arm) and not armed: progress reads these
 * before the CQ is created. */
void uct_pvrdma_iface_notify_init(uct_pvrdma_iface_notify_t *notify)
{
    memset(notify, 0, sizeof(*notify));
    notify->cq.channel = NULL;
}


void uct_pvrdma_iface_notify_cleanup(uct_pvrdma_iface_notify_t *notify)
{
    pvrdma_common_cq_notify_close(&notify->cq);
}


ucs_status_t uct_pvrdma_iface_init_cq(uct_pvrdma_iface_t *iface)
{
    uint32_t depth;
    int err;

    if (iface->config.idle_polls > 0) {
        err = pvrdma_common_cq_notify_open(&iface->notify.cq, iface->md->ctx,
                                           UCT_PVRDMA_ARM_AFTER_US);
        if (err != 0) {
            ucs_diag("pvrdma: no non-blocking completion channel (%s); the "
                     "CQ will be polled continuously", strerror(err));
            iface->config.idle_polls = 0;
        }
    }

    /* max_cqe is not always what the device accepts (QEMU's pvrdma model
     * reports 28672 and refuses 8192): halve down to one connection's
     * worth, from a power of two (28672 would halve to 3584, not 4096) */
    depth     = ucs_rounddown_pow2(iface->profile.cq_depth);
    iface->cq = pvrdma_common_create_cq(iface->md->ctx, &depth,
                                        iface->config.rx_queue_len +
                                        iface->config.tx_queue_len,
                                        pvrdma_common_cq_notify_channel(
                                                &iface->notify.cq));
    if (iface->cq == NULL) {
        ucs_error("pvrdma: %s: ibv_create_cq(%u) failed: %m",
                  iface->md->dev_name, depth);
        uct_pvrdma_iface_notify_cleanup(&iface->notify);
        return UCS_ERR_IO_ERROR;
    }
    (void)pvrdma_common_cq_notify_add(&iface->notify.cq, iface->cq);

    if (depth < iface->profile.cq_depth) {
        ucs_diag("pvrdma: %s: the device refused a CQ of %u entries, using "
                 "%u", iface->md->dev_name, iface->profile.cq_depth, depth);
    }
    iface->cq_acct.budget = iface->cq->cqe;
    return UCS_OK;
}


void uct_pvrdma_iface_cleanup_cq(uct_pvrdma_iface_t *iface)
{
    ibv_destroy_cq(iface->cq);
    uct_pvrdma_iface_notify_cleanup(&iface->notify);
}


ucs_status_t uct_pvrdma_iface_create_rc_qp(uct_pvrdma_iface_t *iface,
                                           unsigned max_recv_wr,
                                           struct ibv_qp **qp_p)
{
    struct ibv_qp_cap cap;
    struct ibv_qp *qp;
    int ret;

    memset(&cap, 0, sizeof(cap));
    cap.max_send_wr     = iface->config.tx_queue_len;
    cap.max_recv_wr     = ucs_max(max_recv_wr, 1u);
    cap.max_send_sge    = iface->config.tx_max_sge;
    cap.max_recv_sge    = 1;
    cap.max_inline_data = iface->profile.max_inline; /* 0 on PVRDMA */

    qp = pvrdma_common_rc_qp_create(iface->md->pd, iface->cq, NULL, &cap);
    if (qp == NULL) {
        ucs_error("pvrdma: %s:%d: ibv_create_qp(RC, send_wr %u recv_wr %u "
                  "sge %u) failed: %m", iface->md->dev_name, iface->port_num,
                  iface->config.tx_queue_len, ucs_max(max_recv_wr, 1u),
                  iface->config.tx_max_sge);
        return UCS_ERR_IO_ERROR;
    }

    /* the provider reports what it really granted */
    if (cap.max_inline_data < iface->config.max_inline) {
        iface->config.max_inline = cap.max_inline_data;
    }

    ret = pvrdma_common_qp_to_init(qp, &iface->qp_params);
    if (ret != 0) {
        ucs_error("pvrdma: qp 0x%x: modify to INIT failed: %s", qp->qp_num,
                  strerror(ret));
        ibv_destroy_qp(qp);
        return UCS_ERR_IO_ERROR;
    }

    *qp_p = qp;
    return UCS_OK;
}


/* ----------------------------------------------------------------------- */
/*  Buffer pools                                                           */
/* ----------------------------------------------------------------------- */

/* No receive buffer taken, the send pool not found empty. */
void uct_pvrdma_iface_bufs_init(uct_pvrdma_iface_bufs_t *bufs)
{
    memset(bufs, 0, sizeof(*bufs));
}


static void uct_pvrdma_tx_desc_init(uct_iface_h tl_iface UCS_V_UNUSED,
                                    void *obj, uct_mem_h memh)
{
    uct_pvrdma_tx_desc_t *desc = obj;

    desc->lkey = uct_pvrdma_memh_lkey(memh);
}


static void uct_pvrdma_rx_desc_init(uct_iface_h tl_iface UCS_V_UNUSED,
                                    void *obj, uct_mem_h memh)
{
    uct_pvrdma_rx_desc_t *desc = obj;

    desc->lkey = uct_pvrdma_memh_lkey(memh);
}


static void uct_pvrdma_iface_release_desc(uct_recv_desc_t *self, void *desc)
{
    uct_pvrdma_iface_t *iface = ucs_container_of(self, uct_pvrdma_iface_t,
                                                 release_desc);

    --iface->bufs.rx_descs_inuse;
    ucs_mpool_put_inline(UCS_PTR_BYTE_OFFSET(desc,
                                 -(ptrdiff_t)iface->rx_headroom_offset));
}


ucs_status_t uct_pvrdma_iface_init_mpools(
        uct_pvrdma_iface_t *iface, const uct_pvrdma_iface_config_t *config,
        const uct_iface_params_t *params)
{
    size_t rx_headroom = UCT_IFACE_PARAM_VALUE(params, rx_headroom,
                                               RX_HEADROOM, 0);
    size_t align, align_offset;
    ucs_status_t status;

    /* rx layout: [rx_desc][pad][uct_recv_desc_t*][user headroom][payload] */
    iface->rx_payload_offset  = sizeof(uct_pvrdma_rx_desc_t) +
                                sizeof(uct_recv_desc_t*) + rx_headroom;
    iface->rx_headroom_offset = iface->rx_payload_offset - rx_headroom;
    iface->release_desc.cb    = uct_pvrdma_iface_release_desc;

    status = uct_iface_param_am_alignment(params, iface->config.seg_size,
                                          0, iface->rx_payload_offset,
                                          &align, &align_offset);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_iface_mpool_init(&iface->super, &iface->rx_mp,
                                  iface->rx_payload_offset +
                                  iface->config.seg_size,
                                  align_offset, align, &config->rx_mp,
                                  iface->config.rx_queue_len,
                                  uct_pvrdma_rx_desc_init, "pvrdma_rx_desc");
    if (status != UCS_OK) {
        return status;
    }

    /* room for the AM header of a send-only iface (uct_pvrdma_am_hdr_t) */
    status = uct_iface_mpool_init(&iface->super, &iface->tx_mp,
                                  sizeof(uct_pvrdma_tx_desc_t) +
                                  sizeof(uct_pvrdma_am_hdr_t) +
                                  iface->config.seg_size,
                                  sizeof(uct_pvrdma_tx_desc_t),
                                  UCS_SYS_CACHE_LINE_SIZE, &config->tx_mp,
                                  iface->config.tx_queue_len,
                                  uct_pvrdma_tx_desc_init, "pvrdma_tx_desc");
    if (status != UCS_OK) {
        ucs_mpool_cleanup(&iface->rx_mp, 0);
        return status;
    }

    return UCS_OK;
}
