/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_p2p.c
 * @brief mpi_check's point-to-point tests: pairs, non-blocking, same host, flood, all pairs at once (see mpi_check.c for the program and its options).
 */
#include "mpi_check.h"

/** Blocking exchange between pairs: @p partner_of gives the partner. */
static void run_pairs(int (*partner_of)(int), const char *name)
{
    int nsizes, partner = partner_of(rank);
    size_t *sizes = make_sizes(&nsizes);
    unsigned char *sbuf = malloc(max_size + 1), *rbuf = malloc(max_size + 1);
    MPI_Status st;

    if (partner < 0 || partner == rank) {
        goto out; /* odd rank count: this rank sits out */
    }
    for (int i = 0; i < nsizes; ++i) {
        size_t len = sizes[i];
        int lower = rank < partner;

        memset(rbuf, 0xee, len + 1);
        tp_fill(sbuf, len, msg_key(name, (uint64_t) i, rank, partner));
        if (lower) {
            MPI_Send(sbuf, (int) len, MPI_BYTE, partner, i, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int) len, MPI_BYTE, partner, i, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(rbuf, (int) len, MPI_BYTE, partner, i, MPI_COMM_WORLD, &st);
            MPI_Send(sbuf, (int) len, MPI_BYTE, partner, i, MPI_COMM_WORLD);
        }
        if (check_count(&st, len, name) ||
            check(rbuf, len, msg_key(name, (uint64_t) i, partner, rank), name, partner)) {
            break;
        }
        if (rbuf[len] != 0xee) {
            fail("%s: rank %d: %zu-byte receive wrote past its end", name, rank, len);
            break;
        }
    }
out:
    free(sbuf);
    free(rbuf);
    free(sizes);
}

int partner_xor(int r)
{
    int p = r ^ 1;
    return p < nprocs ? p : -1;
}

/** Rank r and r + nprocs/2: with --map-by node on N hosts and 2N ranks,
 *  both ranks of a pair share a host. */
static int partner_half(int r)
{
    int half = nprocs / 2;

    if (nprocs % 2) {
        return -1;
    }
    return r < half ? r + half : r - half;
}

void test_p2p(void)
{
    run_pairs(partner_xor, "p2p");
}

void test_same_host(void)
{
    run_pairs(partner_half, "same_host");
}

/** Non-blocking: every rank exchanges with every other rank at once. */
void test_nb(void)
{
    int nsizes;
    size_t *sizes = make_sizes(&nsizes);
    MPI_Request *req = malloc(2 * nprocs * sizeof(*req));
    MPI_Status *st = malloc(2 * nprocs * sizeof(*st));
    unsigned char **sb = calloc(nprocs, sizeof(*sb)), **rb = calloc(nprocs, sizeof(*rb));
    size_t limit = max_size > (4u << 20) ? (4u << 20) : max_size;

    for (int p = 0; p < nprocs; ++p) {
        sb[p] = malloc(limit + 1);
        rb[p] = malloc(limit + 1);
    }
    for (int i = 0; i < nsizes && !why[0]; ++i) {
        size_t len = sizes[i];
        int n = 0;

        if (len > limit) {
            continue;
        }
        for (int p = 0; p < nprocs; ++p) {
            if (p == rank) {
                continue;
            }
            memset(rb[p], 0xee, len);
            MPI_Irecv(rb[p], (int) len, MPI_BYTE, p, 100 + i, MPI_COMM_WORLD, &req[n++]);
        }
        for (int p = 0; p < nprocs; ++p) {
            if (p == rank) {
                continue;
            }
            tp_fill(sb[p], len, msg_key("nb", (uint64_t) i, rank, p));
            MPI_Isend(sb[p], (int) len, MPI_BYTE, p, 100 + i, MPI_COMM_WORLD, &req[n++]);
        }
        MPI_Waitall(n, req, st);
        n = 0;
        for (int p = 0; p < nprocs; ++p) {
            if (p == rank) {
                continue;
            }
            if (check_count(&st[n++], len, "nb") ||
                check(rb[p], len, msg_key("nb", (uint64_t) i, p, rank), "nb", p)) {
                break;
            }
        }
    }
    for (int p = 0; p < nprocs; ++p) {
        free(sb[p]);
        free(rb[p]);
    }
    free(sb);
    free(rb);
    free(req);
    free(st);
    free(sizes);
}

/** Thousands of in-flight Isends to one peer, posted before the peer
 *  posts any receive: eager flow control must hold (no RNR, no loss). */
void test_flood(void)
{
    int partner = partner_xor(rank);
    int n = flood_count;
    const size_t small = 64, big = 3000;
    MPI_Request *req;
    unsigned char *buf;

    if (partner < 0) {
        MPI_Barrier(MPI_COMM_WORLD); /* odd rank count: match the pairs' barrier */
        return;
    }
    req = malloc(n * sizeof(*req));
    buf = malloc((size_t) n * big);
    if (rank < partner) {
        for (int i = 0; i < n; ++i) {
            size_t len = (i % 8 == 7) ? big : small;
            tp_fill(buf + (size_t) i * big, len, msg_key("flood", (uint64_t) i, rank, partner));
            MPI_Isend(buf + (size_t) i * big, (int) len, MPI_BYTE, partner, i, MPI_COMM_WORLD,
                      &req[i]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        /* let the sender run far ahead first */
        MPI_Barrier(MPI_COMM_WORLD);
        memset(buf, 0, (size_t) n * big);
        /* receive in reverse tag order: all must be buffered somewhere */
        for (int i = n - 1; i >= 0; --i) {
            size_t len = (i % 8 == 7) ? big : small;
            MPI_Irecv(buf + (size_t) i * big, (int) len, MPI_BYTE, partner, i, MPI_COMM_WORLD,
                      &req[i]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; ++i) {
            size_t len = (i % 8 == 7) ? big : small;
            if (check(buf + (size_t) i * big, len, msg_key("flood", (uint64_t) i, partner, rank),
                      "flood", partner)) {
                break;
            }
        }
    }
    free(req);
    free(buf);
}

/** Every rank exchanges with every other rank at once, a few sizes only
 *  (an eager one, one just above the BTL's 8 KiB eager limit, one 64 KiB
 *  rendezvous): the "many peers" test, cheap enough for 32 ranks on
 *  emulated guests.  Each rank connects to all others. */
static void exchange_all(const char *name, const size_t *sizes, size_t nsizes)
{
    MPI_Request *req = malloc(2 * nprocs * sizeof(*req));
    MPI_Status *st = malloc(2 * nprocs * sizeof(*st));
    unsigned char *sb = malloc(nprocs * sizes[nsizes - 1]);
    unsigned char *rb = malloc(nprocs * sizes[nsizes - 1]);

    for (size_t i = 0; i < nsizes && !why[0]; ++i) {
        size_t len = sizes[i];
        int n = 0;

        if (len > max_size) {
            break;
        }
        for (int p = 0; p < nprocs; ++p) {
            if (p != rank) {
                memset(rb + p * len, 0xee, len);
                MPI_Irecv(rb + p * len, (int) len, MPI_BYTE, p, 200 + (int) i, MPI_COMM_WORLD,
                          &req[n++]);
            }
        }
        for (int p = 0; p < nprocs; ++p) {
            if (p != rank) {
                tp_fill(sb + p * len, len, msg_key(name, i, rank, p));
                MPI_Isend(sb + p * len, (int) len, MPI_BYTE, p, 200 + (int) i, MPI_COMM_WORLD,
                          &req[n++]);
            }
        }
        MPI_Waitall(n, req, st);
        n = 0;
        for (int p = 0; p < nprocs; ++p) {
            if (p == rank) {
                continue;
            }
            if (check_count(&st[n++], len, name) ||
                check(rb + p * len, len, msg_key(name, i, p, rank), name, p)) {
                break;
            }
        }
    }
    free(sb);
    free(rb);
    free(req);
    free(st);
}

/** Sizes ascend; the largest sizes the buffers. */
void test_allpairs(void)
{
    static const size_t sizes[] = {100, 8193, 65537};

    exchange_all("allpairs", sizes, sizeof(sizes) / sizeof(sizes[0]));
}

/** The first message between every pair at once, 8 bytes: times the
 *  connection of all pairs apart from the exchange of allpairs (issue #36
 *  reports start-up, connection and exchange separately). */
void test_connect(void)
{
    static const size_t sizes[] = {8};

    exchange_all("connect", sizes, 1);
}
