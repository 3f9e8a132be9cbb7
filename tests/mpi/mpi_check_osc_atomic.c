/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_osc_atomic.c
 * @brief mpi_check's one-sided atomics: fetch-and-op, compare-and-swap, get-accumulate on the window's counters (see mpi_check_osc.c for the test and its passes).
 */
#include "mpi_check_osc.h"

/* Every rank works on a counter of every other rank at once (a shared lock
 * in lock mode): fetch_and_op MPI_SUM of rank + 1, FOP_K times (int64 and
 * double), MPI_NO_OP reads, a CAS-increment loop (CAS_K increments), and
 * get_accumulate of the origin's own bit, GACC_ROUNDS times. */
enum { FOP_K = 16, CAS_K = 4, GACC_ROUNDS = 4, CAS_MAX_TRIES = 10000 };

static MPI_Aint slot_disp(const struct osc *o, int slot)
{
    return (MPI_Aint) (3 * o->area + (size_t) slot * 8);
}

static unsigned char *slot_mem(const struct osc *o, int slot)
{
    return o->base + 3 * o->area + (size_t) slot * 8;
}

static int64_t slot_get(const struct osc *o, int slot)
{
    int64_t v;

    memcpy(&v, slot_mem(o, slot), sizeof(v));
    return v;
}

static void slot_set(const struct osc *o, int slot, int64_t v)
{
    memcpy(slot_mem(o, slot), &v, sizeof(v));
}

/** A counter's initial value on rank @p t: 62 bits, so what the test adds
 *  cannot overflow it (and 40 bits in a double stay exact). */
static int64_t slot_init(const struct osc *o, const char *op, uint64_t msg, int t)
{
    return (int64_t) (osc_key(o, op, msg, t, t) >> 2);
}

/** What every other rank adds to rank @p t's fetch_and_op counter. */
static int64_t fop_total(int t)
{
    return (int64_t) FOP_K * ((int64_t) nprocs * (nprocs + 1) / 2 - (t + 1));
}

/** Fetch_and_op MPI_SUM: each fetch sees this origin's earlier adds (same
 *  origin, target and location: accumulate ordering), never its own or later
 *  ones, and the counter ends with all origins' adds. */
static void fop_sum(struct osc *o, const char *op, int dbl)
{
    const int slot = dbl ? OSC_SLOT_FOP_DOUBLE : OSC_SLOT_FOP_INT64;
    const MPI_Datatype type = dbl ? MPI_DOUBLE : MPI_INT64_T;
    const int64_t add = rank + 1;
    const double add_d = (double) add;
    unsigned char *res = malloc((size_t) nprocs * FOP_K * 8);
    int64_t init = slot_init(o, op, 0, rank) >> (dbl ? 22 : 0), got;
    double d;

    osc_local(o);
    d = (double) init;
    memcpy(slot_mem(o, slot), dbl ? (void *) &d : (void *) &init, 8);
    osc_local_done(o);
    osc_epoch(o);
    for (int shift = 1; shift < nprocs; ++shift) {
        int t = (rank + shift) % nprocs;

        osc_to(o, t, MPI_LOCK_SHARED);
        for (int k = 0; k < FOP_K; ++k) {
            MPI_Fetch_and_op(dbl ? (const void *) &add_d : (const void *) &add,
                             res + ((size_t) t * FOP_K + k) * 8, type, t, slot_disp(o, slot),
                             MPI_SUM, o->win);
        }
        osc_to_done(o, t);
    }
    osc_epoch_done(o);
    for (int shift = 1; shift < nprocs; ++shift) {
        int t = (rank + shift) % nprocs;
        int64_t base = slot_init(o, op, 0, t) >> (dbl ? 22 : 0), prev = base - add;

        for (int k = 0; k < FOP_K; ++k) {
            const unsigned char *r = res + ((size_t) t * FOP_K + k) * 8;

            memcpy(dbl ? (void *) &d : (void *) &got, r, 8);
            /* a double that is no integer in range (NaN too) cannot pass */
            if (dbl && !(d >= (double) base && d <= (double) (base + fop_total(t)))) {
                osc_fail(o, op, 8, t, "fetch %d of %d is %.17g, initial %lld, all adds %lld", k,
                         FOP_K, d, (long long) base, (long long) fop_total(t));
                break;
            }
            got = dbl ? (int64_t) d : got;
            if ((dbl && (double) got != d) || got < prev + add ||
                got > base + fop_total(t) - add * (FOP_K - k)) {
                osc_fail(o, op, 8, t,
                         "fetch %d of %d is %lld, previous %lld, initial %lld, all adds %lld", k,
                         FOP_K, (long long) got, (long long) prev, (long long) base,
                         (long long) fop_total(t));
                break;
            }
            prev = got;
        }
    }
    osc_local(o);
    memcpy(dbl ? (void *) &d : (void *) &got, slot_mem(o, slot), 8);
    if (dbl && d != (double) (init + fop_total(rank))) {
        osc_fail(o, op, 8, -1, "counter is %.17g, expected %lld (initial %lld)", d,
                 (long long) (init + fop_total(rank)), (long long) init);
    } else if (!dbl && got != init + fop_total(rank)) {
        osc_fail(o, op, 8, -1, "counter is %lld, expected %lld (initial %lld)", (long long) got,
                 (long long) (init + fop_total(rank)), (long long) init);
    }
    osc_local_done(o);
    free(res);
}

void osc_fop_int64(struct osc *o)
{
    fop_sum(o, "fop_int64", 0);
}

void osc_fop_double(struct osc *o)
{
    fop_sum(o, "fop_double", 1);
}

/** Fetch_and_op MPI_NO_OP reads the target's value and leaves it alone. */
void osc_fop_noop(struct osc *o)
{
    int64_t *res = malloc((size_t) nprocs * FOP_K * sizeof(*res)), dummy = 0;

    osc_local(o);
    slot_set(o, OSC_SLOT_FOP_NOOP, (int64_t) osc_key(o, "fop_noop", 0, rank, rank));
    osc_local_done(o);
    osc_epoch(o);
    for (int shift = 1; shift < nprocs; ++shift) {
        int t = (rank + shift) % nprocs;

        osc_to(o, t, MPI_LOCK_SHARED);
        for (int k = 0; k < FOP_K; ++k) {
            MPI_Fetch_and_op(&dummy, &res[t * FOP_K + k], MPI_INT64_T, t,
                             slot_disp(o, OSC_SLOT_FOP_NOOP), MPI_NO_OP, o->win);
        }
        osc_to_done(o, t);
    }
    osc_epoch_done(o);
    for (int shift = 1; shift < nprocs; ++shift) {
        int t = (rank + shift) % nprocs;
        int64_t want = (int64_t) osc_key(o, "fop_noop", 0, t, t);

        for (int k = 0; k < FOP_K; ++k) {
            if (res[t * FOP_K + k] != want) {
                osc_fail(o, "fop_noop", 8, t, "read %d of %d is %#llx, expected %#llx", k, FOP_K,
                         (unsigned long long) res[t * FOP_K + k], (unsigned long long) want);
                break;
            }
        }
    }
    osc_local(o);
    if (slot_get(o, OSC_SLOT_FOP_NOOP) != (int64_t) osc_key(o, "fop_noop", 0, rank, rank)) {
        osc_fail(o, "fop_noop", 8, -1, "value changed to %#llx",
                 (unsigned long long) slot_get(o, OSC_SLOT_FOP_NOOP));
    }
    osc_local_done(o);
    free(res);
}

/* The CAS-increment loop with one target: read the counter (fetch_and_op
 * MPI_NO_OP), CAS it from old to old + 1, again until CAS_K succeeded. */
struct cas_state {
    int64_t seen;  /* the counter never goes back below what we saw */
    int64_t old;   /* what we read; the CAS expects it */
    int64_t next;  /* old + 1: the CAS's origin buffer */
    int64_t res;   /* what the read or the CAS fetched */
    int cas;       /* 0: read next, 1: CAS next */
    int done;      /* increments that succeeded */
    long tries;
};

/** Issue the next read or CAS of @p s to @p t. */
static void cas_step(struct osc *o, struct cas_state *s, int t)
{
    static const int64_t dummy = 0;

    if (!s->cas) {
        MPI_Fetch_and_op(&dummy, &s->res, MPI_INT64_T, t, slot_disp(o, OSC_SLOT_CAS), MPI_NO_OP,
                         o->win);
    } else {
        s->next = s->old + 1;
        MPI_Compare_and_swap(&s->next, &s->old, &s->res, MPI_INT64_T, t,
                             slot_disp(o, OSC_SLOT_CAS), o->win);
    }
}

/** Take the completed read or CAS of @p s to @p t into account. */
static void cas_settle(struct osc *o, struct cas_state *s, int t)
{
    int64_t init = slot_init(o, "cas", 0, t), top = init + (int64_t) CAS_K * (nprocs - 1);

    if (s->res < s->seen || s->res > top) {
        osc_fail(o, "cas", 8, t, "%s fetched %lld: seen %lld, initial %lld, all increments %lld",
                 s->cas ? "CAS" : "read", (long long) s->res, (long long) s->seen,
                 (long long) init, (long long) (top - init));
        s->done = CAS_K;
        return;
    }
    s->seen = s->res;
    if (!s->cas) {
        s->old = s->res;
    } else if (s->res == s->old) {
        ++s->done;
        s->seen = s->old + 1;
    }
    s->cas = !s->cas;
    if (++s->tries > CAS_MAX_TRIES && s->done < CAS_K) {
        osc_fail(o, "cas", 8, t, "%d of %d increments after %ld tries", s->done, CAS_K, s->tries);
        s->done = CAS_K;
    }
}

/** Every origin increments every other rank's counter CAS_K times: the
 *  counter ends at initial + CAS_K * (nprocs - 1), no increment lost or
 *  doubled.  Passive modes loop per target (all origins on the same target
 *  at once); active modes issue one step to every target per epoch. */
void osc_cas(struct osc *o)
{
    struct cas_state *st = calloc((size_t) nprocs, sizeof(*st));
    int64_t init = slot_init(o, "cas", 0, rank);

    for (int t = 0; t < nprocs; ++t) {
        st[t].seen = slot_init(o, "cas", 0, t);
        st[t].done = (t == rank) ? CAS_K : 0;
    }
    osc_local(o);
    slot_set(o, OSC_SLOT_CAS, init);
    osc_local_done(o);
    if (osc_passive(o)) {
        osc_epoch(o);
        for (int t = 0; t < nprocs; ++t) {
            while (st[t].done < CAS_K) {
                osc_to(o, t, MPI_LOCK_SHARED);
                cas_step(o, &st[t], t);
                osc_to_done(o, t);
                cas_settle(o, &st[t], t);
            }
        }
        osc_epoch_done(o);
    } else {
        for (int all_done = 0; !all_done;) {
            osc_epoch(o);
            for (int t = 0; t < nprocs; ++t) {
                if (st[t].done < CAS_K) {
                    cas_step(o, &st[t], t);
                }
            }
            osc_epoch_done(o);
            all_done = 1;
            for (int t = 0; t < nprocs; ++t) {
                if (st[t].done < CAS_K) {
                    cas_settle(o, &st[t], t);
                    all_done &= st[t].done >= CAS_K;
                }
            }
            /* the epochs are collective: stop when every rank is done */
            MPI_Allreduce(MPI_IN_PLACE, &all_done, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        }
    }
    osc_local(o);
    if (slot_get(o, OSC_SLOT_CAS) != init + (int64_t) CAS_K * (nprocs - 1)) {
        osc_fail(o, "cas", 8, -1, "counter is %lld, expected %lld (initial %lld)",
                 (long long) slot_get(o, OSC_SLOT_CAS),
                 (long long) (init + (int64_t) CAS_K * (nprocs - 1)), (long long) init);
    }
    osc_local_done(o);
    free(st);
}

/** The bits of the ranks but @p except that share rank @p r's gacc slot. */
static int64_t gacc_bits(int r, int except)
{
    int first = r / OSC_GACC_BITS * OSC_GACC_BITS;
    int64_t bits = 0;

    for (int p = first; p < nprocs && p < first + OSC_GACC_BITS; ++p) {
        bits |= (p == except) ? 0 : (int64_t) 1 << (p % OSC_GACC_BITS);
    }
    return bits;
}

/** Get_accumulate MPI_SUM of 1 << origin to every other rank at once: what
 *  an origin fetches minus the initial value holds other origins' bits
 *  only, never its own; the counter ends with all of them. */
void osc_gacc(struct osc *o)
{
    int nslots = (nprocs + OSC_GACC_BITS - 1) / OSC_GACC_BITS;
    int myslot = OSC_SLOT_GACC + rank / OSC_GACC_BITS;
    int64_t mybit = (int64_t) 1 << (rank % OSC_GACC_BITS);
    int64_t *res = malloc((size_t) nprocs * sizeof(*res));

    if (OSC_SLOT_GACC + nslots > OSC_SLOTS) {
        osc_fail(o, "gacc", 8, -1, "%d ranks need more than %d counters", nprocs, OSC_SLOTS);
        free(res);
        return;
    }
    for (int round = 0; round < GACC_ROUNDS; ++round) {
        osc_local(o);
        for (int j = 0; j < nslots; ++j) {
            slot_set(o, OSC_SLOT_GACC + j, slot_init(o, "gacc", (uint64_t) (round * 64 + j), rank));
        }
        osc_local_done(o);
        osc_epoch(o);
        for (int shift = 1; shift < nprocs; ++shift) {
            int t = (rank + shift) % nprocs;

            osc_to(o, t, MPI_LOCK_SHARED);
            MPI_Get_accumulate(&mybit, 1, MPI_INT64_T, &res[t], 1, MPI_INT64_T, t,
                               slot_disp(o, myslot), 1, MPI_INT64_T, MPI_SUM, o->win);
            osc_to_done(o, t);
        }
        osc_epoch_done(o);
        for (int shift = 1; shift < nprocs; ++shift) {
            int t = (rank + shift) % nprocs;
            uint64_t msg = (uint64_t) (round * 64 + myslot - OSC_SLOT_GACC);
            int64_t init = slot_init(o, "gacc", msg, t);
            uint64_t d = (uint64_t) res[t] - (uint64_t) init;
            uint64_t others = (uint64_t) gacc_bits(rank, t) & ~(uint64_t) mybit;

            if ((d & ~others) != 0) {
                osc_fail(o, "gacc", 8, t,
                         "round %d fetched initial + %#llx: %s (other origins: %#llx)", round,
                         (unsigned long long) d,
                         (d & (uint64_t) mybit) ? "holds our own bit" : "not a set of their bits",
                         (unsigned long long) others);
            }
        }
        osc_local(o);
        for (int j = 0; j < nslots; ++j) {
            int64_t init = slot_init(o, "gacc", (uint64_t) (round * 64 + j), rank);
            int64_t want = init + gacc_bits(j * OSC_GACC_BITS, rank);

            if (slot_get(o, OSC_SLOT_GACC + j) != want) {
                osc_fail(o, "gacc", 8, -1,
                         "round %d counter %d is initial + %#llx, expected + %#llx", round, j,
                         (unsigned long long) (slot_get(o, OSC_SLOT_GACC + j) - init),
                         (unsigned long long) (want - init));
            }
        }
        osc_local_done(o);
    }
    free(res);
}
