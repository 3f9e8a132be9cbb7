/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pingpong.c
 * @brief MPI ping-pong between ranks 0 and 1: half round-trip latency and
 *        bandwidth per message size (transport-agnostic benchmark).
 *
 * Usage: pingpong [--min BYTES] [--max BYTES] [--iters N] [--bw-iters N] [--bidir]
 *                 [--window N] [--window-bytes BYTES] [--span-cmd CMD] [--idle S]
 * Output (rank 0), one line per size:
 *   size <bytes> lat_us <median half round trip> bw_MBps <MB/s> avg_us <mean>
 * (the median, like perftest's "typical", so one descheduled iteration on a
 * busy host does not dominate; the mean is printed too).
 * Bandwidth: windows of 16 (--window) non-blocking sends, each followed by
 * a 1-byte ack; the first window is not timed (it registers the buffers).
 * --window-bytes caps a window at that many bytes (at least one message),
 * so 16 MiB messages do not need 256 MiB buffers and minutes per window on
 * a slow bed.  --bidir: both ranks send their windows at once; bw_MBps is
 * per direction.  Messages of 1 MiB and more get iters / 10 round trips
 * (at least 5, or iters if that is smaller).
 * Every byte of every message is checked (test_pattern.h: a function of
 * size, message number, direction and offset; filling, clearing and checking
 * happen outside the timed spans), so a broken transport cannot report fast
 * numbers and stale data from an earlier message never passes.
 * --span-cmd CMD: rank 0 runs "CMD start" (system(3)) right before each
 * size's timed latency loop and "CMD stop lat SIZE" right after it, and the
 * same around the timed bandwidth windows ("CMD stop bw SIZE"): the bed's
 * meter (scripts/testbed/pvrdma/meter) counts the device's doorbells of
 * exactly those messages.  A CMD that fails fails the run.
 * --idle S: after the sizes, rank 0 waits in MPI_Recv for a message rank 1
 * sends S seconds after both passed a barrier (span "CMD stop idle S"
 * around it) and prints "idle_wait_s <seconds waited>": what a rank that
 * waits for a message costs the host.
 */
#include <unistd.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/span_cmd.h"
#include "../common/test_pattern.h"

#define MAX_WINDOW 16

static int window = MAX_WINDOW;   /* messages per bandwidth window (this size) */
static const char *span_cmd;      /* --span-cmd, or NULL */
static int idle_s;                /* --idle, 0: none */

/* rank 0: "CMD start" or "CMD stop WHAT SIZE"; 1 when it failed */
static int run_span_cmd(int rank, const char *what, size_t len)
{
    char line[1024];
    int ret;

    if ((span_cmd == NULL) || (rank != 0)) {
        return 0;
    }
    ret = span_cmd_run(span_cmd, what, len, line, sizeof(line));
    if (ret != 0) {
        fprintf(stderr, "pingpong: '%s' failed (status %d)\n", line, ret);
        return 1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static uint64_t test_id;   /* tp_name("pingpong") */

/* The key of message @p msg of phase @p phase (0 latency, 1 bandwidth) of
 * size @p len, sent by rank @p from. */
static uint64_t msg_key(size_t len, int phase, uint64_t msg, int from)
{
    return tp_key(test_id ^ tp_mix(len), msg, (uint64_t) phase * 2 + (uint64_t) from);
}

/* Checks one received message; clears it afterwards so the next message
 * into the same buffer must really arrive.  Returns 1 when a byte is wrong
 * (and says which, once). */
static int check_msg(unsigned char *buf, size_t len, uint64_t key, const char *what,
                     uint64_t msg)
{
    long long bad = tp_check(buf, len, key);

    if (bad >= 0) {
        fprintf(stderr, "# ERROR: %s: %zu-byte message %llu: byte %lld is 0x%02x, expected 0x%02x\n",
                what, len, (unsigned long long) msg, bad, buf[bad], tp_byte(key, (size_t) bad));
    }
    memset(buf, 0, len);
    return bad >= 0;
}

/* One bandwidth window (round @p round): rank 0 sends window messages of len
 * bytes at once, rank 1 receives them and acks with one byte; with @p bidir
 * both ranks send window messages to each other at the same time (both
 * directions busy, as in a halo exchange) and the Waitall of each is its
 * end.  Every message of every round has its own pattern, filled before and
 * checked after the timed part; *elapsed gets the time of the communication
 * only.  Returns 1 on corruption. */
static int window_round(int rank, int peer, size_t len, unsigned char *sbuf,
                        unsigned char *rbuf, MPI_Request *req, uint64_t round,
                        int bidir, double *elapsed)
{
    int sends = bidir || rank == 0, recvs = bidir || rank == 1, n = 0, bad = 0;
    double t0;

    for (int w = 0; sends && w < window; ++w) {
        tp_fill(sbuf + w * len, len, msg_key(len, 1, round * (uint64_t) MAX_WINDOW + w, rank));
    }
    t0 = MPI_Wtime();
    for (int w = 0; recvs && w < window; ++w) {
        MPI_Irecv(rbuf + w * len, (int) len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[n++]);
    }
    for (int w = 0; sends && w < window; ++w) {
        MPI_Isend(sbuf + w * len, (int) len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[n++]);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    if (!bidir) {
        unsigned char ack = 0;

        if (rank == 0) {
            MPI_Recv(&ack, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(&ack, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
        }
    }
    *elapsed += MPI_Wtime() - t0;
    for (int w = 0; recvs && w < window; ++w) {
        bad |= check_msg(rbuf + w * len, len, msg_key(len, 1, round * (uint64_t) MAX_WINDOW + w, peer),
                         bidir ? "bidirectional bandwidth" : "bandwidth", round * (uint64_t) MAX_WINDOW + w);
    }
    return bad;
}

int main(int argc, char **argv)
{
    size_t min = 8, max = 4u << 20;
    int iters = 200, bw_iters = 20, rank, nprocs, bad = 0;
    unsigned char *sbuf, *rbuf;
    MPI_Request req[2 * MAX_WINDOW];
    int bidir = 0, max_window = MAX_WINDOW;
    size_t window_bytes = 0, span;    /* window_bytes 0: no cap */
    double *rtt;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--bidir")) {
            bidir = 1;
            --i;    /* takes no value */
        } else if (i + 1 >= argc) {
            break;
        } else if (!strcmp(argv[i], "--min")) {
            min = strtoull(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "--max")) {
            max = strtoull(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "--iters")) {
            iters = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--bw-iters")) {
            bw_iters = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--window")) {
            max_window = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--idle")) {
            idle_s = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--span-cmd")) {
            span_cmd = argv[i + 1];
        } else if (!strcmp(argv[i], "--window-bytes")) {
            window_bytes = strtoull(argv[i + 1], NULL, 0);
        } else {
            if (rank == 0) {
                fprintf(stderr, "pingpong: unknown option '%s'\n", argv[i]);
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (max_window < 1 || max_window > MAX_WINDOW || iters < 1 || bw_iters < 1) {
        if (rank == 0) {
            fprintf(stderr, "pingpong: --window must be 1-%d, --iters and --bw-iters >= 1\n",
                    MAX_WINDOW);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (nprocs < 2) {
        fprintf(stderr, "pingpong needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rtt = malloc(sizeof(double) * (iters > 5 ? iters : 5));
    /* a window holds at most max_window messages and, with --window-bytes,
     * at most that many bytes or one message */
    span = max * (size_t) max_window;
    if (window_bytes && span > (window_bytes > max ? window_bytes : max)) {
        span = window_bytes > max ? window_bytes : max;
    }
    sbuf = malloc(span > 0 ? span : 1);
    rbuf = malloc(span > 0 ? span : 1);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "pingpong: cannot allocate 2 x %zu bytes\n", span);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(rbuf, 0, span);
    test_id = tp_name("pingpong");
    if (rank == 0) {
        printf("# pingpong: %d iterations (latency), %d x %d (bandwidth%s)\n", iters, bw_iters,
               max_window, bidir ? ", both directions at once, MB/s per direction" : "");
    }
    for (size_t len = min; len <= max && rank < 2; len = len ? len * 2 : 1) {
        int floor5 = iters < 5 ? iters : 5;
        int n = len >= (1u << 20) ? (iters / 10 > floor5 ? iters / 10 : floor5) : iters;
        int nbw = len >= (1u << 20) ? (bw_iters / 4 > 2 ? bw_iters / 4 : 2) : bw_iters;
        double t_bw = 0, t_sum = 0, lat, avg, bw, t1;
        int peer = 1 - rank;
        uint64_t msg = 0;    /* message number within this size (latency) */

        window = max_window;
        if (window_bytes && len && (size_t) window * len > window_bytes) {
            window = window_bytes / len > 0 ? (int) (window_bytes / len) : 1;
        }

        /* warm-up (connection set-up, registrations): checked too */
        for (int i = 0; i < 2; ++i, ++msg) {
            tp_fill(sbuf, len, msg_key(len, 0, msg, rank));
            if (rank == 0) {
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
            bad |= check_msg(rbuf, len, msg_key(len, 0, msg, peer), "warm-up", msg);
        }
        /* each round trip: both ranks send their own message (filled before
         * the timed part), both check what they received after it */
        bad |= run_span_cmd(rank, NULL, len);
        for (int i = 0; i < n; ++i, ++msg) {
            tp_fill(sbuf, len, msg_key(len, 0, msg, rank));
            t1 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            }
            rtt[i] = MPI_Wtime() - t1;
            t_sum += rtt[i];
            bad |= check_msg(rbuf, len, msg_key(len, 0, msg, peer), "latency", msg);
        }
        bad |= run_span_cmd(rank, "lat", len);
        avg = t_sum / n / 2 * 1e6;
        qsort(rtt, n, sizeof(double), cmp_double);
        lat = rtt[n / 2] / 2 * 1e6;

        /* one untimed window first: it touches (registers) the window's
         * buffers, which the latency loop did not, so the timed windows
         * measure the steady state, as ib_write_bw does */
        bad |= window_round(rank, peer, len, sbuf, rbuf, req, 0, bidir, &t_bw);
        t_bw = 0;
        bad |= run_span_cmd(rank, NULL, len);
        for (int i = 0; i < nbw; ++i) {
            bad |= window_round(rank, peer, len, sbuf, rbuf, req, (uint64_t) i + 1, bidir,
                                &t_bw);
        }
        bad |= run_span_cmd(rank, "bw", len);
        bw = (double) len * window * nbw / t_bw / 1e6;
        if (rank == 0) {
            printf("size %zu lat_us %.2f bw_MBps %.3f avg_us %.2f window %d\n", len, lat, bw, avg,
                   window);
            fflush(stdout);
        }
    }
    if (idle_s > 0 && rank < 2) {
        unsigned char one = 0;
        double t0;

        bad |= run_span_cmd(rank, NULL, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            t0 = MPI_Wtime();
            MPI_Recv(&one, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("idle_wait_s %.3f\n", MPI_Wtime() - t0);
            bad |= one != 0x5a;
        } else {
            sleep((unsigned) idle_s);
            one = 0x5a;
            MPI_Send(&one, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
        bad |= run_span_cmd(rank, "idle", (size_t) idle_s);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && bad) {
        printf("# ERROR: data corruption detected\n");
    }
    free(rtt);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return bad;
}
