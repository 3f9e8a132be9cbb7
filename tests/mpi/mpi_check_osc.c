/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_osc.c
 * @brief mpi_check's one-sided test: windows, epochs, put, get, accumulate (see mpi_check.c for the program and its options; the atomics are in mpi_check_osc_atomic.c).
 */
#include "mpi_check_osc.h"

/* osc (named only, runs first): every one-sided operation under every
 * synchronisation mode, every byte and value checked.  A pass is a window of
 * 3 areas of S + 2 * OSC_PAD bytes (S = min(max_size, 4 MiB)) and 64
 * counters, and one mode: lockall (MPI_Win_lock_all, MPI_Win_flush after
 * the operations to a target, MPI_Win_flush_local after a put, whose origin
 * buffer is then overwritten), fence, pscw (post/start/complete/wait with
 * the group of all other ranks), lock (MPI_Win_lock per target: exclusive
 * for put and accumulate, shared for get and atomics); the windows are
 * MPI_Win_allocate'd, and a last pass, create_lockall, runs lockall on
 * MPI_Win_create over malloc'ed memory.  Put, get and accumulate REPLACE go
 * from each rank to rank + shift for one shift per epoch (every pair, one
 * origin per target), accumulate MPI_SUM from every rank to every other in
 * one epoch (concurrent sums to the same elements); sizes 0 B to 4 MiB,
 * OSC_PAD sentinel bytes around each.  The first epoch of all, right after
 * the first window is made (before any fence or barrier), is a put to every
 * other rank under lock_all: peers Open MPI has not connected yet.  Rank 0
 * prints "mpi_check: osc OP/SYNC ok" (or FAILED, or skipped: --osc-skip)
 * per op and mode. */

static const size_t osc_sizes[] = {0, 1, 8, 4095, 65544, 1u << 20, 4u << 20};
enum { OSC_NSIZES = sizeof(osc_sizes) / sizeof(osc_sizes[0]) };

/** S: the largest transfer, what each area holds besides its sentinels. */
static size_t osc_max(void)
{
    return max_size < (4u << 20) ? max_size : (4u << 20);
}

/** 1 (and osc_fail) when the OSC_PAD bytes on either side of the @p len
 *  bytes at @p buf are not all 0xee. */
static int check_pads(struct osc *o, const char *op, const unsigned char *buf, size_t len,
                      int peer)
{
    for (size_t i = 0; i < OSC_PAD; ++i) {
        if (buf[len + i] != 0xee) {
            osc_fail(o, op, len, peer, "byte %zu past the end is 0x%02x, expected 0xee", i,
                     buf[len + i]);
            return 1;
        }
        if (buf[-1 - (long) i] != 0xee) {
            osc_fail(o, op, len, peer, "byte %zu before the start is 0x%02x, expected 0xee",
                     i + 1, buf[-1 - (long) i]);
            return 1;
        }
    }
    return 0;
}

/** 1 (and osc_fail) when the @p len bytes at @p buf are not the message of
 *  @p key or its sentinels were touched. */
static int check_bytes(struct osc *o, const char *op, const unsigned char *buf, size_t len,
                       uint64_t key, int peer)
{
    long long bad = tp_check(buf, len, key);

    if (bad >= 0) {
        osc_fail(o, op, len, peer, "byte %lld is 0x%02x, expected 0x%02x", bad, buf[bad],
                 tp_byte(key, (size_t) bad));
        return 1;
    }
    return check_pads(o, op, buf, len, peer);
}

/** The first epoch of the test: a put to every other rank at once, each
 *  origin into its own part of the target's put area. */
static void osc_first(struct osc *o)
{
    size_t c = ((o->area - 2 * OSC_PAD) / (size_t) nprocs) & ~(size_t) 7;
    unsigned char *src, *dst = o->base + OSC_PAD;

    if (c > 65536) {
        c = 65536;
    }
    src = malloc(c * (size_t) nprocs + 1);
    for (int t = 0; t < nprocs; ++t) {
        tp_fill(src + (size_t) t * c, c, osc_key(o, "first", 0, rank, t));
    }
    /* nothing before it: each put goes to a peer no RMA has reached yet */
    MPI_Win_lock_all(0, o->win);
    for (int shift = 1; shift < nprocs; ++shift) {
        int t = (rank + shift) % nprocs;

        MPI_Put(src + (size_t) t * c, (int) c, MPI_BYTE, t, OSC_PAD + (MPI_Aint) (rank * c),
                (int) c, MPI_BYTE, o->win);
    }
    MPI_Win_unlock_all(o->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, o->win);
    for (int f = 0; f < nprocs; ++f) {
        const unsigned char *got = dst + (size_t) f * c;
        uint64_t key = osc_key(o, "first", 0, f, rank);
        long long bad = (f == rank) ? -1 : tp_check(got, c, key);

        if (bad >= 0) {
            osc_fail(o, "put", c, f, "byte %lld is 0x%02x, expected 0x%02x", bad, got[bad],
                     tp_byte(key, (size_t) bad));
        }
    }
    MPI_Win_unlock(rank, o->win);
    free(src);
}

/** Put (or accumulate MPI_REPLACE, whole int64 elements, into the acc
 *  area) from each rank to rank + shift, one shift per epoch. */
static void osc_write(struct osc *o, const char *op, int replace)
{
    size_t smax = osc_max(), off = (replace ? 2 * o->area : 0) + OSC_PAD;
    unsigned char *src = malloc(smax + 1), *dst = o->base + off;

    for (size_t z = 0; z < OSC_NSIZES && osc_sizes[z] <= smax; ++z) {
        size_t len = replace ? osc_sizes[z] / 8 * 8 : osc_sizes[z];

        for (int shift = 1; shift < nprocs; ++shift) {
            int t = (rank + shift) % nprocs, f = (rank - shift + nprocs) % nprocs;
            uint64_t msg = ((uint64_t) z << 16) + (uint64_t) shift;

            osc_local(o);
            memset(dst - OSC_PAD, 0xee, len + 2 * OSC_PAD);
            osc_local_done(o);
            tp_fill(src, len, osc_key(o, op, msg, rank, t));
            osc_epoch(o);
            osc_to(o, t, MPI_LOCK_EXCLUSIVE);
            if (replace) {
                MPI_Accumulate(src, (int) (len / 8), MPI_INT64_T, t, (MPI_Aint) off,
                               (int) (len / 8), MPI_INT64_T, MPI_REPLACE, o->win);
            } else {
                MPI_Put(src, (int) len, MPI_BYTE, t, (MPI_Aint) off, (int) len, MPI_BYTE,
                        o->win);
            }
            if (o->sync == OSC_LOCKALL) {
                /* the buffer is ours again, the data may still be on its
                 * way: what we write into it now must not reach the target */
                MPI_Win_flush_local(t, o->win);
                memset(src, 0x5a, len);
            }
            osc_to_done(o, t);
            osc_epoch_done(o);
            osc_local(o);
            check_bytes(o, op, dst, len, osc_key(o, op, msg, f, rank), f);
            osc_local_done(o);
        }
    }
    free(src);
}

static void osc_put(struct osc *o)
{
    osc_write(o, "put", 0);
}

static void osc_replace(struct osc *o)
{
    osc_write(o, "acc_replace", 1);
}

/** Get from rank + shift, one shift per epoch; each target fills its get
 *  area for the one rank that reads it. */
static void osc_get(struct osc *o)
{
    size_t smax = osc_max(), off = o->area + OSC_PAD;
    unsigned char *buf = malloc(smax + 2 * OSC_PAD), *dst = buf + OSC_PAD;

    for (size_t z = 0; z < OSC_NSIZES && osc_sizes[z] <= smax; ++z) {
        size_t len = osc_sizes[z];

        for (int shift = 1; shift < nprocs; ++shift) {
            int t = (rank + shift) % nprocs, f = (rank - shift + nprocs) % nprocs;
            uint64_t msg = ((uint64_t) z << 16) + (uint64_t) shift;

            osc_local(o);
            tp_fill(o->base + off, len, osc_key(o, "get", msg, rank, f));
            osc_local_done(o);
            memset(buf, 0xee, len + 2 * OSC_PAD);
            osc_epoch(o);
            osc_to(o, t, MPI_LOCK_SHARED);
            MPI_Get(dst, (int) len, MPI_BYTE, t, (MPI_Aint) off, (int) len, MPI_BYTE, o->win);
            osc_to_done(o, t);
            /* passive: the flush or unlock has completed the get */
            if (osc_passive(o)) {
                check_bytes(o, "get", dst, len, osc_key(o, "get", msg, t, rank), t);
            }
            osc_epoch_done(o);
            if (!osc_passive(o)) {
                check_bytes(o, "get", dst, len, osc_key(o, "get", msg, t, rank), t);
            }
        }
    }
    free(buf);
}

/* Accumulate values are integers (initial values 62 or 40 bits, addends 40
 * or 20 bits for int64 or double), so every sum is exact in any order. */
static void acc_value(int dbl, int addend, uint64_t key, size_t i, void *out)
{
    uint64_t m = tp_mix(key + i);

    if (dbl) {
        double d = (double) (m >> (addend ? 44 : 24));
        memcpy(out, &d, sizeof(d));
    } else {
        int64_t v = (int64_t) (m >> (addend ? 24 : 2));
        memcpy(out, &v, sizeof(v));
    }
}

/** Accumulate MPI_SUM from every rank to every other rank in one epoch. */
static void acc_sum(struct osc *o, const char *op, int dbl)
{
    const MPI_Datatype type = dbl ? MPI_DOUBLE : MPI_INT64_T;
    size_t smax = osc_max(), off = 2 * o->area + OSC_PAD;
    unsigned char *src = malloc(smax + 8), *dst = o->base + off;
    uint64_t *keys = malloc((size_t) nprocs * sizeof(*keys));

    for (size_t z = 0; z < OSC_NSIZES && osc_sizes[z] <= smax; ++z) {
        size_t n = osc_sizes[z] / 8;
        uint64_t init = osc_key(o, op, z, rank, rank);

        /* addends depend on the origin only: one buffer serves all targets */
        for (int p = 0; p < nprocs; ++p) {
            keys[p] = osc_key(o, op, z, p, nprocs);
        }
        osc_local(o);
        memset(dst - OSC_PAD, 0xee, OSC_PAD);
        memset(dst + n * 8, 0xee, OSC_PAD);
        for (size_t i = 0; i < n; ++i) {
            acc_value(dbl, 0, init, i, dst + i * 8);
        }
        osc_local_done(o);
        for (size_t i = 0; i < n; ++i) {
            acc_value(dbl, 1, keys[rank], i, src + i * 8);
        }
        osc_epoch(o);
        /* all origins' sums to one target in one epoch: none may be lost */
        for (int shift = 1; shift < nprocs; ++shift) {
            int t = (rank + shift) % nprocs;

            osc_to(o, t, MPI_LOCK_EXCLUSIVE);
            MPI_Accumulate(src, (int) n, type, t, (MPI_Aint) off, (int) n, type, MPI_SUM,
                           o->win);
            osc_to_done(o, t);
        }
        osc_epoch_done(o);
        osc_local(o);
        for (size_t i = 0; i < n; ++i) {
            if (dbl) {
                double got, want, add;

                acc_value(1, 0, init, i, &want);
                for (int p = 0; p < nprocs; ++p) {
                    if (p != rank) {
                        acc_value(1, 1, keys[p], i, &add);
                        want += add;
                    }
                }
                memcpy(&got, dst + i * 8, sizeof(got));
                if (got != want) {
                    osc_fail(o, op, n * 8, -1, "element %zu is %.17g, expected %.17g", i, got,
                             want);
                    break;
                }
            } else {
                int64_t got, want, add;

                acc_value(0, 0, init, i, &want);
                for (int p = 0; p < nprocs; ++p) {
                    if (p != rank) {
                        acc_value(0, 1, keys[p], i, &add);
                        want += add;
                    }
                }
                memcpy(&got, dst + i * 8, sizeof(got));
                if (got != want) {
                    osc_fail(o, op, n * 8, -1, "element %zu is %lld, expected %lld", i,
                             (long long) got, (long long) want);
                    break;
                }
            }
        }
        check_pads(o, op, dst, n * 8, -1);
        osc_local_done(o);
    }
    free(keys);
    free(src);
}

static void osc_acc_int64(struct osc *o)
{
    acc_sum(o, "acc_int64", 0);
}

static void osc_acc_double(struct osc *o)
{
    acc_sum(o, "acc_double", 1);
}

/* --osc-skip: comma-separated OP, SYNC or OP/SYNC */
static int osc_skipped(const char *op, const char *sync)
{
    char both[64];
    const char *p = osc_skip;

    snprintf(both, sizeof(both), "%s/%s", op, sync);
    while (p != NULL && *p != '\0') {
        size_t n = strcspn(p, ",");

        if ((n == strlen(op) && !strncmp(p, op, n)) ||
            (n == strlen(sync) && !strncmp(p, sync, n)) ||
            (n == strlen(both) && !strncmp(p, both, n))) {
            return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/** All ranks agree whether @p op passed in this pass; rank 0 says so. */
static void osc_report(struct osc *o, const char *op)
{
    int bad = o->bad;

    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_check: osc %s/%s %s\n", op, o->sync_name, bad ? "FAILED" : "ok");
        fflush(stdout);
    }
    o->bad = 0;
}

static const struct osc_op {
    const char *name;
    void (*fn)(struct osc *o);
} osc_ops[] = {
    {"put", osc_put},           {"get", osc_get},
    {"acc_int64", osc_acc_int64}, {"acc_double", osc_acc_double},
    {"acc_replace", osc_replace}, {"fop_int64", osc_fop_int64},
    {"fop_double", osc_fop_double}, {"fop_noop", osc_fop_noop},
    {"cas", osc_cas},           {"gacc", osc_gacc},
};

static const struct osc_pass {
    const char *sync_name;
    enum osc_sync sync;
    int create; /* MPI_Win_create over malloc'ed memory, not MPI_Win_allocate */
} osc_passes[] = {
    {"lockall", OSC_LOCKALL, 0}, {"fence", OSC_FENCE, 0},
    {"pscw", OSC_PSCW, 0},       {"lock", OSC_LOCK, 0},
    {"create_lockall", OSC_LOCKALL, 1},
};

void test_osc(void)
{
    struct osc o;
    MPI_Group world;

    memset(&o, 0, sizeof(o));
    o.area = (osc_max() + 63) / 64 * 64 + 2 * OSC_PAD;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &rank, &o.others);
    for (size_t p = 0; p < sizeof(osc_passes) / sizeof(osc_passes[0]); ++p) {
        const struct osc_pass *ps = &osc_passes[p];
        void *mem = NULL;

        o.pass = (int) p;
        o.sync = ps->sync;
        o.sync_name = ps->sync_name;
        if (osc_window(&o, ps->create, &mem)) {
            continue;
        }
        if (rank == 0 && (p == 0 || ps->create)) {
            osc_flavor(&o);
        }
        if (p == 0 && !osc_skipped("put", "first")) {
            o.sync_name = "first";
            osc_first(&o);
            osc_report(&o, "put");
        }
        o.sync_name = ps->sync_name;
        for (size_t k = 0; k < sizeof(osc_ops) / sizeof(osc_ops[0]); ++k) {
            if (osc_skipped(osc_ops[k].name, ps->sync_name)) {
                if (rank == 0) {
                    printf("mpi_check: osc %s/%s skipped\n", osc_ops[k].name, ps->sync_name);
                    fflush(stdout);
                }
                continue;
            }
            osc_ops[k].fn(&o);
            osc_report(&o, osc_ops[k].name);
        }
        MPI_Win_free(&o.win);
        free(mem);
    }
    MPI_Group_free(&o.others);
    MPI_Group_free(&world);
}
