/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ud_replay.c
 * @brief An eavesdropper on the fabric (issue 37): captures a job's real
 *        connection datagrams, then replays them from a QP of its own.
 *
 * Capture:  ud_replay -C [-i IFACE] [-n MAX]
 *   reads every RoCEv2 UD SEND frame (BTH opcode 0x64/0x65) that passes
 *   IFACE (default eth0; a raw packet socket, as root) until SIGTERM or
 *   SIGINT, or MAX datagrams, and prints one line per datagram:
 *   "dgram DST_IPV4 QPN QKEY HEX" (the payload, as the receiving QP gets it).
 *   Last line: "captured N".
 * Replay:   ud_replay -R -d DEV[:PORT] -g GID_INDEX [-p USEC] < CAPTURE
 *   sends each captured datagram to the QP it was meant for (its IPv4-mapped
 *   GID, QPN and Q_Key), from this process's own UD QP and GID:
 *   - unchanged (twice);
 *   - changed: one byte flipped (XOR 0xff), once per byte offset;
 *   - renumbered: the 8-byte sequence number at offset 4 of the connection
 *     header (common/pvrdma_ud.h) set to the captured one + 1, + 1000 and a
 *     random value, the rest (its MAC included) as captured.
 *   Prints "sent unchanged N", "sent changed N", "sent renumbered N".
 *   -p: pause between datagrams (default 300 us: a receiver keeps few
 *   receives posted on its connection QP, and a datagram that finds none is
 *   lost in the device, unseen and uncounted).
 * It knows what an eavesdropper knows: every byte that crossed the wire,
 * never the receiver's secret.  Exit 0 when everything was sent.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define ROCE_PORT   4791
#define BTH_LEN     12
#define DETH_LEN    8
#define ICRC_LEN    4
#define SEQ_OFF     4      /* type, version, flags, keyed, then the sequence */
#define SEQ_LEN     8
#define MAX_MSG     4096
#define MAX_DGRAMS  256

typedef struct {
    uint32_t dst_ip;       /* network order */
    uint32_t qpn, qkey;
    uint32_t len;
    uint8_t data[MAX_MSG];
} dgram_t;

static volatile sig_atomic_t stop;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t buf[MAX_MSG];
static unsigned pause_us = 300;

static void die(const char *what, int err)
{
    fprintf(stderr, "ud_replay: %s: %s\n", what, strerror(err));
    exit(1);
}

static void on_signal(int sig)
{
    (void) sig;
    stop = 1;
}

/* --- capture --------------------------------------------------------------- */

/* A UD SEND datagram in @p f (an Ethernet frame of @p n bytes): fills @p d */
static int parse_frame(const uint8_t *f, size_t n, dgram_t *d)
{
    size_t ihl, udp_len, off, end;
    uint8_t opcode, pad;

    if ((n < 14 + 20) || (f[12] != 0x08) || (f[13] != 0x00)) {
        return 0;   /* not IPv4 */
    }
    f += 14;
    n -= 14;
    ihl = (size_t) (f[0] & 0x0f) * 4;
    if ((ihl < 20) || (f[9] != IPPROTO_UDP) || (n < ihl + 8)) {
        return 0;
    }
    if ((((unsigned) f[ihl + 2] << 8) | f[ihl + 3]) != ROCE_PORT) {
        return 0;
    }
    udp_len = ((size_t) f[ihl + 4] << 8) | f[ihl + 5];
    end     = ihl + udp_len;
    off     = ihl + 8;
    if ((end > n) || (end < off + BTH_LEN + DETH_LEN + ICRC_LEN)) {
        return 0;
    }
    opcode = f[off];
    if ((opcode != 0x64) && (opcode != 0x65)) {
        return 0;   /* only UD SEND (only), with or without immediate */
    }
    pad    = (f[off + 1] >> 4) & 3;
    memcpy(&d->dst_ip, f + 16, 4);
    d->qpn  = ((uint32_t) f[off + 5] << 16) | ((uint32_t) f[off + 6] << 8) | f[off + 7];
    off    += BTH_LEN;
    d->qkey = ((uint32_t) f[off] << 24) | ((uint32_t) f[off + 1] << 16) |
              ((uint32_t) f[off + 2] << 8) | f[off + 3];
    off    += DETH_LEN + ((opcode == 0x65) ? 4 : 0);
    end    -= ICRC_LEN + pad;
    if ((end < off) || (end - off > MAX_MSG)) {
        return 0;
    }
    d->len = (uint32_t) (end - off);
    memcpy(d->data, f + off, d->len);
    return 1;
}

static int capture(const char *ifname, unsigned max)
{
    struct sockaddr_ll sll;
    struct packet_mreq mreq;
    static uint8_t frame[65536];
    static dgram_t d;
    unsigned count = 0;
    int fd;

    fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        die("socket(AF_PACKET)", errno);
    }
    memset(&sll, 0, sizeof(sll));
    sll.sll_family   = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex  = (int) if_nametoindex(ifname);
    if ((sll.sll_ifindex == 0) || (bind(fd, (struct sockaddr *) &sll, sizeof(sll)) != 0)) {
        die(ifname, errno);
    }
    /* a port mirror sees what is not addressed to it: so does this */
    memset(&mreq, 0, sizeof(mreq));
    mreq.mr_ifindex = sll.sll_ifindex;
    mreq.mr_type    = PACKET_MR_PROMISC;
    (void) setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq));
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("capturing on %s\n", ifname);
    fflush(stdout);

    while (!stop && (count < max)) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t n;

        if (poll(&p, 1, 200) <= 0) {
            continue;
        }
        n = recv(fd, frame, sizeof(frame), 0);
        if ((n <= 0) || !parse_frame(frame, (size_t) n, &d)) {
            continue;
        }
        printf("dgram %s 0x%x 0x%x ", inet_ntoa(*(struct in_addr *) &d.dst_ip), d.qpn, d.qkey);
        for (uint32_t i = 0; i < d.len; ++i) {
            printf("%02x", d.data[i]);
        }
        printf("\n");
        fflush(stdout);
        ++count;
    }
    printf("captured %u\n", count);
    close(fd);
    return 0;
}

/* --- replay ---------------------------------------------------------------- */

static void reap_one(void)
{
    struct ibv_wc wc;
    int n;

    while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
    }
    if (n < 0) {
        die("ibv_poll_cq", EIO);
    }
    if (wc.status != IBV_WC_SUCCESS) {
        fprintf(stderr, "ud_replay: send failed: %s\n", ibv_wc_status_str(wc.status));
        exit(1);
    }
}

/* one datagram from buf to @p d's QP (the device copies it before the
 * completion: buf is free again after reap_one) */
static void send_buf(const dgram_t *d, struct ibv_ah *ah, uint32_t len)
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
    wr.wr.ud.remote_qpn  = d->qpn;
    wr.wr.ud.remote_qkey = d->qkey;
    rc = ibv_post_send(qp, &wr, &bad);
    if (rc != 0) {
        die("ibv_post_send", rc);
    }
    reap_one();
    usleep(pause_us);
}

static struct ibv_ah *ah_to_ipv4(uint32_t ip, uint8_t port, int gid_index)
{
    struct ibv_ah_attr aa;
    struct ibv_ah *h;

    memset(&aa, 0, sizeof(aa));
    aa.port_num                 = port;
    aa.is_global                = 1;
    aa.grh.dgid.raw[10]         = 0xff;
    aa.grh.dgid.raw[11]         = 0xff;
    memcpy(&aa.grh.dgid.raw[12], &ip, 4);
    aa.grh.sgid_index           = (uint8_t) gid_index;
    aa.grh.hop_limit            = 64;
    h = ibv_create_ah(pd, &aa);
    if (h == NULL) {
        die("ibv_create_ah", errno);
    }
    return h;
}

static void open_qp(const char *dev_arg, uint8_t *port_p)
{
    char name[64];
    const char *colon = strchr(dev_arg, ':');
    struct ibv_device **list;
    struct ibv_context *ctx = NULL;
    struct ibv_qp_init_attr init;
    struct ibv_qp_attr a;
    int n;

    snprintf(name, sizeof(name), "%.*s", (int) (colon ? colon - dev_arg : (long) strlen(dev_arg)),
             dev_arg);
    *port_p = colon ? (uint8_t) atoi(colon + 1) : 1;
    list = ibv_get_device_list(&n);
    for (int i = 0; (list != NULL) && (i < n); ++i) {
        if (!strcmp(ibv_get_device_name(list[i]), name)) {
            ctx = ibv_open_device(list[i]);
        }
    }
    if (ctx == NULL) {
        die(name, ENODEV);
    }
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    mr = (pd != NULL) ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
    if ((pd == NULL) || (cq == NULL) || (mr == NULL)) {
        die("ibv_alloc_pd/create_cq/reg_mr", errno);
    }
    memset(&init, 0, sizeof(init));
    init.send_cq          = cq;
    init.recv_cq          = cq;
    init.qp_type          = IBV_QPT_UD;
    init.cap.max_send_wr  = 4;
    init.cap.max_recv_wr  = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &init);
    if (qp == NULL) {
        die("ibv_create_qp", errno);
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = *port_p;
    a.qkey     = 0x11111111;   /* ours; each datagram names the receiver's */
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) {
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

static int read_capture(dgram_t *d, unsigned max)
{
    static char line[2 * MAX_MSG + 128];
    char ip[64], hex[2 * MAX_MSG + 1];
    unsigned n = 0;

    while ((n < max) && (fgets(line, sizeof(line), stdin) != NULL)) {
        struct in_addr a;
        size_t h;

        if ((sscanf(line, "dgram %63s %x %x %8192s", ip, &d[n].qpn, &d[n].qkey, hex) != 4) ||
            (inet_pton(AF_INET, ip, &a) != 1)) {
            continue;
        }
        h = strlen(hex);
        if ((h % 2) || (h / 2 > MAX_MSG)) {
            continue;
        }
        d[n].dst_ip = a.s_addr;
        d[n].len    = (uint32_t) (h / 2);
        for (size_t i = 0; i < h / 2; ++i) {
            unsigned v;
            sscanf(hex + 2 * i, "%2x", &v);
            d[n].data[i] = (uint8_t) v;
        }
        ++n;
    }
    return (int) n;
}

static int replay(const char *dev_arg, int gid_index)
{
    static dgram_t d[MAX_DGRAMS];
    unsigned unchanged = 0, changed = 0, renumbered = 0;
    uint8_t port;
    int n = read_capture(d, MAX_DGRAMS);

    if (n <= 0) {
        fprintf(stderr, "ud_replay: nothing captured to replay\n");
        return 1;
    }
    open_qp(dev_arg, &port);
    for (int i = 0; i < n; ++i) {
        struct ibv_ah *ah = ah_to_ipv4(d[i].dst_ip, port, gid_index);
        uint64_t seq = 0, add[3] = {1, 1000, 0};

        for (int k = 0; k < 2; ++k) {
            memcpy(buf, d[i].data, d[i].len);
            send_buf(&d[i], ah, d[i].len);
            ++unchanged;
        }
        for (uint32_t off = 0; off < d[i].len; ++off) {
            memcpy(buf, d[i].data, d[i].len);
            buf[off] ^= 0xff;
            send_buf(&d[i], ah, d[i].len);
            ++changed;
        }
        if (d[i].len >= SEQ_OFF + SEQ_LEN) {
            for (int b = 0; b < SEQ_LEN; ++b) {
                seq = (seq << 8) | d[i].data[SEQ_OFF + b];
            }
            if (getrandom(&add[2], sizeof(add[2]), 0) != sizeof(add[2])) {
                die("getrandom", errno);
            }
            for (int k = 0; k < 3; ++k) {
                uint64_t s = seq + add[k];

                memcpy(buf, d[i].data, d[i].len);
                for (int b = SEQ_LEN - 1; b >= 0; --b, s >>= 8) {
                    buf[SEQ_OFF + b] = (uint8_t) s;
                }
                send_buf(&d[i], ah, d[i].len);
                ++renumbered;
            }
        }
        (void) ibv_destroy_ah(ah);
    }
    printf("replayed %d captured datagrams from qp 0x%x\n", n, qp->qp_num);
    printf("sent unchanged %u\nsent changed %u\nsent renumbered %u\n", unchanged, changed,
           renumbered);
    return 0;
}

int main(int argc, char **argv)
{
    const char *ifname = "eth0", *dev_arg = NULL;
    int mode = 0, gid_index = 1, opt;
    unsigned max = MAX_DGRAMS;

    while ((opt = getopt(argc, argv, "CRi:n:d:g:p:")) != -1) {
        switch (opt) {
        case 'C': mode = 'C'; break;
        case 'R': mode = 'R'; break;
        case 'i': ifname = optarg; break;
        case 'n': max = (unsigned) strtoul(optarg, NULL, 0); break;
        case 'd': dev_arg = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        case 'p': pause_us = (unsigned) strtoul(optarg, NULL, 0); break;
        default: goto usage;
        }
    }
    if ((mode == 'C') && (max > 0) && (max <= MAX_DGRAMS)) {
        return capture(ifname, max);
    }
    if ((mode == 'R') && (dev_arg != NULL)) {
        return replay(dev_arg, gid_index);
    }
usage:
    fprintf(stderr, "usage: ud_replay -C [-i IFACE] [-n MAX]\n"
                    "       ud_replay -R -d DEV[:PORT] [-g GID_INDEX] [-p USEC] < CAPTURE\n");
    return 2;
}
