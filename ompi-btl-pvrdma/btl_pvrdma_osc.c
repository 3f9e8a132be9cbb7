/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_osc.c
 * @brief The one-sided module: RDMA WRITE, RDMA READ and network atomics
 *        for osc rdma, on the main module's device, endpoints and
 *        registrations.
 *
 * Why a second module: osc rdma takes a BTL only if it offers PUT, GET and
 * atomics, and ob1 runs every rendezvous through a BTL that offers GET as
 * an RDMA READ (RGET), which is what PVRDMA and SoftRoCE do worst (the
 * bed's 1 MiB ping-pong: 2-3 MB/s by READ, 16-18 by WRITE; docs/results/2026-11-23-mpi-and-uct.md).
 * Open MPI's BML lists a module that does not send only in a peer's RDMA
 * list, and ob1 uses an RDMA module for point-to-point only when its
 * endpoint is also one of the peer's send endpoints (pml_ob1_rdma.c:
 * "btls that exist on the endpoint only to support RMA").  So the main
 * module offers SEND and PUT (and GET only with btl_pvrdma_rdma_read), and
 * this one, created where the device has atomics, offers PUT, GET and
 * 64-bit fetch-and-add / compare-and-swap under handles of its own
 * (struct mca_btl_pvrdma_osc_handle): osc rdma selects it, ob1 ignores it.
 * It also reaches this process itself (a loopback QP): osc rdma runs the
 * atomics on its own window through the BTL, because ours are not atomic
 * with the CPU's.
 *
 * Both modules' operations take the main module's lock; completions come
 * from the main module's CQ and report to the module and handle the caller
 * used (frag->rdma_osc).
 */
#include "opal_config.h"

#include <stdlib.h>

#include "btl_pvrdma.h"
#include "btl_pvrdma_atomic.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_osc.h"
#include "btl_pvrdma_rdma.h"

static int osc_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                         struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                         opal_bitmap_t *reachable)
{
    return mca_btl_pvrdma_add_peers(mca_btl_pvrdma_osc_main(btl), MCA_BTL_PVRDMA_EP_USER_OSC,
                                    nprocs, procs, peers, reachable);
}

static int osc_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                         struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    mca_btl_pvrdma_module_t *module = mca_btl_pvrdma_osc_main(btl);

    (void) procs;
    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_pvrdma_del_peer(module, MCA_BTL_PVRDMA_EP_USER_OSC,
                                mca_btl_pvrdma_osc_endpoint(peers[i]));
    }
    return OPAL_SUCCESS;
}

static int osc_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata)
{
    (void) flags;
    (void) order;
    return mca_btl_pvrdma_rdma(mca_btl_pvrdma_osc_main(btl), mca_btl_pvrdma_osc_endpoint(endpoint),
                               IBV_WR_RDMA_WRITE, local_address, remote_address, local_handle,
                               remote_handle, size, true, cbfunc, cbcontext, cbdata);
}

static int osc_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata)
{
    (void) flags;
    (void) order;
    return mca_btl_pvrdma_rdma(mca_btl_pvrdma_osc_main(btl), mca_btl_pvrdma_osc_endpoint(endpoint),
                               IBV_WR_RDMA_READ, local_address, remote_address, local_handle,
                               remote_handle, size, true, cbfunc, cbcontext, cbdata);
}

static int osc_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    /* NULL: every peer's RDMA, whichever module posted it (a superset) */
    return mca_btl_pvrdma_flush(&mca_btl_pvrdma_osc_main(btl)->super,
                                mca_btl_pvrdma_osc_endpoint(endpoint));
}

static mca_btl_base_registration_handle_t *
osc_register_mem(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                 void *base, size_t size, uint32_t flags)
{
    (void) endpoint;
    return mca_btl_pvrdma_register_mem(&mca_btl_pvrdma_osc_main(btl)->super, NULL, base, size,
                                       flags);
}

static int osc_deregister_mem(struct mca_btl_base_module_t *btl,
                              mca_btl_base_registration_handle_t *handle)
{
    return mca_btl_pvrdma_deregister_mem(&mca_btl_pvrdma_osc_main(btl)->super, handle);
}

static int osc_register_error(struct mca_btl_base_module_t *btl,
                              mca_btl_base_module_error_cb_fn_t cbfunc)
{
    /* errors of the shared QPs are reported once, through the main module */
    (void) btl;
    (void) cbfunc;
    return OPAL_SUCCESS;
}

static int osc_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_pvrdma_osc_module_t *osc = (mca_btl_pvrdma_osc_module_t *) btl;

    if (NULL != osc->main) {
        osc->main->osc = NULL;
    }
    free(osc);
    return OPAL_SUCCESS;
}

mca_btl_pvrdma_osc_module_t *mca_btl_pvrdma_osc_module_create(mca_btl_pvrdma_module_t *main)
{
    mca_btl_pvrdma_osc_module_t *osc = calloc(1, sizeof(*osc));
    mca_btl_base_module_t *m;

    if (NULL == osc) {
        return NULL;
    }
    m = &osc->super;
    /* the limits the main module derived from the device */
    *m = main->super;
    m->btl_add_procs = osc_add_procs;
    m->btl_del_procs = osc_del_procs;
    m->btl_register = NULL;
    m->btl_finalize = osc_finalize;
    m->btl_alloc = NULL;
    m->btl_free = NULL;
    m->btl_prepare_src = NULL;
    m->btl_send = NULL;
    m->btl_sendi = NULL;
    m->btl_put = osc_put;
    m->btl_get = osc_get;
    m->btl_register_mem = osc_register_mem;
    m->btl_deregister_mem = osc_deregister_mem;
    m->btl_register_error = osc_register_error;
    m->btl_flush = osc_flush;
    m->btl_atomic_op = mca_btl_pvrdma_atomic_op;
    m->btl_atomic_fop = mca_btl_pvrdma_atomic_fop;
    m->btl_atomic_cswap = mca_btl_pvrdma_atomic_cswap;
    /* osc rdma takes a BTL with PUT, GET and fetching atomics that can add
     * (its locks and counters) and compare-and-swap; the rest it builds
     * from those.  Not GLOB: the device's atomics are not atomic with the
     * CPU's.  No SEND: the BML then lists it for RDMA only. */
    m->btl_flags = MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET | MCA_BTL_FLAGS_RDMA_FLUSH |
                   MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS |
                   PVRDMA_BTL_FLAGS_REMOTE_COMPLETION;
    m->btl_atomic_flags = MCA_BTL_ATOMIC_SUPPORTS_ADD | MCA_BTL_ATOMIC_SUPPORTS_CSWAP;
    m->btl_get_limit = main->profile.max_msg_size;
    osc->main = main;
    main->osc = osc;
    return osc;
}
