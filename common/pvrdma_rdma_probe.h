/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_rdma_probe.h
 * @brief common/: whether RDMA WRITE works on a port (a loopback probe) (rdma_probe.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_RDMA_PROBE_H
#define PVRDMA_RDMA_PROBE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The port a probe runs on (what a loopback RC QP needs). */
struct pvrdma_common_probe_port {
    uint8_t      port_num;
    uint8_t      link_layer;   /**< IBV_LINK_LAYER_* */
    int          gid_index;    /**< RoCE: local GID index */
    uint16_t     lid;          /**< InfiniBand: port LID */
    enum ibv_mtu mtu;
};

/**
 * @brief Check that an RDMA WRITE really lands in remote memory on this port.
 *
 * Runs a loopback RC QP (one CQ, QP and 192-byte MR, destroyed before
 * returning).  QEMU's pvrdma device model turns WRITEs into SENDs; every
 * real device passes.  Costs a few control verbs: run once per port.
 *
 * @param timeout_ms (IN)  how long to wait for the WRITE's completion
 * @param why        (OUT) one line saying what was observed
 * @return 1 the WRITE works; 0 it does not (@p why says how it failed);
 *         negative errno when the probe itself could not run.
 */
int pvrdma_common_probe_rdma_write(struct ibv_context *ctx, struct ibv_pd *pd,
                                   const struct pvrdma_common_probe_port *port,
                                   int timeout_ms, char *why, size_t why_len);

/** Long enough for a loopback WRITE even on a nested (emulated) device. */
#define PVRDMA_COMMON_WRITE_PROBE_TIMEOUT_MS 2000

/**
 * @brief The policy of pvrdma_common_rdma_write_usable(), pure: WRITE when
 *        the probe saw it work (@p probe_rc 1), not when it saw it fail
 *        (0); when the probe could not run (negative errno), not on a
 *        PVRDMA device (fail closed: it may be QEMU's model) and yes on any
 *        other.  @p what is the probe's own line; @p why gets the decision.
 */
bool pvrdma_common_rdma_write_decide(int probe_rc, bool is_pvrdma,
                                     const char *what, char *why,
                                     size_t why_len);

/**
 * @brief Both plugins' policy when the user leaves RDMA WRITE on "auto":
 *        probe the port; use WRITE unless the probe saw it fail; a probe
 *        that cannot run keeps the device's word, except on a PVRDMA
 *        device (send/recv only, see pvrdma_common_rdma_write_decide()).
 * @param why (OUT) one line for the log saying what was decided and why
 * @return true when RDMA WRITE is to be used on this port.
 */
bool pvrdma_common_rdma_write_usable(struct ibv_context *ctx, struct ibv_pd *pd,
                                     const struct pvrdma_common_probe_port *port,
                                     char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_RDMA_PROBE_H */
