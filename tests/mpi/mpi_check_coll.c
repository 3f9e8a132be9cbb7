/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_coll.c
 * @brief mpi_check's collective and datatype tests: allreduce, alltoall(v), bcast, a strided datatype, ssend (see mpi_check.c for the program and its options).
 */
#include "mpi_check.h"

void test_allreduce(void)
{
    static const int counts[] = {1, 7, 1000, 65536, 1 << 20};

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]) && !why[0]; ++c) {
        int n = counts[c];
        int64_t *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));

        if ((size_t) n * sizeof(int64_t) > max_size) {
            free(in);
            free(out);
            break;
        }
        for (int i = 0; i < n; ++i) {
            in[i] = (int64_t) (rank + 1) * (i + 3) - i % 11;
        }
        MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; ++i) {
            int64_t expect = (int64_t) nprocs * (nprocs + 1) / 2 * (i + 3) -
                             (int64_t) nprocs * (i % 11);
            if (out[i] != expect) {
                fail("allreduce: count %d element %d is %lld, expected %lld", n, i,
                     (long long) out[i], (long long) expect);
                break;
            }
        }
        free(in);
        free(out);
    }
}

void test_alltoall(void)
{
    static const size_t blocks[] = {1, 100, 8000, 100000};

    for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]) && !why[0]; ++b) {
        size_t blk = blocks[b];
        unsigned char *s = malloc(blk * nprocs), *r = malloc(blk * nprocs);

        for (int p = 0; p < nprocs; ++p) {
            tp_fill(s + p * blk, blk, msg_key("alltoall", b, rank, p));
        }
        memset(r, 0, blk * nprocs);
        MPI_Alltoall(s, (int) blk, MPI_BYTE, r, (int) blk, MPI_BYTE, MPI_COMM_WORLD);
        for (int p = 0; p < nprocs; ++p) {
            if (check(r + p * blk, blk, msg_key("alltoall", b, p, rank), "alltoall", p)) {
                break;
            }
        }
        free(s);
        free(r);
    }
}

void test_alltoallv(void)
{
    /* rank i sends (i + 1) * (j + 1) * unit bytes to rank j.  unit is 3001
     * up to 8 ranks, then shrinks with the square of the job (at least 1
     * byte), so the largest message stays 64 * 3001 B (a rendezvous one)
     * and the job's total grows as nprocs^2, not nprocs^4: at 4 x 8 ranks a
     * constant unit moved 837 MB (187 s of CI on the emulated bed), at 160
     * ranks it would overflow the int displacements. */
    int unit = 3001;
    if (nprocs > 8) {
        unit = 3001 * 64 / (nprocs * nprocs);
        unit = unit > 0 ? unit : 1;
    }
    int *sc = malloc(nprocs * sizeof(int)), *sd = malloc(nprocs * sizeof(int));
    int *rc = malloc(nprocs * sizeof(int)), *rd = malloc(nprocs * sizeof(int));
    int stot = 0, rtot = 0;
    unsigned char *s, *r;

    for (int p = 0; p < nprocs; ++p) {
        sc[p] = (rank + 1) * (p + 1) * unit;
        rc[p] = (p + 1) * (rank + 1) * unit;
        sd[p] = stot;
        rd[p] = rtot;
        stot += sc[p];
        rtot += rc[p];
    }
    s = malloc(stot);
    r = malloc(rtot);
    for (int p = 0; p < nprocs; ++p) {
        tp_fill(s + sd[p], sc[p], msg_key("alltoallv", 0, rank, p));
    }
    memset(r, 0, rtot);
    MPI_Alltoallv(s, sc, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    for (int p = 0; p < nprocs; ++p) {
        if (check(r + rd[p], rc[p], msg_key("alltoallv", 0, p, rank), "alltoallv", p)) {
            break;
        }
    }
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

void test_bcast(void)
{
    static const size_t lens[] = {1, 5000, 100000, 4u << 20};

    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]) && !why[0]; ++l) {
        size_t len = lens[l];
        int root = (int) (l % nprocs);
        unsigned char *b;

        if (len > max_size) {
            break;
        }
        b = malloc(len);
        if (rank == root) {
            tp_fill(b, len, msg_key("bcast", l, root, -1));
        } else {
            memset(b, 0, len);
        }
        MPI_Bcast(b, (int) len, MPI_BYTE, root, MPI_COMM_WORLD);
        (void) check(b, len, msg_key("bcast", l, root, -1), "bcast", root);
        free(b);
    }
}

/** Strided vector of doubles sent as a derived datatype, received as a
 *  contiguous array (and back): exercises pack/unpack in the BTL path. */
void test_dtype(void)
{
    static const int counts[] = {10, 1000, 100000};
    int partner = partner_xor(rank);

    if (partner < 0) {
        return;
    }
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]) && !why[0]; ++c) {
        const int count = counts[c], blen = 3, stride = 7;
        MPI_Datatype vec;
        double *strided = malloc((size_t) count * stride * sizeof(double));
        double *dense = malloc((size_t) count * blen * sizeof(double));
        MPI_Status st;

        MPI_Type_vector(count, blen, stride, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        if (rank < partner) {
            for (int i = 0; i < count * stride; ++i) {
                strided[i] = (i % stride < blen) ? i * 0.5 + count : -1.0;
            }
            MPI_Send(strided, 1, vec, partner, 7, MPI_COMM_WORLD);
            /* and receive a dense array into the strided layout */
            for (int i = 0; i < count * stride; ++i) {
                strided[i] = -2.0;
            }
            MPI_Recv(strided, 1, vec, partner, 8, MPI_COMM_WORLD, &st);
            for (int i = 0; i < count * stride; ++i) {
                double expect = (i % stride < blen) ? (i / stride) * blen + i % stride + 0.25
                                                    : -2.0;
                if (strided[i] != expect) {
                    fail("dtype: count %d: strided element %d is %g, expected %g", count, i,
                         strided[i], expect);
                    break;
                }
            }
        } else {
            MPI_Recv(dense, count * blen, MPI_DOUBLE, partner, 7, MPI_COMM_WORLD, &st);
            for (int k = 0; k < count * blen; ++k) {
                int i = (k / blen) * stride + k % blen;
                if (dense[k] != i * 0.5 + count) {
                    fail("dtype: count %d: element %d is %g, expected %g", count, k, dense[k],
                         i * 0.5 + count);
                    break;
                }
            }
            for (int k = 0; k < count * blen; ++k) {
                dense[k] = k + 0.25;
            }
            MPI_Send(dense, count * blen, MPI_DOUBLE, partner, 8, MPI_COMM_WORLD);
        }
        MPI_Type_free(&vec);
        free(strided);
        free(dense);
    }
}

void test_ssend(void)
{
    static const size_t lens[] = {0, 1, 100, 8000, 100000, 2u << 20};
    int partner = partner_xor(rank);

    if (partner < 0) {
        return;
    }
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]) && !why[0]; ++l) {
        size_t len = lens[l];
        unsigned char *b = malloc(len + 1);
        MPI_Status st;

        if (len > max_size) {
            free(b);
            break;
        }
        if (rank < partner) {
            tp_fill(b, len, msg_key("ssend", l, rank, partner));
            MPI_Ssend(b, (int) len, MPI_BYTE, partner, 9, MPI_COMM_WORLD);
        } else {
            memset(b, 0, len);
            MPI_Recv(b, (int) len, MPI_BYTE, partner, 9, MPI_COMM_WORLD, &st);
            if (!check_count(&st, len, "ssend")) {
                (void) check(b, len, msg_key("ssend", l, partner, rank), "ssend", partner);
            }
        }
        free(b);
    }
}
