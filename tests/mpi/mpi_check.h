/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check.h
 * @brief What the parts of mpi_check share: its options, the failure of the
 *        current test, the byte checks, and the tests (mpi_check.c runs
 *        them; mpi_check_p2p.c, _coll.c, _host.c, _threads.c, _osc.c hold
 *        them).
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/span_cmd.h"
#include "../common/test_pattern.h"

extern int rank, nprocs;
extern size_t max_size;      /* --max-size */
extern int flood_count;      /* --isends */
extern int wait_s;           /* --wait: peerwait's compute time */
extern int peerwait_sends;   /* --peerwait-sends */
extern int thread_level;     /* provided by MPI_Init(_thread) */
extern const char *osc_skip; /* --osc-skip: the osc cases not to run */
extern char why[256];        /* first failure of the current test on this rank */

/** Record the first failure of the current test on this rank. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** The key of message @p msg of test @p test from rank @p from to @p to. */
uint64_t msg_key(const char *test, uint64_t msg, int from, int to);
/** 1 (and fail()) when @p buf is not the message of @p key. */
int check(const unsigned char *buf, size_t len, uint64_t key, const char *what, int peer);
/** 1 (and fail()) when @p st says another length than @p len. */
int check_count(MPI_Status *st, size_t len, const char *what);
/** The p2p sizes up to max_size (malloc'ed, *@p n of them). */
size_t *make_sizes(int *n);

/* mpi_check_p2p.c */
/** Rank r's partner in pairs (0-1, 2-3, ...), -1 for an odd last rank. */
int partner_xor(int r);
void test_p2p(void);
void test_same_host(void);
void test_nb(void);
void test_flood(void);
void test_allpairs(void);
void test_connect(void);
/* mpi_check_reconnect.c */
void test_reconnect(void);
/* mpi_check_coll.c */
void test_allreduce(void);
void test_alltoall(void);
void test_alltoallv(void);
void test_bcast(void);
void test_dtype(void);
void test_ssend(void);
/* mpi_check_host.c */
void test_fork(void);
void test_idle(void);
void test_peerwait(void);
void test_metered(void);
void test_metered_a2a(void);
/* mpi_check_threads.c */
void test_threads(void);
void test_lazy(void);
/* mpi_check_osc.c */
void test_osc(void);

#endif /* MPI_CHECK_H */
