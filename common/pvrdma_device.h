/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_device.h
 * @brief common/: what a PVRDMA device is, opening a device, its NUMA node and PCI name, MTU values (device.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_DEVICE_H
#define PVRDMA_DEVICE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** PCI vendor id of VMware (the host fills it; QEMU's model reports 0). */
#define PVRDMA_COMMON_VENDOR_ID     0x15AD
/** PCI device id / vendor_part_id of PVRDMA (2080 decimal). */
#define PVRDMA_COMMON_PART_ID       0x0820
/** Kernel device name prefix: vmw_pvrdma0, vmw_pvrdma1, ... */
#define PVRDMA_COMMON_NAME_PREFIX   "vmw_pvrdma"

/** Largest PVRDMA memory region: its page directory maps at most 262144
 *  pages, 1 GiB with 4 KiB pages, whatever max_mr_size the host reports. */
#define PVRDMA_COMMON_MR_LIMIT      (UINT64_C(1) << 30)

/** Length of device name buffers (same as libibverbs' IBV_SYSFS_NAME_MAX). */
#define PVRDMA_COMMON_DEV_NAME_MAX  64

/**
 * @brief Tell whether a verbs device is a PVRDMA device.  Pure.
 *
 * True when the name starts with "vmw_pvrdma" or the vendor_part_id is
 * 0x0820 (vendor id is not checked: QEMU's model leaves it 0).
 *
 * @param dev_name (IN) device name, may be NULL
 * @param attr     (IN) device attributes, may be NULL
 */
bool pvrdma_common_is_pvrdma(const char *dev_name,
                             const struct ibv_device_attr *attr);

/** NUMA node / distance value meaning "unknown". */
#define PVRDMA_COMMON_NUMA_UNKNOWN (-1)

/**
 * @brief Read /sys/class/infiniband/<dev>/device/numa_node.
 * @return the node, or PVRDMA_COMMON_NUMA_UNKNOWN (also for "-1").
 */
int pvrdma_common_dev_numa_node(const char *dev_name);

/**
 * @brief Tell whether @p name is a PCI address "dddd:bb:ss.f".  Pure.
 */
bool pvrdma_common_is_pci_bdf(const char *name);

/**
 * @brief The PCI address ("0000:0b:00.0") of a verbs device, from sysfs.
 * @param bdf (OUT) at least 13 bytes
 * @return 0; ENODEV when the device is not a PCI function (rxe, siw);
 *         EINVAL for a bad name.
 */
int pvrdma_common_dev_pci_name(const char *dev_name, char *bdf, size_t len);

/**
 * @brief Open a verbs device by name.
 * @return the context, or NULL with errno set (ENODEV if no such device).
 */
struct ibv_context *pvrdma_common_open_device(const char *dev_name);

/* ------------------------------------------------------------------------ */
/*  MTU helpers                                                             */
/* ------------------------------------------------------------------------ */

/** @brief IBV_MTU_256..4096 -> bytes; 0 for an invalid value.  Pure. */
uint32_t pvrdma_common_mtu_to_bytes(enum ibv_mtu mtu);

/** @brief 256/512/1024/2048/4096 -> IBV_MTU_*; 0 for other values.  Pure. */
enum ibv_mtu pvrdma_common_mtu_from_bytes(uint32_t bytes);

/** @brief The smaller of two valid MTUs.  Pure. */
enum ibv_mtu pvrdma_common_mtu_min(enum ibv_mtu a, enum ibv_mtu b);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_DEVICE_H */
