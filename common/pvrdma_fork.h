/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_fork.h
 * @brief common/: fork() and registered memory (fork.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_FORK_H
#define PVRDMA_FORK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The plugins' fork knob: never call ibv_fork_init, try, or require it. */
enum pvrdma_common_fork_mode {
    PVRDMA_COMMON_FORK_NO,
    PVRDMA_COMMON_FORK_TRY,
    PVRDMA_COMMON_FORK_YES
};

/** @brief What @p status means for the user, in words. */
const char *pvrdma_common_fork_status_str(enum ibv_fork_status status);

/**
 * @brief Unless @p mode is NO, call ibv_fork_init() where the kernel needs
 *        it and it is not on yet (RDMAV_FORK_SAFE / IBV_FORK_SAFE already
 *        turn it on inside libibverbs).  Call before the process's first
 *        registration.
 * @param why (OUT) one line: the state the process is in and why
 * @return 0, or the errno of ibv_fork_init() when it failed and @p mode is
 *         YES (with TRY a failure is only said in @p why).
 */
int pvrdma_common_fork_init(enum pvrdma_common_fork_mode mode, char *why,
                            size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_FORK_H */
