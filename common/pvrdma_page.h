/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_page.h
 * @brief common/: page-aligned buffers for small registrations (page.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_PAGE_H
#define PVRDMA_PAGE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Zeroed memory of @p size bytes rounded up to whole pages, page
 *        aligned, for small registered buffers (see page.c for why).
 * @return the buffer (release with free()), or NULL.
 */
void *pvrdma_common_page_alloc(size_t size);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_PAGE_H */
