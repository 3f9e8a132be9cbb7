/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file fork.c
 * @brief Registered memory and fork(): ask libibverbs for protection where
 *        the kernel needs it, and say what the process got.
 *
 * Why: before Linux 5.13 a fork() (also system(), popen()) makes the
 * parent's registered pages copy-on-write, and the parent's next write
 * moves them away from what the device DMAs to: silently corrupted
 * messages.  ibv_fork_init() marks registered ranges MADV_DONTFORK; newer
 * kernels copy pinned pages at fork and need nothing (rdma-core then reports
 * IBV_FORK_UNNEEDED).  libibverbs itself calls ibv_fork_init() when
 * RDMAV_FORK_SAFE or IBV_FORK_SAFE is set; the plugins' knob does the same
 * without the environment.  It must run before the first registration of
 * the process: later, libibverbs refuses (EINVAL).
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_fork.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pvrdma_common_fork_status_str(enum ibv_fork_status status)
{
    switch (status) {
    case IBV_FORK_ENABLED:
        return "protected (ibv_fork_init: registered memory is not shared "
               "with children)";
    case IBV_FORK_UNNEEDED:
        return "not needed (the kernel copies registered pages at fork)";
    case IBV_FORK_DISABLED:
    default:
        return "NOT protected (a fork() or system() can corrupt messages "
               "on this kernel)";
    }
}

int pvrdma_common_fork_init(enum pvrdma_common_fork_mode mode, char *why,
                            size_t why_len)
{
    const char *env = getenv("RDMAV_FORK_SAFE") ? "RDMAV_FORK_SAFE" :
                      getenv("IBV_FORK_SAFE") ? "IBV_FORK_SAFE" : NULL;
    enum ibv_fork_status status = ibv_is_fork_initialized();
    int rc = 0;

    if ((status == IBV_FORK_DISABLED) && (mode != PVRDMA_COMMON_FORK_NO)) {
        rc = ibv_fork_init();
        status = ibv_is_fork_initialized();
    }
    if (rc != 0) {
        snprintf(why, why_len, "fork support: %s: ibv_fork_init failed (%s: "
                 "memory was registered before it; set RDMAV_FORK_SAFE=1 in "
                 "the environment instead)",
                 pvrdma_common_fork_status_str(status), strerror(rc));
        return (mode == PVRDMA_COMMON_FORK_YES) ? rc : 0;
    }
    snprintf(why, why_len, "fork support: %s%s%s%s",
             pvrdma_common_fork_status_str(status),
             (env != NULL) ? " (" : "", (env != NULL) ? env : "",
             (env != NULL) ? " is set)" : "");
    return 0;
}
