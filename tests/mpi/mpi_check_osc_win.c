/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mpi_check_osc_win.c
 * @brief mpi_check's one-sided test: its windows and how each mode opens and closes their epochs (see mpi_check_osc.c for the test and its passes).
 */
#include "mpi_check_osc.h"

int osc_passive(const struct osc *o)
{
    return o->sync == OSC_LOCK || o->sync == OSC_LOCKALL;
}

uint64_t osc_key(const struct osc *o, const char *op, uint64_t msg, int from, int to)
{
    /* windows of later passes may reuse the memory of earlier ones */
    return msg_key(op, ((uint64_t) o->pass << 48) ^ msg, from, to);
}

void osc_fail(struct osc *o, const char *op, size_t len, int peer, const char *fmt, ...)
{
    char what[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    o->bad = 1;
    fail("osc %s/%s %zu B: rank %d from %d: %s", op, o->sync_name, len, rank, peer, what);
}

void osc_local(struct osc *o)
{
    /* passive: origins may hold locks; ours excludes them and syncs memory */
    if (osc_passive(o)) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, o->win);
    }
}

void osc_local_done(struct osc *o)
{
    if (osc_passive(o)) {
        MPI_Win_unlock(rank, o->win);
    }
}

void osc_epoch(struct osc *o)
{
    switch (o->sync) {
    case OSC_FENCE:
        MPI_Win_fence(MPI_MODE_NOPRECEDE, o->win);
        break;
    case OSC_PSCW:
        /* post first: every rank starts an access epoch to all the others */
        MPI_Win_post(o->others, 0, o->win);
        MPI_Win_start(o->others, 0, o->win);
        break;
    case OSC_LOCK:
        /* the targets have prepared their windows */
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case OSC_LOCKALL:
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, o->win);
        break;
    }
}

void osc_epoch_done(struct osc *o)
{
    switch (o->sync) {
    case OSC_FENCE:
        MPI_Win_fence(MPI_MODE_NOSUCCEED, o->win);
        break;
    case OSC_PSCW:
        MPI_Win_complete(o->win);
        MPI_Win_wait(o->win);
        break;
    case OSC_LOCK:
        /* a target looks at its window only when every origin is done */
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case OSC_LOCKALL:
        MPI_Win_unlock_all(o->win);
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

void osc_to(struct osc *o, int target, int lock_type)
{
    if (o->sync == OSC_LOCK) {
        MPI_Win_lock(lock_type, target, 0, o->win);
    }
}

void osc_to_done(struct osc *o, int target)
{
    if (o->sync == OSC_LOCK) {
        MPI_Win_unlock(target, o->win);
    } else if (o->sync == OSC_LOCKALL) {
        MPI_Win_flush(target, o->win);
    }
}

/* Open MPI 4.1 cannot name a window's osc component (--mca osc_base_verbose
 * names rdma and pt2pt as it frees a window, sm and ucx never): this says
 * what the window is, the bed's mpirun options which component it got. */
void osc_flavor(const struct osc *o)
{
    int *flavor, *model, has_flavor, has_model;

    MPI_Win_get_attr(o->win, MPI_WIN_CREATE_FLAVOR, &flavor, &has_flavor);
    MPI_Win_get_attr(o->win, MPI_WIN_MODEL, &model, &has_model);
    printf("mpi_check: osc window flavor %s, model %s\n",
           !has_flavor                           ? "?"
           : *flavor == MPI_WIN_FLAVOR_CREATE   ? "create"
           : *flavor == MPI_WIN_FLAVOR_ALLOCATE ? "allocate"
           : *flavor == MPI_WIN_FLAVOR_DYNAMIC  ? "dynamic"
           : *flavor == MPI_WIN_FLAVOR_SHARED   ? "shared"
                                                : "?",
           !has_model                     ? "?"
           : *model == MPI_WIN_UNIFIED    ? "unified"
           : *model == MPI_WIN_SEPARATE   ? "separate"
                                          : "?");
    fflush(stdout);
}

/** Make the pass's window; 0 when done.  No osc component for it (btl tcp
 *  without osc pt2pt, pt2pt under MPI_THREAD_MULTIPLE) fails the test
 *  rather than aborting the job: every rank finds that alike. */
int osc_window(struct osc *o, int create, void **mem)
{
    MPI_Aint size = (MPI_Aint) (3 * o->area + OSC_SLOTS * 8);
    char err[MPI_MAX_ERROR_STRING];
    int rc, len;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (create) {
        *mem = malloc((size_t) size);
        o->base = *mem;
        rc = MPI_Win_create(*mem, size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &o->win);
    } else {
        rc = MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &o->base, &o->win);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, err, &len);
        fail("osc %s: rank %d: MPI_Win_%s: %s", o->sync_name, rank,
             create ? "create" : "allocate", err);
        if (rank == 0) {
            printf("mpi_check: osc %s window: MPI_Win_%s FAILED: %s\n", o->sync_name,
                   create ? "create" : "allocate", err);
            fflush(stdout);
        }
        free(*mem);
        *mem = NULL;
        return 1;
    }
    return 0;
}
