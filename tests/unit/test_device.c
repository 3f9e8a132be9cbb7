/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* PVRDMA identity and MTU helpers. */
#include <errno.h>

#include "pvrdma_device.h"
#include "pvrdma_rdma_probe.h"
#include "test_attrs.h"
#include "test_util.h"

int main(void)
{
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    attrs_pvrdma(&d, &p);
    CHECK(pvrdma_common_is_pvrdma("vmw_pvrdma0", NULL));
    CHECK(pvrdma_common_is_pvrdma("vmw_pvrdma12", &d));
    /* renamed device, found by part id (QEMU reports vendor id 0) */
    CHECK(pvrdma_common_is_pvrdma("rdma0", &d));
    CHECK(pvrdma_common_is_pvrdma(NULL, &d));
    d.vendor_id = PVRDMA_COMMON_VENDOR_ID;
    CHECK(pvrdma_common_is_pvrdma("roce0", &d));

    attrs_rxe(&d, &p);
    CHECK(!pvrdma_common_is_pvrdma("rxe0", &d));
    CHECK(!pvrdma_common_is_pvrdma("vmw_pvrdm", NULL));
    CHECK(!pvrdma_common_is_pvrdma(NULL, NULL));
    d.vendor_part_id = 0x1017; /* ConnectX-5 */
    CHECK(!pvrdma_common_is_pvrdma("mlx5_0", &d));

    CHECK_EQ(pvrdma_common_mtu_to_bytes(IBV_MTU_256), 256);
    CHECK_EQ(pvrdma_common_mtu_to_bytes(IBV_MTU_1024), 1024);
    CHECK_EQ(pvrdma_common_mtu_to_bytes(IBV_MTU_4096), 4096);
    CHECK_EQ(pvrdma_common_mtu_to_bytes((enum ibv_mtu)0), 0);
    CHECK_EQ(pvrdma_common_mtu_to_bytes((enum ibv_mtu)6), 0);
    CHECK_EQ(pvrdma_common_mtu_from_bytes(2048), IBV_MTU_2048);
    CHECK_EQ(pvrdma_common_mtu_from_bytes(1500), 0);
    CHECK_EQ(pvrdma_common_mtu_from_bytes(8192), 0);
    CHECK_EQ(pvrdma_common_mtu_min(IBV_MTU_4096, IBV_MTU_1024), IBV_MTU_1024);
    CHECK_EQ(pvrdma_common_mtu_min(IBV_MTU_512, IBV_MTU_2048), IBV_MTU_512);

    /* RDMA WRITE policy: the probe decides; when it cannot run, a PVRDMA
     * device (maybe QEMU's model, where WRITE lands as a SEND) fails closed */
    {
        char why[256];

        CHECK(pvrdma_common_rdma_write_decide(1, true, "64 B landed", why,
                                              sizeof(why)));
        CHECK_CONTAINS(why, "64 B landed");
        CHECK(!pvrdma_common_rdma_write_decide(0, false, "arrived as a SEND",
                                               why, sizeof(why)));
        CHECK_CONTAINS(why, "does not work (arrived as a SEND)");
        CHECK(!pvrdma_common_rdma_write_decide(-ENOMEM, true, "ibv_create_qp",
                                               why, sizeof(why)));
        CHECK_CONTAINS(why, "send/recv only");
        CHECK_CONTAINS(why, "ibv_create_qp");
        CHECK(pvrdma_common_rdma_write_decide(-ENOMEM, false, "ibv_create_qp",
                                              why, sizeof(why)));
        CHECK_CONTAINS(why, "assuming it works");
    }

    /* No such device: a clear errno, no crash. */
    CHECK(pvrdma_common_open_device("no_such_dev_xyz") == NULL);
    CHECK(pvrdma_common_open_device(NULL) == NULL);
    CHECK_EQ(pvrdma_common_dev_numa_node("no_such_dev_xyz"),
             PVRDMA_COMMON_NUMA_UNKNOWN);
    CHECK_EQ(pvrdma_common_dev_numa_node("../../etc"),
             PVRDMA_COMMON_NUMA_UNKNOWN);

    /* PCI address of the device (UCX's sys_device comes from it) */
    CHECK(pvrdma_common_is_pci_bdf("0000:0b:00.0"));
    CHECK(pvrdma_common_is_pci_bdf("0001:ff:1f.7"));
    CHECK(!pvrdma_common_is_pci_bdf("0000:0b:00.0x"));
    CHECK(!pvrdma_common_is_pci_bdf("0000:0b:20.0"));   /* slot > 0x1f */
    CHECK(!pvrdma_common_is_pci_bdf("0000:0b:00.8"));   /* function > 7 */
    CHECK(!pvrdma_common_is_pci_bdf("0:b:0.0"));
    CHECK(!pvrdma_common_is_pci_bdf("rxe0"));
    CHECK(!pvrdma_common_is_pci_bdf(""));
    CHECK(!pvrdma_common_is_pci_bdf(NULL));
    {
        char bdf[16];

        CHECK_EQ(pvrdma_common_dev_pci_name("no_such_dev_xyz", bdf,
                                            sizeof(bdf)), ENODEV);
        CHECK_EQ(pvrdma_common_dev_pci_name("../../etc", bdf, sizeof(bdf)),
                 EINVAL);
    }

    return test_done("test_device");
}
