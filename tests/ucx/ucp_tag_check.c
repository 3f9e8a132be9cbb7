/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ucp_tag_check.c
 * @brief UCP tag-matching check with data verification, for the "pvrdma"
 *        UCT transport (run with UCX_TLS=pvrdma and the transport preloaded).
 *
 *   server:  ucp_tag_check -p PORT [-m MAX] [-b N] [-t T1,T2,...] [-w SEC]
 *   client:  ucp_tag_check -p PORT [-m MAX] [-b N] [-t T1,T2,...] [-w SEC] HOST
 *   silent server:  ucp_tag_check -p PORT -S   (exchanges addresses, then
 *            never progresses UCP: a peer that does not answer, to check
 *            that the client fails with an error instead of hanging)
 *   -k (both sides): after the checks, wait in a receive for a message the
 *            peer never sends, printing "waiting (-k)" first: the bed kills
 *            one side, and the other (with -e) must end with UCP's "peer
 *            failure" error, found by UCP's keepalive (UCX_KEEPALIVE_INTERVAL)
 *            although it sends nothing itself
 *
 * The two processes exchange UCP worker addresses over a TCP socket, then:
 *
 * - ladder: for every size 0, 1, 2, ... up to MAX (default 16 MiB) the client
 *   sends a message, the server checks every byte and answers with a message
 *   of its own, and the client checks the answer;
 * - burst (-b N, default 64, -b 0 skips it): the client sends N messages at
 *   once, each with its own tag and buffer, with sizes around UCX's protocol
 *   thresholds (-t, default 8192,16384,262144, plus 0 and 1).  The server has
 *   posted only half of the receives before they arrive, so both the
 *   expected and the unexpected (eager and rendezvous) paths run, then
 *   answers all N at once into receives the client posted in shuffled order.
 *
 * Every byte of every message is a function of (test, message, direction,
 * offset) (test_pattern.h), so data of another message, another direction
 * or another offset never passes the check.  Both sides must be given the
 * same -m, -b and -t (checked at the address exchange).
 *
 * Output: "ok size N" per ladder size (client), "ok burst N messages, sizes
 * A..B, distinct tags" (both sides), "FAIL ..." lines naming the message
 * (size, or burst message k with its tag and size) and the first wrong
 * offset with the byte got and expected, and a last line "PASSED: ... data
 * verified both ways" or "FAILED: ..." (either side's failure fails both).
 *
 * Errors, one line on stderr each, so that a test can tell them apart:
 *   exit 2  "ucp_tag_check: UCP error: <what>: <ucs_status_string>": a UCP
 *           call or request failed, or the peer failed (with -e the
 *           endpoint uses UCP_ERR_HANDLING_MODE_PEER, so a connection the
 *           transport gives up on, e.g. a silent peer, ends here through the
 *           error handler; without it, through the failed request);
 *   exit 3  "ucp_tag_check: TCP: <what>: <reason>": the side channel;
 *   exit 4  bad or mismatched options, out of memory;
 *   exit 5  "ucp_tag_check: stalled: ...": nothing completed for -w seconds
 *           (default 300, 0 = wait for ever) and UCX reported no error, e.g.
 *           a lost message; over UCX's tcp transport a silent peer (-S)
 *           ends like this, as its kernel keeps the connection alive.
 * Exit 1: data wrong (FAILED), 0: PASSED.
 */
#define _GNU_SOURCE
#include <ucp/api/ucp.h>

#include "../common/side_channel.h"
#include "../common/test_pattern.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA          0x1234ull
#define TAG_REPLY         0x5678ull
#define TAG_NEVER         0x9abcull  /* -k: no one sends it */
/* burst message k has tag TAG_BURST_BASE + k, its reply TAG_BURST_REPLY + k:
 * far from the ladder's tags and from each other for any sane -b */
#define TAG_BURST_BASE    0xb0000000ull
#define TAG_BURST_REPLY   0xc0000000ull

#define MAX_THRESH        32
#define MAX_LADDER        128
#define HELLO_MAGIC       0x7563707467636b32ull /* "ucptgck2" */

enum {
    EXIT_DATA    = 1,
    EXIT_UCP     = 2,
    EXIT_TCP     = 3,
    EXIT_USAGE   = 4,
    EXIT_STALLED = 5
};

static ucp_worker_h worker;
static double stall_limit = 300; /* seconds; 0 = none */
static int closing;              /* all data checked: the peer may go away */

/* --- errors --------------------------------------------------------------- */

/* Leave without running library destructors: this may be called from inside
 * a UCX callback (the ep error handler), where UCX's own cleanup could block
 * on the very lock the callback runs under.  Flush first: the "ok" lines
 * already printed tell how far the test came. */
static void leave(int code) __attribute__((noreturn));
static void leave(int code)
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
static void ucp_die(ucs_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void ucp_die(ucs_status_t status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdie(EXIT_UCP, "UCP error", ucs_status_string(status), fmt, ap);
}

/* ... and "TCP" the side channel's, never to be taken for the transport's.
 * err 0 means the peer closed the connection. */
static void tcp_die(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void tcp_die(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdie(EXIT_TCP, "TCP", err ? strerror(err) : "connection closed by the peer",
         fmt, ap);
}

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A message lost without UCX noticing would otherwise spin here for ever.
 * Worded so that it is never taken for a UCP error (nor a timeout UCX
 * reported): it means the transport did not report what went wrong. */
static void check_stall(double since, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check_stall(double since, const char *fmt, ...)
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

static void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)arg; (void)ep;
    if (closing) {
        return; /* the peer tore down first: all data was through */
    }
    ucp_die(status, "peer failure");
}

/* --- TCP side channel ----------------------------------------------------- */

static void tcp_send(int fd, const void *buf, size_t len, const char *what)
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
static void tcp_recv_progress(int fd, void *buf, size_t len, const char *what)
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

static void tcp_token(int fd, char token, const char *what)
{
    tcp_send(fd, &token, 1, what);
}

static void tcp_expect(int fd, char token, const char *what)
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

static int tcp_connect(const char *host, int port)
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

static int tcp_accept(int port)
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
static void *post_send(ucp_ep_h ep, const void *buf, size_t len, ucp_tag_t tag,
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
static void *post_recv(void *buf, size_t len, ucp_tag_t tag, const char *what,
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
static int req_done(void **req, int is_recv, ucp_tag_recv_info_t *info,
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

static void wait_one(void **req, int is_recv, ucp_tag_recv_info_t *info,
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
static int check_msg(const unsigned char *buf, size_t len, size_t got,
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

/* --- sizes ---------------------------------------------------------------- */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t*)a, y = *(const size_t*)b;

    return (x > y) - (x < y);
}

/* Sizes around each threshold T: T-65/T-64 and T-9/T-8 straddle 64- and
 * 8-byte boundaries below it and T-1/T/T+1 the threshold itself, because
 * UCX compares the payload plus a header of a few to a few dozen bytes with
 * its thresholds (max_short, max_bcopy, segment size, RNDV_THRESH), so the
 * real switch lies a little below the configured number; T+64 is past it.
 * Sorted, without duplicates. */
static size_t burst_sizes(const size_t *thr, size_t nthr, size_t max_size,
                          size_t *out)
{
    static const long long delta[] = { -65, -64, -9, -8, -1, 0, 1, 64 };
    size_t n = 0, i, j, k;
    long long s;

    for (i = 0; i < nthr; ++i) {
        for (j = 0; j < sizeof(delta) / sizeof(delta[0]); ++j) {
            s = (long long)thr[i] + delta[j];
            if ((s < 0) || ((size_t)s > max_size)) {
                continue;
            }
            for (k = 0; (k < n) && (out[k] != (size_t)s); ++k) {
            }
            if (k == n) {
                out[n++] = (size_t)s;
            }
        }
    }
    qsort(out, n, sizeof(*out), cmp_size);
    return n;
}

/* --- the burst ------------------------------------------------------------ */

typedef struct {
    unsigned char       *buf;   /* request (client: sent; server: received,
                                   then the reply it sends) */
    unsigned char       *rbuf;  /* client: the reply received */
    size_t              size;
    void                *sreq;
    void                *rreq;
    ucp_tag_recv_info_t info;
} burst_msg_t;

/* Progress until every send (or receive) request of the n messages is done */
static void wait_all(burst_msg_t *m, size_t n, int is_recv, const char *what,
                     ucp_tag_t tag_base)
{
    double since = now_sec();
    size_t k, left;
    void **req;

    do {
        ucp_worker_progress(worker);
        for (k = 0, left = 0; k < n; ++k) {
            req = is_recv ? &m[k].rreq : &m[k].sreq;
            if (*req == NULL) {
                continue;
            }
            if (req_done(req, is_recv, &m[k].info, what, k, tag_base + k,
                         m[k].size)) {
                since = now_sec(); /* a stall, not a slow burst, is an error */
            } else {
                ++left;
            }
        }
        check_stall(since, "%s: %zu messages not complete", what, left);
    } while (left > 0);
}

static int check_burst(burst_msg_t *m, size_t n, int is_client, uint64_t test)
{
    const char *dir = is_client ? "reply" : "request";
    ucp_tag_t tag;
    char prefix[96];
    int ok = 1;
    size_t k;

    for (k = 0; k < n; ++k) {
        tag = (is_client ? TAG_BURST_REPLY : TAG_BURST_BASE) + k;
        snprintf(prefix, sizeof(prefix), "burst message %zu (tag 0x%llx, "
                 "size %zu)", k, (unsigned long long)tag, m[k].size);
        if (m[k].info.sender_tag != tag) {
            printf("FAIL %s: %s arrived with tag 0x%llx\n", prefix, dir,
                   (unsigned long long)m[k].info.sender_tag);
            ok = 0;
            continue;
        }
        ok &= check_msg(is_client ? m[k].rbuf : m[k].buf, m[k].size,
                        m[k].info.length, tp_key(test, k, is_client), dir,
                        prefix);
    }
    return ok;
}

static void *burst_alloc(size_t size)
{
    void *p = malloc(size ? size : 1);

    if (p == NULL) {
        fprintf(stderr, "ucp_tag_check: out of memory for the burst\n");
        leave(EXIT_USAGE);
    }
    return p;
}

/*
 * Client: post all N reply receives (shuffled order), wait for "go", send
 *         all N requests at once, say "sent", wait for the sends, then the
 *         replies, check them.
 * Server: post the odd-numbered half of the receives (descending tags: the
 *         reverse of the send order), say "go"; after "sent", wait until
 *         each even-numbered request has arrived unexpected (probe), only
 *         then post its receive; check all, answer all N at once.
 * Sequencing by TCP guarantees an expected and an unexpected half; sizes
 * cycle over the list, so with N >= 2 x its length (the default 64 and 29
 * sizes) and an odd length every size goes both ways.
 */
static int burst(ucp_ep_h ep, int fd, int is_client, size_t n,
                 const size_t *sizes, size_t nsizes)
{
    uint64_t test = tp_name("ucp burst");
    burst_msg_t *m = calloc(n, sizeof(*m));
    size_t *order = calloc(n, sizeof(*order));
    size_t k, j, t, smin = SIZE_MAX, smax = 0;
    ucp_tag_recv_info_t pinfo;
    double since;
    int ok;

    if ((m == NULL) || (order == NULL)) {
        fprintf(stderr, "ucp_tag_check: out of memory for the burst\n");
        leave(EXIT_USAGE);
    }
    for (k = 0; k < n; ++k) {
        m[k].size = sizes[k % nsizes];
        smin      = (m[k].size < smin) ? m[k].size : smin;
        smax      = (m[k].size > smax) ? m[k].size : smax;
        /* own buffer per message: a transport writing one message's data
         * into another's buffer shows */
        m[k].buf  = burst_alloc(m[k].size);
        m[k].rbuf = is_client ? burst_alloc(m[k].size) : NULL;
        order[k]  = k;
    }

    if (is_client) {
        /* replies come back in send order; receives posted in another
         * (fixed, pseudo-random) order make the matching search for each */
        for (k = n; k > 1; --k) {
            j            = tp_mix(test + k) % k;
            t            = order[k - 1];
            order[k - 1] = order[j];
            order[j]     = t;
        }
        for (j = 0; j < n; ++j) {
            k = order[j];
            /* cleared: a receive that writes nothing must not pass */
            memset(m[k].rbuf, 0, m[k].size);
            m[k].rreq = post_recv(m[k].rbuf, m[k].size, TAG_BURST_REPLY + k,
                                  "burst message", k);
        }
        for (k = 0; k < n; ++k) {
            tp_fill(m[k].buf, m[k].size, tp_key(test, k, 0));
        }
        tcp_expect(fd, 'G', "waiting for the server's go for the burst");
        for (k = 0; k < n; ++k) {
            m[k].sreq = post_send(ep, m[k].buf, m[k].size, TAG_BURST_BASE + k,
                                  "burst message", k);
        }
        /* before waiting for the sends: a rendezvous send to a receive not
         * posted yet completes only after the server has posted it */
        tcp_token(fd, 'S', "telling the server the burst is sent");
        wait_all(m, n, 0, "burst message", TAG_BURST_BASE);
        wait_all(m, n, 1, "burst message", TAG_BURST_REPLY);
        ok = check_burst(m, n, 1, test);
    } else {
        for (k = 0; k < n; ++k) {
            memset(m[k].buf, 0, m[k].size);
        }
        for (k = n; k-- > 0; ) {
            if (k & 1) {
                m[k].rreq = post_recv(m[k].buf, m[k].size, TAG_BURST_BASE + k,
                                      "burst message", k);
            }
        }
        tcp_token(fd, 'G', "telling the client to send the burst");
        tcp_expect(fd, 'S', "waiting for the client's burst");
        /* every even-numbered message must sit in the unexpected queue
         * before its receive is posted, or that path would not be tested */
        since = now_sec();
        for (k = 0; k < n; k += 2) {
            while (ucp_tag_probe_nb(worker, TAG_BURST_BASE + k, UINT64_MAX, 0,
                                    &pinfo) == NULL) {
                ucp_worker_progress(worker);
                check_stall(since, "burst message %zu (tag 0x%llx) never "
                            "arrived", k,
                            (unsigned long long)(TAG_BURST_BASE + k));
            }
            since = now_sec();
            m[k].rreq = post_recv(m[k].buf, m[k].size, TAG_BURST_BASE + k,
                                  "burst message", k);
        }
        wait_all(m, n, 1, "burst message", TAG_BURST_BASE);
        ok = check_burst(m, n, 0, test);
        /* all N answers in flight at once; the client posted their
         * receives before it sent "S" */
        for (k = 0; k < n; ++k) {
            tp_fill(m[k].buf, m[k].size, tp_key(test, k, 1));
            m[k].sreq = post_send(ep, m[k].buf, m[k].size, TAG_BURST_REPLY + k,
                                  "burst reply", k);
        }
        wait_all(m, n, 0, "burst reply", TAG_BURST_REPLY);
    }

    if (ok) {
        printf("ok burst %zu messages, sizes %zu..%zu, distinct tags\n", n,
               smin, smax);
    }
    for (k = 0; k < n; ++k) {
        free(m[k].buf);
        free(m[k].rbuf);
    }
    free(order);
    free(m);
    return ok;
}

/* UCP's own protocol thresholds for tag sends on @p ep, as ucp_ep_print_info
 * prints them ("tag_send: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..
 * (inf)"): the numbers between the protocols, at most @p max of them, into
 * @p out.  Returns how many (0 when UCP printed none). */
static size_t ep_thresholds(ucp_ep_h ep, size_t *out, size_t max)
{
    char *text = NULL, *line, *save, *q, *end;
    size_t len = 0, n = 0, k;
    unsigned long long v;
    FILE *f = open_memstream(&text, &len);

    if (f == NULL) {
        return 0;
    }
    ucp_ep_print_info(ep, f);
    fclose(f);
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, "tag_send") == NULL) {
            continue;
        }
        for (q = strstr(line, ".."); q != NULL; q = strstr(q + 2, "..")) {
            v = strtoull(q + 2, &end, 10);
            if ((end == q + 2) || (strncmp(end, "..", 2) != 0) || (v < 2)) {
                continue;
            }
            for (k = 0; (k < n) && (out[k] != v); ++k) {
            }
            if ((k == n) && (n < max)) {
                out[n++] = v;
            }
        }
    }
    free(text);
    return n;
}

/* Wait until every operation this worker started is complete at the peer. */
static void flush_worker(void)
{
    ucp_request_param_t param = { .op_attr_mask = 0 };
    double since             = now_sec();
    ucs_status_t status;
    void *req;

    req = ucp_worker_flush_nbx(worker, &param);
    if (UCS_PTR_IS_ERR(req)) {
        ucp_die(UCS_PTR_STATUS(req), "flushing the worker");
    }
    if (req == NULL) {
        return;
    }
    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
        check_stall(since, "flushing the worker");
    }
    ucp_request_free(req);
    if (status != UCS_OK) {
        ucp_die(status, "flushing the worker");
    }
}

/* --- main ----------------------------------------------------------------- */

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [-p port] [-m maxsize] [-b burst_messages] "
            "[-t thresh,thresh,...] [-w stall_seconds] [-e] [-S] [-k] [server]\n", argv0);
    exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
    size_t max_size = 16u << 20, sizes[MAX_LADDER], nsizes = 0, s, i, recvd;
    size_t thr[MAX_THRESH + 2], nthr = 2, bsizes[(MAX_THRESH + 2) * 8];
    size_t nbsizes = 0, nburst = 64;
    const char *thresholds = "8192,16384,262144";
    uint64_t ladder = tp_name("ucp ladder"), hello[6], peer[6], plan;
    ucp_worker_attr_t wattr = {0};
    ucp_worker_params_t wparams = {0};
    ucp_ep_params_t eparams = {0};
    ucp_params_t params = {0};
    ucp_tag_recv_info_t info;
    ucp_context_h context;
    ucp_config_t *config;
    const char *host = NULL;
    char prefix[32], *end, *p;
    void *peer_addr, *req;
    ucp_ep_h ep;
    unsigned char *buf;
    ucs_status_t status;
    int port = 13500, opt, fd, failed = 0, peer_failed, silent = 0, err;
    int peer_errors = 0, keep_waiting = 0;
    unsigned long long v;
    double since;

    while ((opt = getopt(argc, argv, "p:m:b:t:w:Sek")) != -1) {
        switch (opt) {
        case 'S': silent = 1; break;
        case 'k': keep_waiting = 1; break;
        case 'e': peer_errors = 1; break;
        case 'p': port = atoi(optarg); break;
        case 'm': max_size = strtoull(optarg, NULL, 0); break;
        case 'b':
            /* tags TAG_BURST_BASE + k must not reach TAG_BURST_REPLY */
            nburst = strtoull(optarg, NULL, 0);
            if (nburst > 1000000) {
                fprintf(stderr, "ucp_tag_check: -b at most 1000000\n");
                usage(argv[0]);
            }
            break;
        case 't': thresholds = optarg; break;
        case 'w': stall_limit = strtod(optarg, NULL); break;
        default:
            usage(argv[0]);
        }
    }
    if (optind < argc) {
        host = argv[optind];
    }

    /* 0 and 1 always: the empty message and the smallest one */
    thr[0] = 0;
    thr[1] = 1;
    for (p = (char*)thresholds; (strcmp(thresholds, "auto") != 0) && (*p != '\0');
         p = end + (*end == ',')) {
        v = strtoull(p, &end, 0);
        if ((end == p) || ((*end != ',') && (*end != '\0')) ||
            (nthr == MAX_THRESH + 2)) {
            fprintf(stderr, "ucp_tag_check: -t wants at most %d numbers "
                    "separated by commas, not '%s'\n", MAX_THRESH, thresholds);
            usage(argv[0]);
        }
        thr[nthr++] = v;
    }
    nbsizes = burst_sizes(thr, nthr, max_size, bsizes);

    /* 0, 1, 2, 3, ... powers of two and their neighbours up to max_size */
    sizes[nsizes++] = 0;
    for (s = 1; (s <= max_size) && (nsizes < MAX_LADDER - 8); s *= 2) {
        if ((s > 2) && (s - 1 != sizes[nsizes - 1])) {
            sizes[nsizes++] = s - 1;
        }
        sizes[nsizes++] = s;
        if ((s > 2) && (s + 1 <= max_size) && (s < 65536)) {
            sizes[nsizes++] = s + 1;
        }
    }
    if (sizes[nsizes - 1] != max_size) {
        sizes[nsizes++] = max_size;
    }

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        ucp_die(status, "ucp_config_read");
    }
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_TAG;
    status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        ucp_die(status, "ucp_init");
    }

    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(context, &wparams, &worker);
    if (status != UCS_OK) {
        ucp_die(status, "ucp_worker_create");
    }

    wattr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
    status = ucp_worker_query(worker, &wattr);
    if (status != UCS_OK) {
        ucp_die(status, "ucp_worker_query");
    }

    /* The plan travels with the address: two sides with different -m/-b/-t
     * would wait for messages the other never sends.  A silent server has
     * no plan; the client then goes on to find it does not answer. */
    plan = tp_key(tp_name("ucp plan"), max_size, nburst);
    for (i = 0; i < nbsizes; ++i) {
        plan = tp_key(plan, bsizes[i], i);
    }
    hello[0] = HELLO_MAGIC;
    hello[1] = wattr.address_length;
    hello[2] = max_size;
    hello[3] = nburst;
    hello[4] = plan;
    hello[5] = silent;
    fd = host ? tcp_connect(host, port) : tcp_accept(port);
    if ((err = sc_xfer(fd, hello, sizeof(hello), 1)) ||
        (err = sc_xfer(fd, wattr.address, wattr.address_length, 1)) ||
        (err = sc_xfer(fd, peer, sizeof(peer), 0))) {
        tcp_die((err < 0) ? 0 : err, "address exchange");
    }
    if ((peer[0] != HELLO_MAGIC) || (peer[1] == 0) || (peer[1] > (1u << 20))) {
        fprintf(stderr, "ucp_tag_check: TCP: address exchange: the peer is "
                "not a ucp_tag_check of this version\n");
        leave(EXIT_TCP);
    }
    peer_addr = malloc(peer[1]);
    if (peer_addr == NULL) {
        fprintf(stderr, "ucp_tag_check: out of memory for the peer address\n");
        leave(EXIT_USAGE);
    }
    if ((err = sc_xfer(fd, peer_addr, peer[1], 0))) {
        tcp_die((err < 0) ? 0 : err, "address exchange");
    }
    if (!silent && !peer[5] && ((peer[2] != max_size) ||
                                (peer[3] != nburst) || (peer[4] != plan))) {
        fprintf(stderr, "ucp_tag_check: the peer was given other options: "
                "-m %llu -b %llu (here -m %zu -b %zu), or other -t\n",
                (unsigned long long)peer[2], (unsigned long long)peer[3],
                max_size, nburst);
        leave(EXIT_USAGE);
    }

    if (silent) {
        sleep(120);
        return 0;
    }

    /* -e, PEER mode: a failed connection or peer reaches ep_err_cb (one "UCP
     * error" line) instead of leaving a receive waiting for ever.  Not the
     * default: in PEER mode UCX 1.13 selects lanes differently (RDMA
     * rendezvous only over memory domains that can invalidate), and the
     * data checks must see the lanes an MPI job gets. */
    eparams.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    eparams.address         = peer_addr;
    if (peer_errors) {
        eparams.field_mask     |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
        eparams.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
        eparams.err_handler.cb  = ep_err_cb;
        eparams.err_handler.arg = NULL;
    }
    status = ucp_ep_create(worker, &eparams, &ep);
    if (status != UCS_OK) {
        ucp_die(status, "ucp_ep_create");
    }

    buf = malloc(max_size ? max_size : 1);
    if (buf == NULL) {
        fprintf(stderr, "ucp_tag_check: out of memory for %zu bytes\n",
                max_size);
        leave(EXIT_USAGE);
    }

    for (i = 0; i < nsizes; ++i) {
        s = sizes[i];
        snprintf(prefix, sizeof(prefix), "size %zu", s);
        if (host != NULL) {
            tp_fill(buf, s, tp_key(ladder, i, 0));
            req = post_send(ep, buf, s, TAG_DATA, "size", s);
            wait_one(&req, 0, NULL, "size", s, TAG_DATA, s);
            /* cleared: a receive that writes nothing must not pass */
            memset(buf, 0, s);
            req = post_recv(buf, s, TAG_REPLY, "size", s);
            wait_one(&req, 1, &info, "size", s, TAG_REPLY, s);
            recvd = info.length;
            if (check_msg(buf, s, recvd, tp_key(ladder, i, 1), "reply",
                          prefix)) {
                printf("ok size %zu\n", s);
            } else {
                failed = 1;
            }
        } else {
            memset(buf, 0, s);
            req = post_recv(buf, s, TAG_DATA, "size", s);
            wait_one(&req, 1, &info, "size", s, TAG_DATA, s);
            recvd = info.length;
            if (!check_msg(buf, s, recvd, tp_key(ladder, i, 0), "request",
                           prefix)) {
                failed = 1;
            }
            tp_fill(buf, s, tp_key(ladder, i, 1));
            req = post_send(ep, buf, s, TAG_REPLY, "size", s);
            wait_one(&req, 0, NULL, "size", s, TAG_REPLY, s);
        }
        fflush(stdout);
    }

    /* -t auto: the burst goes around the thresholds UCP chose for this
     * endpoint (the client reads them and tells the server) */
    if ((nburst > 0) && !strcmp(thresholds, "auto")) {
        uint64_t count = 0, vals[MAX_THRESH];

        if (host != NULL) {
            count = ep_thresholds(ep, thr + 2, MAX_THRESH);
            for (i = 0; i < count; ++i) {
                vals[i] = thr[2 + i];
            }
            tcp_send(fd, &count, sizeof(count), "sending the thresholds");
            tcp_send(fd, vals, count * sizeof(vals[0]), "sending the thresholds");
        } else {
            tcp_recv_progress(fd, &count, sizeof(count), "receiving the thresholds");
            if (count > MAX_THRESH) {
                fprintf(stderr, "ucp_tag_check: TCP: peer sent %llu thresholds\n",
                        (unsigned long long)count);
                leave(EXIT_TCP);
            }
            tcp_recv_progress(fd, vals, count * sizeof(vals[0]), "receiving the thresholds");
            for (i = 0; i < count; ++i) {
                thr[2 + i] = vals[i];
            }
        }
        if (count == 0) {
            fprintf(stderr, "ucp_tag_check: UCP error: ucp_ep_print_info shows no "
                    "tag_send thresholds: %s\n", ucs_status_string(UCS_ERR_NO_ELEM));
            leave(EXIT_UCP);
        }
        nthr    = 2 + count;
        nbsizes = burst_sizes(thr, nthr, max_size, bsizes);
        printf("ucp tag_send thresholds of this endpoint:");
        for (i = 2; i < nthr; ++i) {
            printf(" %zu", thr[i]);
        }
        printf("\n");
    }
    if ((nburst > 0) && !burst(ep, fd, host != NULL, nburst, bsizes, nbsizes)) {
        failed = 1;
    }
    fflush(stdout);

    /* -k: a rank that only waits to receive, while the bed kills its peer:
     * with -e, UCP's keepalive must find the dead peer (ep_err_cb, exit 2);
     * else this ends after -w seconds as a stall (exit 5) */
    if (keep_waiting) {
        printf("waiting (-k) for a message the peer never sends\n");
        fflush(stdout);
        req = post_recv(buf, 1, TAG_NEVER, "never", 0);
        wait_one(&req, 1, &info, "never", 0, TAG_NEVER, 1);
    }

    /* both sides done before tearing down; either side's failure fails
     * both, so neither log says PASSED for data the other found wrong.
     * From here on the peer may be tearing down its UCP endpoint (its TCP
     * verdict can arrive after that): not a failure any more. */
    /* Teardown in the order an MPI job's finalize has: everything this
     * side sent is complete at the peer while the peer still progresses
     * (it waits for our verdict), both close their endpoint, and neither
     * destroys its worker (whose connections the other's close still
     * flushes to) before both closes are done.  A teardown race between
     * two closing peers is a transport matter of its own, not what this
     * program checks. */
    flush_worker();
    closing  = 1;
    hello[0] = failed;
    tcp_send(fd, hello, sizeof(hello[0]), "exchanging the verdict");
    tcp_recv_progress(fd, peer, sizeof(peer[0]), "exchanging the verdict");
    peer_failed = (peer[0] != 0);

    since = now_sec();
    req   = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
    if (UCS_PTR_IS_PTR(req)) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(worker);
            check_stall(since, "closing the endpoint");
        }
        ucp_request_free(req);
    }
    tcp_send(fd, hello, sizeof(hello[0]), "closing");
    tcp_recv_progress(fd, peer + 1, sizeof(peer[1]), "closing");
    close(fd);
    free(buf);
    free(peer_addr);
    ucp_worker_release_address(worker, wattr.address);
    ucp_worker_destroy(worker);
    ucp_cleanup(context);

    if (peer_failed && !failed) {
        printf("FAIL the peer found wrong data (see its output)\n");
    }
    failed |= peer_failed;
    if (nburst > 0) {
        printf("%s: %zu sizes from 0 to %zu bytes and a burst of %zu messages "
               "in flight, data verified both ways\n",
               failed ? "FAILED" : "PASSED", nsizes, max_size, nburst);
    } else {
        printf("%s: %zu sizes from 0 to %zu bytes, data verified both ways\n",
               failed ? "FAILED" : "PASSED", nsizes, max_size);
    }
    return failed ? EXIT_DATA : 0;
}
