/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file port_discover.c
 * @brief Enumerate verbs ports, filter them by include/exclude lists, add
 *        NUMA data, sort them, and explain what the user asked for but
 *        cannot get.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_port.h"
#include "pvrdma_device.h"
#include "pvrdma_numa.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append "; "-separated sentences to the caller's buffer. */
static void why_add(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void why_add(char *why, size_t why_len, const char *fmt, ...)
{
    size_t used;
    va_list ap;

    if ((why == NULL) || (why_len == 0)) {
        return;
    }
    used = strnlen(why, why_len);
    if ((used > 0) && (used + 2 < why_len)) {
        memcpy(why + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= why_len) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(why + used, why_len - used, fmt, ap);
    va_end(ap);
}

static int grow(struct pvrdma_common_port **ports, size_t *cap, size_t need)
{
    struct pvrdma_common_port *p;
    size_t new_cap = (*cap == 0) ? 8 : *cap;

    if (need <= *cap) {
        return 0;
    }
    while (new_cap < need) {
        new_cap *= 2;
    }
    p = realloc(*ports, new_cap * sizeof(*p));
    if (p == NULL) {
        return ENOMEM;
    }
    *ports = p;
    *cap = new_cap;
    return 0;
}

/* Add the selected ports of one open device. */
static int add_ctx_ports(struct ibv_context *ctx, const char *name,
                         const struct pvrdma_common_port_list *include,
                         const struct pvrdma_common_port_list *exclude,
                         struct pvrdma_numa_ctx *numa,
                         struct pvrdma_common_port **ports, size_t *count,
                         size_t *cap, char *why, size_t why_len)
{
    struct ibv_device_attr dev_attr;
    int numa_node, distance = PVRDMA_COMMON_NUMA_UNKNOWN, rc;
    bool numa_done = false;
    unsigned p;

    rc = ibv_query_device(ctx, &dev_attr);
    if (rc != 0) {
        why_add(why, why_len, "cannot query device %s: %s", name,
                strerror(rc));
        return 0; /* other devices may still work */
    }

    numa_node = pvrdma_common_dev_numa_node(name);
    for (p = 1; p <= dev_attr.phys_port_cnt; ++p) {
        struct pvrdma_common_port *port;
        struct ibv_port_attr port_attr;
        int qrc;

        if (!pvrdma_common_port_selected(include, exclude, name, (uint8_t)p)) {
            continue;
        }
        memset(&port_attr, 0, sizeof(port_attr));
        qrc = ibv_query_port(ctx, (uint8_t)p, &port_attr);
        if (qrc != 0) {
            why_add(why, why_len, "cannot query port %s:%u: %s", name, p,
                    strerror(qrc));
            continue;
        }
        rc = grow(ports, cap, *count + 1);
        if (rc != 0) {
            return rc;
        }
        if (!numa_done) {
            distance = pvrdma_numa_distance(numa, numa_node);
            numa_done = true;
        }
        port = &(*ports)[(*count)++];
        memset(port, 0, sizeof(*port));
        snprintf(port->dev_name, sizeof(port->dev_name), "%s", name);
        port->port_num      = (uint8_t)p;
        port->is_pvrdma     = pvrdma_common_is_pvrdma(name, &dev_attr);
        port->active        = (port_attr.state == IBV_PORT_ACTIVE);
        port->active_mtu    = port_attr.active_mtu;
        port->link_layer    = port_attr.link_layer;
        port->numa_node     = numa_node;
        port->numa_distance = distance;
        port->dev_attr      = dev_attr;
        port->port_attr     = port_attr;
    }
    return 0;
}

/* Open one device and add its selected ports. */
static int add_device_ports(struct ibv_device *dev,
                            const struct pvrdma_common_port_list *include,
                            const struct pvrdma_common_port_list *exclude,
                            struct pvrdma_numa_ctx *numa,
                            struct pvrdma_common_port **ports, size_t *count,
                            size_t *cap, char *why, size_t why_len)
{
    const char *name = ibv_get_device_name(dev);
    struct ibv_context *ctx;
    int rc;

    ctx = ibv_open_device(dev);
    if (ctx == NULL) {
        why_add(why, why_len, "cannot open device %s: %s", name,
                strerror(errno));
        return 0; /* other devices may still work */
    }
    rc = add_ctx_ports(ctx, name, include, exclude, numa, ports, count, cap,
                       why, why_len);
    ibv_close_device(ctx);
    return rc;
}

/* Report include-list entries that matched nothing or only inactive ports. */
static void explain_include(const struct pvrdma_common_port_list *include,
                            const struct pvrdma_common_port *ports,
                            size_t count, char *why, size_t why_len)
{
    size_t i, j;

    if (include == NULL) {
        return;
    }
    for (i = 0; i < include->count; ++i) {
        const struct pvrdma_common_port_spec *s = &include->specs[i];
        struct pvrdma_common_port_list one = {(struct pvrdma_common_port_spec *)s, 1};
        bool found = false;

        for (j = 0; j < count; ++j) {
            const struct pvrdma_common_port *port = &ports[j];

            if (!pvrdma_common_port_list_match(&one, port->dev_name,
                                               port->port_num)) {
                continue;
            }
            found = true;
            if (!port->active) {
                why_add(why, why_len, "port %s:%u is %s", port->dev_name,
                        port->port_num,
                        ibv_port_state_str(port->port_attr.state));
            }
        }
        if (!found) {
            if (s->port_num == PVRDMA_COMMON_PORT_ANY) {
                why_add(why, why_len,
                        "device %s requested in the include list was not found",
                        s->dev_name);
            } else {
                why_add(why, why_len,
                        "port %s:%u requested in the include list was not found",
                        s->dev_name, s->port_num);
            }
        }
    }
}

int pvrdma_common_ports_discover(const struct pvrdma_common_port_list *include,
                                 const struct pvrdma_common_port_list *exclude,
                                 struct pvrdma_common_port **ports_p,
                                 size_t *count_p, char *why, size_t why_len)
{
    struct pvrdma_common_port *ports = NULL;
    struct pvrdma_numa_ctx *numa;
    struct ibv_device **devs;
    size_t count = 0, cap = 0, i, active = 0;
    int num_devs = 0, d, rc = 0;

    if ((ports_p == NULL) || (count_p == NULL)) {
        return EINVAL;
    }
    *ports_p = NULL;
    *count_p = 0;
    if ((why != NULL) && (why_len > 0)) {
        why[0] = '\0';
    }

    devs = ibv_get_device_list(&num_devs);
    if (devs == NULL) {
        /* e.g. no RDMA subsystem in the kernel: same as "no devices" */
        why_add(why, why_len, "cannot list RDMA devices: %s",
                strerror((errno != 0) ? errno : ENODEV));
        num_devs = 0;
    }

    /* hwloc is optional at run time: without it distances are unknown. */
    numa = (num_devs > 0) ? pvrdma_numa_open() : NULL;
    for (d = 0; d < num_devs; ++d) {
        rc = add_device_ports(devs[d], include, exclude, numa, &ports, &count,
                              &cap, why, why_len);
        if (rc != 0) {
            break;
        }
    }
    pvrdma_numa_close(numa);
    if (devs != NULL) {
        ibv_free_device_list(devs);
    }
    if (rc != 0) {
        free(ports);
        return rc;
    }

    pvrdma_common_port_sort(ports, count);
    explain_include(include, ports, count, why, why_len);
    for (i = 0; i < count; ++i) {
        active += ports[i].active;
    }
    if (num_devs == 0) {
        why_add(why, why_len, "no RDMA devices found");
    } else if (active == 0) {
        why_add(why, why_len, "no ACTIVE RDMA port among %zu selected port(s)",
                count);
    }

    *ports_p = ports;
    *count_p = count;
    return (active > 0) ? 0 : ENODEV;
}

int pvrdma_common_device_ports(struct ibv_context *ctx,
                               struct pvrdma_common_port **ports_p,
                               size_t *count_p, char *why, size_t why_len)
{
    struct pvrdma_common_port *ports = NULL;
    size_t count = 0, cap = 0;
    int rc;

    if ((ctx == NULL) || (ports_p == NULL) || (count_p == NULL)) {
        return EINVAL;
    }
    if ((why != NULL) && (why_len > 0)) {
        why[0] = '\0';
    }
    /* no NUMA data: the caller already chose this device */
    rc = add_ctx_ports(ctx, ibv_get_device_name(ctx->device), NULL, NULL,
                       NULL, &ports, &count, &cap, why, why_len);
    if (rc != 0) {
        free(ports);
        return rc;
    }
    *ports_p = ports;
    *count_p = count;
    return 0;
}

void pvrdma_common_ports_free(struct pvrdma_common_port *ports)
{
    free(ports);
}
