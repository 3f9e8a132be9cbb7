/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_counters.h
 * @brief common/: the machine-readable counters line both plugins print
 *        when they close (counters.c).
 *
 * One line per close, "pvrdma counters: event=E dev=D port=P k=v k=v ...":
 * the tests and benchmarks read these keys instead of the wording of the
 * human-facing log lines, so rewording a message never changes a test
 * contract, and a renamed key fails the unit test that checks every key
 * the bed suites read (tests/unit/check-counter-keys).  Keys are
 * lower-case words joined by '_', values unsigned decimal; a line that did
 * not fit its buffer ends with "truncated=1".  Framework-free, as all of
 * common/.
 */
#ifndef PVRDMA_COUNTERS_H
#define PVRDMA_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What every counters line starts with (the tests grep for it). */
#define PVRDMA_COUNTERS_TAG "pvrdma counters:"

/** A counters line being built (on the stack: no allocation at close). */
struct pvrdma_common_counters {
    char   text[1536];
    size_t len;
    bool   truncated;
};

/** @brief Start the line: tag, event, device and port.  Pure. */
void pvrdma_common_counters_begin(struct pvrdma_common_counters *c,
                                  const char *event, const char *dev_name,
                                  unsigned port);
/** @brief Append " key=value".  A key that is not [a-z0-9_]+ is replaced by
 *         "bad_key" (a test then fails on the missing key).  Pure. */
void pvrdma_common_counters_add(struct pvrdma_common_counters *c,
                                const char *key, uint64_t value);
/** @brief Append what both plugins report of their RDMA operations and CQ
 *  arming (rdma_writes, rdma_write_max, rdma_reads, rdma_read_max,
 *  cq_arms, cq_events): the keys the bed tests prove a run's mode from. */
void pvrdma_common_counters_add_ops(struct pvrdma_common_counters *c, uint64_t writes,
                                    uint64_t write_max, uint64_t reads, uint64_t read_max,
                                    uint64_t arms, uint64_t events);
/** @brief The finished line (adds "truncated=1" if something was cut). */
const char *pvrdma_common_counters_str(struct pvrdma_common_counters *c);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_COUNTERS_H */
