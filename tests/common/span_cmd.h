/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file span_cmd.h
 * @brief Marking a span of a test program for the bed's meter
 *        (scripts/testbed/pvrdma/meter span): runs "CMD start" or
 *        "CMD stop WHAT SIZE" with system(3).
 */
#ifndef PVRDMA_TEST_SPAN_CMD_H
#define PVRDMA_TEST_SPAN_CMD_H

#include <stdio.h>
#include <stdlib.h>

/** @p what NULL: start; else stop. Returns 0, or system()'s status with the
 *  command line in @p line (of @p len bytes) for the caller's message. */
static inline int span_cmd_run(const char *cmd, const char *what, size_t size,
                               char *line, size_t len)
{
    if (what == NULL) {
        snprintf(line, len, "%s start", cmd);
    } else {
        snprintf(line, len, "%s stop %s %zu", cmd, what, size);
    }
    fflush(stdout);   /* the meter prints too */
    return system(line);
}

#endif
