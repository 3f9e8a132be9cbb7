/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_error.c
 * @brief Help messages and the fatal-error path (see btl_pvrdma_error.h).
 */
#include "opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "btl_pvrdma.h"
#include "btl_pvrdma_endpoint.h"
#include "btl_pvrdma_error.h"

/** The peer's host name for one message: a per-thread copy, valid until
 *  the thread's next call (these messages end the job). */
static const char *peer_host(mca_btl_pvrdma_endpoint_t *ep)
{
    static _Thread_local char name[256];
    char *h = (NULL != ep && NULL != ep->proc) ? pvrdma_compat_proc_hostname(ep->proc) : NULL;

    snprintf(name, sizeof(name), "%s", NULL != h ? h : "(unknown)");
    free(h);
    return name;
}

/** Hand the failure to the PML (which aborts); without one, exit here.
 *  The one line with both hosts, the device and the reason comes first:
 *  the PML's handler does not return, and a help text can be lost when the
 *  runtime itself cannot reach the dead peer's node (seen on the bed with
 *  the peer's link down: ORTE_ERROR_LOG "Out of resource" in show_help). */
static void pvrdma_fatal(mca_btl_pvrdma_module_t *module, mca_btl_pvrdma_endpoint_t *ep,
                         const char *what)
{
    if (!module->fatal) {
        opal_output(0, "btl:pvrdma: %s -> %s (%s:%d): %s; aborting the job",
                    opal_process_info.nodename, peer_host(ep), module->port.dev_name,
                    (int) module->port.port_num, what);
    }
    module->fatal = true;
    if (NULL != ep) {
        ep->state = MCA_BTL_PVRDMA_EP_FAILED;
    }
    if (NULL != module->error_cb) {
        module->error_cb(&module->super, MCA_BTL_ERROR_FLAGS_FATAL,
                         NULL != ep ? ep->proc : NULL, (char *) what);
    }
    /* The PML's handler normally does not return; make sure we never hang. */
    abort();
}

void mca_btl_pvrdma_error_verbs(mca_btl_pvrdma_module_t *module, const char *call, int err)
{
    opal_show_help(MCA_BTL_PVRDMA_HELP, "verbs call failed", true,
                   opal_process_info.nodename, module->port.dev_name,
                   (int) module->port.port_num, call, err, strerror(err));
}

void mca_btl_pvrdma_error_device(mca_btl_pvrdma_module_t *module, const char *call, int err)
{
    if (!module->fatal) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "device call failed", true,
                       opal_process_info.nodename, module->port.dev_name,
                       (int) module->port.port_num, call, err, strerror(err));
    }
    pvrdma_fatal(module, NULL, call);
}

void mca_btl_pvrdma_error_completion(mca_btl_pvrdma_module_t *module,
                                     mca_btl_pvrdma_endpoint_t *ep, const struct ibv_wc *wc,
                                     const char *what)
{
    char why[160];

    if (!module->fatal) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "completion error", true,
                       opal_process_info.nodename, peer_host(ep), module->port.dev_name,
                       (int) module->port.port_num, ibv_wc_status_str(wc->status),
                       (int) wc->status, what, wc->qp_num, wc->vendor_err);
    }
    snprintf(why, sizeof(why), "work completion error: %s (status %d) on a %s",
             ibv_wc_status_str(wc->status), (int) wc->status, what);
    pvrdma_fatal(module, ep, why);
}

void mca_btl_pvrdma_error_post(mca_btl_pvrdma_endpoint_t *ep, const char *call, int err)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    if (!module->fatal) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "post failed", true,
                       opal_process_info.nodename, peer_host(ep), module->port.dev_name,
                       (int) module->port.port_num, call, err, strerror(err));
    }
    pvrdma_fatal(module, ep, "post failed");
}

void mca_btl_pvrdma_error_connect_timeout(mca_btl_pvrdma_endpoint_t *ep)
{
    mca_btl_pvrdma_module_t *module = ep->module;
    char gid[64];

    if (!module->fatal) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "connect timeout", true,
                       opal_process_info.nodename, peer_host(ep), module->port.dev_name,
                       (int) module->port.port_num,
                       pvrdma_common_gid_str(&ep->peer_cm.gid, gid, sizeof(gid)),
                       mca_btl_pvrdma_component.connect_retries,
                       mca_btl_pvrdma_component.connect_timeout_ms);
    }
    pvrdma_fatal(module, ep, "connection timeout");
}

void mca_btl_pvrdma_error_connect(mca_btl_pvrdma_endpoint_t *ep, const char *call, int err)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    if (!module->fatal) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "connect failed", true,
                       opal_process_info.nodename, peer_host(ep), module->port.dev_name,
                       (int) module->port.port_num, call, err, strerror(err));
    }
    pvrdma_fatal(module, ep, "connection set-up failed");
}

void mca_btl_pvrdma_error_message(mca_btl_pvrdma_endpoint_t *ep, uint32_t qp_num,
                                  uint32_t byte_len, unsigned tag, unsigned flags,
                                  int opcode)
{
    mca_btl_pvrdma_module_t *module = ep->module;

    if (!module->fatal) {
        opal_show_help(MCA_BTL_PVRDMA_HELP, "bad message", true, opal_process_info.nodename,
                       peer_host(ep), module->port.dev_name, (int) module->port.port_num,
                       qp_num, byte_len, tag, flags, opcode);
    }
    pvrdma_fatal(module, ep, "bad message");
}
