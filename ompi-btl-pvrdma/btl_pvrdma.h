/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma.h
 * @brief Component and module structures of the pvrdma BTL: an RC verbs
 *        transport tuned for VMware PVRDMA (and usable on any RoCE/IB port).
 *
 * Layout of the component:
 *  - btl_pvrdma_component.c  MCA parameters, open/close/init, progress entry
 *  - btl_pvrdma_module.c     module ops table, add/del procs, finalize,
 *                            memory registration (rcache grdma)
 *  - btl_pvrdma_device.c     port choice, device resources, profile
 *  - btl_pvrdma_cm.c         UD-based connection set-up (no rdmacm needed)
 *  - btl_pvrdma_endpoint.c   endpoints, RC QPs, pending queues
 *  - btl_pvrdma_frag.c       eager send path: alloc/free/prepare_src/send(i)
 *  - btl_pvrdma_rdma.c       put/get/flush
 *  - btl_pvrdma_progress.c   completion handling, receive reposting
 *  - btl_pvrdma_watch.c      stall kick, keepalive, stall report
 *  - btl_pvrdma_error.c      fatal errors: help message, then abort
 */
#ifndef MCA_BTL_PVRDMA_H
#define MCA_BTL_PVRDMA_H

#include "opal_config.h"

#include <stdint.h>
#include <infiniband/verbs.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_error.h"
#include "opal/mca/rcache/rcache.h"
#include "btl_pvrdma_compat.h"
#include "opal/util/output.h"

#include "pvrdma_common.h"

/** The CQs of module->notify (bit i: the i-th added): the data CQ is added
 *  when the queues are made, the connection manager's receive CQ after it. */
#define MCA_BTL_PVRDMA_NOTIFY_DATA 1u
#define MCA_BTL_PVRDMA_NOTIFY_CM   2u

BEGIN_C_DECLS

/** Tri-state values of the srq and rdma_read parameters. */
enum {
    MCA_BTL_PVRDMA_TRI_AUTO = -1,
    MCA_BTL_PVRDMA_TRI_OFF = 0,
    MCA_BTL_PVRDMA_TRI_ON = 1
};

/** The component: MCA parameter storage and the (single) module. */
typedef struct mca_btl_pvrdma_component_t {
    mca_btl_base_component_3_0_0_t super;

    /* device choice */
    char *if_include;
    char *if_exclude;
    int gid_index;          /**< -1: automatic */

    /* resource profile requests (-1/0: take from the device profile) */
    int srq;                /**< tri-state */
    int srq_depth;
    int send_queue_depth;
    int recv_queue_depth;   /**< receives per peer (= initial credits) */
    int send_sge;
    int max_inline;         /**< -1 auto (0 on PVRDMA) */
    int cq_depth;
    int send_budget;        /**< send WRs in flight on all QPs, 0 = auto */
    int mtu;                /**< bytes, 0 = port active MTU */
    int rdma_read;          /**< tri-state */
    int rdma_write;         /**< tri-state: auto probes the device */
    int atomics;            /**< tri-state: network atomics for osc rdma */
    int fork_init;          /**< tri-state: ibv_fork_init (auto: try) */
    int max_rd_atomic;
    size_t max_msg_size;    /**< 0 = device limit */

    /* flow control and signalling */
    int credit_threshold;   /**< 0 = half the credits */
    int credit_reserved;
    int signal_interval;
    int send_coalesce;      /**< bool: sends of one progress turn as one WR list */

    /* RC and connection timing */
    int rc_timeout;
    int rc_retry_count;
    int rnr_retry;
    int min_rnr_timer;
    int connect_timeout_ms;
    int connect_retries;
    int max_connections;    /**< RC QPs per process, 0 = auto (btl_pvrdma_budget.c) */
    int cm_poll_interval;
    int stall_kick_s;       /**< seconds before a stalled send queue is kicked, 0 = off */
    int keepalive_s;        /**< seconds of silence before an idle peer is probed, 0 = off */
    int idle_wait;          /**< tri-state: auto = on for PVRDMA devices */
    int idle_spin_us;       /**< idle wait: poll on every call this long after activity */
    int idle_poll_us;       /**< then poll at most once per this, 0 = always poll */
    int idle_poll_scale;    /**< or per this many times a measured empty poll */
    int idle_spin_scale;    /**< spin polls >= this many empty polls apart */
    bool idle_spin_adapt;   /**< the spin's pace follows what its polls find */
    int idle_arm_ms;        /**< armed wait: safety poll period, 0 = never arm */

    /* fragment lists */
    int free_list_num;
    int free_list_max;
    int free_list_inc;

    int module_count;
    struct mca_btl_pvrdma_module_t *modules[1];
} mca_btl_pvrdma_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_pvrdma_component_t mca_btl_pvrdma_component;

/** What a peer needs to reach a module; published through the modex. */
typedef struct mca_btl_pvrdma_modex_t {
    uint8_t cm_addr[PVRDMA_COMMON_ADDR_WIRE_SIZE]; /**< the UD CM QP address */
    uint32_t qkey;       /**< Q_Key of the CM QP, network order */
    /** what every datagram to the CM QP must carry (common/ud.c): only
     *  processes of the job read the modex */
    uint8_t secret[PVRDMA_COMMON_UD_SECRET_LEN];
} mca_btl_pvrdma_modex_t;

/** Remote keys of a registration, sent to peers by the PML. */
struct mca_btl_base_registration_handle_t {
    uint32_t lkey;
    uint32_t rkey;
};

/** rcache registration with the verbs MR. */
typedef struct mca_btl_pvrdma_reg_t {
    mca_rcache_base_registration_t base;
    struct ibv_mr *mr;
    mca_btl_base_registration_handle_t handle;
} mca_btl_pvrdma_reg_t;

struct mca_btl_pvrdma_cm_t;
struct mca_btl_pvrdma_osc_module_t;

/** One module per chosen device port. */
typedef struct mca_btl_pvrdma_module_t {
    mca_btl_base_module_t super;

    /* device */
    struct pvrdma_common_port port;        /**< attributes of the chosen port */
    struct pvrdma_common_profile profile;  /**< clamped resources */
    struct pvrdma_common_gid_entry gid;    /**< chosen local GID */
    struct pvrdma_common_qp_params qp_params;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;       /**< one CQ for RC sends and receives */
    struct ibv_srq *srq;     /**< NULL: per-QP receive queues */
    bool rdma_write_ok;      /**< RDMA WRITE lands (probed or forced) */
    /** ob1 gets btl_get (RDMA READ rendezvous): btl_pvrdma_rdma_read and
     *  the device can (profile.rdma_read_ok says only the latter) */
    bool pml_get;
    /** 64-bit fetch-and-add and compare-and-swap offered (btl_atomic_*)
     *  through the one-sided module @p osc: the device has them, READs
     *  (same initiator depth, max_rd_atomic) and WRITEs */
    bool atomics_ok;
    struct mca_btl_pvrdma_osc_module_t *osc;  /**< btl_pvrdma_osc.c; NULL: none */
    struct ibv_mr *atomic_scratch_mr; /**< where non-fetching atomics put
                                           the value nobody reads */
    size_t frag_size;        /**< header + max(eager_limit, max_send_size) */

    /* connection manager */
    struct mca_btl_pvrdma_cm_t *cm;

    /* memory */
    mca_rcache_base_module_t *rcache;
    opal_free_list_t send_frags;   /**< eager/send fragments, registered */
    opal_free_list_t recv_frags;   /**< receive buffers, registered */
    opal_free_list_t rdma_frags;   /**< put/get contexts, no payload */

    /* endpoints */
    opal_hash_table_t proc_to_ep;  /**< opal_proc_t * -> endpoint */
    opal_hash_table_t qpn_to_ep;   /**< RC qp_num -> endpoint (SRQ receives) */
    opal_list_t endpoints;         /**< all endpoints, for finalize/flush */
    uint32_t pending_count;        /**< fragments queued on all endpoints */
    uint32_t connecting_count;     /**< endpoints in CONNECTING/ACCEPTED */
    uint32_t credits_owed_count;   /**< endpoints with credits_owed set */

    /* SRQ accounting */
    uint32_t srq_posted;     /**< receives currently posted on the SRQ */
    uint32_t srq_target;     /**< receives we want posted on the SRQ */

    /** How the one CQ is shared (common/scale.c): send_budget entries for
     *  send WRs in flight on all QPs, the rest for receives.  The CQ is
     *  never resized (PVRDMA has no resize_cq). */
    struct pvrdma_common_scale_plan plan;
    uint32_t job_peers;      /**< peers the plan was made for (0: unknown) */
    /** CQ entries promised to per-QP receive queues: stays <=
     *  plan.recv_room so the shared CQ can never overflow */
    uint32_t cq_committed;
    /** send WRs posted on all QPs and not yet completed, signalled or not
     *  (a QP in error flushes all of them into the CQ): <= plan.send_budget */
    uint32_t sq_posted;
    uint32_t peers_connected; /**< RC QPs held (draining ones too) */
    uint32_t peers_max;       /**< most of them at once (printed at close) */
    /** The connection budget (btl_pvrdma_budget.c). */
    struct {
        uint32_t max;         /**< RC QPs at most (btl_pvrdma_max_connections) */
        uint64_t tick;        /**< use counter: endpoints' last_use, for LRU */
        uint32_t closing;     /**< endpoints in CLOSING */
        uint32_t waiting;     /**< endpoints in WAITING */
        uint64_t next_look_us; /**< when budget_progress looks again */
        uint64_t closes;      /**< connections closed by agreement */
        uint64_t reopens;     /**< connections made to a peer we had closed */
        uint64_t refusals;    /**< CLOSE requests refused (ours and theirs) */
        uint64_t overruns;    /**< connections made over the budget */
        uint64_t rx_reclaimed; /**< receives taken back from closed QPs */
        uint64_t rx_stale;    /**< completions of closed QPs, ignored */
    } budget;
    /** the port's retry counters when opened: at close the difference says
     *  whether the run lost packets (btl_base_verbose 10) */
    struct pvrdma_common_retry_counters retries_at_open;

    /* progress accounting: poll the CQ only when it can hold completions */
    uint32_t sends_outstanding; /**< WRs posted whose CQE is still due */
    uint32_t sends_awaited;     /**< of those, WRs whose completion runs a callback:
                                     only these keep a waiting rank polling */
    uint32_t recvs_posted;      /**< receives posted on any QP/SRQ */
    uint32_t cm_idle_count;
    uint32_t idle_polls;      /**< progress calls since something moved */
    uint64_t idle_since_us;   /**< when something last moved (stall report) */
    uint32_t watch_calls;     /**< progress calls since the stall watch read the clock */
    uint64_t watch_next_us;   /**< when the stall watch looks at the send queues next */
    uint64_t stall_kicks;     /**< kicks posted (printed at close) */
    uint64_t keepalives;      /**< keepalive probes posted (printed at close) */
    /** bounded idle wait (common/idle_wait.c): a rank that only waits for
     *  receives polls its CQs at most once per btl_pvrdma_idle_poll_interval */
    struct pvrdma_common_idle_wait idle;
    /** armed wait (common/cq_notify.c): once the idle wait backs off, the
     *  CQs (data and connection receives) are armed and the channel is read
     *  instead of polling them (btl_pvrdma_idle_arm) */
    struct pvrdma_common_cq_notify notify;

    /* RDMA WRs this module posted, printed by mca_btl_pvrdma_finalize ("closed
     * <dev>:<port>: ..."): the bed tests prove from these counts how the
     * rendezvous moved large messages (btl_put = RDMA WRITE, btl_get = RDMA
     * READ, neither = send/recv copies).  Counted per WR (a transfer above
     * max_msg_size is several) in mca_btl_pvrdma_endpoint_post, which every
     * caller runs under the module lock, so plain increments suffice.  The
     * BTL never arms its CQs (no completion channel), so nothing counts
     * CQ arms or events: finalize prints 0 for them. */
    uint64_t rdma_writes;      /**< RDMA WRITE WRs posted (btl_put) */
    uint64_t rdma_write_max;   /**< bytes of the largest one */
    uint64_t rdma_reads;       /**< RDMA READ WRs posted (btl_get) */
    uint64_t rdma_read_max;    /**< bytes of the largest one */
    uint64_t atomic_fadds;     /**< fetch-and-add WRs posted (btl_atomic_op/fop) */
    uint64_t atomic_cswaps;    /**< compare-and-swap WRs posted (btl_atomic_cswap) */
    /* send doorbells (issue 38): ibv_post_send calls and the WRs they
     * carried, printed in the counters line at close */
    uint64_t send_posts;       /**< ibv_post_send calls (one doorbell each) */
    uint64_t send_wrs;         /**< WRs they posted */
    uint64_t send_holds;       /**< flushes that waited for a fuller list (HOLD_LOW) */
    uint64_t cq_polls;         /**< ibv_poll_cq calls on the CQ (a doorbell each on PVRDMA) */

    /* send coalescing (btl_pvrdma_send_coalesce): a send that finds its
     * endpoint already posted to in this progress turn, or that a PML
     * callback makes inside progress, queues on the endpoint and goes
     * with the others as one WR list when progress flushes the queues */
    uint32_t progress_turn;    /**< module_progress calls so far */
    bool in_upcalls;           /**< poll_cq runs PML callbacks now */

    mca_btl_base_module_error_cb_fn_t error_cb;
    bool fatal;               /**< a fatal error was reported */
    opal_recursive_mutex_t lock;  /**< every op on queues, endpoints and fragment
                                       state (MPI_THREAD_MULTIPLE); recursive:
                                       PML callbacks from progress re-enter send */
} mca_btl_pvrdma_module_t;

/** Template with the ops table (btl_pvrdma_module.c). */
extern mca_btl_pvrdma_module_t mca_btl_pvrdma_module_template;

/** @brief Verbose output to the btl framework stream (btl_base_verbose). */
#define MCA_BTL_PVRDMA_VERBOSE(level, ...) \
    opal_output_verbose(level, opal_btl_base_framework.framework_output, \
                        "btl:pvrdma: " __VA_ARGS__)

/** @brief True when verbose output of @p level would be printed. */
#define MCA_BTL_PVRDMA_VERBOSE_ON(level) \
    (opal_output_get_verbosity(opal_btl_base_framework.framework_output) >= (level))

/* btl_pvrdma_device.c */
int mca_btl_pvrdma_device_open(mca_btl_pvrdma_module_t *module);
int mca_btl_pvrdma_device_create_queues(mca_btl_pvrdma_module_t *module);
void mca_btl_pvrdma_device_close(mca_btl_pvrdma_module_t *module);
/* Receive buffers go back to the device in WR lists of at least this many
 * (fewer only where a queue is small: a quarter of it): each ibv_post_recv
 * / ibv_post_srq_recv is a doorbell, a VM exit on PVRDMA, so reposting per
 * message would cost one recv doorbell per message, batching 1/32 (issue
 * 38; 16 before 2026-11-28).  The SRQ is filled to its target plus one
 * batch, so a waiting batch never takes receives the peers were granted. */
#define MCA_BTL_PVRDMA_REPOST_BATCH 32

/** Queued sends of one endpoint posted as one WR list at most (issue 38):
 *  one doorbell for a whole message's fragments or a burst; a send that
 *  finds this many queued flushes them at once instead of waiting for
 *  progress (bounds what coalescing holds back). */
#define MCA_BTL_PVRDMA_POST_BATCH 32

/** Longest WR list progress posts from an endpoint's queue.  Longer than
 *  POST_BATCH: a queue that grew in one progress turn (ob1 schedules a
 *  large message's next fragments from the completion callbacks of the
 *  previous ones, up to its pipeline depth, 64 in the parameter file) goes
 *  as one doorbell instead of splitting at 32 (issue 38): a 1 MiB
 *  copy-path message 4.0 send doorbells instead of 6.0-6.5 (nested tier,
 *  two runs, 2026-11-29).  The send queue and the credits bound it too. */
#define MCA_BTL_PVRDMA_LIST_MAX 64

/** While more than this many of an endpoint's WRs are on the wire, a
 *  short queue of sends the PML waits for (a large message's next
 *  fragments, scheduled from the completions of the previous ones) waits
 *  to become a full POST_BATCH list: the wire stays busy with what is
 *  posted, and the lists of a 1 MiB copy-path message follow POST_BATCH
 *  and the credits rather than the polls that found completions: 6.0-6.5
 *  doorbells instead of 8.5 with ob1's pipeline at 64, and 4.0 with
 *  LIST_MAX (nested tier, two runs each, 2026-11-29; issue 38). */
#define MCA_BTL_PVRDMA_HOLD_LOW (MCA_BTL_PVRDMA_POST_BATCH / 2)

int mca_btl_pvrdma_srq_refill(mca_btl_pvrdma_module_t *module);
int mca_btl_pvrdma_srq_refill_batched(mca_btl_pvrdma_module_t *module);

/* btl_pvrdma_module.c */
int mca_btl_pvrdma_module_init(mca_btl_pvrdma_module_t *module);
/** @brief btl_add_procs for one user of the endpoints
 *  (MCA_BTL_PVRDMA_EP_USER_PML: handles are the endpoints, this process is
 *  left to btl/self; _OSC: the one-sided module's handles, this process
 *  too, through a loopback QP). */
int mca_btl_pvrdma_add_peers(mca_btl_pvrdma_module_t *module, uint8_t user, size_t nprocs,
                             struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                             opal_bitmap_t *reachable);
/** @brief @p user no longer uses @p ep (NULL: nothing); the last user's
 *  delete closes it. */
void mca_btl_pvrdma_del_peer(mca_btl_pvrdma_module_t *module, uint8_t user,
                             struct mca_btl_base_endpoint_t *ep);
int mca_btl_pvrdma_finalize(struct mca_btl_base_module_t *btl);
mca_btl_base_registration_handle_t *
mca_btl_pvrdma_register_mem(struct mca_btl_base_module_t *btl,
                            struct mca_btl_base_endpoint_t *endpoint,
                            void *base, size_t size, uint32_t flags);
int mca_btl_pvrdma_deregister_mem(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_registration_handle_t *handle);

/* btl_pvrdma_progress.c */
int mca_btl_pvrdma_module_progress(mca_btl_pvrdma_module_t *module);

END_C_DECLS

#endif /* MCA_BTL_PVRDMA_H */
