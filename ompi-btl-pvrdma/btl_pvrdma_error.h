/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file btl_pvrdma_error.h
 * @brief User-facing errors of the pvrdma BTL (help-mpi-btl-pvrdma.txt).
 *
 * Set-up problems print a help message and make the component drop out.
 * Failures during communication (completion errors, a peer that cannot be
 * connected) print a help message naming both hosts, the device and the
 * status, then report a fatal error to the PML, which aborts the job:
 * never a hang.
 */
#ifndef MCA_BTL_PVRDMA_ERROR_H
#define MCA_BTL_PVRDMA_ERROR_H

#include "btl_pvrdma.h"

BEGIN_C_DECLS

struct mca_btl_base_endpoint_t;

#define MCA_BTL_PVRDMA_HELP "help-mpi-btl-pvrdma.txt"

/** @brief A verbs call failed while setting up @p module. */
void mca_btl_pvrdma_error_verbs(mca_btl_pvrdma_module_t *module, const char *call, int err);

/** @brief The CQ or SRQ failed while running (a broken device): fatal,
 *  never a job that spins on a dead queue. */
void mca_btl_pvrdma_error_device(mca_btl_pvrdma_module_t *module, const char *call, int err);

/** @brief A work completion came back with an error status: fatal. */
void mca_btl_pvrdma_error_completion(mca_btl_pvrdma_module_t *module,
                                     struct mca_btl_base_endpoint_t *ep, const struct ibv_wc *wc,
                                     const char *what);

/** @brief Posting a work request failed (QP broken): fatal. */
void mca_btl_pvrdma_error_post(struct mca_btl_base_endpoint_t *ep, const char *call, int err);

/** @brief The peer never answered the connection requests: fatal. */
void mca_btl_pvrdma_error_connect_timeout(struct mca_btl_base_endpoint_t *ep);

/** @brief Connection set-up towards a peer failed locally: fatal. */
void mca_btl_pvrdma_error_connect(struct mca_btl_base_endpoint_t *ep, const char *call, int err);

/** @brief A received message has no receiver (unknown tag) or is shorter
 *  than the header: fatal, never handed on. */
void mca_btl_pvrdma_error_message(struct mca_btl_base_endpoint_t *ep, uint32_t qp_num,
                                  uint32_t byte_len, unsigned tag, unsigned flags,
                                  int opcode);

END_C_DECLS

#endif
