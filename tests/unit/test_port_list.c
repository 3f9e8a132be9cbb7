/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Include/exclude list parsing and matching. */
#include "pvrdma_port.h"
#include "test_util.h"

static void test_parse_ok(void)
{
    struct pvrdma_common_port_list l;
    char err[256];

    CHECK_EQ(pvrdma_common_port_list_parse(NULL, &l, err, sizeof(err)), 0);
    CHECK_EQ(l.count, 0);
    CHECK_EQ(pvrdma_common_port_list_parse("  ", &l, err, sizeof(err)), 0);
    CHECK_EQ(l.count, 0);

    CHECK_EQ(pvrdma_common_port_list_parse("vmw_pvrdma0", &l, err,
                                           sizeof(err)), 0);
    CHECK_EQ(l.count, 1);
    CHECK_STR(l.specs[0].dev_name, "vmw_pvrdma0");
    CHECK_EQ(l.specs[0].port_num, PVRDMA_COMMON_PORT_ANY);
    pvrdma_common_port_list_free(&l);
    CHECK(l.specs == NULL);

    CHECK_EQ(pvrdma_common_port_list_parse(" rxe0:1 , mlx5_0:2,vmw_pvrdma1:255",
                                           &l, err, sizeof(err)), 0);
    CHECK_EQ(l.count, 3);
    CHECK_STR(l.specs[0].dev_name, "rxe0");
    CHECK_EQ(l.specs[0].port_num, 1);
    CHECK_STR(l.specs[1].dev_name, "mlx5_0");
    CHECK_EQ(l.specs[1].port_num, 2);
    CHECK_STR(l.specs[2].dev_name, "vmw_pvrdma1");
    CHECK_EQ(l.specs[2].port_num, 255);

    CHECK(pvrdma_common_port_list_match(&l, "rxe0", 1));
    CHECK(!pvrdma_common_port_list_match(&l, "rxe0", 2));
    CHECK(pvrdma_common_port_list_match(&l, "mlx5_0", 2));
    CHECK(!pvrdma_common_port_list_match(&l, "mlx5_1", 2));
    CHECK(!pvrdma_common_port_list_match(&l, "rxe", 1)); /* no prefix match */
    CHECK(!pvrdma_common_port_list_match(NULL, "rxe0", 1));
    pvrdma_common_port_list_free(&l);
}

static void test_parse_bad(void)
{
    static const struct {
        const char *input;
        const char *msg;
    } bad[] = {
        {"a,,b", "empty element"},
        {"rxe0,", "empty element"},
        {",rxe0", "empty element"},
        {":1", "empty device name"},
        {"rxe0:", "missing port"},
        {"rxe0:x", "not a number"},
        {"rxe0:1x", "not a number"},
        {"rxe0:-1", "not a number"},
        {"rxe0:0", "out of range"},
        {"rxe0:256", "out of range"},
        {"rxe0:99999999999999999999", "out of range"},
        {"rxe0:1:2", "not a number"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "too long"},
    };
    struct pvrdma_common_port_list l;
    char err[256];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        err[0] = '\0';
        l.count = 99;
        CHECK_EQ(pvrdma_common_port_list_parse(bad[i].input, &l, err,
                                               sizeof(err)), EINVAL);
        CHECK_EQ(l.count, 0);
        CHECK(l.specs == NULL);
        CHECK_CONTAINS(err, bad[i].msg);
    }
    /* a NULL error buffer is allowed */
    CHECK_EQ(pvrdma_common_port_list_parse("x:0", &l, NULL, 0), EINVAL);
}

static void test_selected(void)
{
    struct pvrdma_common_port_list inc, exc, empty = {NULL, 0};

    CHECK_EQ(pvrdma_common_port_list_parse("vmw_pvrdma0,rxe0:1", &inc, NULL,
                                           0), 0);
    CHECK_EQ(pvrdma_common_port_list_parse("vmw_pvrdma0:2", &exc, NULL, 0), 0);

    /* nothing given: everything selected */
    CHECK(pvrdma_common_port_selected(NULL, NULL, "mlx5_0", 1));
    CHECK(pvrdma_common_port_selected(&empty, &empty, "mlx5_0", 1));
    /* include only */
    CHECK(pvrdma_common_port_selected(&inc, NULL, "vmw_pvrdma0", 2));
    CHECK(!pvrdma_common_port_selected(&inc, NULL, "mlx5_0", 1));
    CHECK(!pvrdma_common_port_selected(&inc, NULL, "rxe0", 2));
    /* exclude wins over include */
    CHECK(pvrdma_common_port_selected(&inc, &exc, "vmw_pvrdma0", 1));
    CHECK(!pvrdma_common_port_selected(&inc, &exc, "vmw_pvrdma0", 2));
    /* exclude only */
    CHECK(pvrdma_common_port_selected(NULL, &exc, "rxe0", 2));
    CHECK(!pvrdma_common_port_selected(&empty, &exc, "vmw_pvrdma0", 2));

    pvrdma_common_port_list_free(&inc);
    pvrdma_common_port_list_free(&exc);
}

int main(void)
{
    test_parse_ok();
    test_parse_bad();
    test_selected();
    return test_done("test_port_list");
}
