/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file osc_lat.c
 * @brief One-sided MPI latency between ranks 0 and 1: what an 8-byte
 *        MPI_Put + MPI_Win_flush, MPI_Get + flush, MPI_Fetch_and_op (int64
 *        MPI_SUM) + flush and MPI_Compare_and_swap + flush cost, whichever
 *        osc component serves the window (transport-agnostic benchmark).
 *
 * Usage: osc_lat [--iters N]   (default 200; the first 10 are not timed)
 * Output (rank 0), one line per operation:
 *   osc_lat <op> 8 B: median_us <median> avg_us <mean> (<n> iterations)
 * Rank 1 only waits in MPI_Barrier meanwhile (passive target: osc pt2pt
 * needs its progress, RDMA components do not).  Every result is checked:
 * the fetched counter must rise by one per fetch-and-op, every get must
 * read what the put before it wrote, every CAS must succeed, so a broken
 * path cannot report fast numbers.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 10

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}

/** Print one operation's line; @p us holds @p n samples (sorted here). */
static void report(const char *op, double *us, int n)
{
    double sum = 0;

    for (int i = 0; i < n; ++i) {
        sum += us[i];
    }
    qsort(us, (size_t) n, sizeof(*us), cmp_double);
    printf("osc_lat %s 8 B: median_us %.2f avg_us %.2f (%d iterations)\n", op, us[n / 2],
           sum / n, n);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rank, nprocs, iters = 200, bad = 0, any;
    int64_t *base, one = 1, old, expect = 0;
    double *us;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        }
    }
    if (nprocs < 2 || iters < 1) {
        if (rank == 0) {
            fprintf(stderr, "osc_lat: needs 2 ranks and --iters >= 1\n");
        }
        MPI_Finalize();
        return 1;
    }
    us = malloc((size_t) (iters + WARMUP) * sizeof(*us));
    MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(base, 0, 4 * sizeof(int64_t));
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        /* put + flush, each checked by a get of the same word */
        for (int i = 0; i < iters + WARMUP; ++i) {
            int64_t v = 1000 + i, got = -1;
            double t0 = MPI_Wtime();

            MPI_Put(&v, 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
            us[i] = (MPI_Wtime() - t0) * 1e6;
            MPI_Get(&got, 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
            bad += got != v;
        }
        report("put+flush", us + WARMUP, iters);
        for (int i = 0; i < iters + WARMUP; ++i) {
            int64_t got = -1;
            double t0 = MPI_Wtime();

            MPI_Get(&got, 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
            us[i] = (MPI_Wtime() - t0) * 1e6;
            bad += got != 1000 + iters + WARMUP - 1;
        }
        report("get+flush", us + WARMUP, iters);
        for (int i = 0; i < iters + WARMUP; ++i) {
            double t0 = MPI_Wtime();

            MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, win);
            MPI_Win_flush(1, win);
            us[i] = (MPI_Wtime() - t0) * 1e6;
            bad += old != expect++;
        }
        report("fetch_and_op+flush", us + WARMUP, iters);
        for (int i = 0; i < iters + WARMUP; ++i) {
            int64_t next = expect + 1, got = -1;
            double t0 = MPI_Wtime();

            MPI_Compare_and_swap(&next, &expect, &got, MPI_INT64_T, 1, 0, win);
            MPI_Win_flush(1, win);
            us[i] = (MPI_Wtime() - t0) * 1e6;
            bad += got != expect;
            expect = next;
        }
        report("compare_and_swap+flush", us + WARMUP, iters);
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("osc_lat: %s (%d wrong results)\n", any ? "FAILED" : "ok", any);
    }
    MPI_Win_free(&win);
    free(us);
    MPI_Finalize();
    return any ? 1 : 0;
}
