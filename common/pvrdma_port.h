/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_port.h
 * @brief common/: port lists ("dev[:port],...") and port discovery, sorted PVRDMA first (port_list.c, port_sort.c, port_discover.c).
 *
 * Framework-free, as all of common/ (see pvrdma_common.h).
 */
#ifndef PVRDMA_PORT_H
#define PVRDMA_PORT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "pvrdma_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Port number meaning "every port of the device". */
#define PVRDMA_COMMON_PORT_ANY 0

/** One element of an include/exclude list. */
struct pvrdma_common_port_spec {
    char    dev_name[PVRDMA_COMMON_DEV_NAME_MAX]; /**< device name */
    uint8_t port_num; /**< 1..255, or PVRDMA_COMMON_PORT_ANY */
};

/** A parsed include or exclude list; count 0 means "empty list". */
struct pvrdma_common_port_list {
    struct pvrdma_common_port_spec *specs; /**< malloc'ed array, or NULL */
    size_t                          count; /**< number of specs */
};

/**
 * @brief Parse "dev[:port][,dev[:port]...]".  Pure.
 *
 * NULL or "" (or only blanks) gives an empty list.  Blanks around elements
 * are ignored.  Errors (EINVAL): empty element ("a,,b"), empty device name,
 * device name too long, port not a decimal number in 1..255, trailing ':'.
 *
 * @param str     (IN)  the list text
 * @param list    (OUT) the result; free with pvrdma_common_port_list_free()
 * @param err     (OUT) message on error (may be NULL)
 * @param err_len (IN)  size of @p err
 * @return 0, EINVAL or ENOMEM (then @p list is empty)
 */
int pvrdma_common_port_list_parse(const char *str,
                                  struct pvrdma_common_port_list *list,
                                  char *err, size_t err_len);

/** @brief Release a list filled by pvrdma_common_port_list_parse(). */
void pvrdma_common_port_list_free(struct pvrdma_common_port_list *list);

/**
 * @brief True when (dev_name, port_num) matches an element of @p list.  Pure.
 */
bool pvrdma_common_port_list_match(const struct pvrdma_common_port_list *list,
                                   const char *dev_name, uint8_t port_num);

/**
 * @brief Apply include/exclude semantics.  Pure.
 *
 * A port is selected when (include is NULL or empty or matches) and
 * (exclude is NULL or does not match).
 */
bool pvrdma_common_port_selected(const struct pvrdma_common_port_list *include,
                                 const struct pvrdma_common_port_list *exclude,
                                 const char *dev_name, uint8_t port_num);

/* ------------------------------------------------------------------------ */
/*  Port discovery                                                          */
/* ------------------------------------------------------------------------ */

/** One verbs port as seen at discovery time. */
struct pvrdma_common_port {
    char     dev_name[PVRDMA_COMMON_DEV_NAME_MAX]; /**< e.g. "vmw_pvrdma0" */
    uint8_t  port_num;     /**< 1-based port number */
    bool     is_pvrdma;    /**< see pvrdma_common_is_pvrdma() */
    bool     active;       /**< port_attr.state == IBV_PORT_ACTIVE */
    enum ibv_mtu active_mtu; /**< port_attr.active_mtu */
    uint8_t  link_layer;   /**< IBV_LINK_LAYER_ETHERNET / _INFINIBAND */
    /** From /sys/class/infiniband/<dev>/device/numa_node; -1 unknown. */
    int      numa_node;
    /**
     * Distance between the device's NUMA node and the NUMA node(s) of the
     * calling process's CPU binding (hwloc): 0 local, larger is farther
     * (the hwloc/ACPI SLIT value when known), -1 unknown.
     */
    int      numa_distance;
    struct ibv_device_attr dev_attr;  /**< from ibv_query_device() */
    struct ibv_port_attr   port_attr; /**< from ibv_query_port() */
};

/**
 * @brief Ordering used by discovery: PVRDMA first, then ACTIVE, then
 *        NUMA-nearest (unknown distance last), then device name, then port.
 *        Pure; qsort()-compatible on struct pvrdma_common_port.
 */
int pvrdma_common_port_compare(const void *a, const void *b);

/** @brief qsort() @p ports with pvrdma_common_port_compare().  Pure. */
void pvrdma_common_port_sort(struct pvrdma_common_port *ports, size_t count);

/**
 * @brief Enumerate every port of every verbs device, keep the ones selected
 *        by include/exclude, fill NUMA data, and sort them.
 *
 * Ports that are not ACTIVE are returned too (sorted after active ones), so
 * callers can report them; callers use only ports with @c active set.
 *
 * @p why receives, when something the user asked for is unusable, one
 * sentence per problem, "; "-separated, e.g.
 * "device mlx5_9 requested in the include list was not found; port
 * vmw_pvrdma0:1 is DOWN".  It is "" when there is nothing to report.
 * A port listed in include but not found, or not ACTIVE, is reported.
 * When no ACTIVE port remains, @p why also says so.
 *
 * @param include (IN)  include list, or NULL
 * @param exclude (IN)  exclude list, or NULL
 * @param ports   (OUT) malloc'ed array (free with pvrdma_common_ports_free())
 * @param count   (OUT) number of entries
 * @param why     (OUT) explanation buffer (may be NULL)
 * @param why_len (IN)  its size
 * @return 0 when at least one ACTIVE port was found; ENODEV when none
 *         (also when the device list cannot be read; the array may still
 *         hold inactive ports); ENOMEM; EINVAL for NULL outputs.  A device
 *         or port that cannot be opened/queried is skipped and named in
 *         @p why.
 */
int pvrdma_common_ports_discover(const struct pvrdma_common_port_list *include,
                                 const struct pvrdma_common_port_list *exclude,
                                 struct pvrdma_common_port **ports,
                                 size_t *count, char *why, size_t why_len);

/**
 * @brief The ports of one device already open (@p ctx), in port order, with
 *        the same fields as pvrdma_common_ports_discover() fills except NUMA
 *        data (unknown).  A device or port that cannot be queried gives
 *        no entry and is named in @p why.
 * @return 0 (also with no ports: see @p count); ENOMEM; EINVAL for NULL
 *         arguments.
 */
int pvrdma_common_device_ports(struct ibv_context *ctx,
                               struct pvrdma_common_port **ports,
                               size_t *count, char *why, size_t why_len);

/** @brief Release an array from pvrdma_common_ports_discover() or
 *         pvrdma_common_device_ports(). */
void pvrdma_common_ports_free(struct pvrdma_common_port *ports);

#ifdef __cplusplus
}
#endif

#endif /* PVRDMA_PORT_H */
