/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* Resource profile: auto values, user requests, clamping to device caps. */
#include "pvrdma_profile.h"
#include "test_attrs.h"
#include "test_util.h"

static void test_pvrdma_auto(void)
{
    struct pvrdma_common_profile_request req;
    struct pvrdma_common_profile pr;
    struct ibv_device_attr d;
    struct ibv_port_attr p;
    char buf[128];

    attrs_pvrdma(&d, &p);
    pvrdma_common_profile_request_init(&req);
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK_EQ(pr.max_send_wr, 256);
    CHECK_EQ(pr.max_recv_wr, 256);
    CHECK_EQ(pr.send_sge, 4);
    CHECK_EQ(pr.recv_sge, 1);
    CHECK_EQ(pr.max_inline, 0);          /* PVRDMA never inlines */
    CHECK(pr.use_srq);                   /* max_srq 512, max_srq_wr 12288 */
    CHECK_EQ(pr.srq_depth, 1024);
    CHECK_EQ(pr.cq_depth, 256 + 1024);
    CHECK_EQ(pr.mtu, IBV_MTU_1024);
    CHECK_EQ(pr.mtu_bytes, 1024);
    CHECK_EQ(pr.max_mr_size, 128ull << 20);
    CHECK_EQ(pr.max_msg_size, 128ull << 20); /* min(2 GiB port, 128 MiB MR) */
    CHECK(!pr.rdma_read_ok);             /* max_qp_rd_atom 0 */
    CHECK_EQ(pr.max_rd_atomic, 0);
    CHECK_EQ(pr.max_dest_rd_atomic, 0);
    CHECK_EQ(pr.clamped, 0);
    CHECK_EQ(pvrdma_common_profile_clamped_str(&pr, buf, sizeof(buf)), 0);
    CHECK_STR(buf, "");

    /* Old hosts without SRQ. */
    d.max_srq = 0;
    d.max_srq_wr = 0;
    d.max_srq_sge = 0;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK(!pr.use_srq);
    CHECK_EQ(pr.srq_depth, 0);
    CHECK_EQ(pr.cq_depth, 256 + 256);
    CHECK_EQ(pr.clamped, 0);
}

static void test_pvrdma_requests_clamped(void)
{
    struct pvrdma_common_profile_request req;
    struct pvrdma_common_profile pr;
    struct ibv_device_attr d;
    struct ibv_port_attr p;
    char buf[256];

    attrs_pvrdma(&d, &p);
    pvrdma_common_profile_request_init(&req);
    req.max_send_wr   = 20000;  /* > max_qp_wr 10467 */
    req.max_recv_wr   = 512;
    req.send_sge      = 5;      /* UCX rc_verbs asks for 5: > max_sge 4 */
    req.recv_sge      = 0;      /* auto */
    req.max_inline    = 128;    /* openib asks for 128 */
    req.use_srq       = 1;
    req.srq_depth     = 4096;   /* fits 12288 */
    req.cq_depth      = 100000; /* > max_cqe 28672 */
    req.mtu           = 4096;   /* > active 1024 */
    req.max_msg_size  = 1ll << 40;
    req.rdma_read     = 1;      /* impossible here */
    req.max_rd_atomic = 16;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK_EQ(pr.max_send_wr, 10467);
    CHECK_EQ(pr.max_recv_wr, 512);
    CHECK_EQ(pr.send_sge, 4);
    CHECK_EQ(pr.recv_sge, 1);
    CHECK_EQ(pr.max_inline, 0);
    CHECK(pr.use_srq);
    CHECK_EQ(pr.srq_depth, 4096);
    CHECK_EQ(pr.cq_depth, 28672);
    CHECK_EQ(pr.mtu, IBV_MTU_1024);
    CHECK_EQ(pr.max_msg_size, 128ull << 20);
    CHECK(!pr.rdma_read_ok);
    CHECK_EQ(pr.max_rd_atomic, 0);
    CHECK_EQ(pr.clamped,
             PVRDMA_COMMON_PROFILE_MAX_SEND_WR | PVRDMA_COMMON_PROFILE_SEND_SGE |
             PVRDMA_COMMON_PROFILE_MAX_INLINE | PVRDMA_COMMON_PROFILE_CQ_DEPTH |
             PVRDMA_COMMON_PROFILE_MTU | PVRDMA_COMMON_PROFILE_MAX_MSG_SIZE |
             PVRDMA_COMMON_PROFILE_RDMA_READ |
             PVRDMA_COMMON_PROFILE_MAX_RD_ATOMIC);
    CHECK_EQ(pvrdma_common_profile_clamped_str(&pr, buf, sizeof(buf)), 8);
    CHECK_STR(buf, "max_send_wr, send_sge, max_inline, cq_depth, mtu, "
                   "max_msg_size, rdma_read, max_rd_atomic");
    CHECK_STR(pvrdma_common_profile_field_name(PVRDMA_COMMON_PROFILE_USE_SRQ),
              "use_srq");
    CHECK_STR(pvrdma_common_profile_field_name(3), "unknown");

    /* Forcing an SRQ on a host without one is reported, not fatal. */
    d.max_srq = 0;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK(!pr.use_srq);
    CHECK(pr.clamped & PVRDMA_COMMON_PROFILE_USE_SRQ);

    /* A smaller MTU than the port's is honoured and not a clamp. */
    attrs_pvrdma(&d, &p);
    pvrdma_common_profile_request_init(&req);
    req.mtu = 512;
    req.use_srq = 0;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK_EQ(pr.mtu, IBV_MTU_512);
    CHECK(!pr.use_srq);
    CHECK_EQ(pr.clamped, 0);

    /* Port down reports MTU 0: fall back to 1024 rather than garbage. */
    p.active_mtu = (enum ibv_mtu)0;
    req.mtu = PVRDMA_COMMON_AUTO;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK_EQ(pr.mtu_bytes, 1024);

    /* PVRDMA MR limit: 1 GiB even if the host claims more. */
    attrs_pvrdma(&d, &p);
    d.max_mr_size = 1ull << 40;
    pvrdma_common_profile_request_init(&req);
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), 0);
    CHECK_EQ(pr.max_mr_size, 1ull << 30);
    CHECK_EQ(pr.max_msg_size, 1ull << 30);
}

static void test_rxe(void)
{
    struct pvrdma_common_profile_request req;
    struct pvrdma_common_profile pr;
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    attrs_rxe(&d, &p);
    pvrdma_common_profile_request_init(&req);
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, false, &req, &pr), 0);
    CHECK_EQ(pr.send_sge, 4);
    CHECK_EQ(pr.max_inline, 64);
    CHECK(pr.use_srq);
    CHECK(pr.rdma_read_ok);
    CHECK_EQ(pr.max_rd_atomic, 4);
    CHECK_EQ(pr.max_dest_rd_atomic, 4);
    CHECK_EQ(pr.max_mr_size, UINT64_MAX);
    CHECK_EQ(pr.max_msg_size, 0x800000u); /* port max_msg_sz 8 MiB */
    CHECK_EQ(pr.clamped, 0);

    /* User disables READ: write-based rendezvous, still a read target. */
    req.rdma_read = 0;
    req.max_inline = 0;
    req.send_sge = 32;
    req.recv_sge = 30; /* fits max_sge 32 but not max_srq_sge 27 */
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, false, &req, &pr), 0);
    CHECK(!pr.rdma_read_ok);
    CHECK_EQ(pr.max_rd_atomic, 0);
    CHECK_EQ(pr.max_dest_rd_atomic, 4);
    CHECK_EQ(pr.max_inline, 0);
    CHECK_EQ(pr.send_sge, 32);
    CHECK_EQ(pr.recv_sge, 27);
    CHECK_EQ(pr.clamped, PVRDMA_COMMON_PROFILE_RECV_SGE);

    /* Small device caps clamp even auto values (silently). */
    d.max_qp_wr = 64;
    d.max_cqe = 100;
    d.max_sge = 2;
    d.max_srq_wr = 32; /* too small for an automatic SRQ */
    pvrdma_common_profile_request_init(&req);
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, false, &req, &pr), 0);
    CHECK_EQ(pr.max_send_wr, 64);
    CHECK_EQ(pr.max_recv_wr, 64);
    CHECK_EQ(pr.send_sge, 2);
    CHECK(!pr.use_srq);
    CHECK_EQ(pr.cq_depth, 100);
    CHECK_EQ(pr.clamped, 0);
}

static void test_bad_input(void)
{
    struct pvrdma_common_profile_request req;
    struct pvrdma_common_profile pr;
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    attrs_pvrdma(&d, &p);
    pvrdma_common_profile_request_init(&req);
    CHECK_EQ(pvrdma_common_profile_compute(NULL, &p, true, &req, &pr), EINVAL);
    CHECK_EQ(pvrdma_common_profile_compute(&d, NULL, true, &req, &pr), EINVAL);
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, NULL, &pr), EINVAL);
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, NULL), EINVAL);
    req.mtu = 1500;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), EINVAL);
    req.mtu = 0;
    req.max_send_wr = -5;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), EINVAL);
    req.max_send_wr = 0;
    req.use_srq = 2;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), EINVAL);
    req.use_srq = -1;
    d.max_sge = 0;
    CHECK_EQ(pvrdma_common_profile_compute(&d, &p, true, &req, &pr), EINVAL);
}

int main(void)
{
    test_pvrdma_auto();
    test_pvrdma_requests_clamped();
    test_rxe();
    test_bad_input();
    return test_done("test_profile");
}
