/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ucp_check_burst.c
 * @brief ucp_tag_check's burst: the message sizes around UCX's protocol
 *        thresholds, N messages in flight at once with their own tags and
 *        buffers (half expected, half unexpected at the server), the
 *        tag_send thresholds UCP chose for an endpoint (-t auto), and the
 *        worker flush before teardown.
 */
#define _GNU_SOURCE
#include "ucp_check_burst.h"
#include "ucp_check_util.h"

#include "../common/test_pattern.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
size_t burst_sizes(const size_t *thr, size_t nthr, size_t max_size,
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
int burst(ucp_ep_h ep, int fd, int is_client, size_t n,
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

/* --- the endpoint ------------------------------------------------------- */

/* UCP's own protocol thresholds for tag sends on @p ep, as ucp_ep_print_info
 * prints them ("tag_send: 0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..
 * (inf)"): the numbers between the protocols, at most @p max of them, into
 * @p out.  Returns how many (0 when UCP printed none). */
size_t ep_thresholds(ucp_ep_h ep, size_t *out, size_t max)
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
void flush_worker(void)
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
