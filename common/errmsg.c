/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file errmsg.c
 * @brief The one place common/ writes user-facing error sentences.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void pvrdma_errmsg_set(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;

    if ((err == NULL) || (err_len == 0)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}
