/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file page.c
 * @brief Zeroed, page-aligned buffers for small registrations.
 *
 * Why: QEMU's pvrdma device model (QEMU 7.2, pvrdma_map_to_pdir) checks an
 * MR's page count against ROUND_UP(length, page) and ignores the start
 * offset, so a registration that starts inside a page and crosses into the
 * next one fails with EFAULT ("could not register mem region").  Small
 * buffers from malloc do that at random; whole pages never do.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_page.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *pvrdma_common_page_alloc(size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t align = (page > 0) ? (size_t)page : 4096;
    void *ptr;

    if (size == 0) {
        size = 1;
    }
    size = (size + align - 1) / align * align;
    if (posix_memalign(&ptr, align, size) != 0) {
        return NULL;
    }
    memset(ptr, 0, size);
    return ptr;
}
