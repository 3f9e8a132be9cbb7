/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file addr.c
 * @brief Connection address wire format and compatibility check.  Pure.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_addr.h"
#include "pvrdma_device.h"
#include "pvrdma_gid.h"
#include "pvrdma_errmsg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(struct pvrdma_common_addr) == PVRDMA_COMMON_ADDR_WIRE_SIZE,
               "connection address wire size changed");

#define MAX_24BIT 0xffffffu


static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | p[3];
}

static bool valid_link_layer(uint8_t ll)
{
    return (ll == IBV_LINK_LAYER_INFINIBAND) || (ll == IBV_LINK_LAYER_ETHERNET);
}

static const char *link_layer_str(uint8_t ll)
{
    switch (ll) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:   return "Ethernet";
    default:                        return "unknown";
    }
}

int pvrdma_common_addr_pack(const struct pvrdma_common_addr_info *info,
                            struct pvrdma_common_addr *wire)
{
    if ((info == NULL) || (wire == NULL) || (info->qpn > MAX_24BIT) ||
        (info->psn > MAX_24BIT) ||
        (pvrdma_common_mtu_to_bytes(info->mtu) == 0) ||
        (info->gid_type > PVRDMA_COMMON_GID_TYPE_ROCE_V2) ||
        !valid_link_layer(info->link_layer)) {
        return EINVAL;
    }
    memset(wire, 0, sizeof(*wire));
    wire->version            = PVRDMA_COMMON_ADDR_VERSION;
    wire->link_layer         = info->link_layer;
    wire->gid_type           = (uint8_t)info->gid_type;
    wire->mtu                = (uint8_t)info->mtu;
    wire->max_dest_rd_atomic = info->max_dest_rd_atomic;
    put_be16(wire->lid, info->lid);
    put_be32(wire->qpn, info->qpn);
    put_be32(wire->psn, info->psn);
    memcpy(wire->gid, info->gid.raw, sizeof(wire->gid));
    return 0;
}

int pvrdma_common_addr_unpack(const void *buf, size_t len,
                              struct pvrdma_common_addr_info *info)
{
    struct pvrdma_common_addr wire;

    if ((buf == NULL) || (info == NULL) || (len < sizeof(wire))) {
        return EINVAL;
    }
    memcpy(&wire, buf, sizeof(wire)); /* no alignment assumption on buf */
    if (wire.version != PVRDMA_COMMON_ADDR_VERSION) {
        return EPROTO;
    }
    memset(info, 0, sizeof(*info));
    info->link_layer         = wire.link_layer;
    info->gid_type           = (enum pvrdma_common_gid_type)wire.gid_type;
    info->mtu                = (enum ibv_mtu)wire.mtu;
    info->max_dest_rd_atomic = wire.max_dest_rd_atomic;
    info->lid                = get_be16(wire.lid);
    info->qpn                = get_be32(wire.qpn);
    info->psn                = get_be32(wire.psn);
    memcpy(info->gid.raw, wire.gid, sizeof(wire.gid));
    if ((info->qpn > MAX_24BIT) || (info->psn > MAX_24BIT) ||
        (pvrdma_common_mtu_to_bytes(info->mtu) == 0) ||
        (wire.gid_type > PVRDMA_COMMON_GID_TYPE_ROCE_V2) ||
        !valid_link_layer(info->link_layer)) {
        return EPROTO;
    }
    return 0;
}

int pvrdma_common_addr_check_compat(const struct pvrdma_common_addr_info *local,
                                    const struct pvrdma_common_addr_info *remote,
                                    char *err, size_t err_len)
{
    if ((local == NULL) || (remote == NULL)) {
        pvrdma_errmsg_set(err, err_len, "internal error: missing address");
        return EINVAL;
    }
    if (local->link_layer != remote->link_layer) {
        pvrdma_errmsg_set(err, err_len, "link layer mismatch: local port is %s, remote "
                "port is %s", link_layer_str(local->link_layer),
                link_layer_str(remote->link_layer));
        return PVRDMA_COMMON_EADDR_MISMATCH;
    }
    if (local->gid_type != remote->gid_type) {
        pvrdma_errmsg_set(err, err_len, "GID type mismatch: local GID is %s, remote GID "
                "is %s (choose GID indexes of the same type on both sides)",
                pvrdma_common_gid_type_str(local->gid_type),
                pvrdma_common_gid_type_str(remote->gid_type));
        return PVRDMA_COMMON_EADDR_MISMATCH;
    }
    if ((remote->link_layer == IBV_LINK_LAYER_ETHERNET) &&
        pvrdma_common_gid_is_zero(&remote->gid)) {
        pvrdma_errmsg_set(err, err_len, "remote address has no GID (RoCE needs one)");
        return EINVAL;
    }
    if ((remote->link_layer == IBV_LINK_LAYER_INFINIBAND) &&
        (remote->lid == 0)) {
        pvrdma_errmsg_set(err, err_len, "remote address has LID 0 (InfiniBand port "
                "not configured by a subnet manager?)");
        return EINVAL;
    }
    return 0;
}
