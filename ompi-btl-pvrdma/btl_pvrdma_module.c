/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_module.c
 * @brief Module ops table, module set-up and teardown, add/del procs and
 *        memory registration through the grdma registration cache (control
 *        verbs are expensive on PVRDMA, so each region is registered once).
 */
#include "opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btl_pvrdma_compat.h"
#include "opal/mca/rcache/base/base.h"
#include "opal/util/show_help.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_budget.h"
#include "btl_pvrdma_cm.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_error.h"
#include "btl_pvrdma_frag.h"
#include "btl_pvrdma_atomic.h"
#include "btl_pvrdma_osc.h"
#include "btl_pvrdma_rdma.h"
#include "pvrdma_counters.h"
#include "pvrdma_ud.h"

/** Smallest eager/send size accepted: ob1's largest header plus room. */
#define MCA_BTL_PVRDMA_MIN_EAGER 128

int mca_btl_pvrdma_add_peers(mca_btl_pvrdma_module_t *module, uint8_t user, size_t nprocs,
                             struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                             opal_bitmap_t *reachable)
{
    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_pvrdma_endpoint_t *ep;

        /* btl/self carries messages to ourselves; but osc rdma also runs
         * the atomics on its own window through the BTL (ours are not
         * atomic with the CPU's), so the one-sided module reaches this
         * process through a loopback QP */
        if (0 == opal_compare_proc(procs[i]->proc_name, OPAL_PROC_MY_NAME) &&
            MCA_BTL_PVRDMA_EP_USER_OSC != user) {
            continue;
        }
        OPAL_THREAD_LOCK(&module->lock);
        ep = mca_btl_pvrdma_endpoint_get(module, procs[i]);
        if (NULL != ep) {
            ep->users |= user;
        }
        OPAL_THREAD_UNLOCK(&module->lock);
        if (NULL == ep) {
            continue; /* not reachable over this port (already explained) */
        }
        peers[i] = (MCA_BTL_PVRDMA_EP_USER_OSC == user) ? mca_btl_pvrdma_osc_handle(ep) : ep;
        if (NULL != reachable) {
            opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    return OPAL_SUCCESS;
}

void mca_btl_pvrdma_del_peer(mca_btl_pvrdma_module_t *module, uint8_t user,
                             mca_btl_pvrdma_endpoint_t *ep)
{
    uint64_t key;

    if (NULL == ep) {
        return;
    }
    OPAL_THREAD_LOCK(&module->lock);
    /* the BML deletes a module's peer it does not use (a same-host peer
     * that vader sends to): the other module may still use the endpoint */
    ep->users &= (uint8_t) ~user;
    if (0 == ep->users) {
        memcpy(&key, &ep->proc->proc_name, sizeof(key));
        (void) opal_hash_table_remove_value_uint64(&module->proc_to_ep, key);
        opal_list_remove_item(&module->endpoints, &ep->super);
        mca_btl_pvrdma_endpoint_close(ep);
        OBJ_RELEASE(ep);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
}

static int pvrdma_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                            opal_bitmap_t *reachable)
{
    return mca_btl_pvrdma_add_peers((mca_btl_pvrdma_module_t *) btl, MCA_BTL_PVRDMA_EP_USER_PML,
                                    nprocs, procs, peers, reachable);
}

static int pvrdma_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    (void) procs;
    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_pvrdma_del_peer((mca_btl_pvrdma_module_t *) btl, MCA_BTL_PVRDMA_EP_USER_PML,
                                peers[i]);
    }
    return OPAL_SUCCESS;
}

static int pvrdma_register_error(struct mca_btl_base_module_t *btl,
                                 mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_pvrdma_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* ---------------------------------------------------------------------- */
/* registration cache callbacks                                           */

static int pvrdma_reg_mem(void *reg_data, void *base, size_t size,
                          mca_rcache_base_registration_t *reg)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) reg_data;
    mca_btl_pvrdma_reg_t *preg = (mca_btl_pvrdma_reg_t *) reg;
    /* one access mode for every region keeps cached registrations reusable */
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                 (module->atomics_ok ? IBV_ACCESS_REMOTE_ATOMIC : 0);

    if (size > module->profile.max_mr_size) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    preg->mr = ibv_reg_mr(module->pd, base, size, access);
    if (NULL == preg->mr) {
        MCA_BTL_PVRDMA_VERBOSE(5, "ibv_reg_mr(%p, %zu) failed: %s", base, size, strerror(errno));
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    preg->handle.lkey = preg->mr->lkey;
    preg->handle.rkey = preg->mr->rkey;
    return OPAL_SUCCESS;
}

static int pvrdma_dereg_mem(void *reg_data, mca_rcache_base_registration_t *reg)
{
    mca_btl_pvrdma_reg_t *preg = (mca_btl_pvrdma_reg_t *) reg;

    (void) reg_data;
    if (NULL != preg->mr) {
        if (0 != ibv_dereg_mr(preg->mr)) {
            return OPAL_ERROR;
        }
        preg->mr = NULL;
    }
    return OPAL_SUCCESS;
}

mca_btl_base_registration_handle_t *
mca_btl_pvrdma_register_mem(struct mca_btl_base_module_t *btl,
                            struct mca_btl_base_endpoint_t *endpoint, void *base,
                            size_t size, uint32_t flags)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_rcache_base_registration_t *reg = NULL;
    int rc;

    (void) endpoint;
    rc = module->rcache->rcache_register(module->rcache, base, size, 0,
                                         (int32_t) (flags & MCA_RCACHE_ACCESS_ANY), &reg);
    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc || NULL == reg)) {
        return NULL;
    }
    return &((mca_btl_pvrdma_reg_t *) reg)->handle;
}

int mca_btl_pvrdma_deregister_mem(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_registration_handle_t *handle)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_btl_pvrdma_reg_t *reg = (mca_btl_pvrdma_reg_t *)
        ((intptr_t) handle - offsetof(mca_btl_pvrdma_reg_t, handle));

    return module->rcache->rcache_deregister(module->rcache, &reg->base);
}

/* ---------------------------------------------------------------------- */
/* set-up and teardown                                                    */

/** A seconds parameter (0 = off) must not be negative: say which, by name. */
/** @p topic: "negative seconds" or "negative microseconds" (help file) */
static bool negative_time(const char *topic, const char *name, int value,
                          const char *meaning, int dflt)
{
    if (value >= 0) {
        return false;
    }
    opal_show_help(MCA_BTL_PVRDMA_HELP, topic, true, name,
                   opal_process_info.nodename, name, value, meaning, dflt);
    return true;
}

/** Fork protection before the first registration (common/fork.c says why). */
static int fork_init(void)
{
    static const enum pvrdma_common_fork_mode modes[] = {
        [MCA_BTL_PVRDMA_TRI_OFF] = PVRDMA_COMMON_FORK_NO,
        [MCA_BTL_PVRDMA_TRI_ON] = PVRDMA_COMMON_FORK_YES};
    int knob = mca_btl_pvrdma_component.fork_init;
    char why[256];
    int rc;

    rc = pvrdma_common_fork_init((MCA_BTL_PVRDMA_TRI_AUTO == knob) ? PVRDMA_COMMON_FORK_TRY
                                                                  : modes[knob],
                                 why, sizeof(why));
    if (0 != rc) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "fork init failed", true,
                       opal_process_info.nodename, why);
        return OPAL_ERROR;
    }
    MCA_BTL_PVRDMA_VERBOSE(10, "%s", why);
    return OPAL_SUCCESS;
}

static int check_limits(mca_btl_pvrdma_module_t *module)
{
    mca_btl_base_module_t *m = &module->super;

    if (m->btl_eager_limit < MCA_BTL_PVRDMA_MIN_EAGER ||
        m->btl_max_send_size < MCA_BTL_PVRDMA_MIN_EAGER) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "eager limit too small", true,
                       opal_process_info.nodename, (unsigned long) m->btl_eager_limit,
                       (unsigned long) m->btl_max_send_size,
                       (unsigned long) MCA_BTL_PVRDMA_MIN_EAGER);
        return OPAL_ERR_BAD_PARAM;
    }
    if (negative_time("negative seconds", "btl_pvrdma_stall_kick",
                      mca_btl_pvrdma_component.stall_kick_s,
                      "how long a peer's send queue may wait for a completion before the "
                      "BTL posts a kick message to it", 10) ||
        negative_time("negative seconds", "btl_pvrdma_keepalive",
                      mca_btl_pvrdma_component.keepalive_s,
                      "how long a connected peer may stay silent before the BTL probes it",
                      20) ||
        negative_time("negative microseconds", "btl_pvrdma_idle_spin",
                      mca_btl_pvrdma_component.idle_spin_us,
                      "how long a waiting process polls on every call before it backs off",
                      1000) ||
        negative_time("negative microseconds", "btl_pvrdma_idle_poll_interval",
                      mca_btl_pvrdma_component.idle_poll_us,
                      "how often a process that waits longer polls its CQs", 50) ||
        negative_time("a negative factor", "btl_pvrdma_idle_poll_scale",
                      mca_btl_pvrdma_component.idle_poll_scale,
                      "how many empty polls' time a waiting process leaves between polls",
                      16) ||
        negative_time("a negative factor", "btl_pvrdma_idle_spin_scale",
                      mca_btl_pvrdma_component.idle_spin_scale,
                      "how many empty polls' time apart the idle spin polls", 2) ||
        negative_time("negative milliseconds", "btl_pvrdma_idle_arm",
                      mca_btl_pvrdma_component.idle_arm_ms,
                      "how long a waiting process polls before it arms its CQs (0: never)",
                      10)) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* auto: on where empty polls are VM exits (on the oversubscribed
     * emulated bed over rxe, backing off only slowed jobs down) */
    pvrdma_common_idle_wait_init(&module->idle,
                                 (uint64_t) mca_btl_pvrdma_component.idle_spin_us,
                                 (MCA_BTL_PVRDMA_TRI_ON == mca_btl_pvrdma_component.idle_wait ||
                                  (MCA_BTL_PVRDMA_TRI_AUTO == mca_btl_pvrdma_component.idle_wait &&
                                   module->port.is_pvrdma))
                                     ? (uint64_t) mca_btl_pvrdma_component.idle_poll_us : 0,
                                 (uint64_t) mca_btl_pvrdma_component.idle_poll_scale);
    pvrdma_common_idle_wait_spin_scale(&module->idle,
                                       (uint64_t) mca_btl_pvrdma_component.idle_spin_scale);
    pvrdma_common_idle_wait_spin_adapt(&module->idle, mca_btl_pvrdma_component.idle_spin_adapt);
    if (m->btl_rndv_eager_limit > m->btl_eager_limit) {
        m->btl_rndv_eager_limit = m->btl_eager_limit;
    }
    module->frag_size = sizeof(mca_btl_pvrdma_hdr_t) +
        (m->btl_eager_limit > m->btl_max_send_size ? m->btl_eager_limit : m->btl_max_send_size);

    /* RDMA limits come from the device: one op/registration <= max_msg_size
     * (a smaller user value stays) */
    if (0 == m->btl_put_limit || m->btl_put_limit > module->profile.max_msg_size) {
        m->btl_put_limit = module->profile.max_msg_size;
    }
    if (0 == m->btl_get_limit || m->btl_get_limit > module->profile.max_msg_size) {
        m->btl_get_limit = module->profile.max_msg_size;
    }
    if (m->btl_rdma_pipeline_frag_size > module->profile.max_msg_size) {
        m->btl_rdma_pipeline_frag_size = module->profile.max_msg_size;
    }
    if (!module->pml_get) {
        /* READ not offered to ob1 (btl_pvrdma_rdma_read off, or PVRDMA
         * with max_qp_rd_atom 0): ob1 then runs the rendezvous with RDMA
         * WRITE (btl_put).  osc rdma gets READ from the one-sided module. */
        m->btl_flags &= ~MCA_BTL_FLAGS_GET;
        m->btl_get_limit = 0;
    }
    if (!module->rdma_write_ok) {
        /* ob1 then moves large messages as pipelined btl_send copies (or
         * with btl_get when READ is available). */
        m->btl_flags &= ~MCA_BTL_FLAGS_PUT;
        m->btl_put_limit = 0;
    }
    /* atomics only through the one-sided module (btl_pvrdma_osc.c) */
    m->btl_flags &= ~(MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS);
    m->btl_atomic_flags = 0;
    m->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);
    return OPAL_SUCCESS;
}

static int init_memory(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    mca_rcache_base_resources_t res;
    char name[PVRDMA_COMMON_DEV_NAME_MAX + 16];
    int rc;

    snprintf(name, sizeof(name), "pvrdma.%s", module->port.dev_name);
    memset(&res, 0, sizeof(res));
    res.cache_name = name;
    res.reg_data = module;
    res.sizeof_reg = sizeof(mca_btl_pvrdma_reg_t);
    res.register_mem = pvrdma_reg_mem;
    res.deregister_mem = pvrdma_dereg_mem;
    module->rcache = mca_rcache_base_module_create("grdma", module, &res);
    if (NULL == module->rcache) {
        MCA_BTL_PVRDMA_VERBOSE(1, "could not create a grdma registration cache");
        return OPAL_ERROR;
    }

    /* Fragment buffers are registered a chunk at a time by the free list
     * (through the rcache), never per message. */
    rc = opal_free_list_init(&module->send_frags, sizeof(mca_btl_pvrdma_frag_t),
                             opal_cache_line_size, OBJ_CLASS(mca_btl_pvrdma_frag_t),
                             module->frag_size, opal_cache_line_size, c->free_list_num,
                             c->free_list_max, c->free_list_inc, NULL, 0, module->rcache,
                             mca_btl_pvrdma_frag_init, &module->send_frags);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_free_list_init(&module->recv_frags, sizeof(mca_btl_pvrdma_frag_t),
                             opal_cache_line_size, OBJ_CLASS(mca_btl_pvrdma_frag_t),
                             module->frag_size, opal_cache_line_size, 0, -1,
                             c->recv_queue_depth > 0 ? c->recv_queue_depth + 4 : 64, NULL, 0,
                             module->rcache, mca_btl_pvrdma_frag_init, &module->recv_frags);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_free_list_init(&module->rdma_frags, sizeof(mca_btl_pvrdma_frag_t),
                             opal_cache_line_size, OBJ_CLASS(mca_btl_pvrdma_frag_t), 0, 0,
                             c->free_list_num, -1, c->free_list_inc, NULL, 0, NULL,
                             mca_btl_pvrdma_frag_init, &module->rdma_frags);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    return mca_btl_pvrdma_atomic_init(module);
}

/* How the rendezvous moves large messages (for the verbose "using" line). */
static const char *rdma_mode_str(const mca_btl_pvrdma_module_t *module)
{
    if (module->pml_get) {
        return module->rdma_write_ok ? "read+write" : "read only";
    }
    return module->rdma_write_ok ? "write only" : "none (send/recv copies)";
}

int mca_btl_pvrdma_module_init(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_modex_t modex;
    int rc;

    OBJ_CONSTRUCT(&module->send_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->recv_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->rdma_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->proc_to_ep, opal_hash_table_t);
    OBJ_CONSTRUCT(&module->qpn_to_ep, opal_hash_table_t);
    OBJ_CONSTRUCT(&module->endpoints, opal_list_t);
    OBJ_CONSTRUCT(&module->lock, opal_recursive_mutex_t);
    module->rdma_writes = module->rdma_write_max = 0;
    module->peers_connected = module->peers_max = 0;
    module->rdma_reads = module->rdma_read_max = 0;
    module->send_posts = module->send_wrs = module->send_holds = 0;
    module->progress_turn = 1;
    module->in_upcalls = false;
    (void) opal_hash_table_init(&module->proc_to_ep, 64);
    (void) opal_hash_table_init(&module->qpn_to_ep, 64);

    rc = fork_init();
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_pvrdma_device_open(module);
    }
    if (OPAL_SUCCESS == rc) {
        rc = check_limits(module);
    }
    if (OPAL_SUCCESS == rc) {
        /* after check_limits: the plan needs the eager buffer size */
        rc = mca_btl_pvrdma_device_create_queues(module);
    }
    if (OPAL_SUCCESS == rc) {
        rc = init_memory(module);
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_pvrdma_cm_open(module, &modex);
    }
    if (OPAL_SUCCESS == rc) {
        OPAL_MODEX_SEND(rc, PVRDMA_MODEX_GLOBAL, &mca_btl_pvrdma_component.super.btl_version,
                        &modex, sizeof(modex));
    }
    if (OPAL_SUCCESS != rc) {
        (void) mca_btl_pvrdma_finalize(&module->super);
        return rc;
    }
    MCA_BTL_PVRDMA_VERBOSE(1, "using %s:%d%s (%s GID index %u, MTU %u, %s, RDMA %s)",
                   module->port.dev_name, module->port.port_num,
                   module->port.is_pvrdma ? " [PVRDMA]" : "",
                   pvrdma_common_gid_type_str(module->gid.type), module->gid.index,
                   module->profile.mtu_bytes, module->srq ? "SRQ" : "per-QP receive queues",
                   rdma_mode_str(module));
    return OPAL_SUCCESS;
}

/** Tear down in the reverse order of mca_btl_pvrdma_module_init(). The
 *  module memory itself belongs to the caller on failure in init, and is
 *  freed here when called through the ops table. */
static int pvrdma_module_teardown(mca_btl_pvrdma_module_t *module)
{
    mca_btl_pvrdma_endpoint_t *ep, *next;

    OPAL_LIST_FOREACH_SAFE(ep, next, &module->endpoints, mca_btl_pvrdma_endpoint_t) {
        opal_list_remove_item(&module->endpoints, &ep->super);
        mca_btl_pvrdma_endpoint_close(ep);
        OBJ_RELEASE(ep);
    }
    mca_btl_pvrdma_cm_close(module);
    mca_btl_pvrdma_atomic_fini(module);
    /* the free lists deregister their chunks through the rcache */
    OBJ_DESTRUCT(&module->rdma_frags);
    OBJ_DESTRUCT(&module->recv_frags);
    OBJ_DESTRUCT(&module->send_frags);
    if (NULL != module->rcache) {
        (void) mca_rcache_base_module_destroy(module->rcache);
        module->rcache = NULL;
    }
    mca_btl_pvrdma_device_close(module);
    OBJ_DESTRUCT(&module->lock);
    OBJ_DESTRUCT(&module->endpoints);
    OBJ_DESTRUCT(&module->qpn_to_ep);
    OBJ_DESTRUCT(&module->proc_to_ep);
    return OPAL_SUCCESS;
}

/** Whether the port retried while this module had it open: a lost packet
 *  and a slow one look the same from here otherwise (verbs count nothing
 *  per QP).  Device-wide: every process on the port adds to it. */
static void mca_btl_pvrdma_print_retries(mca_btl_pvrdma_module_t *module)
{
    struct pvrdma_common_retry_counters now, delta;
    char text[160];

    if (!MCA_BTL_PVRDMA_VERBOSE_ON(10)) {
        return;
    }
    (void) pvrdma_common_retry_counters_read(module->port.dev_name, module->port.port_num, &now);
    pvrdma_common_retry_counters_since(&module->retries_at_open, &now, &delta);
    MCA_BTL_PVRDMA_VERBOSE(10, "retries on %s:%d while open (whole device): %s",
                           module->port.dev_name, module->port.port_num,
                           pvrdma_common_retry_counters_str(&delta, text, sizeof(text)));
}

/** The machine-readable counters line of the close (pvrdma_counters.h):
 *  the bed tests read these keys, never the wording of the lines around. */
static void mca_btl_pvrdma_print_counters(mca_btl_pvrdma_module_t *module)
{
    struct pvrdma_common_counters c;

    if (!MCA_BTL_PVRDMA_VERBOSE_ON(10)) {
        return;
    }
    pvrdma_common_counters_begin(&c, "btl_close", module->port.dev_name,
                                 module->port.port_num);
    /* the armed wait's (btl_pvrdma_idle_arm) */
    pvrdma_common_counters_add_ops(&c, module->rdma_writes, module->rdma_write_max,
                                   module->rdma_reads, module->rdma_read_max,
                                   module->notify.arms, module->notify.events);
    pvrdma_common_counters_add(&c, "peers_max", module->peers_max);
    pvrdma_common_counters_add(&c, "cq_entries", module->plan.cq_depth);
    pvrdma_common_counters_add(&c, "send_budget", module->plan.send_budget);
    pvrdma_common_counters_add(&c, "send_posts", module->send_posts);
    pvrdma_common_counters_add(&c, "send_wrs", module->send_wrs);
    pvrdma_common_counters_add(&c, "send_holds", module->send_holds);
    pvrdma_common_counters_add(&c, "stall_kicks", module->stall_kicks);
    pvrdma_common_counters_add(&c, "keepalives", module->keepalives);
    pvrdma_common_ud_counters_add((NULL != module->cm) ? &module->cm->ud : NULL, &c);
    pvrdma_common_counters_add(&c, "cm_deferred_dropped",
                               (NULL != module->cm) ? module->cm->deferred_dropped : 0);
    pvrdma_common_counters_add(&c, "cq_polls", module->cq_polls);
    pvrdma_common_idle_wait_counters_add(&module->idle, &c);
    pvrdma_common_counters_add(&c, "conn_budget", module->budget.max);
    pvrdma_common_counters_add(&c, "conn_closes", module->budget.closes);
    pvrdma_common_counters_add(&c, "conn_reopens", module->budget.reopens);
    pvrdma_common_counters_add(&c, "conn_close_refusals", module->budget.refusals);
    pvrdma_common_counters_add(&c, "conn_overruns", module->budget.overruns);
    pvrdma_common_counters_add(&c, "rx_reclaimed", module->budget.rx_reclaimed);
    pvrdma_common_counters_add(&c, "rx_stale", module->budget.rx_stale);
    MCA_BTL_PVRDMA_VERBOSE(10, "%s", pvrdma_common_counters_str(&c));
}

/** btl_finalize: called for every initialised module by the BTL framework
 *  close (mca_btl_base_close, at MPI_Finalize), and by module_init on
 *  failure, before the module was handed out. */
int mca_btl_pvrdma_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_pvrdma_module_t *module = (mca_btl_pvrdma_module_t *) btl;
    mca_btl_pvrdma_component_t *c = &mca_btl_pvrdma_component;
    bool registered = false;

    for (int i = 0; i < c->module_count; ++i) {
        registered = registered || c->modules[i] == module;
    }
    if (registered) {
        /* For people; the tests read the counters line below it.  Printed
         * before the teardown closes the device. */
        MCA_BTL_PVRDMA_VERBOSE(10, "closed %s:%d: %" PRIu64 " RDMA WRITEs (largest %" PRIu64
                               " B), %" PRIu64 " RDMA READs (largest %" PRIu64
                               " B), %" PRIu64 " CQ arms, %" PRIu64 " CQ events; %u peers "
                               "connected at most, "
                               "%u CQ entries (%u for sends); %" PRIu64 " stall kicks, %" PRIu64
                               " keepalive probes; %" PRIu64 " connection datagrams dropped"
                               " (%" PRIu64 " without a valid MAC, %" PRIu64 " replayed, %"
                               PRIu64 " not from the address they claim), connection QP reset %"
                               PRIu64 " times",
                               module->port.dev_name, module->port.port_num,
                               module->rdma_writes, module->rdma_write_max, module->rdma_reads,
                               module->rdma_read_max, module->notify.arms,
                               module->notify.events, module->peers_max,
                               module->plan.cq_depth, module->plan.send_budget,
                               module->stall_kicks, module->keepalives,
                               (NULL != module->cm) ? module->cm->ud.dropped : 0,
                               (NULL != module->cm) ? module->cm->ud.forged : 0,
                               (NULL != module->cm) ? module->cm->ud.replayed : 0,
                               (NULL != module->cm) ? module->cm->ud.spoofed : 0,
                               (NULL != module->cm) ? module->cm->ud.resets : 0);
        mca_btl_pvrdma_print_counters(module);
        mca_btl_pvrdma_print_retries(module);
        MCA_BTL_PVRDMA_VERBOSE(10, "idle wait on %s:%d: %" PRIu64 " CQ polls not rung "
                               "(btl_pvrdma_idle_spin %d us, then one poll per "
                               "%" PRIu64 " us: btl_pvrdma_idle_poll_interval %d us, "
                               "btl_pvrdma_idle_poll_scale %d x an empty poll's "
                               "%" PRIu64 ".%02" PRIu64 " us%s)",
                               module->port.dev_name, module->port.port_num,
                               module->idle.skipped, c->idle_spin_us,
                               module->idle.interval_us, c->idle_poll_us,
                               c->idle_poll_scale, module->idle.cost_x16 / 16,
                               (module->idle.cost_x16 % 16) * 100 / 16,
                               (0 == module->idle.poll_us) ? "; off: btl_pvrdma_idle_wait" : "");
    }

    (void) pvrdma_module_teardown(module);
    if (NULL != module->osc) {
        module->osc->main = NULL;   /* finalized after us: frees only itself */
    }
    for (int i = 0; i < c->module_count; ++i) {
        if (c->modules[i] == module) {
            c->modules[i] = NULL;
            c->module_count = 0;
            free(module);
            break;
        }
    }
    return OPAL_SUCCESS;
}

mca_btl_pvrdma_module_t mca_btl_pvrdma_module_template = {
    .super = {
        .btl_component = &mca_btl_pvrdma_component.super,
        .btl_add_procs = pvrdma_add_procs,
        .btl_del_procs = pvrdma_del_procs,
        .btl_finalize = mca_btl_pvrdma_finalize,
        .btl_alloc = mca_btl_pvrdma_alloc,
        .btl_free = mca_btl_pvrdma_free,
        .btl_prepare_src = mca_btl_pvrdma_prepare_src,
        .btl_send = mca_btl_pvrdma_send,
        .btl_sendi = mca_btl_pvrdma_sendi,
        .btl_put = mca_btl_pvrdma_put,
        .btl_get = mca_btl_pvrdma_get,
        .btl_dump = mca_btl_base_dump,
        .btl_register_mem = mca_btl_pvrdma_register_mem,
        .btl_deregister_mem = mca_btl_pvrdma_deregister_mem,
        .btl_register_error = pvrdma_register_error,
        .btl_flush = mca_btl_pvrdma_flush,
    },
};
