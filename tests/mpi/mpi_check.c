/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check.c
 * @brief Transport-agnostic MPI correctness checks: every byte verified.
 *
 * Usage: mpi_check [--thread-multiple] [--max-size BYTES] [--isends N] [--wait S]
 *                  [--hold FILE] [--hold-end FILE] [--peerwait-sends N]
 *                  [--osc-skip LIST] [--quick]
 *                  [TEST...]
 * Tests: p2p (blocking, sizes 0,1,7, powers of two, odd sizes around
 * protocol thresholds), nb (non-blocking all-pairs), same_host (pairs
 * of ranks on one host), allpairs (every rank with every other at once, 3
 * sizes: the many-peers test), flood (thousands of in-flight Isends to one peer),
 * allreduce, alltoall, alltoallv, bcast, dtype (non-contiguous derived
 * datatype), ssend.  Default: all of these.  Run only when named: idle
 * (rank 1 computes for 6 s, no MPI call, before it receives what rank 0
 * sent and answers; rank 0 waits in MPI_Recv: the sender's last WRs wait
 * that long for any completion, which the BTL's stall kick meets),
 * peerwait (rank 0 waits in MPI_Recv while rank 1 computes --wait S
 * seconds, default 30, then answers: the keepalive's case; the bed takes
 * rank 1's host down or kills it meanwhile and expects the job to end;
 * with --peerwait-sends N rank 0 also queues N 64-byte sends to rank 1,
 * more than its credits, which rank 1 receives and checks after computing),
 * fork (registered buffers written and sent again after fork() and
 * system(): test_fork), threads (4 threads per rank, each on its own
 * communicator, ring exchanges and reductions at once: needs
 * --thread-multiple), lazy (the first contact of every pair from several
 * threads at once, before anything else: needs --thread-multiple), connect
 * (the first 8-byte message between every pair at once, timed apart from
 * allpairs' exchange), osc (one-sided: put, get, accumulate MPI_SUM on
 * int64 and double and MPI_REPLACE, fetch_and_op MPI_SUM and MPI_NO_OP,
 * a compare_and_swap increment loop, get_accumulate, 0 B to 4 MiB, under
 * fence, post/start/complete/wait, lock, lock_all with flush and
 * flush_local, on MPI_Win_allocate'd windows and once on MPI_Win_create;
 * it runs first: its first epoch is a lock_all put to every peer before
 * any other communication; rank 0 prints "mpi_check: osc OP/SYNC ok" per
 * case and the window's flavor and memory model: test_osc) and metered
 * (200 8-byte round trips between ranks 0 and 1, then rank 0 waits 3 s in
 * MPI_Recv): with MPI_CHECK_SPAN_CMD=CMD in rank 0's environment, rank 0
 * runs "CMD start" and "CMD stop lat 8" (system(3)) around exactly those
 * messages, and "CMD stop idle 8" around the wait, so that the bed's meter
 * (scripts/testbed/pvrdma/meter span) counts the doorbells they cost;
 * metered_a2a (every rank: 1 + 4 MPI_Alltoall of 64 KiB per pair, every block
 * checked, span "alltoall 65536" around the last 4, between barriers).
 *
 * --osc-skip LIST: osc leaves out the cases LIST names (comma-separated
 * OP, SYNC or OP/SYNC, e.g. fop_double or cas/pscw), for an osc component
 * known to hang or fail them; rank 0 says "mpi_check: osc OP/SYNC skipped".
 * Open MPI 4.1.4's osc ucx adds doubles as integers in fetch_and_op
 * (fop_double); its osc rdma over btl vader with CMA crashes in
 * MPI_Compare_and_swap on MPI_Win_allocate'd windows
 * (cas/lockall,cas/fence,cas/pscw,cas/lock; fixed in 4.1.5).
 *
 * --hold FILE: after MPI_Init every rank says "mpi_check: rank R holds" and
 * makes MPI progress (MPI_Iprobe, no message) until FILE exists on its
 * host, before any test: the bed starts something on the fabric (a burst
 * of stray datagrams) and then lets the job connect its peers.
 * --hold-end FILE: the same after the tests, before MPI_Finalize, but
 * progressing without a pause, as a rank waiting in MPI_Recv: the job's
 * connections are made and every rank reads its connection QP (an
 * eavesdropper's replays meet ranks that poll: tests/bed/replay.sh).
 *
 * Rank 0 prints one line per test, "ok - NAME" or "not ok - NAME: REASON"
 * (the first failure seen on any rank), and the program exits non-zero if
 * any test failed.  Needs at least 2 ranks.
 */
#include "mpi_check.h"

#include <sys/stat.h>

int rank, nprocs;
size_t max_size = 16u << 20;
int flood_count = 4000;
int wait_s = 30;     /* peerwait: how long rank 1 computes */
int peerwait_sends;  /* peerwait: small sends rank 0 queues meanwhile */
int thread_level = MPI_THREAD_SINGLE; /* provided by MPI_Init(_thread) */
const char *osc_skip; /* --osc-skip: comma-separated OP, SYNC or OP/SYNC */
char why[256];      /* first failure of the current test on this rank */
/* the threads test's threads fail() at the same time */
static pthread_mutex_t why_lock = PTHREAD_MUTEX_INITIALIZER;

void fail(const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&why_lock);
    if (!why[0]) {
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&why_lock);
}

/** The key of the message @p msg of test @p test sent by rank @p from to
 *  rank @p to: every byte of it is a function of (test, message, direction,
 *  offset) (test_pattern.h), so a misplaced piece, a stale message of the
 *  same size or another peer's message never passes the check. */
uint64_t msg_key(const char *test, uint64_t msg, int from, int to)
{
    return tp_key(tp_name(test), msg, (uint64_t) from * 1000003u + (uint64_t) to);
}

int check(const unsigned char *buf, size_t len, uint64_t key, const char *what,
          int peer)
{
    long long bad = tp_check(buf, len, key);

    if (bad >= 0) {
        fail("%s: rank %d from %d: %zu bytes, byte %lld is 0x%02x, expected 0x%02x", what,
             rank, peer, len, bad, buf[bad], tp_byte(key, (size_t) bad));
        return 1;
    }
    return 0;
}

int check_count(MPI_Status *st, size_t len, const char *what)
{
    int count;

    MPI_Get_count(st, MPI_BYTE, &count);
    if ((size_t) count != len) {
        fail("%s: rank %d received %d bytes, expected %zu", what, rank, count, len);
        return 1;
    }
    return 0;
}

/** Sizes: 0, 1, 7, powers of two, and odd sizes around common thresholds. */
size_t *make_sizes(int *n)
{
    /* common eager/rendezvous/pipeline switch points (ob1 with BTL defaults
     * and ob1's 14..16-byte headers in front of eager data) */
    static const size_t thresholds[] = {1024, 4096, 8192, 12288, 16384, 65536,
                                        262144, 1048576, 1056768};
    size_t *s = malloc(256 * sizeof(*s));
    int k = 0;

    s[k++] = 0;
    s[k++] = 1;
    s[k++] = 7;
    for (size_t p = 2; p <= max_size; p *= 2) {
        s[k++] = p;
    }
    for (size_t t = 0; t < sizeof(thresholds) / sizeof(thresholds[0]); ++t) {
        static const long delta[] = {-65, -17, -16, -15, -14, -13, -1, 0, 1, 65};
        if (thresholds[t] > max_size) {
            break;
        }
        for (size_t d = 0; d < sizeof(delta) / sizeof(delta[0]); ++d) {
            size_t len = (size_t) ((long) thresholds[t] + delta[d]);
            if (len <= max_size) {
                s[k++] = len;
            }
        }
    }
    *n = k;
    return s;
}

/* ------------------------------------------------------------------ */

struct test {
    const char *name;
    void (*fn)(void);
    int named_only;   /* run only when named on the command line */
    int no_barrier;   /* runs first, without the barrier before it */
};

static const struct test tests[] = {
    {"lazy", test_lazy, 1, 1},              {"osc", test_osc, 1, 1},
    {"p2p", test_p2p, 0, 0},                {"nb", test_nb, 0, 0},
    {"same_host", test_same_host, 0, 0},    {"allpairs", test_allpairs, 0, 0},
    {"flood", test_flood, 0, 0},            {"allreduce", test_allreduce, 0, 0},
    {"alltoall", test_alltoall, 0, 0},      {"alltoallv", test_alltoallv, 0, 0},
    {"bcast", test_bcast, 0, 0},            {"dtype", test_dtype, 0, 0},
    {"ssend", test_ssend, 0, 0},            {"idle", test_idle, 1, 0},
    {"peerwait", test_peerwait, 1, 0},      {"fork", test_fork, 1, 0},
    {"metered", test_metered, 1, 0},        {"threads", test_threads, 1, 0},
    {"connect", test_connect, 1, 0},        {"reconnect", test_reconnect, 1, 0},
    {"metered_a2a", test_metered_a2a, 1, 0},
};

/** Rank 0 says how long the slowest rank spent from main() to the end of
 *  MPI_Init (start-up, apart from the tests' own times). */
static void report_init_time(const struct timespec *started)
{
    struct timespec now;
    double mine, slowest;

    clock_gettime(CLOCK_MONOTONIC, &now);
    mine = (double) (now.tv_sec - started->tv_sec) + (now.tv_nsec - started->tv_nsec) / 1e9;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_check: MPI_Init took %.2f s on the slowest of %d ranks\n", slowest, nprocs);
        fflush(stdout);
    }
}

/* --hold FILE: progress without talking to anyone until FILE exists;
 * @p spin: progress without a pause (as a rank waiting in MPI_Recv does),
 * looking for FILE every 10 ms; else one MPI_Iprobe per 10 ms */
static void hold(const char *file, int spin)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    struct stat sb;
    double next = 0;
    int flag;

    printf("mpi_check: rank %d holds until %s exists\n", rank, file);
    fflush(stdout);
    for (;;) {
        if (!spin || MPI_Wtime() >= next) {
            if (stat(file, &sb) == 0) {
                break;
            }
            next = MPI_Wtime() + 0.01;
        }
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                   MPI_STATUS_IGNORE);
        if (!spin) {
            nanosleep(&tick, NULL);
        }
    }
}

/** Run one test; all ranks agree on the verdict; rank 0 reports. */
static int run(const struct test *t)
{
    int bad, any, who;
    char msg[256];
    double t0 = MPI_Wtime();

    why[0] = '\0';
    if (!t->no_barrier) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    t->fn();
    bad = why[0] != '\0';
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* the lowest failing rank tells rank 0 what went wrong */
    who = bad ? rank : nprocs;
    MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (any) {
        if (who == rank && rank != 0) {
            MPI_Send(why, sizeof(why), MPI_CHAR, 0, 999, MPI_COMM_WORLD);
        }
        if (rank == 0) {
            if (who == 0) {
                memcpy(msg, why, sizeof(msg));
            } else {
                MPI_Recv(msg, sizeof(msg), MPI_CHAR, who, 999, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
            printf("not ok - %s: %s (%d rank(s) failed)\n", t->name, msg, any);
        }
    } else if (rank == 0) {
        printf("ok - %s (%.2f s)\n", t->name, MPI_Wtime() - t0);
    }
    fflush(stdout);
    return any != 0;
}

int main(int argc, char **argv)
{
    const char *only[32], *hold_file = NULL, *hold_end_file = NULL;
    int nonly = 0, failed = 0;

    struct timespec started;

    clock_gettime(CLOCK_MONOTONIC, &started);
    /* --thread-multiple (first argument): MPI_Init_thread with
     * MPI_THREAD_MULTIPLE (the threads test needs it) */
    if ((argc > 1) && !strcmp(argv[1], "--thread-multiple")) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &thread_level);
        --argc;
        ++argv;
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    report_init_time(&started);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--max-size") && i + 1 < argc) {
            max_size = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--isends") && i + 1 < argc) {
            flood_count = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
            wait_s = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--peerwait-sends") && i + 1 < argc) {
            peerwait_sends = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--osc-skip") && i + 1 < argc) {
            osc_skip = argv[++i];
        } else if (!strcmp(argv[i], "--hold") && i + 1 < argc) {
            hold_file = argv[++i];
        } else if (!strcmp(argv[i], "--hold-end") && i + 1 < argc) {
            hold_end_file = argv[++i];
        } else if (!strcmp(argv[i], "--quick")) {
            max_size = 1u << 20;
            flood_count = 1000;
        } else if (nonly < 32) {
            only[nonly++] = argv[i];
        }
    }
    if (nprocs < 2) {
        if (rank == 0) {
            printf("not ok - setup: needs at least 2 ranks\n");
        }
        MPI_Finalize();
        return 1;
    }
    if (hold_file != NULL) {
        hold(hold_file, 0);
    }
    for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); ++t) {
        int selected = nonly == 0 && !tests[t].named_only;
        for (int k = 0; k < nonly; ++k) {
            selected |= !strcmp(only[k], tests[t].name);
        }
        if (selected) {
            failed += run(&tests[t]);
        }
    }
    if (hold_end_file != NULL) {
        hold(hold_end_file, 1);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    /* One line per rank once MPI_Finalize has returned: the bed's scripts
     * (tests/bed/lib.sh) tell a rank that really ended early from one that
     * Open MPI's runtime reports as "exiting improperly" although it had
     * finalized (its exit-without-sync race, open-mpi/ompi#7833). */
    printf("mpi_check: rank %d of %d finalized\n", rank, nprocs);
    fflush(stdout);
    return failed ? 1 : 0;
}
