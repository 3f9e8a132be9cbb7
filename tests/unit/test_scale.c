/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* What connections cost and how many fit: the paper's n8np160 (159 peers
 * per rank) and a 32 VM x 32 rank job (1,023 peers) on the two PVRDMA
 * attribute sets, QEMU's model and a real ESXi 7 device. */
#include "pvrdma_scale.h"
#include "test_attrs.h"
#include "test_util.h"

/* One BTL receive buffer: 8 KiB eager limit plus the 8-byte header. */
#define BTL_BUF (8192 + 8)
#define MIB     (1024ull * 1024ull)

static void btl_request(struct pvrdma_common_scale_request *req, uint32_t peers,
                        uint32_t procs, uint32_t cq_max, bool srq)
{
    memset(req, 0, sizeof(*req));
    req->peers            = peers;
    req->procs_per_device = procs;
    req->qps_per_peer     = 1;
    req->cq_max           = cq_max;
    req->max_send_wr      = 256;
    req->send_sge         = 4;
    req->recv_per_peer    = 64;
    req->use_srq          = srq;
    req->srq_depth        = srq ? 1024 : 0;
    req->buf_size         = BTL_BUF;
}

/* QEMU's model: CQs above 4096 entries fail (128-page ring), SRQ present. */
static void test_qemu_model(void)
{
    struct pvrdma_common_scale_request req;
    struct pvrdma_common_scale_plan pl;
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    attrs_pvrdma(&d, &p);

    /* SRQ (the BTL's auto choice there): receives cost no CQ per peer */
    btl_request(&req, 159, 1, 4096, true);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.send_budget, 1024);
    CHECK_EQ(pl.srq_depth, 1024);
    CHECK_EQ(pl.cq_depth, 2048);
    CHECK_EQ(pl.peers_fit_cq, UINT32_MAX);
    CHECK_EQ(pl.peers_fit_qp, 1023);        /* max_qp 1024, one UD QP */
    CHECK_EQ(pl.mem_per_peer, 256 * 128);   /* the send ring only */
    CHECK(pvrdma_common_scale_mem(&pl, 159) < 16 * MIB);

    /* the model's max_qp is per device: 159 peers per rank fit up to 6
     * ranks per VM (BTL); at 20 ranks per VM 50 peers each */
    req.procs_per_device = 6;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK(pl.peers_fit_qp >= 159);
    req.procs_per_device = 20;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.peers_fit_qp, 50);
    req.qps_per_peer = 2;                   /* UCX: an ep and a chan */
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.peers_fit_qp, 25);

    /* no SRQ: 159 peers share 3072 receive entries, 19 each */
    btl_request(&req, 159, 1, 4096, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.send_budget, 1024);
    CHECK(pl.recv_reduced);
    CHECK_EQ(pl.recv_per_peer, 19);
    CHECK_EQ(pl.cq_depth, 1024 + 159 * 19);
    CHECK(pl.cq_depth <= 4096);
    CHECK_EQ(pl.peers_fit_cq, 159);         /* the CQ is made for the job */
    CHECK_EQ(pl.peers_fit_cq_min, 384);     /* 3072 / 8 at the floor */
    CHECK(pl.peers_fit_cq >= 159);

    /* 1,023 peers do not fit there even at the floor: the plan says so */
    btl_request(&req, 1023, 1, 4096, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.recv_per_peer, PVRDMA_COMMON_SCALE_RECV_MIN);
    CHECK_EQ(pl.cq_depth, 4096);
    CHECK(pl.peers_fit_cq < 1023);
    CHECK_EQ(pl.peers_fit_cq, 384);
}

/* A real ESXi 7 device: no SRQ, 262144-entry CQs, 32768 QPs. */
static void test_esxi7(void)
{
    struct pvrdma_common_scale_request req;
    struct pvrdma_common_scale_plan pl;
    struct ibv_device_attr d;
    struct ibv_port_attr p;
    uint64_t mem;

    attrs_esxi7(&d, &p);

    /* n8np160: 159 peers, 20 ranks per VM, full 64 receives each */
    btl_request(&req, 159, 20, (uint32_t) d.max_cqe, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK(!pl.recv_reduced);
    CHECK_EQ(pl.recv_per_peer, 64);
    CHECK_EQ(pl.cq_depth, 1024 + 159 * 64);
    CHECK_EQ(pl.peers_fit_cq, 159);         /* the CQ is made for the job */
    CHECK_EQ(pl.peers_fit_cq_min, (262144 - 1024) / 8);
    CHECK_EQ(pl.peers_fit_qp, 32768 / 20 - 1);
    CHECK_EQ(pl.mem_per_peer, 256 * 128 + 64 * (BTL_BUF + 32));
    mem = pvrdma_common_scale_mem(&pl, 159);
    CHECK_EQ(mem, (uint64_t) pl.cq_depth * 64 + 159 * pl.mem_per_peer);
    CHECK(mem > 80 * MIB && mem < 90 * MIB); /* README: ~85 MiB */

    /* 32 VMs x 32 ranks: 1,023 peers fit the CQ and the QPs (BTL) ... */
    btl_request(&req, 1023, 32, (uint32_t) d.max_cqe, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK(!pl.recv_reduced);
    CHECK_EQ(pl.cq_depth, 1024 + 1023 * 64);
    CHECK(pl.peers_fit_cq >= 1023);
    CHECK_EQ(pl.peers_fit_qp, 1023);
    /* ... but UCX's two QPs per connection halve what max_qp allows */
    req.qps_per_peer = 2;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.peers_fit_qp, 511);

    /* within 64 MiB of locked memory: 8 receives of 4 KiB per peer and a
     * 128-WR send queue (btl_pvrdma_recv_queue_depth 8,
     * btl_pvrdma_eager_limit 4096, btl_pvrdma_send_queue_depth 128) */
    btl_request(&req, 1023, 32, (uint32_t) d.max_cqe, false);
    req.recv_per_peer = 8;
    req.max_send_wr   = 128;
    req.buf_size      = 4096 + 8;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.recv_per_peer, 8);
    mem = pvrdma_common_scale_mem(&pl, 1023);
    CHECK(mem < 64 * MIB);
    /* the defaults would need far more */
    btl_request(&req, 1023, 32, (uint32_t) d.max_cqe, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK(pvrdma_common_scale_mem(&pl, 1023) > 500 * MIB);
}

static void test_edges(void)
{
    struct pvrdma_common_scale_request req;
    struct pvrdma_common_scale_plan pl;
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    attrs_esxi7(&d, &p);
    btl_request(&req, 0, 1, 4096, false);
    CHECK_EQ(pvrdma_common_scale_plan(NULL, &req, &pl), EINVAL);
    CHECK_EQ(pvrdma_common_scale_plan(&d, NULL, &pl), EINVAL);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, NULL), EINVAL);

    /* job size unknown: the CQ as deep as allowed, full receives */
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.cq_depth, 4096);
    CHECK_EQ(pl.recv_per_peer, 64);
    CHECK_EQ(pl.peers_fit_cq, (4096 - 1024) / 64);

    /* a user who asks for fewer receives than the floor keeps them */
    btl_request(&req, 500, 1, 4096, false);
    req.recv_per_peer = 4;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.recv_per_peer, 4);
    CHECK_EQ(pl.peers_fit_cq_min, (4096 - 1024) / 4);

    /* an explicit send budget larger than the CQ leaves the floor */
    btl_request(&req, 2, 1, 512, false);
    req.send_budget = 100000;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.send_budget, 512 - PVRDMA_COMMON_SCALE_RECV_MIN);
    CHECK_EQ(pl.recv_per_peer, PVRDMA_COMMON_SCALE_RECV_MIN);
    CHECK_EQ(pl.cq_depth, 512);
    CHECK_EQ(pl.peers_fit_cq, 1);           /* says the 2nd peer won't fit */

    /* a CQ that cannot hold one send and the floor, zero queues */
    btl_request(&req, 2, 1, 8, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), EINVAL);
    btl_request(&req, 2, 1, 4096, false);
    req.max_send_wr = 0;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), EINVAL);
    btl_request(&req, 2, 1, 4096, true);
    req.srq_depth = 0;
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), EINVAL);
}

/* The pieces the UCX transport's plan line adds up itself (its receive
 * queues differ per peer): a 256-WR ring of 4-SGE WQEs is 256 x 128 B, a
 * posted receive its buffer and a 32-byte WQE, a CQE 64 B; and the plan's
 * per-peer cost is made of the same pieces. */
static void test_pieces(void)
{
    struct pvrdma_common_scale_request req;
    struct pvrdma_common_scale_plan pl;
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    CHECK_EQ(pvrdma_common_scale_sq_ring(256, 4), 256u * 128u);
    CHECK_EQ(pvrdma_common_scale_sq_ring(63, 1), 63u * 128u);
    CHECK_EQ(pvrdma_common_scale_sq_ring(63, 5), 63u * 256u);
    CHECK_EQ(pvrdma_common_scale_recv_mem(64, BTL_BUF), 64u * (BTL_BUF + 32u));
    CHECK_EQ(pvrdma_common_scale_recv_mem(0, BTL_BUF), 0u);
    CHECK_EQ(pvrdma_common_scale_cq_mem(2048), 2048u * 64u);

    attrs_esxi7(&d, &p);
    btl_request(&req, 159, 20, (uint32_t) d.max_cqe, false);
    CHECK_EQ(pvrdma_common_scale_plan(&d, &req, &pl), 0);
    CHECK_EQ(pl.mem_per_peer, pvrdma_common_scale_sq_ring(256, 4) +
             pvrdma_common_scale_recv_mem(pl.recv_per_peer, BTL_BUF));
}

int main(void)
{
    test_qemu_model();
    test_esxi7();
    test_edges();
    test_pieces();
    return test_done("test_scale");
}
