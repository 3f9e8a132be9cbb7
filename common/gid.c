/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file gid.c
 * @brief GID classification and the choice of the GID index.  Pure.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_gid.h"
#include "pvrdma_errmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>


bool pvrdma_common_gid_is_zero(const union ibv_gid *gid)
{
    static const uint8_t zero[16];

    return memcmp(gid->raw, zero, sizeof(zero)) == 0;
}

bool pvrdma_common_gid_is_ipv4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

bool pvrdma_common_gid_is_link_local(const union ibv_gid *gid)
{
    return (gid->raw[0] == 0xfe) && ((gid->raw[1] & 0xc0) == 0x80);
}

const char *pvrdma_common_gid_str(const union ibv_gid *gid, char *buf,
                                  size_t len)
{
    if ((buf == NULL) || (len == 0)) {
        return "";
    }
    if (inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)len) == NULL) {
        snprintf(buf, len, "?");
    }
    return buf;
}

const char *pvrdma_common_gid_type_str(enum pvrdma_common_gid_type type)
{
    switch (type) {
    case PVRDMA_COMMON_GID_TYPE_IB:      return "IB";
    case PVRDMA_COMMON_GID_TYPE_ROCE_V1: return "RoCE v1";
    case PVRDMA_COMMON_GID_TYPE_ROCE_V2: return "RoCE v2";
    default:                             return "none";
    }
}

/* Preference tier of an entry, 1 (best) .. 5, or 0 for unusable. */
static int gid_tier(const struct pvrdma_common_gid_entry *e)
{
    bool v4;

    if ((e->type == PVRDMA_COMMON_GID_TYPE_NONE) ||
        pvrdma_common_gid_is_zero(&e->gid)) {
        return 0;
    }
    v4 = pvrdma_common_gid_is_ipv4_mapped(&e->gid);
    switch (e->type) {
    case PVRDMA_COMMON_GID_TYPE_ROCE_V2:
        if (v4) {
            return 1;
        }
        return pvrdma_common_gid_is_link_local(&e->gid) ? 5 : 2;
    case PVRDMA_COMMON_GID_TYPE_ROCE_V1:
        return v4 ? 3 : 4;
    default:
        return 5;
    }
}

int pvrdma_common_gid_choose(const struct pvrdma_common_gid_entry *entries,
                             size_t count, int forced_index, size_t *chosen,
                             char *err, size_t err_len)
{
    size_t i, best = 0;
    int best_tier = 0;

    if ((chosen == NULL) || ((entries == NULL) && (count > 0))) {
        pvrdma_errmsg_set(err, err_len, "internal error: no GID table");
        return EINVAL;
    }

    if (forced_index >= 0) {
        for (i = 0; i < count; ++i) {
            if (entries[i].index != (uint32_t)forced_index) {
                continue;
            }
            if (gid_tier(&entries[i]) == 0) {
                pvrdma_errmsg_set(err, err_len, "GID index %d is empty", forced_index);
                return ENODATA;
            }
            *chosen = i;
            return 0;
        }
        pvrdma_errmsg_set(err, err_len,
                "GID index %d is out of range (the GID table has %zu entries)",
                forced_index, count);
        return ERANGE;
    }

    for (i = 0; i < count; ++i) {
        int tier = gid_tier(&entries[i]);

        if ((tier != 0) &&
            ((best_tier == 0) || (tier < best_tier) ||
             ((tier == best_tier) && (entries[i].index < entries[best].index)))) {
            best = i;
            best_tier = tier;
        }
    }
    if (best_tier == 0) {
        pvrdma_errmsg_set(err, err_len, "the GID table has no valid entry "
                "(is an IP address configured on the port's network device?)");
        return ENOENT;
    }
    *chosen = best;
    return 0;
}
