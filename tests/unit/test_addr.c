/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Connection address wire format. */
#include "pvrdma_gid.h"
#include "pvrdma_addr.h"
#include "test_util.h"

static struct pvrdma_common_addr_info roce_addr(void)
{
    struct pvrdma_common_addr_info a;
    unsigned i;

    memset(&a, 0, sizeof(a));
    for (i = 0; i < 16; ++i) {
        a.gid.raw[i] = (uint8_t)(0xa0 + i);
    }
    a.qpn = 0x123456;
    a.psn = 0xabcdef;
    a.lid = 0;
    a.mtu = IBV_MTU_1024;
    a.gid_type = PVRDMA_COMMON_GID_TYPE_ROCE_V1;
    a.link_layer = IBV_LINK_LAYER_ETHERNET;
    a.max_dest_rd_atomic = 0;
    return a;
}

static void test_roundtrip(void)
{
    struct pvrdma_common_addr_info a = roce_addr(), b;
    struct pvrdma_common_addr w;
    uint8_t buf[PVRDMA_COMMON_ADDR_WIRE_SIZE + 1];
    const uint8_t *raw = (const uint8_t *)&w;

    CHECK_EQ(sizeof(w), PVRDMA_COMMON_ADDR_WIRE_SIZE);
    CHECK_EQ(pvrdma_common_addr_pack(&a, &w), 0);
    /* Fixed byte layout, independent of host endianness. */
    CHECK_EQ(raw[0], PVRDMA_COMMON_ADDR_VERSION);
    CHECK_EQ(raw[1], IBV_LINK_LAYER_ETHERNET);
    CHECK_EQ(raw[2], PVRDMA_COMMON_GID_TYPE_ROCE_V1);
    CHECK_EQ(raw[3], IBV_MTU_1024);
    CHECK_EQ(raw[4], 0);                 /* reserved */
    CHECK_EQ(raw[8], 0x00);
    CHECK_EQ(raw[9], 0x12);
    CHECK_EQ(raw[10], 0x34);
    CHECK_EQ(raw[11], 0x56);
    CHECK_EQ(raw[13], 0xab);
    CHECK_EQ(raw[16], 0xa0);
    CHECK_EQ(raw[31], 0xaf);

    /* Unaligned source buffer. */
    memcpy(buf + 1, &w, sizeof(w));
    memset(&b, 0x55, sizeof(b));
    CHECK_EQ(pvrdma_common_addr_unpack(buf + 1, sizeof(w), &b), 0);
    CHECK_EQ(b.qpn, a.qpn);
    CHECK_EQ(b.psn, a.psn);
    CHECK_EQ(b.lid, a.lid);
    CHECK_EQ(b.mtu, a.mtu);
    CHECK_EQ(b.gid_type, a.gid_type);
    CHECK_EQ(b.link_layer, a.link_layer);
    CHECK_EQ(b.max_dest_rd_atomic, a.max_dest_rd_atomic);
    CHECK(memcmp(b.gid.raw, a.gid.raw, 16) == 0);

    /* InfiniBand with a LID. */
    a.link_layer = IBV_LINK_LAYER_INFINIBAND;
    a.gid_type = PVRDMA_COMMON_GID_TYPE_IB;
    a.lid = 0xbeef;
    a.mtu = IBV_MTU_4096;
    a.max_dest_rd_atomic = 16;
    CHECK_EQ(pvrdma_common_addr_pack(&a, &w), 0);
    CHECK_EQ(raw[6], 0xbe);
    CHECK_EQ(raw[7], 0xef);
    CHECK_EQ(pvrdma_common_addr_unpack(&w, sizeof(w), &b), 0);
    CHECK_EQ(b.lid, 0xbeef);
    CHECK_EQ(b.max_dest_rd_atomic, 16);
}

static void test_bad(void)
{
    struct pvrdma_common_addr_info a = roce_addr(), b;
    struct pvrdma_common_addr w;

    a.qpn = 0x1000000; /* 25 bits */
    CHECK_EQ(pvrdma_common_addr_pack(&a, &w), EINVAL);
    a = roce_addr();
    a.mtu = (enum ibv_mtu)9;
    CHECK_EQ(pvrdma_common_addr_pack(&a, &w), EINVAL);
    a = roce_addr();
    a.link_layer = 7;
    CHECK_EQ(pvrdma_common_addr_pack(&a, &w), EINVAL);
    CHECK_EQ(pvrdma_common_addr_pack(NULL, &w), EINVAL);

    a = roce_addr();
    CHECK_EQ(pvrdma_common_addr_pack(&a, &w), 0);
    CHECK_EQ(pvrdma_common_addr_unpack(&w, sizeof(w) - 1, &b), EINVAL);
    CHECK_EQ(pvrdma_common_addr_unpack(NULL, sizeof(w), &b), EINVAL);
    w.version = 2;
    CHECK_EQ(pvrdma_common_addr_unpack(&w, sizeof(w), &b), EPROTO);
    w.version = PVRDMA_COMMON_ADDR_VERSION;
    w.qpn[0] = 1; /* qpn > 24 bits */
    CHECK_EQ(pvrdma_common_addr_unpack(&w, sizeof(w), &b), EPROTO);
    w.qpn[0] = 0;
    w.mtu = 0;
    CHECK_EQ(pvrdma_common_addr_unpack(&w, sizeof(w), &b), EPROTO);
    w.mtu = IBV_MTU_1024;
    w.gid_type = 9;
    CHECK_EQ(pvrdma_common_addr_unpack(&w, sizeof(w), &b), EPROTO);
}

static void test_compat(void)
{
    struct pvrdma_common_addr_info l = roce_addr(), r = roce_addr();
    char err[256];

    CHECK_EQ(pvrdma_common_addr_check_compat(&l, &r, err, sizeof(err)), 0);

    r.gid_type = PVRDMA_COMMON_GID_TYPE_ROCE_V2;
    err[0] = '\0';
    CHECK_EQ(pvrdma_common_addr_check_compat(&l, &r, err, sizeof(err)),
             PVRDMA_COMMON_EADDR_MISMATCH);
    CHECK_CONTAINS(err, "GID type mismatch: local GID is RoCE v1, remote GID is RoCE v2");

    r = roce_addr();
    r.link_layer = IBV_LINK_LAYER_INFINIBAND;
    err[0] = '\0';
    CHECK_EQ(pvrdma_common_addr_check_compat(&l, &r, err, sizeof(err)),
             PVRDMA_COMMON_EADDR_MISMATCH);
    CHECK_CONTAINS(err, "link layer mismatch: local port is Ethernet, remote port is InfiniBand");
    CHECK(PVRDMA_COMMON_EADDR_MISMATCH != EINVAL);

    r = roce_addr();
    memset(&r.gid, 0, sizeof(r.gid));
    err[0] = '\0';
    CHECK_EQ(pvrdma_common_addr_check_compat(&l, &r, err, sizeof(err)),
             EINVAL);
    CHECK_CONTAINS(err, "no GID");

    l.link_layer = r.link_layer = IBV_LINK_LAYER_INFINIBAND;
    l.gid_type = r.gid_type = PVRDMA_COMMON_GID_TYPE_IB;
    r.lid = 0;
    CHECK_EQ(pvrdma_common_addr_check_compat(&l, &r, err, sizeof(err)),
             EINVAL);
    r.lid = 3; /* IB: the GID is optional */
    CHECK_EQ(pvrdma_common_addr_check_compat(&l, &r, err, sizeof(err)), 0);
    CHECK_EQ(pvrdma_common_addr_check_compat(&l, NULL, NULL, 0), EINVAL);
}

int main(void)
{
    test_roundtrip();
    test_bad();
    test_compat();
    return test_done("test_addr");
}
