/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file rdma_probe.c
 * @brief Does an RDMA WRITE on this port land where it should?
 *
 * Why a probe and not a capability bit: verbs has no attribute for "RDMA
 * WRITE works".  Every real RC device (VMware PVRDMA included) supports it,
 * but QEMU's pvrdma device model (hw/rdma, QEMU <= 8) forwards every send
 * WR to its backend as IBV_WR_SEND: a WRITE then consumes a receive buffer
 * at the peer (or RNR-retries forever), and its backend QPs have no remote
 * access.  A transport that trusted WRITE there would corrupt data or hang.
 * So both transports run this once per port: a loopback RC QP writes 64
 * bytes into its own registered buffer with one receive posted as a trap.
 * The write works only if the data arrived, the send completed successfully
 * and the trap receive was not consumed.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_rdma_probe.h"
#include "pvrdma_device.h"
#include "pvrdma_addr.h"
#include "pvrdma_qp.h"
#include "pvrdma_page.h"
#include "pvrdma_idle_wait.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_LEN   64
#define PROBE_SRC   0
#define PROBE_DST   PROBE_LEN
#define PROBE_TRAP  (2 * PROBE_LEN)
#define PROBE_BUF   (3 * PROBE_LEN)

enum { PROBE_WR_RECV = 1, PROBE_WR_WRITE = 2 };

struct probe {
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t       *buf;
};

static void probe_destroy(struct probe *p)
{
    if (p->qp != NULL) {
        (void)pvrdma_common_qp_to_err(p->qp);
        (void)ibv_destroy_qp(p->qp);
    }
    if (p->mr != NULL) {
        (void)ibv_dereg_mr(p->mr);
    }
    if (p->cq != NULL) {
        (void)ibv_destroy_cq(p->cq);
    }
    free(p->buf);
}

/* A loopback RC QP: connected to itself, so no peer is involved. */
static int probe_connect(struct probe *p, struct ibv_context *ctx,
                         const struct pvrdma_common_probe_port *port)
{
    struct pvrdma_common_qp_params params;
    struct pvrdma_common_addr_info self;
    int rc;

    pvrdma_common_qp_params_init(&params);
    params.port_num     = port->port_num;
    params.mtu          = port->mtu;
    params.link_layer   = port->link_layer;
    params.sgid_index   = (uint8_t)port->gid_index;
    params.access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    /* Fail fast instead of retrying: a broken WRITE must not take long. */
    params.retry_cnt    = 1;
    params.rnr_retry    = 1;

    memset(&self, 0, sizeof(self));
    self.qpn = p->qp->qp_num;
    self.psn = 0;
    self.mtu = port->mtu;
    self.lid = port->lid;
    if ((port->link_layer == IBV_LINK_LAYER_ETHERNET) &&
        ((rc = ibv_query_gid(ctx, port->port_num, port->gid_index,
                             &self.gid)) != 0)) {
        return (rc < 0) ? EIO : rc;
    }
    rc = pvrdma_common_qp_to_init(p->qp, &params);
    if (rc == 0) {
        rc = pvrdma_common_qp_to_rtr(p->qp, &params, &self);
    }
    if (rc == 0) {
        rc = pvrdma_common_qp_to_rts(p->qp, &params, NULL, 0);
    }
    return rc;
}

static int probe_post(struct probe *p)
{
    struct ibv_sge rsge = { (uintptr_t)(p->buf + PROBE_TRAP), PROBE_LEN,
                            p->mr->lkey };
    struct ibv_sge wsge = { (uintptr_t)(p->buf + PROBE_SRC), PROBE_LEN,
                            p->mr->lkey };
    struct ibv_recv_wr rwr, *bad_rwr;
    struct ibv_send_wr wwr, *bad_wwr;
    int rc;

    memset(&rwr, 0, sizeof(rwr));
    rwr.wr_id   = PROBE_WR_RECV;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    rc = ibv_post_recv(p->qp, &rwr, &bad_rwr);
    if (rc != 0) {
        return rc;
    }
    memset(&wwr, 0, sizeof(wwr));
    wwr.wr_id               = PROBE_WR_WRITE;
    wwr.sg_list             = &wsge;
    wwr.num_sge             = 1;
    wwr.opcode              = IBV_WR_RDMA_WRITE;
    wwr.send_flags          = IBV_SEND_SIGNALED;   /* never INLINE: PVRDMA */
    wwr.wr.rdma.remote_addr = (uintptr_t)(p->buf + PROBE_DST);
    wwr.wr.rdma.rkey        = p->mr->rkey;
    return ibv_post_send(p->qp, &wwr, &bad_wwr);
}

/* Wait for the WRITE's completion; note whether the trap receive fired. */
static int probe_wait(struct probe *p, int timeout_ms, int *write_status,
                      int *trapped)
{
    uint64_t deadline = pvrdma_common_now_us() + (uint64_t)timeout_ms * 1000;
    struct ibv_wc wc[2];
    int i, n;

    *write_status = -1;
    *trapped      = 0;
    while (*write_status < 0) {
        n = ibv_poll_cq(p->cq, 2, wc);
        if (n < 0) {
            return EIO;
        }
        for (i = 0; i < n; ++i) {
            if (wc[i].wr_id == PROBE_WR_WRITE) {
                *write_status = wc[i].status;
            } else if (wc[i].status == IBV_WC_SUCCESS) {
                *trapped = 1;
            }
        }
        if ((n == 0) && (*write_status < 0)) {
            if (pvrdma_common_now_us() > deadline) {
                return ETIMEDOUT;
            }
            /* An empty poll is a VM exit on PVRDMA: don't spin. */
            usleep(200);
        }
    }
    /* A converted WRITE is delivered before it is acknowledged: the trap's
     * completion, if any, is queued by now.  One more look to be sure. */
    n = ibv_poll_cq(p->cq, 2, wc);
    for (i = 0; i < n; ++i) {
        if ((wc[i].wr_id == PROBE_WR_RECV) && (wc[i].status == IBV_WC_SUCCESS)) {
            *trapped = 1;
        }
    }
    return 0;
}

int pvrdma_common_probe_rdma_write(struct ibv_context *ctx, struct ibv_pd *pd,
                                   const struct pvrdma_common_probe_port *port,
                                   int timeout_ms, char *why, size_t why_len)
{
    struct ibv_qp_init_attr init;
    struct probe p;
    int rc, status, trapped, i, result;

    if ((ctx == NULL) || (pd == NULL) || (port == NULL) || (timeout_ms <= 0)) {
        return -EINVAL;
    }
    memset(&p, 0, sizeof(p));
    snprintf(why, why_len, "probe not run");
    /* a whole page: QEMU's pvrdma model refuses MRs that cross a page */
    p.buf = pvrdma_common_page_alloc(PROBE_BUF);
    if (p.buf == NULL) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    for (i = 0; i < PROBE_BUF; ++i) {
        p.buf[i] = (i < PROBE_DST) ? (uint8_t)(0xa5 ^ i) : 0;
    }
    p.cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
    p.mr = ibv_reg_mr(pd, p.buf, PROBE_BUF,
                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if ((p.cq == NULL) || (p.mr == NULL)) {
        rc = (errno != 0) ? errno : ENOMEM;
        snprintf(why, why_len, "cannot create the probe's %s: %s",
                 (p.cq == NULL) ? "CQ" : "MR", strerror(rc));
        goto out_err;
    }
    memset(&init, 0, sizeof(init));
    init.send_cq          = p.cq;
    init.recv_cq          = p.cq;
    init.qp_type          = IBV_QPT_RC;
    init.sq_sig_all       = 0;
    init.cap.max_send_wr  = 1;
    init.cap.max_recv_wr  = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    p.qp = ibv_create_qp(pd, &init);
    if (p.qp == NULL) {
        rc = (errno != 0) ? errno : ENOMEM;
        snprintf(why, why_len, "cannot create the probe's QP: %s", strerror(rc));
        goto out_err;
    }
    if ((rc = probe_connect(&p, ctx, port)) != 0) {
        snprintf(why, why_len, "cannot connect the probe's loopback QP: %s",
                 strerror(rc));
        goto out_err;
    }
    if ((rc = probe_post(&p)) != 0) {
        snprintf(why, why_len, "cannot post the probe's WRs: %s", strerror(rc));
        goto out_err;
    }
    rc = probe_wait(&p, timeout_ms, &status, &trapped);
    if (rc == ETIMEDOUT) {
        snprintf(why, why_len, "an RDMA WRITE did not complete within %d ms",
                 timeout_ms);
        result = 0;
    } else if (rc != 0) {
        snprintf(why, why_len, "polling the probe's CQ failed");
        goto out_err;
    } else if (status != IBV_WC_SUCCESS) {
        snprintf(why, why_len, "an RDMA WRITE completed with \"%s\"",
                 ibv_wc_status_str((enum ibv_wc_status)status));
        result = 0;
    } else if (trapped) {
        snprintf(why, why_len, "an RDMA WRITE arrived as a SEND (it consumed "
                 "a receive buffer): the device forwards WRITEs as SENDs");
        result = 0;
    } else if (memcmp(p.buf + PROBE_SRC, p.buf + PROBE_DST, PROBE_LEN) != 0) {
        snprintf(why, why_len, "an RDMA WRITE completed but its data did not "
                 "arrive");
        result = 0;
    } else {
        snprintf(why, why_len, "an RDMA WRITE landed intact");
        result = 1;
    }
    probe_destroy(&p);
    return result;

out_err:
    probe_destroy(&p);
    return -rc;
}

bool pvrdma_common_rdma_write_decide(int probe_rc, bool is_pvrdma,
                                     const char *what, char *why,
                                     size_t why_len)
{
    if (probe_rc > 0) {
        snprintf(why, why_len, "RDMA WRITE probe: %s", what);
        return true;
    }
    if (probe_rc == 0) {
        snprintf(why, why_len, "RDMA WRITE does not work (%s)", what);
        return false;
    }
    /* The probe itself could not run (resources).  A PVRDMA device is
     * either VMware's (WRITE works) or QEMU's model (a WRITE lands as a
     * SEND: corrupt data or a hang), and only the probe tells them apart:
     * fail closed there, to send/recv copies (correct, slower).  Any other
     * device that says it can WRITE is believed, as every real one can. */
    if (is_pvrdma) {
        snprintf(why, why_len, "RDMA WRITE probe not run (%s: %s); a PVRDMA "
                 "device may be QEMU's model, where WRITE does not land: "
                 "send/recv only", what, strerror(-probe_rc));
        return false;
    }
    snprintf(why, why_len, "RDMA WRITE probe not run (%s: %s); assuming it "
             "works", what, strerror(-probe_rc));
    return true;
}

bool pvrdma_common_rdma_write_usable(struct ibv_context *ctx, struct ibv_pd *pd,
                                     const struct pvrdma_common_probe_port *port,
                                     char *why, size_t why_len)
{
    struct ibv_device_attr dev_attr;
    char what[160] = "";
    bool is_pvrdma;
    int rc;

    rc = pvrdma_common_probe_rdma_write(ctx, pd, port,
                                        PVRDMA_COMMON_WRITE_PROBE_TIMEOUT_MS,
                                        what, sizeof(what));
    /* a device that cannot even be queried counts as PVRDMA: fail closed */
    is_pvrdma = (ibv_query_device(ctx, &dev_attr) != 0) ||
                pvrdma_common_is_pvrdma(ibv_get_device_name(ctx->device),
                                        &dev_attr);
    return pvrdma_common_rdma_write_decide(rc, is_pvrdma, what, why, why_len);
}
