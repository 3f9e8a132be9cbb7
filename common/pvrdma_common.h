/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_common.h
 * @brief Verbs code shared by the Open MPI BTL and the UCX transport for
 *        VMware PVRDMA (paravirtual RoCE) devices.
 *
 * Framework-free on purpose: no opal and no ucs here.  Functions return 0 on
 * success or a positive errno value; where a user-fixable problem can occur,
 * the caller passes a buffer (@p why / @p err) that receives one readable
 * sentence, so the plugin can print it with its own help/log facility.
 *
 * Pure functions (no verbs calls, no I/O) are marked "Pure." and are covered
 * by tests/unit.  Everything else talks to libibverbs (and hwloc for NUMA
 * distances).
 *
 * Completion status text: use ibv_wc_status_str() from libibverbs.
 *
 * One header per module (issue 35); this one includes them all, for the
 * plugins.  Code in common/ and the unit tests include only the modules
 * they use.
 */
#ifndef PVRDMA_COMMON_H
#define PVRDMA_COMMON_H

#include "pvrdma_device.h"
#include "pvrdma_port.h"
#include "pvrdma_profile.h"
#include "pvrdma_gid.h"
#include "pvrdma_addr.h"
#include "pvrdma_auth.h"
#include "pvrdma_qp.h"
#include "pvrdma_ud.h"
#include "pvrdma_frag.h"
#include "pvrdma_credits.h"
#include "pvrdma_cq.h"
#include "pvrdma_page.h"
#include "pvrdma_scale.h"
#include "pvrdma_rdma_probe.h"
#include "pvrdma_retry_counters.h"
#include "pvrdma_fork.h"
#include "pvrdma_idle_wait.h"
#include "pvrdma_cq_notify.h"
#include "pvrdma_watch.h"

#endif /* PVRDMA_COMMON_H */
