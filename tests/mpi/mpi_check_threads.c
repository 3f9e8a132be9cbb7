/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_threads.c
 * @brief mpi_check's MPI_THREAD_MULTIPLE tests: threads on their own communicators, lazy first contacts (see mpi_check.c for the program and its options).
 */
#include "mpi_check.h"

/* threads (named only, needs --thread-multiple): MT_THREADS threads per
 * rank at once, each on a communicator of its own, exchange around the ring
 * (0 B to 1 MiB, so eager and rendezvous interleave between threads) and
 * reduce, MT_ROUNDS times, every byte and element checked: what a
 * transport meets at MPI_THREAD_MULTIPLE, under pml ucx and under ob1 with
 * the pvrdma BTL. */
#define MT_THREADS 4
#define MT_ROUNDS 3 /* MPI_CHECK_MT_ROUNDS overrides (stress runs by hand) */

struct mt_thread {
    pthread_t tid;
    int id;
    MPI_Comm comm;
};

static void mt_exchange(const struct mt_thread *t, int round)
{
    static const size_t sizes[] = {0, 1, 7, 4096, 65536, 1u << 20};
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;

    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        size_t len = sizes[s];
        uint64_t msg = ((uint64_t) round * 16 + s) * MT_THREADS + (uint64_t) t->id;
        unsigned char *sb, *rb;
        MPI_Status st;

        if (len > max_size) {
            break;
        }
        sb = malloc(len + 1);
        rb = malloc(len + 1);
        tp_fill(sb, len, msg_key("threads", msg, rank, right));
        MPI_Sendrecv(sb, (int) len, MPI_BYTE, right, (int) s, rb, (int) len, MPI_BYTE, left,
                     (int) s, t->comm, &st);
        if (!check_count(&st, len, "threads")) {
            check(rb, len, msg_key("threads", msg, left, rank), "threads", left);
        }
        free(sb);
        free(rb);
    }
}

static void mt_reduce(const struct mt_thread *t, int round)
{
    enum { N = 4096 };
    int64_t *v = malloc(N * sizeof(*v));
    int64_t base = (int64_t) t->id * 1000 + round;

    for (int i = 0; i < N; ++i) {
        v[i] = (int64_t) (rank + 1) * (i + 1) + base;
    }
    MPI_Allreduce(MPI_IN_PLACE, v, N, MPI_INT64_T, MPI_SUM, t->comm);
    for (int i = 0; i < N; ++i) {
        int64_t expect = (int64_t) nprocs * (nprocs + 1) / 2 * (i + 1) + nprocs * base;
        if (v[i] != expect) {
            fail("threads: thread %d round %d: allreduce element %d is %lld, expected %lld",
                 t->id, round, i, (long long) v[i], (long long) expect);
            break;
        }
    }
    free(v);
}

static int mt_rounds(void)
{
    const char *env = getenv("MPI_CHECK_MT_ROUNDS");
    int n = (NULL != env) ? atoi(env) : 0;

    return (n > 0) ? n : MT_ROUNDS;
}

static void *mt_main(void *arg)
{
    const struct mt_thread *t = arg;
    const int rounds = mt_rounds();

    for (int round = 0; round < rounds; ++round) {
        mt_exchange(t, round);
        mt_reduce(t, round);
    }
    return NULL;
}

void test_threads(void)
{
    struct mt_thread t[MT_THREADS];
    int started = 0;

    if (thread_level != MPI_THREAD_MULTIPLE) {
        fail("threads: MPI_THREAD_MULTIPLE not provided (level %d): run with --thread-multiple",
             thread_level);
        return;
    }
    for (int i = 0; i < MT_THREADS; ++i) {
        t[i].id = i;
        MPI_Comm_dup(MPI_COMM_WORLD, &t[i].comm);
    }
    for (; started < MT_THREADS; ++started) {
        if (pthread_create(&t[started].tid, NULL, mt_main, &t[started]) != 0) {
            /* the peers' threads would wait for this one: end the job */
            fprintf(stderr, "mpi_check: rank %d cannot start thread %d\n", rank, started);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int i = 0; i < started; ++i) {
        pthread_join(t[i].tid, NULL);
    }
    for (int i = 0; i < MT_THREADS; ++i) {
        MPI_Comm_free(&t[i].comm);
    }
}

/* lazy: the first contact of every pair from several threads at once.
 * Thread k (1..nprocs-1, at most 7) of rank r sends to r+k and receives
 * from r-k, tag 100+k, on MPI_COMM_WORLD, LAZY_ROUNDS rounds of 256 KiB,
 * 8 B and 12 KiB (a rendezvous first, whose ACK the receiver's progress
 * sends back, then eager), every byte checked.  It runs before anything else
 * (no barrier first: mpi_check runs it first), so each thread's first
 * message goes to a peer nobody on its rank has talked to: Open MPI adds
 * that peer (its BTLs' add_procs) from that thread while the others are in
 * progress receiving from their own new peers (issue 34: the BTL called the
 * PML back with its lock held, which can deadlock against add_procs). */
enum { LAZY_THREADS = 7, LAZY_ROUNDS = 12 };

struct lazy_thread {
    pthread_t tid;
    int k;
};

static void *lazy_main(void *arg)
{
    /* the first is a rendezvous: the receiver's progress answers it (ob1
     * asks the BML for the sender's endpoint in that callback) while the
     * thread that sends to the same peer may be adding it */
    static const size_t sizes[] = {262144, 8, 12288};
    const struct lazy_thread *t = arg;
    const int to = (rank + t->k) % nprocs, from = (rank - t->k + nprocs) % nprocs;
    unsigned char *sb = malloc(262144), *rb = malloc(262144);

    for (int round = 0; round < LAZY_ROUNDS && sb != NULL && rb != NULL; ++round) {
        size_t len = sizes[round % 3];
        uint64_t msg = (uint64_t) round * 8u + (uint64_t) t->k;
        MPI_Request req;
        MPI_Status st;

        tp_fill(sb, len, msg_key("lazy", msg, rank, to));
        memset(rb, 0, len);
        MPI_Isend(sb, (int) len, MPI_BYTE, to, 100 + t->k, MPI_COMM_WORLD, &req);
        MPI_Recv(rb, (int) len, MPI_BYTE, from, 100 + t->k, MPI_COMM_WORLD, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (check_count(&st, len, "lazy") ||
            check(rb, len, msg_key("lazy", msg, from, rank), "lazy", from)) {
            break;
        }
    }
    if (sb == NULL || rb == NULL) {
        fail("lazy: rank %d thread %d: out of memory", rank, t->k);
    }
    free(sb);
    free(rb);
    return NULL;
}

void test_lazy(void)
{
    struct lazy_thread t[LAZY_THREADS];
    int n = (nprocs - 1 < LAZY_THREADS) ? nprocs - 1 : LAZY_THREADS, started = 0;

    if (thread_level != MPI_THREAD_MULTIPLE) {
        fail("lazy: MPI_THREAD_MULTIPLE not provided (level %d): run with --thread-multiple",
             thread_level);
        return;
    }
    for (; started < n; ++started) {
        t[started].k = started + 1;
        if (pthread_create(&t[started].tid, NULL, lazy_main, &t[started]) != 0) {
            fprintf(stderr, "mpi_check: rank %d cannot start thread %d\n", rank, started);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int i = 0; i < started; ++i) {
        pthread_join(t[i].tid, NULL);
    }
}
