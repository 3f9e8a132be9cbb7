/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file retry_counters.c
 * @brief Transport retries of a port, from the kernel's hw_counters.
 *
 * Verbs give no per-QP count of retransmissions, so a slow transfer and one
 * that lost packets look the same from the application.  The kernel keeps
 * per-port counters in /sys/class/infiniband/DEV/ports/PORT/hw_counters
 * (device-wide: every process's QPs); reading them when a plugin opens the
 * port and when it closes it tells a benchmark whether its run retried.
 * Names differ by driver (rxe, mlx5, ...); each field sums the ones that
 * exist.  PVRDMA's driver exposes none: the plugins then say so.
 */
#include "pvrdma_retry_counters.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Counter file names per field, across drivers. */
static const char *const timeout_names[] = {
    "completer_retry_err",     /* rxe: requester retried (timeout or NAK) */
    "local_ack_timeout_err",   /* mlx5 */
    NULL
};
static const char *const seq_nak_names[] = {
    "rcvd_seq_err",            /* rxe: sequence-error NAK received */
    "packet_seq_err",          /* mlx5 */
    "implied_nak_seq_err",     /* mlx5 */
    NULL
};
static const char *const rnr_nak_names[] = {
    "rcvd_rnr_err",            /* rxe: RNR NAK received */
    "rnr_nak_retry_err",       /* mlx5 */
    NULL
};
static const char *const duplicate_names[] = {
    "duplicate_request",       /* rxe, mlx5: our ACK was lost, peer resent */
    NULL
};

/* Adds the counters named in @p names found in @p dir to *sum; returns how
 * many were read. */
static int read_sum(const char *dir, const char *const *names, uint64_t *sum)
{
    char path[512];
    unsigned long long v;
    int found = 0;
    FILE *f;

    for (; *names != NULL; ++names) {
        snprintf(path, sizeof(path), "%s/%s", dir, *names);
        f = fopen(path, "r");
        if (f == NULL) {
            continue;
        }
        if (fscanf(f, "%llu", &v) == 1) {
            *sum += v;
            ++found;
        }
        fclose(f);
    }
    return found;
}

int pvrdma_common_retry_counters_read_dir(const char *dir,
                                          struct pvrdma_common_retry_counters *c)
{
    int found = 0;

    memset(c, 0, sizeof(*c));
    found += read_sum(dir, timeout_names, &c->timeouts);
    found += read_sum(dir, seq_nak_names, &c->seq_naks);
    found += read_sum(dir, rnr_nak_names, &c->rnr_naks);
    found += read_sum(dir, duplicate_names, &c->duplicates);
    c->available = found > 0;
    return found;
}

int pvrdma_common_retry_counters_read(const char *dev_name, unsigned port,
                                      struct pvrdma_common_retry_counters *c)
{
    char dir[256];

    snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%u/hw_counters",
             dev_name, port);
    return pvrdma_common_retry_counters_read_dir(dir, c);
}

void pvrdma_common_retry_counters_since(const struct pvrdma_common_retry_counters *start,
                                        const struct pvrdma_common_retry_counters *now,
                                        struct pvrdma_common_retry_counters *delta)
{
    /* a counter that went back (driver reloaded) counts from 0 */
#define PVRDMA_DELTA(f) (now->f >= start->f ? now->f - start->f : now->f)
    delta->available  = start->available && now->available;
    delta->timeouts   = PVRDMA_DELTA(timeouts);
    delta->seq_naks   = PVRDMA_DELTA(seq_naks);
    delta->rnr_naks   = PVRDMA_DELTA(rnr_naks);
    delta->duplicates = PVRDMA_DELTA(duplicates);
#undef PVRDMA_DELTA
}

const char *pvrdma_common_retry_counters_str(const struct pvrdma_common_retry_counters *c,
                                             char *buf, size_t len)
{
    if (!c->available) {
        snprintf(buf, len, "not exposed by the device (no hw_counters)");
    } else {
        snprintf(buf, len, "%" PRIu64 " retries, %" PRIu64 " sequence NAKs, %"
                 PRIu64 " RNR NAKs, %" PRIu64 " duplicate requests",
                 c->timeouts, c->seq_naks, c->rnr_naks, c->duplicates);
    }
    return buf;
}
