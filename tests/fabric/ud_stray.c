/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ud_stray.c
 * @brief A hostile neighbour on the fabric (issue 18): sends stray and
 *        forged datagrams to a transport's connection QP while a job runs.
 *
 * Usage: ud_stray -d DEV[:PORT] -g GID_INDEX -t TARGET_GID -q TARGET_QPN
 *                 -k QKEY -v VERSION -s MSG_SIZE [-n COUNT] [-p USEC]
 * Sends, in this order: COUNT datagrams of random bytes (garbage), COUNT of
 * 3 bytes (truncated), COUNT well-formed messages of every connection type
 * 1..4 with the right version but a made-up secret (forged: a REQ naming
 * whoever it likes), one such message COUNT times (replayed), and 200 REQs
 * each from a different made-up process (unknown).  It knows what anyone on
 * the fabric knows (the Q_Key and message layout are in the source); it
 * does not know the receiver's secret, which only the job has.  Prints one
 * line per kind: "sent KIND N".  -p: pause between datagrams (default
 * 300 us: a receiver keeps few receives posted on its connection QP, and
 * a UD datagram that finds none is lost in the device, unseen and
 * uncounted).  Exit 0 when everything was sent.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define GRH_LEN  40
#define HDR_LEN  20   /* type, version, flags, reserved, 16-byte secret */
#define MAX_MSG  4096
#define DEPTH    64

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_ah *ah;
static struct ibv_mr *mr;
static uint8_t buf[MAX_MSG];
static uint32_t target_qpn, qkey;
static unsigned in_flight;
static unsigned pause_us = 300;

static void die(const char *what, int err)
{
    fprintf(stderr, "ud_stray: %s: %s\n", what, strerror(err));
    exit(1);
}

static void reap(unsigned keep)
{
    struct ibv_wc wc[16];

    while (in_flight > keep) {
        int n = ibv_poll_cq(cq, 16, wc);

        if (n < 0) {
            die("ibv_poll_cq", EIO);
        }
        for (int i = 0; i < n; ++i) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                fprintf(stderr, "ud_stray: send failed: %s\n",
                        ibv_wc_status_str(wc[i].status));
                exit(1);
            }
        }
        in_flight -= (unsigned) n;
    }
}

/* one datagram of @p len bytes from buf (the device copies it before the
 * completion, so buf may change after reap) */
static void send_one(uint32_t len)
{
    struct ibv_sge sge = {(uintptr_t) buf, len, mr->lkey};
    struct ibv_send_wr wr, *bad;
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.sg_list           = &sge;
    wr.num_sge           = 1;
    wr.opcode            = IBV_WR_SEND;
    wr.send_flags        = IBV_SEND_SIGNALED;
    wr.wr.ud.ah          = ah;
    wr.wr.ud.remote_qpn  = target_qpn;
    wr.wr.ud.remote_qkey = qkey;
    rc = ibv_post_send(qp, &wr, &bad);
    if (rc != 0) {
        die("ibv_post_send", rc);
    }
    ++in_flight;
    reap(0);   /* one at a time: buf is reused */
    usleep(pause_us);
}

static void fill_random(uint8_t *p, size_t len)
{
    if (getrandom(p, len, 0) != (ssize_t) len) {
        die("getrandom", errno);
    }
}

/* a message that passes every check but the secret */
static void forged(uint8_t type, uint8_t version, uint32_t size)
{
    fill_random(buf, size);
    buf[0] = type;
    buf[1] = version;
    buf[2] = 0;
    buf[3] = 0;
}

static void to_rts(uint8_t port)
{
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = port;
    a.qkey     = qkey;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_QKEY)) {
        die("ibv_modify_qp INIT", errno);
    }
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) {
        die("ibv_modify_qp RTR", errno);
    }
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn   = 0;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
        die("ibv_modify_qp RTS", errno);
    }
}

int main(int argc, char **argv)
{
    const char *dev_arg = NULL, *gid_arg = NULL;
    struct ibv_device **list;
    struct ibv_qp_init_attr init;
    struct ibv_ah_attr aa;
    union ibv_gid dgid;
    int gid_index = 0, version = -1, count = 20, port = 1, opt, n;
    uint32_t size = 0;
    char *colon;

    while ((opt = getopt(argc, argv, "d:g:t:q:k:v:s:n:p:")) != -1) {
        switch (opt) {
        case 'd': dev_arg = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        case 't': gid_arg = optarg; break;
        case 'q': target_qpn = (uint32_t) strtoul(optarg, NULL, 0); break;
        case 'k': qkey = (uint32_t) strtoul(optarg, NULL, 0); break;
        case 'v': version = atoi(optarg); break;
        case 's': size = (uint32_t) strtoul(optarg, NULL, 0); break;
        case 'n': count = atoi(optarg); break;
        case 'p': pause_us = (unsigned) strtoul(optarg, NULL, 0); break;
        default: goto usage;
        }
    }
    if ((dev_arg == NULL) || (gid_arg == NULL) || (target_qpn == 0) ||
        (qkey == 0) || (version < 0) || (size < HDR_LEN) || (size > MAX_MSG) ||
        (count <= 0) || (inet_pton(AF_INET6, gid_arg, &dgid) != 1)) {
        goto usage;
    }
    colon = strchr(dev_arg, ':');
    if (colon != NULL) {
        *colon = '\0';
        port   = atoi(colon + 1);
    }

    list = ibv_get_device_list(&n);
    for (int i = 0; (list != NULL) && (i < n) && (ctx == NULL); ++i) {
        if (!strcmp(ibv_get_device_name(list[i]), dev_arg)) {
            ctx = ibv_open_device(list[i]);
        }
    }
    if (ctx == NULL) {
        fprintf(stderr, "ud_stray: cannot open device %s\n", dev_arg);
        return 1;
    }
    pd = ibv_alloc_pd(ctx);
    cq = pd ? ibv_create_cq(ctx, DEPTH, NULL, NULL, 0) : NULL;
    mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (mr == NULL) {
        die("PD, CQ or MR", errno);
    }
    memset(&init, 0, sizeof(init));
    init.send_cq = init.recv_cq = cq;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr  = DEPTH;
    init.cap.max_recv_wr  = 1;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &init);
    if (qp == NULL) {
        die("ibv_create_qp", errno);
    }
    to_rts((uint8_t) port);
    memset(&aa, 0, sizeof(aa));
    aa.port_num           = (uint8_t) port;
    aa.is_global          = 1;
    aa.grh.dgid           = dgid;
    aa.grh.sgid_index     = (uint8_t) gid_index;
    aa.grh.hop_limit      = 64;
    ah = ibv_create_ah(pd, &aa);
    if (ah == NULL) {
        die("ibv_create_ah", errno);
    }

    for (int i = 0; i < count; ++i) {
        fill_random(buf, size);
        send_one(size);
    }
    printf("sent garbage %d\n", count);
    for (int i = 0; i < count; ++i) {
        fill_random(buf, 3);
        send_one(3);
    }
    printf("sent truncated %d\n", count);
    for (int i = 0; i < count; ++i) {
        forged((uint8_t) (1 + i % 4), (uint8_t) version, size);
        send_one(size);
    }
    printf("sent forged %d\n", count);
    forged(1, (uint8_t) version, size);
    for (int i = 0; i < count; ++i) {
        send_one(size);
    }
    printf("sent replayed %d\n", count);
    for (int i = 0; i < 200; ++i) {
        forged(1, (uint8_t) version, size);
        send_one(size);
    }
    printf("sent unknown 200\n");

    ibv_destroy_ah(ah);
    ibv_destroy_qp(qp);
    ibv_dereg_mr(mr);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return 0;

usage:
    fprintf(stderr, "usage: ud_stray -d DEV[:PORT] -g GID_INDEX -t TARGET_GID "
            "-q TARGET_QPN -k QKEY -v VERSION -s MSG_SIZE [-n COUNT] [-p USEC]\n");
    return 2;
}
