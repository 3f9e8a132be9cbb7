/**
 * @file pingpong.c
 * @brief MPI ping-pong between ranks 0 and 1: half round-trip latency and
 *        bandwidth per message size (transport-agnostic benchmark).
 *
 * Usage: pingpong [--min BYTES] [--max BYTES] [--iters N] [--bw-iters N]
 * Output (rank 0), one line per size:
 *   size <bytes> lat_us <median half round trip> bw_MBps <MB/s> avg_us <mean>
 * (the median, like perftest's "typical", so one descheduled iteration on a
 * busy host does not dominate; the mean is printed too).
 * Bandwidth: windows of 16 non-blocking sends, each followed by a 1-byte
 * ack; the first window is not timed (it registers the buffers).
 * Every received message is checked (first and last byte), so a broken
 * transport cannot report fast numbers.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* One bandwidth window: rank 0 sends WINDOW messages of len bytes at once,
 * rank 1 receives them and acks with one byte.  Rank 1 clears the first and
 * last byte of every receive buffer before and checks them after, so stale
 * data from an earlier window cannot pass.  Returns 1 on corruption. */
static int window_round(int rank, int peer, size_t len, unsigned char *sbuf,
                        unsigned char *rbuf, MPI_Request *req)
{
    int bad = 0;

    for (int w = 0; w < WINDOW; ++w) {
        if (rank == 0) {
            MPI_Isend(sbuf + w * len, (int) len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[w]);
        } else {
            if (len > 0) {
                rbuf[w * len] = rbuf[w * len + len - 1] = 0;
            }
            MPI_Irecv(rbuf + w * len, (int) len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[w]);
        }
    }
    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
    if (rank == 0) {
        MPI_Recv(rbuf, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 0;
    }
    MPI_Send(sbuf, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
    for (int w = 0; w < WINDOW && len > 0; ++w) {
        if (rbuf[w * len] != 0x5a || rbuf[w * len + len - 1] != 0x5a) {
            bad = 1;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    size_t min = 8, max = 4u << 20;
    int iters = 200, bw_iters = 20, rank, nprocs, bad = 0;
    unsigned char *sbuf, *rbuf;
    MPI_Request req[WINDOW];
    double *rtt;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min")) {
            min = strtoull(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "--max")) {
            max = strtoull(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "--iters")) {
            iters = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--bw-iters")) {
            bw_iters = atoi(argv[i + 1]);
        }
    }
    if (nprocs < 2) {
        fprintf(stderr, "pingpong needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rtt = malloc(sizeof(double) * (iters > 5 ? iters : 5));
    sbuf = malloc(max * WINDOW > 0 ? max * WINDOW : 1);
    rbuf = malloc(max * WINDOW > 0 ? max * WINDOW : 1);
    memset(sbuf, 0x5a, max * WINDOW);
    if (rank == 0) {
        printf("# pingpong: %d iterations (latency), %d x %d (bandwidth)\n", iters, bw_iters,
               WINDOW);
    }
    for (size_t len = min; len <= max && rank < 2; len = len ? len * 2 : 1) {
        int n = len >= (1u << 20) ? (iters / 10 > 5 ? iters / 10 : 5) : iters;
        int nbw = len >= (1u << 20) ? (bw_iters / 4 > 2 ? bw_iters / 4 : 2) : bw_iters;
        double t0, t1, lat, avg, bw;
        int peer = 1 - rank;

        /* warm-up (connection set-up, registrations) */
        for (int i = 0; i < 2; ++i) {
            if (rank == 0) {
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        t0 = MPI_Wtime();
        for (int i = 0; i < n; ++i) {
            t1 = MPI_Wtime();
            if (rank == 0) {
                sbuf[0] = (unsigned char) i;
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(rbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            }
            if (len > 0 && rank == 0 &&
                (rbuf[0] != (unsigned char) i || (len > 1 && rbuf[len - 1] != 0x5a))) {
                bad = 1;
            }
            rtt[i] = MPI_Wtime() - t1;
        }
        avg = (MPI_Wtime() - t0) / n / 2 * 1e6;
        qsort(rtt, n, sizeof(double), cmp_double);
        lat = rtt[n / 2] / 2 * 1e6;

        sbuf[0] = 0x5a; /* the latency loop numbered its messages there */
        /* one untimed window first: it touches (registers) the window's
         * buffers, which the latency loop did not, so the timed windows
         * measure the steady state, as ib_write_bw does */
        bad |= window_round(rank, peer, len, sbuf, rbuf, req);
        t0 = MPI_Wtime();
        for (int i = 0; i < nbw; ++i) {
            bad |= window_round(rank, peer, len, sbuf, rbuf, req);
        }
        bw = (double) len * WINDOW * nbw / (MPI_Wtime() - t0) / 1e6;
        if (rank == 0) {
            printf("size %zu lat_us %.2f bw_MBps %.3f avg_us %.2f\n", len, lat, bw, avg);
            fflush(stdout);
        }
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
