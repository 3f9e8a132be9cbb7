/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file gid_table.c
 * @brief Read a port's GID table (with types) and select the GID to use.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_gid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_IBV_QUERY_GID_EX
static enum pvrdma_common_gid_type from_ibv_type(uint32_t t)
{
    switch (t) {
    case IBV_GID_TYPE_IB:      return PVRDMA_COMMON_GID_TYPE_IB;
    case IBV_GID_TYPE_ROCE_V1: return PVRDMA_COMMON_GID_TYPE_ROCE_V1;
    case IBV_GID_TYPE_ROCE_V2: return PVRDMA_COMMON_GID_TYPE_ROCE_V2;
    default:                   return PVRDMA_COMMON_GID_TYPE_NONE;
    }
}
#endif

/* sysfs gid_attrs/types/<i>: "IB/RoCE v1" or "RoCE v2" (Ethernet only). */
static enum pvrdma_common_gid_type sysfs_gid_type(struct ibv_context *ctx,
                                                  uint8_t port, uint32_t index,
                                                  uint8_t link_layer)
{
    char path[512], buf[32] = "";
    FILE *f;

    if (link_layer == IBV_LINK_LAYER_INFINIBAND) {
        return PVRDMA_COMMON_GID_TYPE_IB;
    }
    snprintf(path, sizeof(path),
             "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%u",
             ibv_get_device_name(ctx->device), port, index);
    f = fopen(path, "r");
    if (f == NULL) {
        return PVRDMA_COMMON_GID_TYPE_ROCE_V1; /* kernels without types */
    }
    if (fgets(buf, sizeof(buf), f) == NULL) {
        buf[0] = '\0';
    }
    fclose(f);
    if (strstr(buf, "v2") != NULL) {
        return PVRDMA_COMMON_GID_TYPE_ROCE_V2;
    }
    if (strstr(buf, "v1") != NULL) {
        return PVRDMA_COMMON_GID_TYPE_ROCE_V1;
    }
    return PVRDMA_COMMON_GID_TYPE_NONE;
}

static void read_entry(struct ibv_context *ctx, uint8_t port, uint32_t index,
                       uint8_t link_layer, struct pvrdma_common_gid_entry *e)
{
#ifdef HAVE_IBV_QUERY_GID_EX
    struct ibv_gid_entry ex;
    int rc;
#endif

    memset(e, 0, sizeof(*e));
    e->index = index;
    e->type  = PVRDMA_COMMON_GID_TYPE_NONE;

#ifdef HAVE_IBV_QUERY_GID_EX
    memset(&ex, 0, sizeof(ex));
    rc = ibv_query_gid_ex(ctx, port, index, &ex, 0);
    if (rc == 0) {
        e->gid  = ex.gid;
        e->type = from_ibv_type(ex.gid_type);
        return;
    }
    if (rc != EOPNOTSUPP) {
        return; /* ENODATA etc.: empty entry */
    }
#endif
    /* Old kernels/providers: plain query plus the sysfs type file. */
    if ((ibv_query_gid(ctx, port, (int)index, &e->gid) != 0) ||
        pvrdma_common_gid_is_zero(&e->gid)) {
        memset(&e->gid, 0, sizeof(e->gid));
        return;
    }
    e->type = sysfs_gid_type(ctx, port, index, link_layer);
}

int pvrdma_common_gid_table_read(struct ibv_context *ctx, uint8_t port_num,
                                 const struct ibv_port_attr *port_attr,
                                 struct pvrdma_common_gid_entry **entries_p,
                                 size_t *count_p)
{
    struct pvrdma_common_gid_entry *entries;
    size_t n, i;

    if ((ctx == NULL) || (port_attr == NULL) || (entries_p == NULL) ||
        (count_p == NULL)) {
        return EINVAL;
    }
    *entries_p = NULL;
    *count_p = 0;
    n = (port_attr->gid_tbl_len > 0) ? (size_t)port_attr->gid_tbl_len : 0;
    if (n == 0) {
        return 0;
    }
    entries = calloc(n, sizeof(*entries));
    if (entries == NULL) {
        return ENOMEM;
    }
    for (i = 0; i < n; ++i) {
        read_entry(ctx, port_num, (uint32_t)i, port_attr->link_layer,
                   &entries[i]);
    }
    *entries_p = entries;
    *count_p = n;
    return 0;
}

int pvrdma_common_gid_select(struct ibv_context *ctx, uint8_t port_num,
                             const struct ibv_port_attr *port_attr,
                             int forced_index,
                             struct pvrdma_common_gid_entry *out,
                             char *err, size_t err_len)
{
    struct pvrdma_common_gid_entry *entries = NULL;
    size_t count = 0, chosen = 0;
    int rc;

    if (out == NULL) {
        return EINVAL;
    }
    rc = pvrdma_common_gid_table_read(ctx, port_num, port_attr, &entries,
                                      &count);
    if (rc != 0) {
        if ((err != NULL) && (err_len > 0)) {
            snprintf(err, err_len, "cannot read the GID table of port %u: %s",
                     port_num, strerror(rc));
        }
        return rc;
    }

    if (port_attr->link_layer == IBV_LINK_LAYER_INFINIBAND) {
        /* The LID addresses the port; the GID is only used with a GRH. */
        uint32_t idx = (forced_index >= 0) ? (uint32_t)forced_index : 0;

        if (idx >= count && forced_index >= 0) {
            if ((err != NULL) && (err_len > 0)) {
                snprintf(err, err_len, "GID index %d is out of range (the GID "
                         "table has %zu entries)", forced_index, count);
            }
            free(entries);
            return ERANGE;
        }
        memset(out, 0, sizeof(*out));
        out->index = idx;
        out->type  = PVRDMA_COMMON_GID_TYPE_IB;
        if (idx < count) {
            out->gid = entries[idx].gid;
        }
        free(entries);
        return 0;
    }

    rc = pvrdma_common_gid_choose(entries, count, forced_index, &chosen, err,
                                  err_len);
    if (rc == 0) {
        *out = entries[chosen];
    }
    free(entries);
    return rc;
}
