/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_retry_counters.h
 * @brief common/: transport retries of a port from hw_counters (retry_counters.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_RETRY_COUNTERS_H
#define PVRDMA_RETRY_COUNTERS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Retry events of a port from the kernel's hw_counters: device-wide (every
 * process's QPs), as verbs count nothing per QP.  Read at open and at close,
 * the difference tells a lost packet from a slow one.
 */
struct pvrdma_common_retry_counters {
    int      available;  /**< the device exposes at least one of them */
    uint64_t timeouts;   /**< retransmissions by the requester */
    uint64_t seq_naks;   /**< sequence-error NAKs received */
    uint64_t rnr_naks;   /**< receiver-not-ready NAKs received */
    uint64_t duplicates; /**< duplicate requests received (ACK lost) */
};

/** @brief Read /sys/class/infiniband/DEV/ports/PORT/hw_counters.
 *  @return how many counter files were read (0: none, available = 0). */
int pvrdma_common_retry_counters_read(const char *dev_name, unsigned port,
                                      struct pvrdma_common_retry_counters *c);
/** @brief The same from directory @p dir (unit tests). */
int pvrdma_common_retry_counters_read_dir(const char *dir,
                                          struct pvrdma_common_retry_counters *c);
/** @brief @p delta = @p now - @p start, per field.  Pure. */
void pvrdma_common_retry_counters_since(const struct pvrdma_common_retry_counters *start,
                                        const struct pvrdma_common_retry_counters *now,
                                        struct pvrdma_common_retry_counters *delta);
/** @brief "R retries, S sequence NAKs, N RNR NAKs, D duplicate requests",
 *         or "not exposed by the device (no hw_counters)".  Pure. */
const char *pvrdma_common_retry_counters_str(const struct pvrdma_common_retry_counters *c,
                                             char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_RETRY_COUNTERS_H */
