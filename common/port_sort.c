/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file port_sort.c
 * @brief Preference order of discovered ports.
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_port.h"

#include <stdlib.h>
#include <string.h>

/* Unknown distance (-1) sorts after every known one. */
static int distance_key(int d)
{
    return (d < 0) ? -1 : d;
}

int pvrdma_common_port_compare(const void *a, const void *b)
{
    const struct pvrdma_common_port *pa = a, *pb = b;
    int da, db, c;

    if (pa->is_pvrdma != pb->is_pvrdma) {
        return pa->is_pvrdma ? -1 : 1;
    }
    if (pa->active != pb->active) {
        return pa->active ? -1 : 1;
    }
    da = distance_key(pa->numa_distance);
    db = distance_key(pb->numa_distance);
    if (da != db) {
        if (da < 0) {
            return 1;
        }
        if (db < 0) {
            return -1;
        }
        return (da < db) ? -1 : 1;
    }
    c = strcmp(pa->dev_name, pb->dev_name);
    if (c != 0) {
        return (c < 0) ? -1 : 1;
    }
    return (pa->port_num < pb->port_num) ? -1 :
           (pa->port_num > pb->port_num) ? 1 : 0;
}

void pvrdma_common_port_sort(struct pvrdma_common_port *ports, size_t count)
{
    if ((ports != NULL) && (count > 1)) {
        qsort(ports, count, sizeof(*ports), pvrdma_common_port_compare);
    }
}
