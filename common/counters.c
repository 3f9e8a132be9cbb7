/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file counters.c
 * @brief common/: the key=value counters line (see pvrdma_counters.h).
 */
#include "pvrdma_counters.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Room kept for " truncated=1" so a cut line still says so. */
#define COUNTERS_TRUNC_MARK " truncated=1"

static size_t counters_room(const struct pvrdma_common_counters *c)
{
    return sizeof(c->text) - sizeof(COUNTERS_TRUNC_MARK) - c->len;
}

/* Append @p piece whole or not at all: a half-written "key=12" would be a
 * wrong value, not a missing one. */
static void counters_append(struct pvrdma_common_counters *c, const char *piece)
{
    size_t n = strlen(piece);

    if (c->truncated || n >= counters_room(c)) {
        c->truncated = true;
        return;
    }
    memcpy(c->text + c->len, piece, n + 1);
    c->len += n;
}

static bool counters_key_ok(const char *key)
{
    if (NULL == key || '\0' == *key) {
        return false;
    }
    for (const char *p = key; *p != '\0'; ++p) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) {
            return false;
        }
    }
    return true;
}

void pvrdma_common_counters_begin(struct pvrdma_common_counters *c,
                                  const char *event, const char *dev_name,
                                  unsigned port)
{
    char piece[160];

    c->len = 0;
    c->truncated = false;
    c->text[0] = '\0';
    counters_append(c, PVRDMA_COUNTERS_TAG);
    /* event and device go as words without spaces: a space would split them */
    (void) snprintf(piece, sizeof(piece), " event=%s dev=%s port=%u",
                    counters_key_ok(event) ? event : "bad_event",
                    (NULL != dev_name && NULL == strchr(dev_name, ' ') &&
                     '\0' != *dev_name) ? dev_name : "unknown", port);
    counters_append(c, piece);
}

void pvrdma_common_counters_add(struct pvrdma_common_counters *c,
                                const char *key, uint64_t value)
{
    char piece[96];

    (void) snprintf(piece, sizeof(piece), " %.64s=%" PRIu64,
                    counters_key_ok(key) ? key : "bad_key", value);
    counters_append(c, piece);
}

void pvrdma_common_counters_add_ops(struct pvrdma_common_counters *c, uint64_t writes,
                                    uint64_t write_max, uint64_t reads, uint64_t read_max,
                                    uint64_t arms, uint64_t events)
{
    pvrdma_common_counters_add(c, "rdma_writes", writes);
    pvrdma_common_counters_add(c, "rdma_write_max", write_max);
    pvrdma_common_counters_add(c, "rdma_reads", reads);
    pvrdma_common_counters_add(c, "rdma_read_max", read_max);
    pvrdma_common_counters_add(c, "cq_arms", arms);
    pvrdma_common_counters_add(c, "cq_events", events);
}

const char *pvrdma_common_counters_str(struct pvrdma_common_counters *c)
{
    if (c->truncated && NULL == strstr(c->text, COUNTERS_TRUNC_MARK)) {
        memcpy(c->text + c->len, COUNTERS_TRUNC_MARK, sizeof(COUNTERS_TRUNC_MARK));
        c->len += sizeof(COUNTERS_TRUNC_MARK) - 1;
    }
    return c->text;
}
