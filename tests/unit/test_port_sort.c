/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Discovery order: PVRDMA, then ACTIVE, then NUMA-nearest. */
#include "pvrdma_device.h"
#include "pvrdma_port.h"
#include "test_util.h"

static struct pvrdma_common_port mk(const char *name, uint8_t port,
                                    bool pvrdma, bool active, int distance)
{
    struct pvrdma_common_port p;

    memset(&p, 0, sizeof(p));
    snprintf(p.dev_name, sizeof(p.dev_name), "%s", name);
    p.port_num = port;
    p.is_pvrdma = pvrdma;
    p.active = active;
    p.numa_distance = distance;
    return p;
}

int main(void)
{
    struct pvrdma_common_port ports[8];
    struct pvrdma_common_list_expect {
        const char *name;
        uint8_t port;
    } expect[] = {
        {"vmw_pvrdma1", 1}, /* pvrdma, active, local */
        {"vmw_pvrdma0", 1}, /* pvrdma, active, distance 20 */
        {"vmw_pvrdma2", 1}, /* pvrdma, active, unknown distance */
        {"vmw_pvrdma3", 1}, /* pvrdma, down, local */
        {"mlx5_0", 1},      /* other, active, local */
        {"mlx5_0", 2},      /* same, port 2 */
        {"rxe0", 1},        /* other, active, distance 21 */
        {"mlx5_1", 1},      /* other, down */
    };
    char why[256] = "untouched";
    size_t i;

    ports[0] = mk("mlx5_1", 1, false, false, 0);
    ports[1] = mk("rxe0", 1, false, true, 21);
    ports[2] = mk("vmw_pvrdma3", 1, true, false, 0);
    ports[3] = mk("mlx5_0", 2, false, true, 0);
    ports[4] = mk("vmw_pvrdma2", 1, true, true, -1);
    ports[5] = mk("vmw_pvrdma0", 1, true, true, 20);
    ports[6] = mk("mlx5_0", 1, false, true, 0);
    ports[7] = mk("vmw_pvrdma1", 1, true, true, 0);

    pvrdma_common_port_sort(ports, 8);
    for (i = 0; i < 8; ++i) {
        CHECK_STR(ports[i].dev_name, expect[i].name);
        CHECK_EQ(ports[i].port_num, expect[i].port);
    }
    CHECK_EQ(pvrdma_common_port_compare(&ports[0], &ports[0]), 0);
    CHECK(pvrdma_common_port_compare(&ports[0], &ports[1]) < 0);
    CHECK(pvrdma_common_port_compare(&ports[7], &ports[6]) > 0);
    pvrdma_common_port_sort(NULL, 0); /* no crash */

    /* Discovery on this host: whatever exists, the result is consistent
     * and an include list naming a missing device is explained. */
    {
        struct pvrdma_common_port_list inc;
        struct pvrdma_common_port *found = NULL;
        size_t n = 99;
        int rc;

        CHECK_EQ(pvrdma_common_port_list_parse("no_such_dev_xyz:1", &inc,
                                               NULL, 0), 0);
        rc = pvrdma_common_ports_discover(&inc, NULL, &found, &n, why,
                                          sizeof(why));
        CHECK_EQ(rc, ENODEV);
        CHECK_EQ(n, 0);
        CHECK_CONTAINS(why, "no_such_dev_xyz");
        pvrdma_common_ports_free(found);
        pvrdma_common_port_list_free(&inc);

        rc = pvrdma_common_ports_discover(NULL, NULL, &found, &n, why,
                                          sizeof(why));
        CHECK((rc == 0) || (rc == ENODEV));
        for (i = 0; i + 1 < n; ++i) {
            CHECK(pvrdma_common_port_compare(&found[i], &found[i + 1]) <= 0);
        }
        if (rc == ENODEV) {
            CHECK(why[0] != '\0');
        }
        printf("discovered %zu port(s)%s%s\n", n, why[0] ? ": " : "", why);
        pvrdma_common_ports_free(found);
    }

    return test_done("test_port_sort");
}
