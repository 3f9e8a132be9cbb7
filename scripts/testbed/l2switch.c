/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file l2switch.c
 * @brief The test bed's learning Ethernet switch: QEMU guests' frames over
 *        UDP on 127.0.0.1, each unicast frame to the one guest it is for.
 *
 * Why: with QEMU's multicast socket netdev every guest's QEMU reads every
 * frame of the segment, its own included.  At 4 guests x 8 ranks the host
 * dropped 72% of those deliveries (RcvbufErrors: the QEMUs, busy with their
 * TCG vCPUs, could not drain their sockets) and rxe spent the run
 * retransmitting.  Through this switch a QEMU reads only the frames for its
 * guest (and broadcasts), a quarter of the load at 4 guests.
 *
 * Usage: l2switch PORT GUEST-PORT...
 *   Guest k runs -netdev dgram with local port GUEST-PORT[k] and remote port
 *   PORT (both 127.0.0.1).  Frames from any other source are dropped.
 *   SIGTERM/SIGINT: prints its counters to stderr and exits.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_GUESTS 64
#define MAX_MACS   1024
#define BUF_BYTES  (32 << 20)   /* the kernel caps it at rmem_max/wmem_max */

struct mac_entry {
    unsigned char mac[6];
    int guest;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void) sig;
    stop = 1;
}

static int parse_port(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    return (*s && !*end && v > 0 && v < 65536) ? (int) v : -1;
}

/* The guest a frame's destination MAC was last seen from, -1 if unknown. */
static int mac_lookup(const struct mac_entry *macs, int n, const unsigned char *mac)
{
    for (int i = 0; i < n; ++i) {
        if (!memcmp(macs[i].mac, mac, 6)) {
            return macs[i].guest;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct sockaddr_in self = {0}, guest[MAX_GUESTS];
    struct mac_entry macs[MAX_MACS];
    unsigned long long rx = 0, unicast = 0, flooded = 0, foreign = 0, send_err = 0;
    int nguests = argc - 2, nmacs = 0, fd, buf = BUF_BYTES, sw;
    static unsigned char frame[65536];
    struct sigaction sa = {0};

    if (argc < 3 || nguests > MAX_GUESTS || (sw = parse_port(argv[1])) < 0) {
        fprintf(stderr, "usage: l2switch PORT GUEST-PORT... (at most %d guests)\n", MAX_GUESTS);
        return 2;
    }
    for (int i = 0; i < nguests; ++i) {
        int p = parse_port(argv[i + 2]);

        if (p < 0) {
            fprintf(stderr, "l2switch: bad guest port '%s'\n", argv[i + 2]);
            return 2;
        }
        memset(&guest[i], 0, sizeof(guest[i]));
        guest[i].sin_family      = AF_INET;
        guest[i].sin_port        = htons((uint16_t) p);
        guest[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("l2switch: socket");
        return 1;
    }
    /* the switch carries every guest's traffic: the largest buffers allowed */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    self.sin_family      = AF_INET;
    self.sin_port        = htons((uint16_t) sw);
    self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *) &self, sizeof(self)) < 0) {
        fprintf(stderr, "l2switch: cannot bind 127.0.0.1:%d: %s\n", sw, strerror(errno));
        return 1;
    }
    sa.sa_handler = on_signal;   /* no SA_RESTART: recvfrom returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    while (!stop) {
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(fd, frame, sizeof(frame), 0, (struct sockaddr *) &from, &fl);
        int src = -1, dst;

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("l2switch: recvfrom");
            return 1;
        }
        ++rx;
        for (int i = 0; i < nguests; ++i) {
            if (guest[i].sin_port == from.sin_port &&
                guest[i].sin_addr.s_addr == from.sin_addr.s_addr) {
                src = i;
            }
        }
        if (src < 0 || n < 14) {
            ++foreign;    /* not one of this bed's guests, or not a frame */
            continue;
        }
        /* learn where the source MAC lives (multicast sources are bogus) */
        if (!(frame[6] & 1)) {
            int i;

            for (i = 0; i < nmacs && memcmp(macs[i].mac, frame + 6, 6); ++i) {
            }
            if (i < nmacs) {
                macs[i].guest = src;
            } else if (nmacs < MAX_MACS) {
                memcpy(macs[nmacs].mac, frame + 6, 6);
                macs[nmacs++].guest = src;
            }
        }
        dst = (frame[0] & 1) ? -1 : mac_lookup(macs, nmacs, frame);
        if (dst >= 0) {
            ++unicast;
            if (dst != src &&
                sendto(fd, frame, (size_t) n, 0, (struct sockaddr *) &guest[dst],
                       sizeof(guest[dst])) < 0) {
                ++send_err;
            }
            continue;
        }
        ++flooded;    /* broadcast, multicast or not yet learnt: every other guest */
        for (int i = 0; i < nguests; ++i) {
            if (i != src && sendto(fd, frame, (size_t) n, 0, (struct sockaddr *) &guest[i],
                                   sizeof(guest[i])) < 0) {
                ++send_err;
            }
        }
    }
    fprintf(stderr, "l2switch: %llu frames: %llu unicast, %llu flooded, %llu foreign, "
            "%llu send errors\n", rx, unicast, flooded, foreign, send_err);
    return 0;
}
