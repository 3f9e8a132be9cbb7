/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_watch.h
 * @brief The BTL's watch over its peers (btl_pvrdma_watch.c), called from
 *        progress with the module lock held.
 */
#ifndef MCA_BTL_PVRDMA_WATCH_H
#define MCA_BTL_PVRDMA_WATCH_H

#include "btl_pvrdma.h"

/** Once a second at most: kick peers whose WRs wait without progress,
 *  probe silent ones (btl_pvrdma_stall_kick, btl_pvrdma_keepalive). */
void mca_btl_pvrdma_peer_watch(mca_btl_pvrdma_module_t *module);

/** At btl_base_verbose 10: report the state once per minute while work
 *  waits and nothing moves (@p count: what this progress call found). */
void mca_btl_pvrdma_stall_watch(mca_btl_pvrdma_module_t *module, int count);

#endif /* MCA_BTL_PVRDMA_WATCH_H */
