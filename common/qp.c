/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file qp.c
 * @brief RC QPs: creation, their first PSN, and the state transitions
 *        RESET -> INIT -> RTR -> RTS, and -> ERR.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_qp.h"
#include "pvrdma_device.h"
#include "pvrdma_profile.h"
#include "pvrdma_addr.h"
#include "pvrdma_gid.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct ibv_qp *pvrdma_common_rc_qp_create(struct ibv_pd *pd, struct ibv_cq *cq,
                                          struct ibv_srq *srq,
                                          struct ibv_qp_cap *cap)
{
    struct ibv_qp_init_attr init;
    struct ibv_qp *qp;

    memset(&init, 0, sizeof(init));
    init.send_cq    = cq;
    init.recv_cq    = cq;
    init.srq        = srq;
    init.qp_type    = IBV_QPT_RC;
    init.sq_sig_all = 0;
    init.cap        = *cap;
    if (srq != NULL) {
        init.cap.max_recv_wr  = 0;
        init.cap.max_recv_sge = 0;
    }
    qp = ibv_create_qp(pd, &init);
    if ((qp == NULL) && (init.cap.max_inline_data != 0)) {
        /* some providers refuse any inline request (PVRDMA: none at all) */
        init.cap.max_inline_data = 0;
        qp = ibv_create_qp(pd, &init);
    }
    if (qp != NULL) {
        *cap = init.cap;   /* what the provider granted is the final word */
    }
    return qp;
}

uint32_t pvrdma_common_psn_new(void)
{
    uint32_t r;

    /* unpredictable: a datagram that guesses a PSN in the window is taken
     * as the peer's; the fallback is only for kernels without getrandom */
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t) sizeof(r)) {
        r = ((uint32_t) getpid() * 2654435761u) ^ (uint32_t) clock();
    }
    return r & 0xffffffu;
}

int pvrdma_common_random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        p   += n;
        len -= (size_t) n;
    }
    return 0;
}

void pvrdma_common_qp_params_init(struct pvrdma_common_qp_params *p)
{
    if (p == NULL) {
        return;
    }
    memset(p, 0, sizeof(*p));
    p->port_num           = 1;
    p->mtu                = IBV_MTU_1024;
    p->link_layer         = IBV_LINK_LAYER_ETHERNET;
    p->hop_limit          = 64;
    p->min_rnr_timer      = 12;
    p->timeout            = 14;
    p->retry_cnt          = 7;
    p->rnr_retry          = 7;
}

void pvrdma_common_qp_params_from_profile(struct pvrdma_common_qp_params *p,
                                          const struct pvrdma_common_profile *profile,
                                          uint8_t port_num, uint8_t link_layer,
                                          uint8_t sgid_index)
{
    pvrdma_common_qp_params_init(p);
    p->port_num           = port_num;
    p->link_layer         = link_layer;
    p->sgid_index         = sgid_index;
    p->mtu                = profile->mtu;
    p->max_dest_rd_atomic = profile->max_dest_rd_atomic;
    p->max_rd_atomic      = profile->max_rd_atomic;
}

/* ibv_modify_qp returns an errno (or -1 with errno on old providers). */
int pvrdma_common_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                            int mask)
{
    int rc = ibv_modify_qp(qp, attr, mask);

    if (rc < 0) {
        rc = (errno != 0) ? errno : EIO;
    }
    return rc;
}

int pvrdma_common_qp_to_init(struct ibv_qp *qp,
                             const struct pvrdma_common_qp_params *p)
{
    struct ibv_qp_attr attr;

    if ((qp == NULL) || (p == NULL)) {
        return EINVAL;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state        = IBV_QPS_INIT;
    attr.pkey_index      = p->pkey_index;
    attr.port_num        = p->port_num;
    attr.qp_access_flags = (p->access_flags != 0) ? p->access_flags :
                           (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                            IBV_ACCESS_REMOTE_READ);
    return pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                             IBV_QP_ACCESS_FLAGS);
}

int pvrdma_common_qp_to_rtr(struct ibv_qp *qp,
                            const struct pvrdma_common_qp_params *p,
                            const struct pvrdma_common_addr_info *remote)
{
    struct ibv_qp_attr attr;

    if ((qp == NULL) || (p == NULL) || (remote == NULL) ||
        (pvrdma_common_mtu_to_bytes(p->mtu) == 0) ||
        (pvrdma_common_mtu_to_bytes(remote->mtu) == 0)) {
        return EINVAL;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state           = IBV_QPS_RTR;
    attr.path_mtu           = pvrdma_common_mtu_min(p->mtu, remote->mtu);
    attr.dest_qp_num        = remote->qpn;
    attr.rq_psn             = remote->psn;
    attr.max_dest_rd_atomic = p->max_dest_rd_atomic;
    attr.min_rnr_timer      = p->min_rnr_timer;
    pvrdma_common_ah_attr_fill(&attr.ah_attr, p, &remote->gid, remote->lid);
    return pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                             IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int pvrdma_common_qp_to_rts(struct ibv_qp *qp,
                            const struct pvrdma_common_qp_params *p,
                            const struct pvrdma_common_addr_info *remote,
                            uint32_t sq_psn)
{
    struct ibv_qp_attr attr;

    if ((qp == NULL) || (p == NULL) || (sq_psn > 0xffffffu)) {
        return EINVAL;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state      = IBV_QPS_RTS;
    attr.timeout       = p->timeout;
    attr.retry_cnt     = p->retry_cnt;
    attr.rnr_retry     = p->rnr_retry;
    attr.sq_psn        = sq_psn;
    /* Never more outstanding READs than the peer can serve. */
    attr.max_rd_atomic = p->max_rd_atomic;
    if ((remote != NULL) && (remote->max_dest_rd_atomic < attr.max_rd_atomic)) {
        attr.max_rd_atomic = remote->max_dest_rd_atomic;
    }
    return pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
                             IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int pvrdma_common_qp_to_err(struct ibv_qp *qp)
{
    struct ibv_qp_attr attr;

    if (qp == NULL) {
        return EINVAL;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    return pvrdma_common_qp_modify(qp, &attr, IBV_QP_STATE);
}

/* The address vector of an RC QP (RTR) and of a UD address handle (ud.c):
 * here, so that ud.c uses qp.c and not the other way round. */
void pvrdma_common_ah_attr_fill(struct ibv_ah_attr *ah,
                                const struct pvrdma_common_qp_params *p,
                                const union ibv_gid *dgid, uint16_t dlid)
{
    memset(ah, 0, sizeof(*ah));
    ah->port_num = p->port_num;
    ah->sl       = p->sl;
    ah->dlid     = dlid;
    /* RoCE has no LIDs: the GRH carries the addressing; on InfiniBand a
     * known GID adds one too (routable beyond the subnet, harmless within) */
    if ((p->link_layer == IBV_LINK_LAYER_ETHERNET) ||
        !pvrdma_common_gid_is_zero(dgid)) {
        ah->is_global          = 1;
        ah->grh.dgid           = *dgid;
        ah->grh.sgid_index     = p->sgid_index;
        ah->grh.hop_limit      = p->hop_limit;
        ah->grh.traffic_class  = p->traffic_class;
    }
}
