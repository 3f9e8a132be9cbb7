/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_compat.h
 * @brief Where the BTL interfaces of Open MPI 4.1 and 5.0 differ, in one
 *        place: configure's feature tests (m4/pvrdma_ompi.m4) define the
 *        PVRDMA_OMPI_* macros; the rest of the BTL uses only what is here.
 */
#ifndef MCA_BTL_PVRDMA_COMPAT_H
#define MCA_BTL_PVRDMA_COMPAT_H

#include "opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/util/proc.h"

#if PVRDMA_OMPI_MCA_THREADS /* 5.0: threads became a framework */
#include "opal/mca/threads/mutex.h"
#else
#include "opal/threads/mutex.h"
#endif

/* 5.0 dropped the separate export macro for components. */
#ifndef OPAL_MODULE_DECLSPEC
#define OPAL_MODULE_DECLSPEC OPAL_DECLSPEC
#endif

/**
 * Hand one received message to the upper layer (ob1, osc) registered for
 * @p tag.  5.0 passes a receive descriptor that carries the endpoint, the
 * tag and the callback data; 4.1 a send descriptor and both separately.
 * The segment is valid only during the call.
 */
static inline void pvrdma_compat_recv_upcall(mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *ep,
                                             mca_btl_base_tag_t tag,
                                             const mca_btl_base_segment_t *seg)
{
    const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
#if PVRDMA_OMPI_RECV_DESC
    const mca_btl_base_receive_descriptor_t des = {
        .endpoint = ep, .des_segments = seg, .des_segment_count = 1, .tag = tag,
        .cbdata = reg->cbdata};
    reg->cbfunc(btl, &des);
#else
    mca_btl_base_descriptor_t des = {.des_segments = (mca_btl_base_segment_t *) seg,
                                     .des_segment_count = 1};
    (void) ep;
    reg->cbfunc(btl, tag, &des, reg->cbdata);
#endif
}

/* 5.0's osc rdma drives a BTL directly only when its RDMA completes at the
 * target (else it emulates one-sided operations over sends).  RC verbs
 * do: a WRITE or atomic completes after the responder acknowledged it. */
#ifdef MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION
#define PVRDMA_BTL_FLAGS_REMOTE_COMPLETION MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION
#else
#define PVRDMA_BTL_FLAGS_REMOTE_COMPLETION 0
#endif

/** A proc's host name as a string the caller frees: 5.0's
 *  opal_get_proc_hostname returns a copy (its comment says otherwise),
 *  4.1's the proc's own string. */
static inline char *pvrdma_compat_proc_hostname(const opal_proc_t *proc)
{
#if PVRDMA_OMPI_HOSTNAME_COPY
    char *h = opal_get_proc_hostname(proc);
    return NULL != h ? h : strdup("(unknown)");
#else
    const char *h = opal_get_proc_hostname(proc);
    return strdup(NULL != h ? h : "(unknown)");
#endif
}

/* The modex (the BTL's address exchange) and the job size: 5.0 talks to
 * PMIx directly, with PMIx's own names for scopes, keys and types. */
#if PVRDMA_OMPI_PMIX_INTERNAL
#include "opal/mca/pmix/pmix-internal.h"
#define PVRDMA_MODEX_GLOBAL PMIX_GLOBAL
#define PVRDMA_MODEX_JOB_SIZE PMIX_JOB_SIZE
#define PVRDMA_MODEX_UINT32 PMIX_UINT32
#else
#include "opal/mca/pmix/pmix.h"
#define PVRDMA_MODEX_GLOBAL OPAL_PMIX_GLOBAL
#define PVRDMA_MODEX_JOB_SIZE OPAL_PMIX_JOB_SIZE
#define PVRDMA_MODEX_UINT32 OPAL_UINT32
#endif

#endif /* MCA_BTL_PVRDMA_COMPAT_H */
