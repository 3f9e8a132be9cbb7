/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/* mpi_check reconnect: the cost of a connection the budget closed (issue 36).
 *
 * Rank 0 talks to ranks 1..n-1 in turn, ROUNDS rounds of PINGS 8-byte round
 * trips each, every byte checked.  Run with a connection budget of 1
 * (btl_pvrdma_max_connections 1), each switch of peer makes rank 0 close its
 * one connection by agreement and reconnect to the next peer, so the first
 * round trip of a round pays a close and a reconnect and the others do not.
 * Rank 0 prints both medians: their difference is the reconnect's cost. */
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

enum { ROUNDS = 24, PINGS = 10, LEN = 8 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void test_reconnect(void)
{
    unsigned char sbuf[LEN], rbuf[LEN];
    double first[ROUNDS], steady[ROUNDS * (PINGS - 1)];
    int nfirst = 0, nsteady = 0;
    MPI_Status st;

    if (nprocs < 3) {
        fail("reconnect: needs at least 3 ranks (rank 0 switches between peers)");
        return;
    }
    for (int r = 0; r < ROUNDS; ++r) {
        int peer = 1 + r % (nprocs - 1);

        if (rank != 0 && rank != peer) {
            continue;
        }
        for (int i = 0; i < PINGS; ++i) {
            uint64_t msg = (uint64_t) (r * PINGS + i);
            int other = rank == 0 ? peer : 0;
            double t0 = MPI_Wtime();

            tp_fill(sbuf, LEN, msg_key("reconnect", msg, rank, other));
            if (rank == 0) {
                MPI_Send(sbuf, LEN, MPI_BYTE, peer, i, MPI_COMM_WORLD);
                MPI_Recv(rbuf, LEN, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(rbuf, LEN, MPI_BYTE, 0, i, MPI_COMM_WORLD, &st);
                MPI_Send(sbuf, LEN, MPI_BYTE, 0, i, MPI_COMM_WORLD);
            }
            if (check_count(&st, LEN, "reconnect") ||
                check(rbuf, LEN, msg_key("reconnect", msg, other, rank), "reconnect", other)) {
                return;
            }
            if (rank == 0 && i == 0) {
                first[nfirst++] = MPI_Wtime() - t0;
            } else if (rank == 0) {
                steady[nsteady++] = MPI_Wtime() - t0;
            }
        }
    }
    if (rank == 0) {
        printf("mpi_check: reconnect: first round trip after a switch of peer %.1f us "
               "(median of %d), later round trips %.1f us (median of %d)\n",
               1e6 * median(first, nfirst), nfirst, 1e6 * median(steady, nsteady), nsteady);
        fflush(stdout);
    }
}
