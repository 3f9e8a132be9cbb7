/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/*
 * madmux: the test bed's stand-in for QEMU's rdmacm-mux (contrib/rdmacm-mux,
 * not packaged by Debian).
 *
 * QEMU's pvrdma device refuses to start without a `mad-chardev`, and each time
 * the guest driver binds a GID it sends a REG request (UNREG on unbind) over
 * that chardev and blocks until a response arrives. The real multiplexer also
 * relays RDMA-CM MADs between the host's umad device and the guests; the bed
 * does not need that (tests and perftest set up connections out of band), so
 * this program only acknowledges REG/UNREG and drops anything else (each
 * dropped MAD is logged: class, attribute, sender).
 *
 * Wire format (QEMU 7.2 hw/rdma/rdma_backend.c, fixed-size messages in host
 * byte order): a header {msg_type, op_code, sgid, err_code}, umad_len, then an
 * ib_user_mad header (64 bytes) and a 256-byte MAD buffer; 360 bytes in all.
 *
 * Usage: madmux SOCKET_PATH   (listens there; QEMU connects with
 *        -chardev socket,path=SOCKET_PATH,id=mad). Serves connections one
 *        after the other until killed.
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

/* An outgoing MAD the bed cannot relay: said in the log (class, attribute),
 * so that a transport that waits for RDMA-CM on the tier (openib's rdmacm
 * connection scheme) shows why it never connects. The MAD follows the
 * 64-byte ib_user_mad header: byte 1 management class, bytes 16-17 the
 * attribute (big-endian). */
static void log_dropped_mad(const struct mux_msg *msg, unsigned long *dropped)
{
    const unsigned char *mad = msg->umad + 64;
    unsigned attr = ((unsigned)mad[16] << 8) | mad[17];
    const char *name = "";

    ++*dropped;
    if (mad[1] == 0x07) { /* the CM class */
        switch (attr) {
        case 0x0010: name = " (CM ConnectRequest)"; break;
        case 0x0013: name = " (CM ConnectReply)"; break;
        case 0x0014: name = " (CM ReadyToUse)"; break;
        case 0x0015: name = " (CM DisconnectRequest)"; break;
        case 0x0012: name = " (CM ConnectReject)"; break;
        default: name = " (CM)"; break;
        }
    }
    fprintf(stderr, "madmux: dropped an outgoing MAD, class 0x%02x attribute "
            "0x%04x%s from gid %016llx:%016llx: the bed relays no MADs, so "
            "RDMA-CM cannot connect (%lu dropped)\n", mad[1], attr, name,
            (unsigned long long)be64toh(msg->hdr.sgid.global.subnet_prefix),
            (unsigned long long)be64toh(msg->hdr.sgid.global.interface_id),
            *dropped);
}

static void serve(int fd)
{
    struct mux_msg msg;
    unsigned long dropped = 0;

    while (io_full(fd, &msg, sizeof(msg), 0) == 0) {
        if (msg.hdr.msg_type == MUX_REQ && msg.hdr.op_code == MUX_OP_MAD) {
            log_dropped_mad(&msg, &dropped);
            continue;
        }
        if (msg.hdr.msg_type != MUX_REQ ||
            (msg.hdr.op_code != MUX_OP_REG && msg.hdr.op_code != MUX_OP_UNREG))
            continue;
        fprintf(stderr, "madmux: %s gid %016llx:%016llx\n",
                msg.hdr.op_code == MUX_OP_REG ? "register" : "unregister",
                (unsigned long long)be64toh(msg.hdr.sgid.global.subnet_prefix),
                (unsigned long long)be64toh(msg.hdr.sgid.global.interface_id));
        msg.hdr.msg_type = MUX_RESP;
        msg.hdr.err_code = MUX_ERR_OK;
        if (io_full(fd, &msg, sizeof(msg), 1) != 0)
            return;
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int lfd;

    if (argc != 2 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
        fprintf(stderr, "usage: madmux SOCKET_PATH\n");
        return 2;
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
