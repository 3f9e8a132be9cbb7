/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_component.c
 * @brief MCA parameters, component open/close/init and the progress entry.
 */
#include "opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/util/show_help.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_osc.h"
#include "btl_pvrdma_error.h"

static int pvrdma_component_register(void);
static int pvrdma_component_open(void);
static int pvrdma_component_close(void);
static mca_btl_base_module_t **pvrdma_component_init(int *num_btls,
                                                     bool enable_progress_threads,
                                                     bool enable_mpi_threads);
static int pvrdma_component_progress(void);

mca_btl_pvrdma_component_t mca_btl_pvrdma_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("pvrdma"),
            .mca_open_component = pvrdma_component_open,
            .mca_close_component = pvrdma_component_close,
            .mca_register_component_params = pvrdma_component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_NONE,
        },
        .btl_init = pvrdma_component_init,
        .btl_progress = pvrdma_component_progress,
    },
};

/** Register one int parameter of this component. */
static void reg_int(const char *name, const char *help, mca_base_var_enum_t *en,
                    mca_base_var_info_lvl_t level, int *storage)
{
    (void) mca_base_component_var_register(&mca_btl_pvrdma_component.super.btl_version,
                                           name, help, MCA_BASE_VAR_TYPE_INT, en, 0,
                                           MCA_BASE_VAR_FLAG_SETTABLE, level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int pvrdma_component_register(void)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    mca_btl_base_module_t *m = &mca_btl_pvrdma_module_template.super;
    static const mca_base_var_enum_value_t tri_values[] = {
        {MCA_BTL_PVRDMA_TRI_AUTO, "auto"},
        {MCA_BTL_PVRDMA_TRI_OFF, "off"},
        {MCA_BTL_PVRDMA_TRI_ON, "on"},
        {0, NULL}};
    mca_base_var_enum_t *tri_enum = NULL;

    (void) mca_base_var_group_component_register(&c->super.btl_version,
        "RC verbs BTL tuned for VMware PVRDMA (works on any RoCE/IB port)");

    /* ---- device choice ---- */
    c->if_include = NULL;
    (void) mca_base_component_var_register(&c->super.btl_version, "if_include",
        "Comma-separated list of verbs ports to use, as dev or dev:port (e.g. "
        "vmw_pvrdma0:1). Mutually exclusive with btl_pvrdma_if_exclude. Default: "
        "empty (prefer PVRDMA devices, then any ACTIVE port, NUMA-nearest first)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_1,
        MCA_BASE_VAR_SCOPE_READONLY, &c->if_include);
    c->if_exclude = NULL;
    (void) mca_base_component_var_register(&c->super.btl_version, "if_exclude",
        "Comma-separated list of verbs ports (dev or dev:port) never to use. "
        "Mutually exclusive with btl_pvrdma_if_include. Default: empty",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_1,
        MCA_BASE_VAR_SCOPE_READONLY, &c->if_exclude);
    c->gid_index = -1;
    reg_int("gid_index", "GID table index to use on RoCE ports; all peers must use "
            "the same GID type. -1: automatic (RoCE v2 IPv4-mapped GID, else RoCE "
            "v2, else RoCE v1). Default: -1", NULL, OPAL_INFO_LVL_2, &c->gid_index);

    /* ---- resource profile ---- */
    (void) mca_base_var_enum_create("btl_pvrdma_tristate", tri_values, &tri_enum);
    c->srq = MCA_BTL_PVRDMA_TRI_AUTO;
    reg_int("srq", "Use a shared receive queue: auto (when the device has SRQs), "
            "on (require one), off (per-QP receive queues). Default: auto",
            tri_enum, OPAL_INFO_LVL_4, &c->srq);
    c->srq_depth = 0;
    reg_int("srq_depth", "Maximum receives posted on the SRQ, clamped to the "
            "device's max_srq_wr. 0: device profile (1024). Default: 0", NULL,
            OPAL_INFO_LVL_5, &c->srq_depth);
    c->send_queue_depth = 0;
    reg_int("send_queue_depth", "Send work requests per RC QP, clamped to max_qp_wr. "
            "0: device profile (256). Default: 0", NULL, OPAL_INFO_LVL_5,
            &c->send_queue_depth);
    c->recv_queue_depth = 64;
    reg_int("recv_queue_depth", "Receive buffers per peer, which is also the number "
            "of eager send credits a peer gets (flow control: a receiver never "
            "runs out of posted receives). Clamped to max_qp_wr. Without SRQ, lowered "
            "(not below 8) when the job's peers would not fit the completion queue; "
            "each costs a locked eager buffer per peer. Default: 64",
            NULL, OPAL_INFO_LVL_5, &c->recv_queue_depth);
    c->send_sge = 0;
    reg_int("send_sge", "Scatter/gather entries per send WR, clamped to max_sge "
            "(PVRDMA: 4). 0: device profile. Default: 0", NULL, OPAL_INFO_LVL_6,
            &c->send_sge);
    c->max_inline = -1;
    reg_int("max_inline", "Inline data bytes to request per send WR; the QP's "
            "reported cap is used. -1: automatic (0 on PVRDMA, which has no inline "
            "support; 64 elsewhere). Default: -1", NULL, OPAL_INFO_LVL_5,
            &c->max_inline);
    c->cq_depth = 0;
    reg_int("cq_depth", "Most entries of the completion queue shared by all RC QPs, "
            "clamped to max_cqe and to what the device accepts (never resized: PVRDMA "
            "cannot). 0: sized for the job at start-up (send budget plus every peer's "
            "receives, or the SRQ). Default: 0",
            NULL, OPAL_INFO_LVL_5, &c->cq_depth);
    c->send_budget = 0;
    reg_int("send_budget", "Send work requests in flight on all RC QPs of a process "
            "together; the completion queue holds this many plus every posted receive "
            "(a failing QP flushes all its WRs, unsignalled ones too). Sends beyond it "
            "wait in the BTL. 0: min(1024, a quarter of the CQ). Default: 0",
            NULL, OPAL_INFO_LVL_6, &c->send_budget);
    c->mtu = 0;
    reg_int("mtu", "Path MTU in bytes (256, 512, 1024, 2048, 4096), clamped to the "
            "port's active MTU (PVRDMA: usually 1024). 0: port active MTU. "
            "Default: 0", NULL, OPAL_INFO_LVL_4, &c->mtu);
    /* WRITE-based rendezvous by default: PVRDMA hosts commonly report
     * max_qp_rd_atom 0 (no READ initiator at all), and on software RoCE a
     * lost READ response stalls far longer than a lost WRITE (measured on
     * the QEMU/rxe bed: ~0.5 MB/s with READ, 4-6 MB/s with WRITE). */
    c->rdma_read = MCA_BTL_PVRDMA_TRI_OFF;
    reg_int("rdma_read", "Offer RDMA READ (btl_get) to the PML: off (the rendezvous "
            "uses RDMA WRITE, btl_put), auto (READ when the device has "
            "max_qp_rd_atom > 0), on (require READ). One-sided MPI (osc rdma) gets "
            "READ through the BTL's one-sided module wherever the device has "
            "atomics, whatever this says. Default: off", tri_enum,
            OPAL_INFO_LVL_4, &c->rdma_read);
    /* A probe, not trust: QEMU's pvrdma device model turns WRITEs into
     * SENDs (see common/rdma_probe.c); there only send/recv carries data. */
    c->rdma_write = MCA_BTL_PVRDMA_TRI_AUTO;
    reg_int("rdma_write", "Offer RDMA WRITE (btl_put) to the PML: auto (one loopback "
            "WRITE at start-up checks that WRITEs land; if not, e.g. on QEMU's pvrdma "
            "device model, large messages go as pipelined send/recv copies), on (use "
            "WRITE without the check), off (never: send/recv copies, or RDMA READ "
            "when btl_pvrdma_rdma_read allows). Default: auto", tri_enum,
            OPAL_INFO_LVL_4, &c->rdma_write);
    /* Only osc rdma uses them, with btl_put and btl_get: a second module,
     * for osc rdma only, offers all three (btl_pvrdma_osc.c).  Real ESXi
     * PVRDMA devices and QEMU's model report no atomics. */
    c->atomics = MCA_BTL_PVRDMA_TRI_AUTO;
    reg_int("atomics", "Offer 64-bit network atomics (fetch-and-add, compare-and-swap) "
            "with RDMA WRITE and READ to one-sided MPI (osc rdma), through a second "
            "module that point-to-point never uses: auto (when the device reports "
            "atomic_cap and can initiate RDMA READs and WRITEs), on (require them), "
            "off. Without them osc pt2pt serves one-sided MPI over this BTL. "
            "Default: auto",
            tri_enum, OPAL_INFO_LVL_4, &c->atomics);
    /* before Linux 5.13 a fork() corrupts registered memory (common/fork.c) */
    c->fork_init = MCA_BTL_PVRDMA_TRI_AUTO;
    reg_int("fork_init", "Protect registered memory across fork()/system() with "
            "ibv_fork_init, which kernels before 5.13 need: auto (when the kernel "
            "needs it; if memory was registered before, say so at verbose level), "
            "on (the BTL is not used when it fails), off (never). RDMAV_FORK_SAFE=1 "
            "in the environment does the same inside libibverbs. Default: auto",
            tri_enum, OPAL_INFO_LVL_4, &c->fork_init);
    c->max_rd_atomic = 0;
    reg_int("max_rd_atomic", "Outstanding RDMA READs per QP, clamped to the device "
            "caps. 0: device profile (up to 4). Default: 0", NULL, OPAL_INFO_LVL_6,
            &c->max_rd_atomic);
    c->max_msg_size = 0;
    (void) mca_base_component_var_register(&c->super.btl_version, "max_msg_size",
        "Largest single RDMA operation or registration in bytes; larger transfers "
        "are split. Clamped to the port's max_msg_sz and the device's max_mr_size "
        "(PVRDMA: 128 MiB..1 GiB). 0: device limit. Default: 0",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &c->max_msg_size);
    OBJ_RELEASE(tri_enum);

    /* ---- flow control and signalling ---- */
    c->credit_threshold = 0;
    reg_int("credit_threshold", "Return eager credits in an explicit message once "
            "this many are owed and no reply carried them. 0: half of "
            "btl_pvrdma_recv_queue_depth. Default: 0", NULL, OPAL_INFO_LVL_6,
            &c->credit_threshold);
    c->credit_reserved = 2;
    reg_int("credit_reserved", "Eager credits kept for credit-return messages so "
            "two busy peers never deadlock. Default: 2", NULL, OPAL_INFO_LVL_9,
            &c->credit_reserved);
    c->signal_interval = 16;
    reg_int("signal_interval", "Request a send completion every N-th send WR "
            "(selective signalling; fewer completions to poll). Default: 16",
            NULL, OPAL_INFO_LVL_6, &c->signal_interval);

    /* ---- RC and connection timing ---- */
    c->rc_timeout = 16;
    reg_int("rc_timeout", "RC local ACK timeout exponent (4.096 us * 2^N): the "
            "stall after a lost packet; too small on busy (virtualised) hosts gives "
            "spurious retry-exceeded errors. Default: 16 (~0.27 s)",
            NULL, OPAL_INFO_LVL_6, &c->rc_timeout);
    c->rc_retry_count = 7;
    reg_int("rc_retry_count", "RC transport retries before a peer is declared "
            "unreachable (0-7). Default: 7", NULL, OPAL_INFO_LVL_6,
            &c->rc_retry_count);
    c->rnr_retry = 7;
    reg_int("rnr_retry", "RNR retries (7 = infinite). Credit flow control avoids "
            "RNR; this is a safety net. Default: 7", NULL, OPAL_INFO_LVL_9,
            &c->rnr_retry);
    c->min_rnr_timer = 12;
    reg_int("min_rnr_timer", "RNR NAK timer code (IB spec table; 12 = 0.64 ms). "
            "Default: 12", NULL, OPAL_INFO_LVL_9, &c->min_rnr_timer);
    c->connect_timeout_ms = 2000;
    reg_int("connect_timeout", "Milliseconds to wait for a connection reply before "
            "resending the request; later resends back off (each gap as long as the peer "
            "has not answered so far, at most 8 x this, with 1/8 jitter). Default: 2000",
            NULL, OPAL_INFO_LVL_6,
            &c->connect_timeout_ms);
    c->connect_retries = 120;
    reg_int("connect_retries", "A peer that has not answered for this many "
            "btl_pvrdma_connect_timeout periods since the first request is declared "
            "unreachable (then the job aborts). A peer only answers while it calls MPI, "
            "so keep retries x timeout above the longest compute phase. Default: 120",
            NULL, OPAL_INFO_LVL_6,
            &c->connect_retries);
    c->max_connections = 0;
    reg_int("max_connections", "RC connections (QPs) a process keeps at most. When a new "
            "peer needs one beyond it, the least recently used idle connection is closed "
            "with its peer's agreement (nothing in flight either way) and reopened when "
            "used again; if none can be closed within 5 x connect_timeout, the new one "
            "is made over the budget (counted at close). 0: the device's max_qp shared by "
            "the processes on it, so a VM never exceeds its device; a job with fewer "
            "peers than that never closes anything. Default: 0", NULL, OPAL_INFO_LVL_5,
            &c->max_connections);
    c->stall_kick_s = 10;
    reg_int("stall_kick", "Seconds a peer's send queue may hold WRs with none of "
            "them completing before the BTL posts a signalled credit message to that "
            "peer (a kick), again after as long, at most 5 times per stall: the new "
            "request makes the RC requester resend or fail what it had given up on "
            "(seen with SoftRoCE under load: an unsignalled SEND neither delivered nor "
            "failed, both QPs RTS). Never less than RC's own retry window "
            "(ACK timeout x (rc_retry_count + 1)). A healthy peer costs one message per "
            "idle period. 0: never. Default: 10", NULL, OPAL_INFO_LVL_9, &c->stall_kick_s);
    c->keepalive_s = 20;
    reg_int("keepalive", "Seconds a connected peer may stay silent (nothing received "
            "from it, nothing of ours completed by it) while this process calls MPI "
            "before the BTL probes it with one signalled credit message: a peer whose "
            "process or host died, or whose link is down, then fails the probe with "
            "retry-exceeded within RC's retry window and the job ends with a message "
            "naming both hosts, instead of waiting for ever in a receive. Costs one "
            "message per silent peer per period (a SEND doorbell here, a receive "
            "repost there). 0: never. Default: 20", NULL, OPAL_INFO_LVL_6, &c->keepalive_s);
    c->send_coalesce = 1;
    reg_int("send_coalesce", "Post the sends of one progress turn to a peer as one "
            "work-request list: every ibv_post_send rings a doorbell, a VM exit on PVRDMA. "
            "A send to a peer that already had one posted since progress last ran, or one "
            "a PML callback makes inside progress (the next fragments of a large message), "
            "waits in the BTL until the turn ends (at most 32 are held; fragments the PML "
            "waits for, while more than 16 WRs of the peer are on the wire, until 32 are "
            "queued or the wire runs low); the first send after progress always goes at "
            "once. 0: every send is posted by itself. "
            "Default: 1", NULL, OPAL_INFO_LVL_5, &c->send_coalesce);
    c->idle_wait = MCA_BTL_PVRDMA_TRI_AUTO;
    reg_int("idle_wait", "Bounded idle wait (btl_pvrdma_idle_spin, "
            "btl_pvrdma_idle_poll_interval): auto (on for PVRDMA devices, where an "
            "empty CQ poll is a VM exit; off elsewhere, where polls are cheap and "
            "backing off only adds latency), on, off. Default: auto", tri_enum,
            OPAL_INFO_LVL_5, &c->idle_wait);
    c->idle_spin_us = 1000;
    reg_int("idle_spin", "Microseconds a process keeps polling its CQs on every "
            "progress call after the last completion, while it only waits for "
            "messages (nothing of its own in flight). Then the idle wait backs off "
            "to btl_pvrdma_idle_poll_interval. Default: 1000", NULL, OPAL_INFO_LVL_5,
            &c->idle_spin_us);
    c->idle_poll_us = 50;
    reg_int("idle_poll_interval", "Microseconds between CQ polls of a process that "
            "has waited longer than btl_pvrdma_idle_spin: an empty poll is a doorbell "
            "(a VM exit) on PVRDMA, so a waiting rank rings at most 1000000 / this "
            "per second instead of as many as its loop turns; a message arriving "
            "meanwhile is seen up to this late. 0: poll on every call (lowest "
            "latency, most exits). Default: 50", NULL, OPAL_INFO_LVL_5,
            &c->idle_poll_us);
    c->idle_poll_scale = 16;
    reg_int("idle_poll_scale", "Back off further where an empty CQ poll is slow: "
            "the interval between polls of a waiting process is at least this many "
            "times the measured time of an empty poll (at most 10 ms), so that "
            "polling takes at most 1/this of a waiting rank's time whatever a VM "
            "exit costs on its host (~1 us on ESXi, where "
            "btl_pvrdma_idle_poll_interval rules). 0: the fixed interval only. "
            "Default: 16", NULL, OPAL_INFO_LVL_5, &c->idle_poll_scale);
    c->idle_spin_scale = 2;
    reg_int("idle_spin_scale", "Pace the idle spin where an empty CQ poll is slow: after "
            "the first 50 us of a wait (every call polls then, so a short round trip never "
            "waits), the spin polls at most once per this many times the measured time of "
            "an empty poll. On the nested test tier (~125 us polls) a rank waiting for its "
            "peer otherwise rang a poll per 125 us, most too early to find anything; on a "
            "host (~1 us polls) a message is seen a microsecond or so later. 0 or 1: poll "
            "on every call of the spin. Default: 2", NULL, OPAL_INFO_LVL_5,
            &c->idle_spin_scale);
    c->idle_spin_adapt = true;
    (void) mca_base_component_var_register(&c->super.btl_version, "idle_spin_adapt",
        "Let the idle spin's pace follow what its polls find: each paced spin poll "
        "that finds nothing stretches the pace (btl_pvrdma_idle_spin_scale) by a "
        "quarter, each that ends a wait halves the stretch, so that about one in four "
        "finds something; never longer than btl_pvrdma_idle_poll_interval's back-off "
        "nor half of btl_pvrdma_idle_spin. The first 50 us of a wait still poll on "
        "every call. On the nested test tier 91 % of the fixed pace's spin polls found "
        "nothing in OpenFOAM. false: the fixed pace. Default: true",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &c->idle_spin_adapt);
    c->idle_arm_ms = 10;
    reg_int("idle_arm", "Armed wait: once the idle wait has backed off (after "
            "btl_pvrdma_idle_spin) for this many milliseconds, arm the CQs and read their "
            "completion channel on every progress call (a system call, no VM exit) instead "
            "of polling them: one arm and two polls per wait however long it lasts, where "
            "the back-off rang a poll per interval. A message that arrives then is seen when "
            "its interrupt reaches the process. While armed the CQs are polled anyway every "
            "100 ms; after 4 such polls in a row found completions whose event never came, "
            "the process polls as before. Only where the idle wait is on. 0: never arm. "
            "Default: 10", NULL, OPAL_INFO_LVL_5, &c->idle_arm_ms);
    c->cm_poll_interval = 64;
    reg_int("cm_poll_interval", "When no connection is being set up, poll the "
            "connection-manager CQ once every N progress calls (an empty poll "
            "costs a VM exit on PVRDMA). Default: 64", NULL, OPAL_INFO_LVL_9,
            &c->cm_poll_interval);

    /* ---- fragment lists ---- */
    c->free_list_num = 64;
    reg_int("free_list_num", "Initial number of send fragments. Default: 64", NULL,
            OPAL_INFO_LVL_9, &c->free_list_num);
    c->free_list_max = -1;
    reg_int("free_list_max", "Maximum number of send fragments (-1: unlimited). "
            "Default: -1", NULL, OPAL_INFO_LVL_9, &c->free_list_max);
    c->free_list_inc = 64;
    reg_int("free_list_inc", "Fragments added (and registered at once) when a "
            "fragment list grows. Default: 64", NULL, OPAL_INFO_LVL_9,
            &c->free_list_inc);

    /* ---- generic BTL limits (btl_pvrdma_eager_limit etc., from btl/base) ---- */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT;
    m->btl_eager_limit = 8 * 1024;
    m->btl_rndv_eager_limit = 8 * 1024;
    m->btl_max_send_size = 8 * 1024;
    m->btl_rdma_pipeline_send_length = 1024 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = 256 * 1024;
    m->btl_latency = 10;
    m->btl_bandwidth = 10000;
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |
                   MCA_BTL_FLAGS_RDMA_FLUSH;
    m->btl_put_limit = 0;   /* set from the device in module init */
    m->btl_get_limit = 0;

    return mca_btl_base_param_register(&c->super.btl_version, m);
}

static int pvrdma_component_open(void)
{
    mca_btl_pvrdma_component.module_count = 0;
    return OPAL_SUCCESS;
}

static int pvrdma_component_close(void)
{
    return OPAL_SUCCESS;
}

static mca_btl_base_module_t **pvrdma_component_init(int *num_btls,
                                                     bool enable_progress_threads,
                                                     bool enable_mpi_threads)
{
    mca_btl_pvrdma_module_t *module;
    mca_btl_base_module_t **btls;

    (void) enable_progress_threads;
    *num_btls = 0;
    /* MPI_THREAD_MULTIPLE: every module op that touches queues, endpoints or
     * fragments' state takes the module lock (OPAL_THREAD_LOCK, a no-op
     * unless Open MPI runs with threads), as btl/uct does with its context
     * lock; ob1 drops its own locks before it calls a BTL, so the PML
     * callbacks our progress makes under the lock cannot deadlock. */
    if (enable_mpi_threads) {
        MCA_BTL_PVRDMA_VERBOSE(10, "MPI_THREAD_MULTIPLE: module operations are serialised by its lock");
    }

    module = malloc(sizeof(*module));
    btls = malloc(2 * sizeof(*btls));   /* the main and the one-sided module */
    if (NULL == module || NULL == btls) {
        free(module);
        free(btls);
        return NULL;
    }
    *module = mca_btl_pvrdma_module_template;

    if (OPAL_SUCCESS != mca_btl_pvrdma_module_init(module)) {
        /* module_init already explained why (help message or verbose) */
        free(module);
        free(btls);
        return NULL;
    }

    mca_btl_pvrdma_component.modules[0] = module;
    mca_btl_pvrdma_component.module_count = 1;
    btls[0] = &module->super;
    *num_btls = 1;
    /* where the device has atomics: the one-sided module for osc rdma */
    if (module->atomics_ok) {
        mca_btl_pvrdma_osc_module_t *osc = mca_btl_pvrdma_osc_module_create(module);

        if (NULL != osc) {
            btls[1] = &osc->super;
            *num_btls = 2;
        } else {
            MCA_BTL_PVRDMA_VERBOSE(1, "out of memory for the one-sided module: one-sided MPI "
                                   "falls back to osc pt2pt");
        }
    }
    return btls;
}

static int pvrdma_component_progress(void)
{
    int count = 0;

    for (int i = 0; i < mca_btl_pvrdma_component.module_count; ++i) {
        count += mca_btl_pvrdma_module_progress(mca_btl_pvrdma_component.modules[i]);
    }
    return count;
}
