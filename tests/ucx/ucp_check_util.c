/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ucp_check_util.c
 * @brief ucp_tag_check's helpers: the error and exit helpers (one line on
 *        stderr, then the exit code a test tells apart), the TCP side
 *        channel (tests/common/side_channel.h, progressing UCP while it
 *        waits) and the UCP tag send/receive request helpers with the byte
 *        check of a message.
 */
#define _GNU_SOURCE
#include "ucp_check_util.h"

#include "../common/side_channel.h"
#include "../common/test_pattern.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

ucp_worker_h worker;
double stall_limit = 300; /* seconds; 0 = none */
int closing;              /* all data checked: the peer may go away */

/* --- errors --------------------------------------------------------------- */

/* Leave without running library destructors: this may be called from inside
 * a UCX callback (the ep error handler), where UCX's own cleanup could block
 * on the very lock the callback runs under.  Flush first: the "ok" lines
 * already printed tell how far the test came. */
void leave(int code)
{
    fflush(NULL);
    _exit(code);
}

/* One line on stderr, "ucp_tag_check: KIND: WHAT: WHY", then exit @p code */
static void vdie(int code, const char *kind, const char *why, const char *fmt,
                 va_list ap) __attribute__((format(printf, 4, 0), noreturn));
static void vdie(int code, const char *kind, const char *why, const char *fmt,
                 va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "ucp_tag_check: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, ": %s\n", why);
    leave(code);
}

/* One line a test can match: "UCP error" is the transport's verdict */
void ucp_die(ucs_status_t status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdie(EXIT_UCP, "UCP error", ucs_status_string(status), fmt, ap);
}

/* ... and "TCP" the side channel's, never to be taken for the transport's.
 * err 0 means the peer closed the connection. */
void tcp_die(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdie(EXIT_TCP, "TCP", err ? strerror(err) : "connection closed by the peer",
         fmt, ap);
}

double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A message lost without UCX noticing would otherwise spin here for ever.
 * Worded so that it is never taken for a UCP error (nor a timeout UCX
 * reported): it means the transport did not report what went wrong. */
void check_stall(double since, const char *fmt, ...)
{
    va_list ap;

    if ((stall_limit > 0) && (now_sec() - since > stall_limit)) {
        fflush(stdout);
        fprintf(stderr, "ucp_tag_check: stalled: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, ": nothing completed for %.0f s and UCX reported no "
                "error\n", stall_limit);
        leave(EXIT_STALLED);
    }
}

void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)arg; (void)ep;
    if (closing) {
        return; /* the peer tore down first: all data was through */
    }
    ucp_die(status, "peer failure");
}

/* --- TCP side channel ----------------------------------------------------- */

void tcp_send(int fd, const void *buf, size_t len, const char *what)
{
    int err = sc_xfer(fd, (void*)buf, len, 1);

    if (err != 0) {
        tcp_die((err < 0) ? 0 : err, "%s", what);
    }
}

/* Receive while progressing UCP: a side blocked in recv() would stop
 * answering UCP (rendezvous ATS, credits, keepalive) and could hold up the
 * very peer it waits for; progressing also lets a peer failure reach the ep
 * error handler. */
void tcp_recv_progress(int fd, void *buf, size_t len, const char *what)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    double since = now_sec();
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        if (poll(&pfd, 1, 0) > 0) {
            n = recv(fd, (char*)buf + done, len - done, MSG_DONTWAIT);
            if (n == 0) {
                tcp_die(0, "%s", what);
            }
            if (n < 0) {
                if ((errno != EINTR) && (errno != EAGAIN)) {
                    tcp_die(errno, "%s", what);
                }
                continue;
            }
            done += n;
            continue;
        }
        ucp_worker_progress(worker);
        check_stall(since, "%s", what);
    }
}

void tcp_token(int fd, char token, const char *what)
{
    tcp_send(fd, &token, 1, what);
}

void tcp_expect(int fd, char token, const char *what)
{
    char got;

    tcp_recv_progress(fd, &got, 1, what);
    if (got != token) {
        fflush(stdout);
        fprintf(stderr, "ucp_tag_check: TCP: %s: got '%c', expected '%c'\n",
                what, got, token);
        leave(EXIT_TCP);
    }
}

int tcp_connect(const char *host, int port)
{
    int err, fd = sc_connect(host, port, &err);

    if (fd < 0) {
        if (err < 0) {
            fprintf(stderr, "ucp_tag_check: TCP: resolving %s: %s\n", host,
                    gai_strerror(err));
            leave(EXIT_TCP);
        }
        tcp_die(err, "connecting to %s:%d", host, port);
    }
    return fd;
}

int tcp_accept(int port)
{
    const char *what;
    int err, fd = sc_accept(port, &err, &what);

    if (fd < 0) {
        tcp_die(err, "%s on port %d", what, port);
    }
    return fd;
}

/* --- UCP helpers ---------------------------------------------------------- */

static void send_cb(void *req, ucs_status_t status, void *arg)
{
    (void)req; (void)status; (void)arg;
}

static void recv_cb(void *req, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *arg)
{
    (void)req; (void)status; (void)info; (void)arg;
}

/* Post a send; NULL when it completed in place.  An error in posting is
 * fatal right here (what, a: which message). */
void *post_send(ucp_ep_h ep, const void *buf, size_t len, ucp_tag_t tag,
                const char *what, size_t a)
{
    ucp_request_param_t param = {0};
    void *req;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
    param.cb.send      = send_cb;
    req = ucp_tag_send_nbx(ep, buf, len, tag, &param);
    if (UCS_PTR_IS_ERR(req)) {
        ucp_die(UCS_PTR_STATUS(req), "tag_send %s %zu (tag 0x%llx, %zu bytes)",
                what, a, (unsigned long long)tag, len);
    }
    return req;
}

/* Post a receive; always returns a request.  Why NO_IMM_CMPL: a receive
 * matching an eager message already there completes in place, and UCX 1.13
 * declares UCP_OP_ATTR_FIELD_RECV_INFO but never fills it, so the length
 * and tag of such a message would be unknown; from a request,
 * ucp_tag_recv_request_test reports them. */
void *post_recv(void *buf, size_t len, ucp_tag_t tag, const char *what,
                size_t a)
{
    ucp_request_param_t param = {0};
    void *req;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                         UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv      = recv_cb;
    req = ucp_tag_recv_nbx(worker, buf, len, tag, UINT64_MAX, &param);
    if (UCS_PTR_IS_ERR(req)) {
        ucp_die(UCS_PTR_STATUS(req), "tag_recv %s %zu (tag 0x%llx, %zu bytes)",
                what, a, (unsigned long long)tag, len);
    }
    return req;
}

/* If @p *req finished: check its status (an error status is fatal, so a
 * failed operation never leaves anyone waiting), fill @p info for a
 * receive, free it, and return 1. */
int req_done(void **req, int is_recv, ucp_tag_recv_info_t *info,
             const char *what, size_t a, ucp_tag_t tag, size_t len)
{
    ucs_status_t status;

    if (*req == NULL) {
        return 1;
    }
    status = ucp_request_check_status(*req);
    if (status == UCS_INPROGRESS) {
        return 0;
    }
    if ((status == UCS_OK) && is_recv) {
        status = ucp_tag_recv_request_test(*req, info);
    }
    ucp_request_free(*req);
    *req = NULL;
    if (status != UCS_OK) {
        ucp_die(status, "%s %s %zu (tag 0x%llx, %zu bytes)",
                is_recv ? "tag_recv" : "tag_send", what, a,
                (unsigned long long)tag, len);
    }
    return 1;
}

void wait_one(void **req, int is_recv, ucp_tag_recv_info_t *info,
              const char *what, size_t a, ucp_tag_t tag, size_t len)
{
    double since = now_sec();

    while (!req_done(req, is_recv, info, what, a, tag, len)) {
        ucp_worker_progress(worker);
        check_stall(since, "%s %s %zu", is_recv ? "tag_recv" : "tag_send",
                    what, a);
    }
}

/* Checks @p len bytes of @p buf (received length @p got) against @p key.
 * Returns 1 when right; else prints "FAIL <prefix>: <dir> ..." with the
 * first wrong offset and the byte got and expected. */
int check_msg(const unsigned char *buf, size_t len, size_t got,
              uint64_t key, const char *dir, const char *prefix)
{
    long long off;

    if (got != len) {
        printf("FAIL %s: %s has length %zu, expected %zu\n", prefix, dir, got,
               len);
        return 0;
    }
    off = tp_check(buf, len, key);
    if (off >= 0) {
        printf("FAIL %s: %s corrupted at offset %lld: got 0x%02x, expected "
               "0x%02x\n", prefix, dir, off, buf[off],
               tp_byte(key, (size_t)off));
        return 0;
    }
    return 1;
}
