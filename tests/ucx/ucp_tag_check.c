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
 *
 * This file holds the options and the test flow; ucp_check_util.c the
 * error exits, the TCP side channel and the UCP request helpers, and
 * ucp_check_burst.c the burst, its sizes and the endpoint's thresholds.
 */
#define _GNU_SOURCE
#include <ucp/api/ucp.h>

#include "ucp_check_burst.h"
#include "ucp_check_util.h"
#include "../common/side_channel.h"
#include "../common/test_pattern.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_DATA          0x1234ull
#define TAG_REPLY         0x5678ull
#define TAG_NEVER         0x9abcull  /* -k: no one sends it */

#define MAX_THRESH        32
#define MAX_LADDER        128
#define HELLO_MAGIC       0x7563707467636b32ull /* "ucptgck2" */

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
