/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* GID classification and choice. */
#include "pvrdma_gid.h"
#include "test_util.h"

#include <arpa/inet.h>

static struct pvrdma_common_gid_entry gid(uint32_t index, const char *text,
                                          enum pvrdma_common_gid_type type)
{
    struct pvrdma_common_gid_entry e;

    memset(&e, 0, sizeof(e));
    e.index = index;
    e.type = type;
    if (inet_pton(AF_INET6, text, e.gid.raw) != 1) {
        fprintf(stderr, "bad test GID %s\n", text);
        exit(2);
    }
    return e;
}

#define V1 PVRDMA_COMMON_GID_TYPE_ROCE_V1
#define V2 PVRDMA_COMMON_GID_TYPE_ROCE_V2
#define NONE PVRDMA_COMMON_GID_TYPE_NONE

static void test_classify(void)
{
    struct pvrdma_common_gid_entry e;
    char buf[64];

    e = gid(0, "::ffff:192.168.1.10", V2);
    CHECK(pvrdma_common_gid_is_ipv4_mapped(&e.gid));
    CHECK(!pvrdma_common_gid_is_link_local(&e.gid));
    CHECK(!pvrdma_common_gid_is_zero(&e.gid));
    CHECK_STR(pvrdma_common_gid_str(&e.gid, buf, sizeof(buf)),
              "::ffff:192.168.1.10");
    e = gid(0, "fe80::250:56ff:fe01:203", V1);
    CHECK(pvrdma_common_gid_is_link_local(&e.gid));
    CHECK(!pvrdma_common_gid_is_ipv4_mapped(&e.gid));
    e = gid(0, "fec0::1", V1);
    CHECK(!pvrdma_common_gid_is_link_local(&e.gid));
    e = gid(0, "::", NONE);
    CHECK(pvrdma_common_gid_is_zero(&e.gid));
    e = gid(0, "::ffff:0:0", NONE); /* zero IPv4: mapped, not zero */
    CHECK(pvrdma_common_gid_is_ipv4_mapped(&e.gid));
    CHECK_STR(pvrdma_common_gid_type_str(V2), "RoCE v2");
    CHECK_STR(pvrdma_common_gid_type_str(V1), "RoCE v1");
    CHECK_STR(pvrdma_common_gid_type_str(PVRDMA_COMMON_GID_TYPE_IB), "IB");
    CHECK_STR(pvrdma_common_gid_type_str(NONE), "none");
}

static void test_choose(void)
{
    /* A typical rxe/mlx table: each address as v1 and v2. */
    struct pvrdma_common_gid_entry mlx[] = {
        gid(0, "fe80::5054:ff:fe12:3456", V1),
        gid(1, "fe80::5054:ff:fe12:3456", V2),
        gid(2, "::ffff:10.0.0.1", V1),
        gid(3, "::ffff:10.0.0.1", V2),
        gid(4, "2001:db8::1", V1),
        gid(5, "2001:db8::1", V2),
    };
    /* The PVRDMA table seen on QEMU: RoCE v1 only. */
    struct pvrdma_common_gid_entry pv[] = {
        gid(0, "fe80::5054:ff:fe12:3456", V1),
        gid(1, "::ffff:10.0.0.2", V1),
        gid(2, "fec0::5054:ff:fe12:3456", V1),
        gid(3, "::", NONE),
    };
    struct pvrdma_common_gid_entry v2only[] = {
        gid(0, "::", NONE),
        gid(1, "fe80::1", V2),
        gid(2, "2001:db8::7", V2),
    };
    struct pvrdma_common_gid_entry linklocal[] = {
        gid(0, "::", NONE),
        gid(1, "fe80::1", V2),
    };
    struct pvrdma_common_gid_entry v1_ll[] = {
        gid(0, "fe80::9", V1),
        gid(1, "fe80::1", V2),
    };
    struct pvrdma_common_gid_entry empty[] = {
        gid(0, "::", NONE),
        gid(1, "::", V2), /* zero GID with a type is still empty */
    };
    char err[256];
    size_t c = 99;

    CHECK_EQ(pvrdma_common_gid_choose(mlx, 6, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(mlx[c].index, 3);     /* v2 IPv4-mapped */
    CHECK_EQ(pvrdma_common_gid_choose(mlx, 5, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(mlx[c].index, 3);     /* without 5: still v2 4-mapped at 3 */
    CHECK_EQ(pvrdma_common_gid_choose(mlx, 3, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(mlx[c].index, 2);     /* v1 IPv4-mapped beats v2 link-local */
    CHECK_EQ(pvrdma_common_gid_choose(pv, 4, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(pv[c].index, 1);      /* v1 IPv4-mapped */
    CHECK_EQ(pvrdma_common_gid_choose(v2only, 3, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(v2only[c].index, 2);  /* v2 global beats v2 link-local */
    CHECK_EQ(pvrdma_common_gid_choose(linklocal, 2, -1, &c, err,
                                      sizeof(err)), 0);
    CHECK_EQ(linklocal[c].index, 1); /* last resort */
    CHECK_EQ(pvrdma_common_gid_choose(v1_ll, 2, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(v1_ll[c].index, 0);   /* v1 any beats v2 link-local */

    /* Only the first (link-local v1) and fec0 v1: lowest index wins. */
    CHECK_EQ(pvrdma_common_gid_choose(pv, 1, -1, &c, err, sizeof(err)), 0);
    CHECK_EQ(pv[c].index, 0);

    /* Nothing usable. */
    err[0] = '\0';
    CHECK_EQ(pvrdma_common_gid_choose(empty, 2, -1, &c, err, sizeof(err)),
             ENOENT);
    CHECK_CONTAINS(err, "no valid entry");
    CHECK_EQ(pvrdma_common_gid_choose(NULL, 0, -1, &c, err, sizeof(err)),
             ENOENT);
    CHECK_EQ(pvrdma_common_gid_choose(NULL, 3, -1, &c, err, sizeof(err)),
             EINVAL);

    /* Forced index. */
    CHECK_EQ(pvrdma_common_gid_choose(mlx, 6, 0, &c, err, sizeof(err)), 0);
    CHECK_EQ(mlx[c].index, 0);
    CHECK_EQ(pvrdma_common_gid_choose(mlx, 6, 5, &c, err, sizeof(err)), 0);
    CHECK_EQ(mlx[c].index, 5);
    err[0] = '\0';
    CHECK_EQ(pvrdma_common_gid_choose(mlx, 6, 6, &c, err, sizeof(err)),
             ERANGE);
    CHECK_CONTAINS(err, "GID index 6 is out of range");
    err[0] = '\0';
    CHECK_EQ(pvrdma_common_gid_choose(pv, 4, 3, &c, err, sizeof(err)),
             ENODATA);
    CHECK_CONTAINS(err, "GID index 3 is empty");
    CHECK_EQ(pvrdma_common_gid_choose(pv, 4, 1000, &c, NULL, 0), ERANGE);
}

int main(void)
{
    test_classify();
    test_choose();
    return test_done("test_gid");
}
