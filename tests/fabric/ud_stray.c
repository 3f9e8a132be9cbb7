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
 * 1..4 with the right version but a made-up MAC (forged: a REQ naming
 * whoever it likes), one such message COUNT times (replayed), and 200 REQs
 * each from a different made-up process (unknown).  It knows what anyone on
 * the fabric knows (the Q_Key and message layout are in the source); it
 * does not know the receiver's secret, which only the job has.  Prints one
 * line per kind: "sent KIND N".  -p: pause between datagrams (default
 * 300 us: a receiver keeps few receives posted on its connection QP, and
 * a UD datagram that finds none is lost in the device, unseen and
 * uncounted).  Exit 0 when everything was sent.
 *
 * Burst mode (issue 41): ud_stray -d DEV[:PORT] -g GID_INDEX -B COUNT
 *                                 -T GID[,GID...] -K QKEY[:VER][,...]
 *                                 [-Q FIRST-LAST] [-s MSG_SIZE]
 * sends COUNT datagrams as fast as the device takes them (64 in flight),
 * round robin over every QPN FIRST..LAST (default 1-300) of every target
 * GID, each Q_Key in turn and 10 lengths (1, 3, 19, 20, 64, MSG_SIZE - 1,
 * MSG_SIZE, MSG_SIZE + 1, 512 and the port's MTU: shorter than any message,
 * longer than any receive buffer a transport sized for its own messages).
 * A Q_Key given with :VER makes every other datagram to it look like a
 * connection message of that version (type 1..5, random MAC).  What
 * anyone on a shared fabric can do in a few seconds, without knowing a
 * thing about the job.  Prints "burst sent N datagrams to Q QPNs x H hosts,
 * K Q_Keys, lengths L..M in S s".
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define GRH_LEN  40
#define HDR_LEN  28   /* type, version, flags, keyed, 8-byte sequence, 16-byte MAC */
#define MAX_MSG  4096
#define DEPTH    64
#define BURST_MAX_TARGETS 8
#define BURST_MAX_QKEYS   8

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_ah *ah;
static struct ibv_mr *mr;
/* buf: the one datagram of the normal mode; in burst mode DEPTH more, one
 * per datagram in flight */
static uint8_t buf[(DEPTH + 1) * MAX_MSG];
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

/* post one datagram of @p len bytes at @p data to @p dest_qpn */
static void post_one(const uint8_t *data, uint32_t len, struct ibv_ah *dest,
                     uint32_t dest_qpn, uint32_t dest_qkey)
{
    struct ibv_sge sge = {(uintptr_t) data, len, mr->lkey};
    struct ibv_send_wr wr, *bad;
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.sg_list           = &sge;
    wr.num_sge           = 1;
    wr.opcode            = IBV_WR_SEND;
    wr.send_flags        = IBV_SEND_SIGNALED;
    wr.wr.ud.ah          = dest;
    wr.wr.ud.remote_qpn  = dest_qpn;
    wr.wr.ud.remote_qkey = dest_qkey;
    rc = ibv_post_send(qp, &wr, &bad);
    if (rc != 0) {
        die("ibv_post_send", rc);
    }
    ++in_flight;
}

/* one datagram of @p len bytes from buf (the device copies it before the
 * completion, so buf may change after reap) */
static void send_one(uint32_t len)
{
    post_one(buf, len, ah, target_qpn, qkey);
    reap(0);   /* one at a time: buf is reused */
    usleep(pause_us);
}

static void fill_random(uint8_t *p, size_t len)
{
    if (getrandom(p, len, 0) != (ssize_t) len) {
        die("getrandom", errno);
    }
}

/* a message that passes every check but the MAC (keyed by the receiver) */
static void forged(uint8_t type, uint8_t version, uint32_t size)
{
    fill_random(buf, size);
    buf[0] = type;
    buf[1] = version;
    buf[2] = 0;
    buf[3] = 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Burst mode: @p count datagrams round robin over QPNs @p qpn_first ..
 * @p qpn_last of @p ntargets hosts (@p ahs), Q_Keys @p qkeys (@p vers: the
 * version to imitate for each, -1 for none), 10 lengths up to @p mtu. */
static void burst(long count, struct ibv_ah **ahs, int ntargets,
                  const uint32_t *qkeys, const int *vers, int nqkeys,
                  uint32_t qpn_first, uint32_t qpn_last, uint32_t size,
                  uint32_t mtu)
{
    uint32_t lens[10] = {1, 3, 19, 20, 64, size - 1, size, size + 1, 512, mtu};
    uint32_t nqpn = qpn_last - qpn_first + 1, lmin = mtu, lmax = 0;
    double t0 = now_s();

    for (int i = 0; i < 10; ++i) {
        lens[i] = (lens[i] > mtu) ? mtu : lens[i];
        lmin = (lens[i] < lmin) ? lens[i] : lmin;
        lmax = (lens[i] > lmax) ? lens[i] : lmax;
    }
    for (long i = 0; i < count; ++i) {
        /* the QPN changes fastest: every QP of every host is hit early */
        uint32_t qpn  = qpn_first + (uint32_t) (i % nqpn);
        int target    = (int) ((i / nqpn) % ntargets);
        int k         = (int) ((i / ((long) nqpn * ntargets)) % nqkeys);
        uint32_t len  = lens[(i / 7) % 10];
        uint8_t *data = buf + MAX_MSG * (1 + (size_t) (i % DEPTH));

        reap(DEPTH - 1);   /* in order: the slot used DEPTH posts ago is done */
        fill_random(data, len);
        if ((vers[k] >= 0) && (len >= HDR_LEN) && (i % 2 == 0)) {
            data[0] = (uint8_t) (1 + i % 5);
            data[1] = (uint8_t) vers[k];
            data[2] = data[3] = 0;
        }
        post_one(data, len, ahs[target], qpn, qkeys[k]);
    }
    reap(0);
    printf("burst sent %ld datagrams to %u QPNs x %d hosts, %d Q_Keys, "
           "lengths %u..%u in %.1f s\n", count, nqpn, ntargets, nqkeys, lmin,
           lmax, now_s() - t0);
}

/* an address handle to @p dgid (RoCE: a GRH from our GID @p gid_index) */
static struct ibv_ah *ah_to(const union ibv_gid *dgid, int port, int gid_index)
{
    struct ibv_ah_attr aa;
    struct ibv_ah *h;

    memset(&aa, 0, sizeof(aa));
    aa.port_num       = (uint8_t) port;
    aa.is_global      = 1;
    aa.grh.dgid       = *dgid;
    aa.grh.sgid_index = (uint8_t) gid_index;
    aa.grh.hop_limit  = 64;
    h = ibv_create_ah(pd, &aa);
    if (h == NULL) {
        die("ibv_create_ah", errno);
    }
    return h;
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
    const char *dev_arg = NULL, *gid_arg = NULL, *targets_arg = NULL;
    const char *qkeys_arg = NULL;
    struct ibv_ah *ahs[BURST_MAX_TARGETS];
    uint32_t qkeys[BURST_MAX_QKEYS], qpn_first = 1, qpn_last = 300;
    int vers[BURST_MAX_QKEYS], ntargets = 0, nqkeys = 0;
    long burst_count = 0;
    struct ibv_port_attr pattr;
    struct ibv_device **list;
    struct ibv_qp_init_attr init;
    union ibv_gid dgid;
    int gid_index = 0, version = -1, count = 20, port = 1, opt, n;
    uint32_t size = 0;
    char *colon;

    while ((opt = getopt(argc, argv, "d:g:t:q:k:v:s:n:p:B:T:K:Q:")) != -1) {
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
        case 'B': burst_count = strtol(optarg, NULL, 0); break;
        case 'T': targets_arg = optarg; break;
        case 'K': qkeys_arg = optarg; break;
        case 'Q':
            if (sscanf(optarg, "%u-%u", &qpn_first, &qpn_last) != 2) {
                goto usage;
            }
            break;
        default: goto usage;
        }
    }
    if (burst_count > 0) {
        char *tok, *save = NULL;

        if ((dev_arg == NULL) || (targets_arg == NULL) || (qkeys_arg == NULL) ||
            (qpn_first == 0) || (qpn_last < qpn_first)) {
            goto usage;
        }
        size = (size == 0) ? 100 : size;
        for (tok = strtok_r((char *) qkeys_arg, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            char *ver = strchr(tok, ':');

            if (nqkeys == BURST_MAX_QKEYS) {
                goto usage;
            }
            vers[nqkeys]    = (ver != NULL) ? atoi(ver + 1) : -1;
            qkeys[nqkeys++] = (uint32_t) strtoul(tok, NULL, 0);
        }
        if ((nqkeys == 0) || (size < HDR_LEN) || (size > MAX_MSG)) {
            goto usage;
        }
        qkey = qkeys[0];
    } else if ((dev_arg == NULL) || (gid_arg == NULL) || (target_qpn == 0) ||
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
    if (burst_count > 0) {
        char *tok, *save = NULL;

        if (ibv_query_port(ctx, (uint8_t) port, &pattr) != 0) {
            die("ibv_query_port", errno);
        }
        for (tok = strtok_r((char *) targets_arg, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            if ((ntargets == BURST_MAX_TARGETS) ||
                (inet_pton(AF_INET6, tok, &dgid) != 1)) {
                goto usage;
            }
            ahs[ntargets++] = ah_to(&dgid, port, gid_index);
        }
        burst(burst_count, ahs, ntargets, qkeys, vers, nqkeys, qpn_first,
              qpn_last, size, 128u << pattr.active_mtu);
        for (int i = 0; i < ntargets; ++i) {
            ibv_destroy_ah(ahs[i]);
        }
        goto out;
    }
    ah = ah_to(&dgid, port, gid_index);

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

out:
    ibv_destroy_qp(qp);
    ibv_dereg_mr(mr);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return 0;

usage:
    fprintf(stderr, "usage: ud_stray -d DEV[:PORT] -g GID_INDEX -t TARGET_GID "
            "-q TARGET_QPN -k QKEY -v VERSION -s MSG_SIZE [-n COUNT] [-p USEC]\n"
            "       ud_stray -d DEV[:PORT] -g GID_INDEX -B COUNT -T GID[,GID...] "
            "-K QKEY[:VERSION][,...] [-Q FIRST-LAST] [-s MSG_SIZE]\n");
    return 2;
}
