/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ucp_check_burst.h
 * @brief ucp_tag_check's burst (ucp_check_burst.c): the sizes around the
 *        protocol thresholds, N messages in flight at once with distinct
 *        tags, the thresholds UCP chose for an endpoint, and the worker
 *        flush before teardown.
 */
#ifndef UCP_CHECK_BURST_H
#define UCP_CHECK_BURST_H

#include <ucp/api/ucp.h>

#include <stddef.h>

/* burst message k has tag TAG_BURST_BASE + k, its reply TAG_BURST_REPLY + k:
 * far from the ladder's tags and from each other for any sane -b */
#define TAG_BURST_BASE    0xb0000000ull
#define TAG_BURST_REPLY   0xc0000000ull

/** The burst sizes around the @p nthr thresholds @p thr, at most @p max_size,
 *  sorted and distinct, into @p out (8 a threshold at most): how many. */
size_t burst_sizes(const size_t *thr, size_t nthr, size_t max_size,
                   size_t *out);
/** Run the burst of @p n messages (sizes cycling over @p sizes) as client or
 *  server: 1 when every message checked right, else 0 ("FAIL ..." lines). */
int burst(ucp_ep_h ep, int fd, int is_client, size_t n,
          const size_t *sizes, size_t nsizes);
/** UCP's tag_send protocol thresholds for @p ep (at most @p max) into @p out:
 *  how many, 0 when ucp_ep_print_info shows none. */
size_t ep_thresholds(ucp_ep_h ep, size_t *out, size_t max);
/** Wait until every operation of the worker is complete at the peer. */
void flush_worker(void);

#endif /* UCP_CHECK_BURST_H */
