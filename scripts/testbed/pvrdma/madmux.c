/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/*
 * madmux: the test bed's stand-in for QEMU's rdmacm-mux (contrib/rdmacm-mux,
 * not packaged by Debian).
 *
 * QEMU's pvrdma device refuses to start without a `mad-chardev`, and each time
 * the guest driver binds a GID it sends a REG request (UNREG on unbind) over
 * that chardev and blocks until a response arrives; it also blocks for a
 * response to each MAD its guest sends on QP1. The real multiplexer relays
 * RDMA-CM MADs between the host's umad device and the guests. This one
 * acknowledges every request and, given peers, relays the connection
 * manager's MADs (class 0x07) to the other outer hosts' madmux over UDP: a
 * ConnectRequest goes to the guest that registered its primary remote GID,
 * every other CM MAD to the guest that sent the comm ID it answers (its
 * remote comm ID). So RDMA-CM (perftest -R, Open MPI's openib rdmacm) can
 * connect between nested nodes. Without peers, or for other classes, MADs
 * are dropped; every registration, relayed and dropped MAD is logged.
 *
 * Wire format (QEMU 7.2 hw/rdma/rdma_backend.c, fixed-size messages in host
 * byte order): a header {msg_type, op_code, sgid, err_code}, umad_len, then an
 * ib_user_mad header (64 bytes) and a 256-byte MAD buffer; 360 bytes in all.
 * QEMU takes an incoming MAD's source GID from the ib_user_mad address
 * (bytes 36-51 of it) and its destination from hdr.sgid.
 *
 * Usage: madmux SOCKET_PATH [PORT SELF_IP PEER_IP...]
 *        (listens on SOCKET_PATH; QEMU connects with -chardev
 *        socket,path=SOCKET_PATH,id=mad; serves one connection at a time
 *        until killed; with PORT, relays CM MADs over UDP SELF_IP:PORT to
 *        each PEER_IP:PORT)
 */
#define _DEFAULT_SOURCE /* be64toh */
#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h> /* union ibv_gid, as in QEMU's header */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>

enum { MUX_REQ = 0, MUX_RESP = 1 };
enum { MUX_OP_REG = 0, MUX_OP_UNREG = 1, MUX_OP_MAD = 2 };
enum { MUX_ERR_OK = 0 };

struct mux_hdr {
    int32_t msg_type;
    int32_t op_code;
    union ibv_gid sgid;
    int32_t err_code;
};

struct mux_msg {
    struct mux_hdr hdr;
    int32_t umad_len;
    unsigned char umad[64 + 256]; /* struct ib_user_mad + MAD payload */
};

_Static_assert(sizeof(struct mux_msg) == 360,
               "layout must match QEMU 7.2's RdmaCmMuxMsg");

static int io_full(int fd, void *buf, size_t len, int writing)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = writing ? write(fd, (char *)buf + done, len - done)
                            : read(fd, (char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* The MAD follows the 64-byte ib_user_mad header: byte 1 management class,
 * bytes 16-17 the attribute (big-endian), the CM message from byte 24: its
 * sender's comm ID first, the comm ID it answers next (not in a REQ), a
 * REQ's primary remote GID at byte 96. */
#define UMAD_HDR 64
#define UMAD_ADDR_QPN 20
#define UMAD_ADDR_GRH 32
#define UMAD_ADDR_GID 36
#define MAD_CLASS_CM 0x07
#define CM_REQ 0x0010
#define CM_REP 0x0013
#define CM_LOCAL_COMM 24
#define CM_REMOTE_COMM 28
#define CM_REQ_REMOTE_GID 96
#define RELAY_MAGIC 0x50564d58u /* "PVMX" */

struct relay_pkt {
    uint32_t magic;
    uint32_t umad_len;
    union ibv_gid sgid; /* the sending guest's GID */
    unsigned char mad[256];
};

#define MAX_GIDS 16
#define MAX_COMMS 1024
static union ibv_gid gids[MAX_GIDS];     /* registered by our guest */
static int ngids;
static struct { uint32_t comm; union ibv_gid gid; } comms[MAX_COMMS];
static unsigned ncomms;                  /* ring of our guest's comm IDs */
static int udp = -1;
static struct sockaddr_in *peers;
static int npeers;
static unsigned long relayed_out, relayed_in, dropped;

static unsigned mad_attr(const unsigned char *mad)
{
    return ((unsigned)mad[16] << 8) | mad[17];
}

static const char *cm_name(const unsigned char *mad)
{
    if (mad[1] != MAD_CLASS_CM)
        return "";
    switch (mad_attr(mad)) {
    case 0x0010: return " (CM ConnectRequest)";
    case 0x0011: return " (CM MessageReceiptAck)";
    case 0x0012: return " (CM ConnectReject)";
    case 0x0013: return " (CM ConnectReply)";
    case 0x0014: return " (CM ReadyToUse)";
    case 0x0015: return " (CM DisconnectRequest)";
    case 0x0016: return " (CM DisconnectReply)";
    default: return " (CM)";
    }
}

/* "madmux: dropped an outgoing MAD, class 0x07 ..." is what
 * scripts/bench/exits-bed.sh greps for: @p why goes after the counts. */
static void log_mad(const char *what, const unsigned char *mad, const union ibv_gid *gid,
                    unsigned long count, const char *why)
{
    fprintf(stderr, "madmux: %s MAD, class 0x%02x attribute 0x%04x%s, gid "
            "%016llx:%016llx (%lu so far)%s\n", what, mad[1], mad_attr(mad), cm_name(mad),
            (unsigned long long)be64toh(gid->global.subnet_prefix),
            (unsigned long long)be64toh(gid->global.interface_id), count, why);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v; /* compared as stored: byte order does not matter */
}

static void gid_reg(const union ibv_gid *gid, int reg)
{
    for (int i = 0; i < ngids; ++i) {
        if (memcmp(&gids[i], gid, sizeof(*gid)) == 0) {
            if (!reg)
                gids[i] = gids[--ngids];
            return;
        }
    }
    if (reg && ngids < MAX_GIDS)
        gids[ngids++] = *gid;
}

static int gid_ours(const unsigned char *raw)
{
    for (int i = 0; i < ngids; ++i)
        if (memcmp(gids[i].raw, raw, sizeof(gids[i].raw)) == 0)
            return i;
    return -1;
}

/* A MAD our guest sent (QEMU waits for the response first). */
static void outgoing(const struct mux_msg *msg)
{
    const unsigned char *mad = msg->umad + UMAD_HDR;
    struct relay_pkt pkt = {.magic = RELAY_MAGIC};

    if (udp < 0 || mad[1] != MAD_CLASS_CM || msg->umad_len < CM_REMOTE_COMM + 4 ||
        msg->umad_len > (int32_t)sizeof(pkt.mad)) {
        log_mad("dropped an outgoing", mad, &msg->hdr.sgid, ++dropped,
                udp < 0 ? ": no relay peers, RDMA-CM cannot connect" : ": not the CM class");
        return;
    }
    if (mad_attr(mad) == CM_REQ || mad_attr(mad) == CM_REP) {
        /* the messages that make a comm ID known to the peer */
        comms[ncomms % MAX_COMMS].comm = get32(mad + CM_LOCAL_COMM);
        comms[ncomms % MAX_COMMS].gid = msg->hdr.sgid;
        ncomms++;
    }
    pkt.umad_len = (uint32_t)msg->umad_len;
    pkt.sgid = msg->hdr.sgid;
    memcpy(pkt.mad, mad, (size_t)msg->umad_len);
    for (int i = 0; i < npeers; ++i)
        (void)sendto(udp, &pkt, sizeof(pkt), 0, (struct sockaddr *)&peers[i], sizeof(peers[i]));
    log_mad("relayed an outgoing", mad, &msg->hdr.sgid, ++relayed_out, "");
}

/* A relayed MAD: to our guest if it is the one addressed, else ignored
 * (every peer gets every MAD). @return 1 when it went to QEMU. */
static int incoming(int fd, const struct relay_pkt *pkt, ssize_t len)
{
    struct mux_msg msg;
    const unsigned char *mad = pkt->mad;
    const union ibv_gid *to = NULL;
    int g;

    if (len != (ssize_t)sizeof(*pkt) || pkt->magic != RELAY_MAGIC ||
        pkt->umad_len < CM_REQ_REMOTE_GID + 16 || pkt->umad_len > sizeof(pkt->mad) ||
        mad[1] != MAD_CLASS_CM)
        return 0;
    if (mad_attr(mad) == CM_REQ) {
        if ((g = gid_ours(mad + CM_REQ_REMOTE_GID)) >= 0)
            to = &gids[g];
    } else {
        uint32_t answers = get32(mad + CM_REMOTE_COMM);
        unsigned n = ncomms < MAX_COMMS ? ncomms : MAX_COMMS;

        for (unsigned i = 0; i < n && to == NULL; ++i)
            if (comms[i].comm == answers)
                to = &comms[i].gid;
    }
    if (to == NULL || fd < 0)
        return 0;
    memset(&msg, 0, sizeof(msg));
    msg.hdr.msg_type = MUX_REQ;
    msg.hdr.op_code = MUX_OP_MAD;
    msg.hdr.sgid = *to;
    msg.umad_len = (int32_t)pkt->umad_len;
    {
        uint32_t qp1 = htobe32(1);
        memcpy(msg.umad + UMAD_ADDR_QPN, &qp1, sizeof(qp1));
    }
    msg.umad[UMAD_ADDR_GRH] = 1;
    memcpy(msg.umad + UMAD_ADDR_GID, pkt->sgid.raw, sizeof(pkt->sgid.raw));
    memcpy(msg.umad + UMAD_HDR, mad, pkt->umad_len);
    if (io_full(fd, &msg, sizeof(msg), 1) != 0)
        return -1;
    log_mad("relayed an incoming", mad, &pkt->sgid, ++relayed_in, "");
    return 1;
}

/* One request of QEMU's: answered (it blocks for the answer), then acted on. */
static int request(int fd, struct mux_msg *msg)
{
    struct mux_msg resp = *msg;

    if (msg->hdr.msg_type != MUX_REQ)
        return 0;
    if (msg->hdr.op_code == MUX_OP_REG || msg->hdr.op_code == MUX_OP_UNREG) {
        fprintf(stderr, "madmux: %s gid %016llx:%016llx\n",
                msg->hdr.op_code == MUX_OP_REG ? "register" : "unregister",
                (unsigned long long)be64toh(msg->hdr.sgid.global.subnet_prefix),
                (unsigned long long)be64toh(msg->hdr.sgid.global.interface_id));
        gid_reg(&msg->hdr.sgid, msg->hdr.op_code == MUX_OP_REG);
    } else if (msg->hdr.op_code != MUX_OP_MAD) {
        return 0;
    }
    resp.hdr.msg_type = MUX_RESP;
    resp.hdr.err_code = MUX_ERR_OK;
    if (io_full(fd, &resp, sizeof(resp), 1) != 0)
        return -1;
    if (msg->hdr.op_code == MUX_OP_MAD)
        outgoing(msg);
    return 0;
}

static void serve(int fd)
{
    struct mux_msg msg;
    struct relay_pkt pkt;

    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = udp, .events = POLLIN}};

        if (poll(p, udp >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        /* QEMU's requests first: a relayed MAD written while QEMU waits for
         * the answer to its own request would be read as that answer */
        if (p[0].revents) {
            if (io_full(fd, &msg, sizeof(msg), 0) != 0 || request(fd, &msg) != 0)
                return;
            continue;
        }
        if (udp >= 0 && (p[1].revents & POLLIN)) {
            ssize_t n = recv(udp, &pkt, sizeof(pkt), 0);

            if (n > 0 && incoming(fd, &pkt, n) < 0)
                return;
        }
    }
}

static int relay_open(int argc, char **argv)
{
    struct sockaddr_in self = {.sin_family = AF_INET};
    int port = atoi(argv[2]);

    if (port <= 0 || port > 65535 || inet_pton(AF_INET, argv[3], &self.sin_addr) != 1)
        return -1;
    self.sin_port = htons((uint16_t)port);
    npeers = argc - 4;
    peers = calloc((size_t)npeers + 1, sizeof(*peers));
    if (peers == NULL)
        return -1;
    for (int i = 0; i < npeers; ++i) {
        peers[i].sin_family = AF_INET;
        peers[i].sin_port = self.sin_port;
        if (inet_pton(AF_INET, argv[4 + i], &peers[i].sin_addr) != 1)
            return -1;
    }
    udp = socket(AF_INET, SOCK_DGRAM, 0);
    if (udp < 0 || bind(udp, (struct sockaddr *)&self, sizeof(self)) != 0)
        return -1;
    fprintf(stderr, "madmux: relaying CM MADs over UDP %s:%d to %d peer(s)\n", argv[3], port,
            npeers);
    return 0;
}

int main(int argc, char **argv)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int lfd;

    if ((argc != 2 && argc < 5) || strlen(argv[1]) >= sizeof(addr.sun_path)) {
        fprintf(stderr, "usage: madmux SOCKET_PATH [PORT SELF_IP PEER_IP...]\n");
        return 2;
    }
    if (argc >= 5 && relay_open(argc, argv) != 0) {
        perror("madmux: cannot set up the UDP relay");
        return 1;
    }
    strcpy(addr.sun_path, argv[1]);
    unlink(argv[1]);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        listen(lfd, 4) != 0) {
        perror("madmux: cannot listen");
        return 1;
    }
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            perror("madmux: accept");
            return 1;
        }
        serve(fd);
        close(fd);
    }
}
