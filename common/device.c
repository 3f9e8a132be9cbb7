/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file device.c
 * @brief Device identity, opening a device by name, sysfs NUMA node, MTUs.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_device.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pvrdma_common_is_pvrdma(const char *dev_name,
                             const struct ibv_device_attr *attr)
{
    /* The vendor id is not checked: QEMU's device model reports 0 there,
     * while the part id and the driver's name prefix are always set. */
    if ((dev_name != NULL) &&
        (strncmp(dev_name, PVRDMA_COMMON_NAME_PREFIX,
                 strlen(PVRDMA_COMMON_NAME_PREFIX)) == 0)) {
        return true;
    }
    return (attr != NULL) && (attr->vendor_part_id == PVRDMA_COMMON_PART_ID);
}

struct ibv_context *pvrdma_common_open_device(const char *dev_name)
{
    struct ibv_device **list;
    struct ibv_context *ctx = NULL;
    int num = 0, i, saved_errno = ENODEV;

    if (dev_name == NULL) {
        errno = EINVAL;
        return NULL;
    }
    list = ibv_get_device_list(&num);
    if (list == NULL) {
        return NULL; /* errno set by libibverbs */
    }
    for (i = 0; i < num; ++i) {
        if (strcmp(ibv_get_device_name(list[i]), dev_name) == 0) {
            ctx = ibv_open_device(list[i]);
            if (ctx == NULL) {
                saved_errno = (errno != 0) ? errno : EIO;
            }
            break;
        }
    }
    ibv_free_device_list(list);
    if (ctx == NULL) {
        errno = saved_errno;
    }
    return ctx;
}

int pvrdma_common_dev_numa_node(const char *dev_name)
{
    char path[256];
    FILE *f;
    int node = PVRDMA_COMMON_NUMA_UNKNOWN;

    if ((dev_name == NULL) || (strchr(dev_name, '/') != NULL)) {
        return PVRDMA_COMMON_NUMA_UNKNOWN;
    }
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node",
             dev_name);
    f = fopen(path, "r");
    if (f == NULL) {
        return PVRDMA_COMMON_NUMA_UNKNOWN;
    }
    if ((fscanf(f, "%d", &node) != 1) || (node < 0)) {
        node = PVRDMA_COMMON_NUMA_UNKNOWN;
    }
    fclose(f);
    return node;
}

uint32_t pvrdma_common_mtu_to_bytes(enum ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256:  return 256;
    case IBV_MTU_512:  return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
    default:           return 0;
    }
}

enum ibv_mtu pvrdma_common_mtu_from_bytes(uint32_t bytes)
{
    switch (bytes) {
    case 256:  return IBV_MTU_256;
    case 512:  return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default:   return (enum ibv_mtu)0;
    }
}

enum ibv_mtu pvrdma_common_mtu_min(enum ibv_mtu a, enum ibv_mtu b)
{
    /* enum ibv_mtu values grow with the size (IBV_MTU_256 = 1 ...). */
    return (a < b) ? a : b;
}

bool pvrdma_common_is_pci_bdf(const char *name)
{
    unsigned domain, bus, slot, func;
    int end = 0;

    return (name != NULL) &&
           (sscanf(name, "%4x:%2x:%2x.%1x%n", &domain, &bus, &slot, &func,
                   &end) == 4) &&
           (end == 12) && (name[end] == '\0') && (slot <= 0x1f) && (func <= 7);
}

int pvrdma_common_dev_pci_name(const char *dev_name, char *bdf, size_t len)
{
    char path[256], real[PATH_MAX];
    const char *base;

    if ((dev_name == NULL) || (strchr(dev_name, '/') != NULL) || (len == 0)) {
        return EINVAL;
    }
    /* /sys/class/infiniband/<dev>/device links to the PCI function;
     * software devices (rxe, siw) have no such link */
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev_name);
    if (realpath(path, real) == NULL) {
        return ENODEV;
    }
    base = strrchr(real, '/');
    base = (base != NULL) ? base + 1 : real;
    if (!pvrdma_common_is_pci_bdf(base) || (strlen(base) >= len)) {
        return ENODEV;
    }
    strcpy(bdf, base);
    return 0;
}
