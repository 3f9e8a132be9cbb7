/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_device.c
 * @brief Port choice, device resources (PD, CQ, SRQ) and the resource
 *        profile: every queue size is taken from the device and can be
 *        overridden by an MCA parameter.
 */
#include "opal_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "btl_pvrdma_compat.h"
#include "opal/util/show_help.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_budget.h"
#include "btl_pvrdma_error.h"
#include "btl_pvrdma_frag.h"

static bool str_set(const char *s)
{
    return NULL != s && '\0' != s[0];
}

/** True when the user named this BTL in "--mca btl ..." (not as exclusion). */
static bool pvrdma_explicitly_requested(void)
{
    char **value = NULL;
    int idx = mca_base_var_find("opal", "btl", NULL, NULL);

    if (str_set(mca_btl_pvrdma_component.if_include)) {
        return true;
    }
    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) ||
        NULL == value || NULL == *value) {
        return false;
    }
    return '^' != (*value)[0] && NULL != strstr(*value, "pvrdma");
}

static int parse_list(const char *param, const char *str, struct pvrdma_common_port_list *list)
{
    char err[256] = "";

    if (0 != pvrdma_common_port_list_parse(str, list, err, sizeof(err))) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "bad port list", true, param, str, err,
                       opal_process_info.nodename);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/** Choose the port: the discovery order already prefers PVRDMA, then
 *  ACTIVE ports, then the NUMA-nearest one. */
static int choose_port(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    struct pvrdma_common_port_list inc = {NULL, 0}, exc = {NULL, 0};
    struct pvrdma_common_port *ports = NULL;
    size_t count = 0;
    char why[1024] = "";
    int rc;

    if (str_set(c->if_include) && str_set(c->if_exclude)) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "include and exclude", true,
                       opal_process_info.nodename, c->if_include, c->if_exclude);
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != parse_list("btl_pvrdma_if_include", c->if_include, &inc) ||
        OPAL_SUCCESS != parse_list("btl_pvrdma_if_exclude", c->if_exclude, &exc)) {
        pvrdma_common_port_list_free(&inc);
        return OPAL_ERR_BAD_PARAM;
    }

    rc = pvrdma_common_ports_discover(&inc, &exc, &ports, &count, why, sizeof(why));
    pvrdma_common_port_list_free(&inc);
    pvrdma_common_port_list_free(&exc);
    if (0 != rc || 0 == count || !ports[0].active) {
        if (pvrdma_explicitly_requested()) {
            opal_show_help(MCA_BTL_PVRDMA_HELP, "no usable port", true,
                           opal_process_info.nodename,
                           str_set(c->if_include) ? c->if_include : "(not set)",
                           str_set(c->if_exclude) ? c->if_exclude : "(not set)",
                           why[0] ? why : strerror(0 != rc ? rc : ENODEV));
        } else {
            MCA_BTL_PVRDMA_VERBOSE(5, "no usable port: %s", why[0] ? why : strerror(rc));
        }
        pvrdma_common_ports_free(ports);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (why[0]) {
        /* something in the include list was unusable, but another port works */
        MCA_BTL_PVRDMA_VERBOSE(1, "note: %s", why);
    }
    module->port = ports[0];
    (void) pvrdma_common_retry_counters_read(module->port.dev_name, module->port.port_num,
                                             &module->retries_at_open);
    pvrdma_common_ports_free(ports);
    return OPAL_SUCCESS;
}

static int compute_profile(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    struct pvrdma_common_profile_request req;
    char clamped[256];
    int rc;

    pvrdma_common_profile_request_init(&req);
    req.max_send_wr = c->send_queue_depth;
    /* the receive queue holds the peer's credits plus room for its
     * explicit credit-return messages */
    req.max_recv_wr = c->recv_queue_depth > 0 ? c->recv_queue_depth : PVRDMA_COMMON_AUTO;
    req.send_sge = c->send_sge;
    req.recv_sge = 1;   /* one eager buffer per receive WR */
    req.max_inline = c->max_inline;
    req.use_srq = c->srq;
    req.srq_depth = c->srq_depth;
    req.cq_depth = c->cq_depth > 0 ? c->cq_depth : 8192;
    req.mtu = c->mtu;
    req.max_msg_size = (int64_t) c->max_msg_size;
    /* READ resources on the QPs (max_rd_atomic) also when only osc rdma
     * would use them: atomics share that depth, and osc rdma needs
     * btl_get; only where the device has atomics (PVRDMA: none) */
    req.rdma_read = (MCA_BTL_PVRDMA_TRI_OFF == c->rdma_read && MCA_BTL_PVRDMA_TRI_OFF != c->atomics &&
                     IBV_ATOMIC_NONE != module->port.dev_attr.atomic_cap)
                        ? MCA_BTL_PVRDMA_TRI_AUTO : c->rdma_read;
    req.max_rd_atomic = c->max_rd_atomic;

    rc = pvrdma_common_profile_compute(&module->port.dev_attr, &module->port.port_attr,
                                       module->port.is_pvrdma, &req, &module->profile);
    if (0 != rc) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "bad profile", true, opal_process_info.nodename,
                       module->port.dev_name, (int) module->port.port_num,
                       "invalid MCA parameter value (negative, or an MTU that is not "
                       "256/512/1024/2048/4096)");
        return OPAL_ERR_BAD_PARAM;
    }
    if (MCA_BTL_PVRDMA_TRI_ON == c->srq && !module->profile.use_srq) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "srq unavailable", true, opal_process_info.nodename,
                       module->port.dev_name, (int) module->port.port_num);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (MCA_BTL_PVRDMA_TRI_ON == c->rdma_read && !module->profile.rdma_read_ok) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "rdma read unavailable", true,
                       opal_process_info.nodename, module->port.dev_name,
                       (int) module->port.port_num, module->port.dev_attr.max_qp_rd_atom,
                       module->port.dev_attr.max_qp_init_rd_atom);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    module->pml_get = module->profile.rdma_read_ok && MCA_BTL_PVRDMA_TRI_OFF != c->rdma_read;
    if (pvrdma_common_profile_clamped_str(&module->profile, clamped, sizeof(clamped)) > 0) {
        MCA_BTL_PVRDMA_VERBOSE(1, "reduced to the limits of %s: %s", module->port.dev_name, clamped);
    }
    MCA_BTL_PVRDMA_VERBOSE(5, "profile of %s:%d%s: sq %u rq %u sge %u/%u inline %u srq %s(%u) cq %u "
                   "mtu %u max_msg %llu rdma_read %s (ob1 %s)",
                   module->port.dev_name, module->port.port_num,
                   module->port.is_pvrdma ? " (PVRDMA)" : "", module->profile.max_send_wr,
                   module->profile.max_recv_wr, module->profile.send_sge,
                   module->profile.recv_sge, module->profile.max_inline,
                   module->profile.use_srq ? "on" : "off", module->profile.srq_depth,
                   module->profile.cq_depth, module->profile.mtu_bytes,
                   (unsigned long long) module->profile.max_msg_size,
                   module->profile.rdma_read_ok ? "yes" : "no", module->pml_get ? "yes" : "no");
    return OPAL_SUCCESS;
}

/* Decide whether the rendezvous may use RDMA WRITE (see btl_pvrdma_rdma_write). */
static void choose_rdma_write(mca_btl_pvrdma_module_t *module)
{
    int mode = mca_btl_pvrdma_component.rdma_write;
    struct pvrdma_common_probe_port port;
    char why[256];

    module->rdma_write_ok = (MCA_BTL_PVRDMA_TRI_OFF != mode);
    if (MCA_BTL_PVRDMA_TRI_AUTO != mode) {
        return;
    }
    port.port_num = module->port.port_num;
    port.link_layer = module->port.link_layer;
    port.gid_index = (int) module->gid.index;
    port.lid = module->port.port_attr.lid;
    port.mtu = module->profile.mtu;
    module->rdma_write_ok = pvrdma_common_rdma_write_usable(module->ctx, module->pd, &port,
                                                            why, sizeof(why));
    MCA_BTL_PVRDMA_VERBOSE(module->rdma_write_ok ? 5 : 1, "%s:%d: %s%s", module->port.dev_name,
                           module->port.port_num, why, module->rdma_write_ok ? "" :
                           "; large messages use send/recv copies");
}

/** Network atomics for osc rdma (btl_pvrdma_atomics), offered through the
 *  one-sided module: they need the device's atomic_cap, the READ initiator
 *  depth (max_rd_atomic) and, as osc rdma needs btl_get and btl_put
 *  beside them, READs and WRITEs. */
static int choose_atomics(mca_btl_pvrdma_module_t *module)
{
    int mode = mca_btl_pvrdma_component.atomics;
    const char *missing = NULL;

    if (IBV_ATOMIC_NONE == module->port.dev_attr.atomic_cap) {
        missing = "the device reports atomic_cap ATOMIC_NONE (as real ESXi PVRDMA devices "
                  "and QEMU's model do)";
    } else if (!module->profile.rdma_read_ok || 0 == module->profile.max_rd_atomic) {
        missing = "the device cannot initiate RDMA READs (max_qp_rd_atom or max_qp_init_rd_atom "
                  "is 0, or btl_pvrdma_max_rd_atomic 0), which the atomics need, and osc rdma "
                  "needs btl_get beside them";
    } else if (!module->rdma_write_ok) {
        missing = "RDMA WRITE does not land on this device, and osc rdma needs btl_put";
    }
    module->atomics_ok = (MCA_BTL_PVRDMA_TRI_OFF != mode) && (NULL == missing);
    if (MCA_BTL_PVRDMA_TRI_ON == mode && NULL != missing) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "atomics unavailable", true, missing,
                       opal_process_info.nodename, module->port.dev_name,
                       (int) module->port.port_num);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    MCA_BTL_PVRDMA_VERBOSE(5, "%s:%d: network atomics %s%s%s", module->port.dev_name,
                           module->port.port_num, module->atomics_ok ? "offered" : "not offered",
                           NULL != missing ? ": " : "", NULL != missing ? missing : "");
    return OPAL_SUCCESS;
}

static int choose_gid(mca_btl_pvrdma_module_t *module)
{
    char err[256] = "";
    int rc;

    rc = pvrdma_common_gid_select(module->ctx, module->port.port_num, &module->port.port_attr,
                                  mca_btl_pvrdma_component.gid_index, &module->gid, err,
                                  sizeof(err));
    if (0 != rc) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "bad gid", true, opal_process_info.nodename,
                       module->port.dev_name, (int) module->port.port_num,
                       mca_btl_pvrdma_component.gid_index, err[0] ? err : strerror(rc));
        return OPAL_ERR_BAD_PARAM;
    }
    if (MCA_BTL_PVRDMA_VERBOSE_ON(5)) {
        char gid[64];
        MCA_BTL_PVRDMA_VERBOSE(5, "using GID index %u (%s) %s", module->gid.index,
                       pvrdma_common_gid_type_str(module->gid.type),
                       pvrdma_common_gid_str(&module->gid.gid, gid, sizeof(gid)));
    }
    return OPAL_SUCCESS;
}

int mca_btl_pvrdma_device_open(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    struct pvrdma_common_qp_params *qp = &module->qp_params;
    int rc;

    rc = choose_port(module);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = compute_profile(module);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }

    module->ctx = pvrdma_common_open_device(module->port.dev_name);
    if (NULL == module->ctx) {
        mca_btl_pvrdma_error_verbs(module, "ibv_open_device", errno);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    rc = choose_gid(module);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    module->pd = ibv_alloc_pd(module->ctx);
    if (NULL == module->pd) {
        mca_btl_pvrdma_error_verbs(module, "ibv_alloc_pd", errno);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    choose_rdma_write(module);
    rc = choose_atomics(module);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }

    pvrdma_common_qp_params_from_profile(qp, &module->profile, module->port.port_num,
                                         module->port.link_layer, (uint8_t) module->gid.index);
    /* a peer's atomics need the responder's permission on the QP too */
    qp->access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                       (module->atomics_ok ? IBV_ACCESS_REMOTE_ATOMIC : 0);
    qp->min_rnr_timer = (uint8_t) c->min_rnr_timer;
    qp->timeout = (uint8_t) c->rc_timeout;
    qp->retry_cnt = (uint8_t) c->rc_retry_count;
    qp->rnr_retry = (uint8_t) c->rnr_retry;
    return OPAL_SUCCESS;
}

/* Peers this process may connect to: the job's size (PMIx) minus itself;
 * 0 when the launcher does not say. */
static uint32_t job_peers(void)
{
    opal_process_name_t wildcard;
    uint32_t size = 0, *sizep = &size;
    int rc;

    wildcard.jobid = OPAL_PROC_MY_NAME.jobid;
    wildcard.vpid = OPAL_VPID_WILDCARD;
    OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, PVRDMA_MODEX_JOB_SIZE, &wildcard, &sizep, PVRDMA_MODEX_UINT32);
    return (OPAL_SUCCESS == rc && size > 1) ? size - 1 : 0;
}

static int make_plan(mca_btl_pvrdma_module_t *module, uint32_t cq_max)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    struct pvrdma_common_scale_request req;

    memset(&req, 0, sizeof(req));
    req.peers = module->job_peers;
    req.procs_per_device = (uint32_t) opal_process_info.num_local_peers + 1;
    req.qps_per_peer = 1;
    req.cq_max = cq_max;
    req.send_budget = c->send_budget > 0 ? (uint32_t) c->send_budget : 0;
    req.max_send_wr = module->profile.max_send_wr;
    req.send_sge = module->profile.send_sge;
    req.recv_per_peer = module->profile.max_recv_wr;
    req.use_srq = module->profile.use_srq;
    req.srq_depth = module->profile.srq_depth;
    req.buf_size = module->frag_size;
    return pvrdma_common_scale_plan(&module->port.dev_attr, &req, &module->plan);
}

/* Print what connections cost (README "Scale" quotes these lines). */
static void report_plan(const mca_btl_pvrdma_module_t *module)
{
    const struct pvrdma_common_scale_plan *pl = &module->plan;
    uint32_t peers = module->job_peers;
    char fit[32];

    if (UINT32_MAX == pl->peers_fit_cq) {
        snprintf(fit, sizeof(fit), "any number");   /* receives on the SRQ */
    } else {
        snprintf(fit, sizeof(fit), "%u", pl->peers_fit_cq);
    }
    MCA_BTL_PVRDMA_VERBOSE(5, "%s:%d: CQ %u entries = %u send WRs in flight + %s %u; "
                           "%u peers (job), %s fit the CQ, %u fit max_qp %d with %d "
                           "processes on this device",
                           module->port.dev_name, module->port.port_num, pl->cq_depth,
                           pl->send_budget, pl->srq_depth ? "SRQ" : "receives", pl->srq_depth ?
                           pl->srq_depth : pl->recv_room, peers, fit, pl->peers_fit_qp,
                           module->port.dev_attr.max_qp, opal_process_info.num_local_peers + 1);
    MCA_BTL_PVRDMA_VERBOSE(5, "%s:%d: locked memory: %llu KiB per peer (%u receives of %zu B, "
                           "QP rings), %llu KiB fixed (CQ%s), %llu KiB at %u peers%s",
                           module->port.dev_name, module->port.port_num,
                           (unsigned long long) (pl->mem_per_peer >> 10), pl->recv_per_peer,
                           module->frag_size, (unsigned long long) (pl->mem_fixed >> 10),
                           pl->srq_depth ? ", SRQ buffers" : "",
                           (unsigned long long) (pvrdma_common_scale_mem(pl, peers) >> 10), peers,
                           pl->recv_reduced ? "; receives per peer lowered to fit the CQ "
                           "(btl_pvrdma_cq_depth, btl_pvrdma_srq)" : "");
}

/** The completion channel of the armed wait, where the idle wait is on
 *  and btl_pvrdma_idle_arm is not 0 (without it the CQs are polled, as
 *  before: nothing is lost but the doorbells it saves). */
static void open_notify(mca_btl_pvrdma_module_t *module)
{
    int rc;

    if (0 == module->idle.poll_us || mca_btl_pvrdma_component.idle_arm_ms <= 0) {
        return;
    }
    rc = pvrdma_common_cq_notify_open(&module->notify, module->ctx,
                                      (uint64_t) mca_btl_pvrdma_component.idle_arm_ms * 1000u);
    /* (idle_arm_ms 0 never gets here: 0 turns the armed wait off) */
    if (0 != rc) {
        MCA_BTL_PVRDMA_VERBOSE(1, "%s:%d: no completion channel (%s): a waiting process "
                               "polls its CQs", module->port.dev_name, module->port.port_num,
                               strerror(rc));
    }
}

int mca_btl_pvrdma_device_create_queues(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    uint32_t cq_max = (uint32_t) module->port.dev_attr.max_cqe, depth;
    int rc;

    if (c->cq_depth > 0 && (uint32_t) c->cq_depth < cq_max) {
        cq_max = (uint32_t) c->cq_depth;
    }
    module->job_peers = job_peers();
    rc = make_plan(module, cq_max);
    if (0 != rc) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "bad profile", true, opal_process_info.nodename,
                       module->port.dev_name, (int) module->port.port_num,
                       "btl_pvrdma_cq_depth is too small for one send and one peer's receives");
        return OPAL_ERR_BAD_PARAM;
    }
    /* the device may take less than max_cqe (QEMU's model: 4096): then plan
     * again for the CQ it did take */
    depth = module->plan.cq_depth;
    open_notify(module);
    module->cq = pvrdma_common_create_cq(module->ctx, &depth,
                                         module->plan.send_budget + PVRDMA_COMMON_SCALE_RECV_MIN,
                                         pvrdma_common_cq_notify_channel(&module->notify));
    if (NULL == module->cq) {
        mca_btl_pvrdma_error_verbs(module, "ibv_create_cq", errno);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    (void) pvrdma_common_cq_notify_add(&module->notify, module->cq);
    if (depth < module->plan.cq_depth && 0 != make_plan(module, depth)) {
        mca_btl_pvrdma_error_verbs(module, "ibv_create_cq (too small for one peer)", ENOSPC);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    module->profile.cq_depth = module->plan.cq_depth;
    module->cq_committed = 0;
    module->sq_posted = 0;
    if (module->profile.use_srq) {
        struct ibv_srq_init_attr attr = {0};

        attr.attr.max_wr = module->plan.srq_depth;
        attr.attr.max_sge = 1;
        module->srq = ibv_create_srq(module->pd, &attr);
        if (NULL == module->srq) {
            if (MCA_BTL_PVRDMA_TRI_ON == c->srq) {
                mca_btl_pvrdma_error_verbs(module, "ibv_create_srq", errno);
                return OPAL_ERR_NOT_AVAILABLE;
            }
            /* auto: per-QP receive queues work everywhere; the CQ made for
             * the SRQ is what the per-QP receives get */
            MCA_BTL_PVRDMA_VERBOSE(1, "ibv_create_srq failed (%s); using per-QP receive queues",
                           strerror(errno));
            module->profile.use_srq = false;
            if (0 != make_plan(module, module->plan.cq_depth)) {
                mca_btl_pvrdma_error_verbs(module, "ibv_create_srq", ENOSPC);
                return OPAL_ERR_NOT_AVAILABLE;
            }
        } else {
            module->profile.srq_depth = module->plan.srq_depth;
        }
    }
    report_plan(module);
    mca_btl_pvrdma_budget_init(module);
    return OPAL_SUCCESS;
}

void mca_btl_pvrdma_device_close(mca_btl_pvrdma_module_t *module)
{
    if (module->srq) {
        (void) ibv_destroy_srq(module->srq);
        module->srq = NULL;
    }
    if (module->cq) {
        (void) ibv_destroy_cq(module->cq);
        module->cq = NULL;
    }
    /* after every CQ on it (the connection manager's are closed first) */
    pvrdma_common_cq_notify_close(&module->notify);
    if (module->pd) {
        (void) ibv_dealloc_pd(module->pd);
        module->pd = NULL;
    }
    if (module->ctx) {
        (void) ibv_close_device(module->ctx);
        module->ctx = NULL;
    }
}

/* What the SRQ is filled to: the receives the peers were granted and one
 * repost batch more, so that it never holds fewer than granted while
 * consumed buffers wait for a whole batch; never beyond its depth, which
 * the CQ was sized for (common/scale.c) */
static uint32_t srq_fill_level(const mca_btl_pvrdma_module_t *module)
{
    uint32_t level = module->srq_target + MCA_BTL_PVRDMA_REPOST_BATCH;

    return level < module->profile.srq_depth ? level : module->profile.srq_depth;
}

/* After receives were consumed: refill only once a batch is missing */
int mca_btl_pvrdma_srq_refill_batched(mca_btl_pvrdma_module_t *module)
{
    if (module->srq_posted + MCA_BTL_PVRDMA_REPOST_BATCH > srq_fill_level(module)) {
        return OPAL_SUCCESS;
    }
    return mca_btl_pvrdma_srq_refill(module);
}

int mca_btl_pvrdma_srq_refill(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_frag_t *head = NULL, *tail = NULL, *frag;
    uint32_t n = 0, level = srq_fill_level(module);
    struct ibv_recv_wr *bad;
    int rc;

    /* one WR list, one doorbell */
    while (module->srq_posted + n < level) {
        frag = mca_btl_pvrdma_frag_get(&module->recv_frags);
        if (NULL == frag) {
            break;
        }
        frag->endpoint = NULL;
        frag->wr.recv.next = NULL;
        if (NULL == head) {
            head = frag;
        } else {
            tail->wr.recv.next = &frag->wr.recv;
        }
        tail = frag;
        n++;
    }
    if (0 == n) {
        return OPAL_SUCCESS;
    }
    rc = ibv_post_srq_recv(module->srq, &head->wr.recv, &bad);
    if (0 != rc) {
        /* the caller reports it (set-up or running) */
        MCA_BTL_PVRDMA_VERBOSE(1, "ibv_post_srq_recv: %s", strerror(rc));
        return OPAL_ERROR;
    }
    module->srq_posted += n;
    module->recvs_posted += n;
    return OPAL_SUCCESS;
}
