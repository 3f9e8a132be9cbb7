/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_host.c
 * @brief mpi_check's tests of what the host does around messages: fork, a peer that computes, a dead peer, metered spans (see mpi_check.c for the program and its options).
 */
#include "mpi_check.h"

/* fork: registered memory across fork() and system() (issue 18).  Pairs
 * exchange an eager and a rendezvous-size message, so the transport has
 * registered (and cached) both buffers; then every rank forks a child that
 * exits at once and runs system("true"), writes the same buffers again and
 * exchanges again.  Before Linux 5.13, without fork protection
 * (RDMAV_FORK_SAFE, btl_pvrdma_fork_init, UCX_PVRDMA_FORK_INIT) the
 * parent's first write after the fork moves the page away from where the
 * device reads and writes: the second exchange then carries stale bytes. */
void test_fork(void)
{
    const size_t lens[] = {100, max_size < (1u << 20) ? max_size : (1u << 20)};
    int partner = partner_xor(rank);
    unsigned char *sb[2], *rb[2];
    MPI_Status st;

    if (partner < 0) {
        return;
    }
    for (int i = 0; i < 2; ++i) {
        sb[i] = malloc(lens[i]);
        rb[i] = malloc(lens[i]);
    }
    for (int round = 0; round < 2 && !why[0]; ++round) {
        if (round == 1) {
            pid_t child = fork();

            if (child == 0) {
                _exit(0);
            }
            if ((child < 0) || (waitpid(child, NULL, 0) != child) ||
                (system("true") != 0)) {
                fail("fork: rank %d: fork/waitpid/system failed", rank);
                break;
            }
        }
        for (int i = 0; i < 2 && !why[0]; ++i) {
            uint64_t out = msg_key("fork", (uint64_t) (round * 2 + i), rank, partner);
            uint64_t in  = msg_key("fork", (uint64_t) (round * 2 + i), partner, rank);

            tp_fill(sb[i], lens[i], out);
            memset(rb[i], 0xee, lens[i]);
            MPI_Sendrecv(sb[i], (int) lens[i], MPI_BYTE, partner, 40 + i, rb[i],
                         (int) lens[i], MPI_BYTE, partner, 40 + i, MPI_COMM_WORLD, &st);
            if (!check_count(&st, lens[i], "fork")) {
                (void) check(rb[i], lens[i], in, "fork", partner);
            }
        }
    }
    for (int i = 0; i < 2; ++i) {
        free(sb[i]);
        free(rb[i]);
    }
}

/* idle: rank 0 sends 3 small (eager) messages to rank 1 and waits in
 * MPI_Recv for the answer while rank 1 computes for 6 s without calling
 * MPI; then rank 1 receives them and answers.  On the sender the last,
 * unsignalled WRs to rank 1 see no completion for those 6 s: the state a
 * lost packet leaves, which the BTL's stall watch kicks
 * (btl_pvrdma_stall_kick); the kick must arrive as nothing but credits. */
void test_idle(void)
{
    enum { N = 3, LEN = 100 };
    unsigned char b[LEN + N];
    MPI_Status st;

    if (rank == 0) {
        for (int i = 0; i < N && !why[0]; ++i) {
            tp_fill(b, LEN + i, msg_key("idle", (uint64_t) i, 0, 1));
            MPI_Send(b, LEN + i, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
        }
        memset(b, 0, sizeof(b));
        MPI_Recv(b, LEN, MPI_BYTE, 1, 12, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "idle")) {
            (void) check(b, LEN, msg_key("idle", N, 1, 0), "idle", 1);
        }
    } else if (rank == 1) {
        sleep(6);  /* > the kick at 1 s, RC's retry window (2.1 s) and the 1 s look */
        for (int i = 0; i < N; ++i) {
            memset(b, 0, sizeof(b));
            MPI_Recv(b, LEN + i, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &st);
            if (!check_count(&st, (size_t) LEN + i, "idle")) {
                (void) check(b, LEN + i, msg_key("idle", (uint64_t) i, 0, 1), "idle", 0);
            }
        }
        tp_fill(b, LEN, msg_key("idle", N, 1, 0));
        MPI_Send(b, LEN, MPI_BYTE, 0, 12, MPI_COMM_WORLD);
    }
}

/* peerwait: after one checked exchange (both directions connected) rank 0
 * waits in MPI_Recv for rank 1, which computes for wait_s seconds without
 * calling MPI and then answers.  Rank 0 has nothing in flight to rank 1 all
 * that time: only a keepalive can tell it that rank 1's host died.  Rank 1
 * says when it starts (the bed's cue to take its link down or kill it). */
void test_peerwait(void)
{
    enum { LEN = 4096, SMALL = 64 };
    static unsigned char b[LEN];
    char host[MPI_MAX_PROCESSOR_NAME];
    unsigned char *small = NULL;
    MPI_Request *reqs = NULL;
    int hlen, n = peerwait_sends;
    MPI_Status st;

    if (n > 0) {
        small = malloc((size_t) n * SMALL);
        reqs = malloc((size_t) n * sizeof(*reqs));
        if (small == NULL || reqs == NULL) {
            fail("peerwait: out of memory");
            n = 0;
        }
    }
    if (rank == 0) {
        tp_fill(b, LEN, msg_key("peerwait", 0, 0, 1));
        MPI_Send(b, LEN, MPI_BYTE, 1, 13, MPI_COMM_WORLD);
        memset(b, 0, LEN);
        MPI_Recv(b, LEN, MPI_BYTE, 1, 14, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "peerwait")) {
            (void) check(b, LEN, msg_key("peerwait", 1, 1, 0), "peerwait", 1);
        }
        /* --peerwait-sends N: small messages to the computing rank 1, more
         * than it has receives for us: the transport's credits to it run
         * out and the rest wait in it (a kick or keepalive probe must then
         * do without a credit) */
        for (int i = 0; i < n; ++i) {
            tp_fill(small + (size_t) i * SMALL, SMALL, msg_key("peerwait", 100 + i, 0, 1));
            MPI_Isend(small + (size_t) i * SMALL, SMALL, MPI_BYTE, 1, 16, MPI_COMM_WORLD,
                      &reqs[i]);
        }
        memset(b, 0, LEN);
        MPI_Recv(b, LEN, MPI_BYTE, 1, 15, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "peerwait")) {
            (void) check(b, LEN, msg_key("peerwait", 2, 1, 0), "peerwait", 1);
        }
        if (n > 0) {
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        }
    } else if (rank == 1) {
        MPI_Recv(b, LEN, MPI_BYTE, 0, 13, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "peerwait")) {
            (void) check(b, LEN, msg_key("peerwait", 0, 0, 1), "peerwait", 0);
        }
        tp_fill(b, LEN, msg_key("peerwait", 1, 1, 0));
        MPI_Send(b, LEN, MPI_BYTE, 0, 14, MPI_COMM_WORLD);
        MPI_Get_processor_name(host, &hlen);
        printf("peerwait: rank 1 on %s computes for %d s\n", host, wait_s);
        fflush(stdout);
        sleep((unsigned) wait_s);
        tp_fill(b, LEN, msg_key("peerwait", 2, 1, 0));
        MPI_Send(b, LEN, MPI_BYTE, 0, 15, MPI_COMM_WORLD);
        for (int i = 0; i < n; ++i) {
            MPI_Recv(small, SMALL, MPI_BYTE, 0, 16, MPI_COMM_WORLD, &st);
            if (check_count(&st, SMALL, "peerwait") ||
                check(small, SMALL, msg_key("peerwait", 100 + i, 0, 1), "peerwait", 0)) {
                break;
            }
        }
    }
    free(small);
    free(reqs);
}

/* rank 0: MPI_CHECK_SPAN_CMD's "CMD start" or "CMD stop WHAT SIZE" */
static void span_cmd(const char *what, int size)
{
    const char *cmd = getenv("MPI_CHECK_SPAN_CMD");
    char line[1024];
    int ret;

    if ((rank != 0) || (cmd == NULL) || (cmd[0] == '\0')) {
        return;
    }
    ret = span_cmd_run(cmd, what, (size_t)size, line, sizeof(line));
    if (ret != 0) {
        fail("'%s' failed (status %d)", line, ret);
    }
}

/* metered stream: rank 0 sends @p n messages of @p len bytes to rank 1,
 * which checks each and answers the last with 8 bytes (span "stream"; the
 * doorbells a message costs, issue 38) */
static void metered_stream(size_t len, int n)
{
    unsigned char *b = malloc(len), ack[8];
    MPI_Status st;

    if (b == NULL) {
        fail("metered stream: no memory for %zu bytes", len);
        return;
    }
    span_cmd(NULL, 0);
    for (int i = 0; i < n; ++i) {
        if (rank == 0) {
            tp_fill(b, len, msg_key("metered-stream", i, 0, 1));
            MPI_Send(b, (int)len, MPI_BYTE, 1, 18, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(b, (int)len, MPI_BYTE, 0, 18, MPI_COMM_WORLD, &st);
            if (!check_count(&st, len, "metered stream")) {
                (void) check(b, len, msg_key("metered-stream", i, 0, 1), "metered stream", i);
            }
        }
    }
    if (rank == 0) {
        MPI_Recv(ack, sizeof(ack), MPI_BYTE, 1, 19, MPI_COMM_WORLD, &st);
    } else if (rank == 1) {
        memset(ack, 0, sizeof(ack));
        MPI_Send(ack, sizeof(ack), MPI_BYTE, 0, 19, MPI_COMM_WORLD);
    }
    span_cmd("stream", (int)len);
    free(b);
}

/* metered burst: @p rounds times, rank 0 starts @p n sends of 8 bytes to
 * rank 1 at once (MPI_Isend, then MPI_Waitall), rank 1 checks them and
 * answers each round with 8 bytes (span "burst") */
static void metered_burst(int rounds, int n)
{
    enum { LEN = 8, MAXN = 64 };
    unsigned char b[MAXN][LEN], ack[LEN];
    MPI_Request req[MAXN];
    MPI_Status st[MAXN];

    if (n > MAXN) {
        n = MAXN;
    }
    span_cmd(NULL, 0);
    for (int r = 0; r < rounds; ++r) {
        if (rank == 0) {
            for (int i = 0; i < n; ++i) {
                tp_fill(b[i], LEN, msg_key("metered-burst", r * n + i, 0, 1));
                MPI_Isend(b[i], LEN, MPI_BYTE, 1, 20 + i, MPI_COMM_WORLD, &req[i]);
            }
            MPI_Waitall(n, req, st);
            MPI_Recv(ack, LEN, MPI_BYTE, 1, 19, MPI_COMM_WORLD, st);
        } else if (rank == 1) {
            for (int i = 0; i < n; ++i) {
                MPI_Irecv(b[i], LEN, MPI_BYTE, 0, 20 + i, MPI_COMM_WORLD, &req[i]);
            }
            MPI_Waitall(n, req, st);
            for (int i = 0; i < n; ++i) {
                if (!check_count(&st[i], LEN, "metered burst")) {
                    (void) check(b[i], LEN, msg_key("metered-burst", r * n + i, 0, 1),
                                 "metered burst", r * n + i);
                }
            }
            memset(ack, 0, sizeof(ack));
            MPI_Send(ack, LEN, MPI_BYTE, 0, 19, MPI_COMM_WORLD);
        }
    }
    span_cmd("burst", LEN);
}

/* metered: 200 round trips of 8 bytes between ranks 0 and 1, each checked,
 * after 20 that connect and warm up (span "lat"); then rank 0 waits 3 s in
 * MPI_Recv (span "idle"); then the streams and the burst above (spans
 * "stream" at 64 KiB and 1 MiB, "burst") */
void test_metered(void)
{
    enum { LEN = 8, WARM = 20, N = 200, IDLE_S = 3 };
    unsigned char b[LEN];
    int peer = 1 - rank;
    MPI_Status st;

    if (rank > 1) {
        return;
    }
    for (int i = 0; i < WARM + N; ++i) {
        if (i == WARM) {
            span_cmd(NULL, 0);
        }
        if (rank == 0) {
            tp_fill(b, LEN, msg_key("metered", i, 0, 1));
            MPI_Send(b, LEN, MPI_BYTE, 1, 16, MPI_COMM_WORLD);
        }
        MPI_Recv(b, LEN, MPI_BYTE, peer, 16, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "metered")) {
            (void) check(b, LEN, msg_key("metered", i, peer, rank), "metered", i);
        }
        if (rank == 1) {
            tp_fill(b, LEN, msg_key("metered", i, 1, 0));
            MPI_Send(b, LEN, MPI_BYTE, 0, 16, MPI_COMM_WORLD);
        }
    }
    span_cmd("lat", LEN);

    /* idle: rank 0 waits in MPI_Recv for a message rank 1 sends IDLE_S
     * seconds after rank 0's "go" (what a waiting rank costs the host:
     * the idle wait's bound, btl_pvrdma_idle_* / UCX_PVRDMA_IDLE_*) */
    span_cmd(NULL, 0);
    if (rank == 0) {
        tp_fill(b, LEN, msg_key("metered-go", 0, 0, 1));
        MPI_Send(b, LEN, MPI_BYTE, 1, 17, MPI_COMM_WORLD);
        MPI_Recv(b, LEN, MPI_BYTE, 1, 17, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "metered idle")) {
            (void) check(b, LEN, msg_key("metered-idle", 0, 1, 0), "metered idle", 0);
        }
    } else {
        MPI_Recv(b, LEN, MPI_BYTE, 0, 17, MPI_COMM_WORLD, &st);
        if (!check_count(&st, LEN, "metered go")) {
            (void) check(b, LEN, msg_key("metered-go", 0, 0, 1), "metered go", 0);
        }
        sleep(IDLE_S);
        tp_fill(b, LEN, msg_key("metered-idle", 0, 1, 0));
        MPI_Send(b, LEN, MPI_BYTE, 0, 17, MPI_COMM_WORLD);
    }
    span_cmd("idle", LEN);

    metered_stream(64 * 1024, 16);
    metered_stream(1024 * 1024, 2);
    metered_burst(8, 32);
}

/* metered_a2a: all ranks do ROUNDS MPI_Alltoall of 64 KiB per pair after
 * one that connects them, every block checked, between barriers (span
 * "alltoall": the doorbells of all the ranks on each node; issue 38's
 * Alltoall of 8 ranks: 64 KiB to each peer goes as 8 KiB copy fragments on
 * QEMU's model, so a transport that posted one WR per fragment would ring
 * 9 send doorbells per block) */
void test_metered_a2a(void)
{
    enum { BLK = 64 * 1024, ROUNDS = 4 };
    unsigned char *s = malloc((size_t) BLK * nprocs), *r = malloc((size_t) BLK * nprocs);

    if (s == NULL || r == NULL) {
        fail("metered_a2a: no memory for 2 x %d x %d bytes", nprocs, BLK);
        free(s);
        free(r);
        return;
    }
    for (int i = 0; i <= ROUNDS; ++i) { /* all rounds on every rank: collectives */
        if (i == 1) {
            /* round 0 connected every pair: set-up (UD datagrams, QP
             * commands) is not what a block costs */
            MPI_Barrier(MPI_COMM_WORLD);
            span_cmd(NULL, 0);
        }
        for (int p = 0; p < nprocs; ++p) {
            tp_fill(s + (size_t) p * BLK, BLK, msg_key("metered-a2a", i, rank, p));
        }
        memset(r, 0, (size_t) BLK * nprocs);
        MPI_Alltoall(s, BLK, MPI_BYTE, r, BLK, MPI_BYTE, MPI_COMM_WORLD);
        for (int p = 0; p < nprocs; ++p) {
            if (check(r + (size_t) p * BLK, BLK, msg_key("metered-a2a", i, p, rank),
                      "metered alltoall", p)) {
                break;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    span_cmd("alltoall", BLK);
    free(s);
    free(r);
}
