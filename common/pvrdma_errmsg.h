/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_errmsg.h
 * @brief Internal to common/: filling the caller's optional error buffer.
 */
#ifndef PVRDMA_ERRMSG_H
#define PVRDMA_ERRMSG_H

#include <stddef.h>

/**
 * @brief printf into @p err (at most @p err_len bytes) when the caller gave
 *        a buffer; does nothing for a NULL buffer or zero length.
 */
void pvrdma_errmsg_set(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
