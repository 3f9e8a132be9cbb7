/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file side_channel.h
 * @brief The TCP side channel of the two-process UCX test programs
 *        (tests/ucx/ucp_tag_check.c, uct_conn_check.c): one server accepts
 *        one client, and they exchange fixed-size records.  Header only;
 *        errors are returned, each program reports them its own way.
 */
#ifndef PVRDMA_TEST_SIDE_CHANNEL_H
#define PVRDMA_TEST_SIDE_CHANNEL_H

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/** Send (@p out) or receive @p len bytes: 0, an errno, or -1 when the peer
 *  closed the connection. */
static inline int sc_xfer(int fd, void *buf, size_t len, int out)
{
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        n = out ? send(fd, (char *) buf + done, len - done, MSG_NOSIGNAL) :
                  recv(fd, (char *) buf + done, len - done, 0);
        if (n == 0) {
            return -1;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        done += (size_t) n;
    }
    return 0;
}

/** Listen on @p port and accept one connection: its fd, or -1 with
 *  *@p err set (and *@p what: the call that failed). */
static inline int sc_accept(int port, int *err, const char **what)
{
    struct sockaddr_in addr;
    int lfd, fd, one = 1;

    *what = "socket";
    lfd   = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) {
        *err = errno;
        return -1;
    }
    (void) setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&addr, 0, sizeof(addr));
    addr.sin_family      = AF_INET;
    addr.sin_port        = htons((uint16_t) port);
    addr.sin_addr.s_addr = INADDR_ANY;
    *what = "listen";
    if ((bind(lfd, (struct sockaddr *) &addr, sizeof(addr)) != 0) ||
        (listen(lfd, 1) != 0)) {
        *err = errno;
        close(lfd);
        return -1;
    }
    *what = "accept";
    fd    = accept(lfd, NULL, NULL);
    *err  = (fd < 0) ? errno : 0;
    close(lfd);
    return fd;
}

/** Connect to @p host:@p port: its fd, or -1 with *@p err (an errno, or
 *  EAI_* negated for a name that does not resolve).  The server may not
 *  listen yet (refused): retried once a second for 2 minutes; a host that
 *  does not answer at all (each try costs seconds) only 3 times, so a dead
 *  peer is reported, not waited for past the caller's timeout. */
static inline int sc_connect(const char *host, int port, int *err)
{
    struct addrinfo hints, *res, *ai;
    char service[16];
    int fd, rc, unreachable = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        *err = (rc < 0) ? rc : -rc;
        return -1;
    }
    *err = 0;
    for (int i = 0; (i < 120) && (unreachable < 3); ++i) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) {
                *err = errno;
                continue;
            }
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                *err = 0;
                return fd;
            }
            *err = errno;
            close(fd);
        }
        if (*err != ECONNREFUSED) {
            ++unreachable;
        }
        sleep(1);
    }
    freeaddrinfo(res);
    return -1;
}

#endif /* PVRDMA_TEST_SIDE_CHANNEL_H */
