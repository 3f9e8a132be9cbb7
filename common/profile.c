/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file profile.c
 * @brief Resource profile: user requests clamped to what the device and
 *        port report.  Pure.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_profile.h"
#include "pvrdma_device.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Auto values.  Small enough to fit every device we know of (PVRDMA on
 * QEMU: max_qp_wr ~10k, max_sge 4), large enough to keep the pipe full. */
#define AUTO_SEND_WR        256
#define AUTO_RECV_WR        256
#define AUTO_SEND_SGE       4
#define AUTO_RECV_SGE       1
#define AUTO_INLINE         64
#define AUTO_SRQ_DEPTH      1024
#define MIN_SRQ_WR_FOR_AUTO 64
#define AUTO_RD_ATOMIC      4

void pvrdma_common_profile_request_init(struct pvrdma_common_profile_request *req)
{
    if (req == NULL) {
        return;
    }
    req->max_send_wr   = PVRDMA_COMMON_AUTO;
    req->max_recv_wr   = PVRDMA_COMMON_AUTO;
    req->send_sge      = PVRDMA_COMMON_AUTO;
    req->recv_sge      = PVRDMA_COMMON_AUTO;
    req->max_inline    = PVRDMA_COMMON_AUTO;
    req->use_srq       = PVRDMA_COMMON_AUTO;
    req->srq_depth     = PVRDMA_COMMON_AUTO;
    req->cq_depth      = PVRDMA_COMMON_AUTO;
    req->mtu           = PVRDMA_COMMON_AUTO;
    req->max_msg_size  = PVRDMA_COMMON_AUTO;
    req->rdma_read     = PVRDMA_COMMON_AUTO;
    req->max_rd_atomic = PVRDMA_COMMON_AUTO;
}

static bool is_auto(int64_t v)
{
    return (v == 0) || (v == PVRDMA_COMMON_AUTO);
}

/* Pick the request or the auto value, then clamp to cap. */
static uint64_t pick(int64_t req, uint64_t auto_val, uint64_t cap,
                     uint32_t bit, uint32_t *clamped)
{
    uint64_t v;

    if (is_auto(req)) {
        return (auto_val < cap) ? auto_val : cap;
    }
    v = (uint64_t)req;
    if (v > cap) {
        *clamped |= bit;
        return cap;
    }
    return v;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return (a < b) ? a : b;
}

static bool bad_value(int64_t v)
{
    return v < PVRDMA_COMMON_AUTO;
}

static bool bad_tristate(int v)
{
    return (v < PVRDMA_COMMON_AUTO) || (v > 1);
}

int pvrdma_common_profile_compute(const struct ibv_device_attr *dev,
                                  const struct ibv_port_attr *port,
                                  bool is_pvrdma,
                                  const struct pvrdma_common_profile_request *req,
                                  struct pvrdma_common_profile *out)
{
    uint64_t max_wr, max_sge, max_cqe, max_mr, port_msg, v;
    uint32_t clamped = 0;
    uint64_t recv_side;
    enum ibv_mtu port_mtu;
    uint8_t rd_cap, init_cap;

    if ((dev == NULL) || (port == NULL) || (req == NULL) || (out == NULL)) {
        return EINVAL;
    }
    if (bad_value(req->max_send_wr) || bad_value(req->max_recv_wr) ||
        bad_value(req->send_sge) || bad_value(req->recv_sge) ||
        bad_value(req->max_inline) || bad_value(req->srq_depth) ||
        bad_value(req->cq_depth) || bad_value(req->mtu) ||
        bad_value(req->max_msg_size) || bad_value(req->max_rd_atomic) ||
        bad_tristate(req->use_srq) || bad_tristate(req->rdma_read)) {
        return EINVAL;
    }
    if (!is_auto(req->mtu) &&
        ((req->mtu > UINT32_MAX) ||
         (pvrdma_common_mtu_from_bytes((uint32_t)req->mtu) == 0))) {
        return EINVAL;
    }
    if ((dev->max_qp_wr <= 0) || (dev->max_sge <= 0) || (dev->max_cqe <= 0)) {
        return EINVAL;
    }

    memset(out, 0, sizeof(*out));
    max_wr  = (uint64_t)dev->max_qp_wr;
    max_sge = (uint64_t)dev->max_sge;
    max_cqe = (uint64_t)dev->max_cqe;

    out->max_send_wr = (uint32_t)pick(req->max_send_wr, AUTO_SEND_WR, max_wr,
                                      PVRDMA_COMMON_PROFILE_MAX_SEND_WR,
                                      &clamped);
    out->max_recv_wr = (uint32_t)pick(req->max_recv_wr, AUTO_RECV_WR, max_wr,
                                      PVRDMA_COMMON_PROFILE_MAX_RECV_WR,
                                      &clamped);
    out->send_sge = (uint32_t)pick(req->send_sge, AUTO_SEND_SGE, max_sge,
                                   PVRDMA_COMMON_PROFILE_SEND_SGE, &clamped);
    out->recv_sge = (uint32_t)pick(req->recv_sge, AUTO_RECV_SGE, max_sge,
                                   PVRDMA_COMMON_PROFILE_RECV_SGE, &clamped);

    /* PVRDMA forces max_inline_data to 0; elsewhere it is only a request,
     * the created QP's caps tell the truth.  The device attributes do not
     * report an inline limit. */
    if (req->max_inline == PVRDMA_COMMON_AUTO) {
        out->max_inline = is_pvrdma ? 0 : AUTO_INLINE;
    } else if (is_pvrdma && (req->max_inline > 0)) {
        out->max_inline = 0;
        clamped |= PVRDMA_COMMON_PROFILE_MAX_INLINE;
    } else {
        out->max_inline = (uint32_t)min_u64((uint64_t)req->max_inline,
                                            UINT32_MAX);
    }

    /* SRQ only where the host reports one. */
    if (req->use_srq == 0) {
        out->use_srq = false;
    } else if ((dev->max_srq <= 0) || (dev->max_srq_wr <= 0) ||
               (dev->max_srq_sge <= 0)) {
        out->use_srq = false;
        if (req->use_srq == 1) {
            clamped |= PVRDMA_COMMON_PROFILE_USE_SRQ;
        }
    } else if (req->use_srq == 1) {
        out->use_srq = true;
    } else {
        out->use_srq = (dev->max_srq_wr >= MIN_SRQ_WR_FOR_AUTO);
    }
    if (out->use_srq) {
        out->srq_depth = (uint32_t)pick(req->srq_depth, AUTO_SRQ_DEPTH,
                                        (uint64_t)dev->max_srq_wr,
                                        PVRDMA_COMMON_PROFILE_SRQ_DEPTH,
                                        &clamped);
        if (out->recv_sge > (uint32_t)dev->max_srq_sge) {
            out->recv_sge = (uint32_t)dev->max_srq_sge;
            clamped |= PVRDMA_COMMON_PROFILE_RECV_SGE;
        }
    }

    recv_side = out->use_srq ? out->srq_depth : out->max_recv_wr;
    out->cq_depth = (uint32_t)pick(req->cq_depth,
                                   (uint64_t)out->max_send_wr + recv_side,
                                   max_cqe, PVRDMA_COMMON_PROFILE_CQ_DEPTH,
                                   &clamped);

    /* MTU: never above the port's active MTU (both ends use min anyway). */
    port_mtu = port->active_mtu;
    if (pvrdma_common_mtu_to_bytes(port_mtu) == 0) {
        port_mtu = IBV_MTU_1024; /* port down/unknown: a safe value */
    }
    if (is_auto(req->mtu)) {
        out->mtu = port_mtu;
    } else {
        enum ibv_mtu want = pvrdma_common_mtu_from_bytes((uint32_t)req->mtu);

        out->mtu = pvrdma_common_mtu_min(want, port_mtu);
        if (out->mtu != want) {
            clamped |= PVRDMA_COMMON_PROFILE_MTU;
        }
    }
    out->mtu_bytes = pvrdma_common_mtu_to_bytes(out->mtu);

    /* max_mr_size 0 is treated as "no limit reported". */
    max_mr = (dev->max_mr_size != 0) ? dev->max_mr_size : UINT64_MAX;
    if (is_pvrdma) {
        max_mr = min_u64(max_mr, PVRDMA_COMMON_MR_LIMIT);
    }
    out->max_mr_size = max_mr;
    port_msg = (port->max_msg_sz != 0) ? port->max_msg_sz : UINT64_MAX;
    v = min_u64(port_msg, max_mr);
    out->max_msg_size = pick(req->max_msg_size, v, v,
                             PVRDMA_COMMON_PROFILE_MAX_MSG_SIZE, &clamped);

    /* RDMA READ needs both responder (max_qp_rd_atom) and initiator
     * (max_qp_init_rd_atom) resources; PVRDMA on QEMU reports 0. */
    rd_cap   = (uint8_t)min_u64((dev->max_qp_rd_atom > 0) ?
                                (uint64_t)dev->max_qp_rd_atom : 0, UINT8_MAX);
    init_cap = (uint8_t)min_u64((dev->max_qp_init_rd_atom > 0) ?
                                (uint64_t)dev->max_qp_init_rd_atom : 0,
                                UINT8_MAX);
    out->max_dest_rd_atomic = (uint8_t)pick(req->max_rd_atomic, AUTO_RD_ATOMIC,
                                            rd_cap,
                                            PVRDMA_COMMON_PROFILE_MAX_RD_ATOMIC,
                                            &clamped);
    out->rdma_read_ok = (rd_cap > 0) && (init_cap > 0) && (req->rdma_read != 0);
    if ((req->rdma_read == 1) && !out->rdma_read_ok) {
        clamped |= PVRDMA_COMMON_PROFILE_RDMA_READ;
    }
    if (out->rdma_read_ok) {
        out->max_rd_atomic = (uint8_t)pick(req->max_rd_atomic, AUTO_RD_ATOMIC,
                                           init_cap,
                                           PVRDMA_COMMON_PROFILE_MAX_RD_ATOMIC,
                                           &clamped);
    } else {
        out->max_rd_atomic = 0;
    }

    out->clamped = clamped;
    return 0;
}

static const char *const field_names[PVRDMA_COMMON_PROFILE_NUM_FIELDS] = {
    "max_send_wr", "max_recv_wr", "send_sge", "recv_sge", "max_inline",
    "use_srq", "srq_depth", "cq_depth", "mtu", "max_msg_size", "rdma_read",
    "max_rd_atomic"
};

const char *pvrdma_common_profile_field_name(uint32_t bit)
{
    unsigned i;

    for (i = 0; i < PVRDMA_COMMON_PROFILE_NUM_FIELDS; ++i) {
        if (bit == (1u << i)) {
            return field_names[i];
        }
    }
    return "unknown";
}

int pvrdma_common_profile_clamped_str(const struct pvrdma_common_profile *profile,
                                      char *buf, size_t len)
{
    size_t used = 0;
    unsigned i;
    int n = 0;

    if ((buf != NULL) && (len > 0)) {
        buf[0] = '\0';
    }
    if (profile == NULL) {
        return 0;
    }
    for (i = 0; i < PVRDMA_COMMON_PROFILE_NUM_FIELDS; ++i) {
        if (!(profile->clamped & (1u << i))) {
            continue;
        }
        if ((buf != NULL) && (used < len)) {
            int w = snprintf(buf + used, len - used, "%s%s",
                             (n > 0) ? ", " : "", field_names[i]);

            used += (w > 0) ? (size_t)w : 0;
        }
        ++n;
    }
    return n;
}
