/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_osc.h
 * @brief What the parts of mpi_check's one-sided test share: the window of
 *        a pass, its epochs, the failure of an op (mpi_check_osc.c holds the
 *        passes and the data movement, mpi_check_osc_win.c the windows and
 *        epochs, mpi_check_osc_atomic.c the atomics).
 */
#ifndef MPI_CHECK_OSC_H
#define MPI_CHECK_OSC_H

#include "mpi_check.h"

/* Window of every rank: [put area][get area][acc area][OSC_SLOTS counters].
 * Each area holds OSC_PAD sentinel bytes, up to S data bytes, OSC_PAD more. */
enum { OSC_PAD = 64, OSC_SLOTS = 64 };

/* The counter slots (8 bytes each, at 3 * area) */
enum {
    OSC_SLOT_FOP_INT64 = 0,
    OSC_SLOT_FOP_DOUBLE = 1,
    OSC_SLOT_FOP_NOOP = 2,
    OSC_SLOT_CAS = 3,
    OSC_SLOT_GACC = 8, /* one per OSC_GACC_BITS origins, up to the last slot */
    OSC_GACC_BITS = 62 /* origin bits per slot: initial value + all of them < 2^63 */
};

enum osc_sync { OSC_FENCE, OSC_PSCW, OSC_LOCK, OSC_LOCKALL };

/** One pass of the osc test: a window and how its epochs synchronise. */
struct osc {
    MPI_Win win;
    unsigned char *base;   /* this rank's window */
    size_t area;           /* bytes of each of the put, get and acc areas */
    enum osc_sync sync;
    const char *sync_name; /* in the summary lines and failure messages */
    int pass;              /* in every key: no pass can pass on another's data */
    MPI_Group others;      /* every rank but this one: the PSCW groups */
    int bad;               /* this rank saw the current op fail */
};

/* mpi_check_osc_win.c */
/** Make the pass's window (@p create: over malloc'ed *@p mem); 0 when done. */
int osc_window(struct osc *o, int create, void **mem);
/** Rank 0 says the window's flavor and memory model. */
void osc_flavor(const struct osc *o);
/** Lock and lockall: passive target, the target takes no part in epochs. */
int osc_passive(const struct osc *o);
/** The key of message @p msg of @p op in this pass from @p from to @p to. */
uint64_t osc_key(const struct osc *o, const char *op, uint64_t msg, int from, int to);
/** Record a failure of @p op as "osc OP/SYNC LEN B: rank R from PEER: ...". */
void osc_fail(struct osc *o, const char *op, size_t len, int peer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/** Around loads and stores of this rank's own window. */
void osc_local(struct osc *o);
void osc_local_done(struct osc *o);
/** Open and close an epoch of the pass's mode (collective); after
 *  osc_epoch_done every target holds what every origin did to it. */
void osc_epoch(struct osc *o);
void osc_epoch_done(struct osc *o);
/** Around the operations to @p target inside an epoch (lock: lock/unlock,
 *  lockall: flush after them); in passive modes their results are ready
 *  after osc_to_done. */
void osc_to(struct osc *o, int target, int lock_type);
void osc_to_done(struct osc *o, int target);

/* mpi_check_osc_atomic.c */
void osc_fop_int64(struct osc *o);
void osc_fop_double(struct osc *o);
void osc_fop_noop(struct osc *o);
void osc_cas(struct osc *o);
void osc_gacc(struct osc *o);

#endif /* MPI_CHECK_OSC_H */
