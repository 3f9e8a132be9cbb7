/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file tsc-khz.c
 * @brief Prints the host's TSC frequency in kHz, measured against
 *        CLOCK_MONOTONIC_RAW: what `tb` gives its TCG guests as
 *        `tsc_early_khz=`.
 *
 * Why: a TCG guest's TSC is the host's (QEMU reads the host's counter), and
 * the guest kernel calibrates it against the emulated PIT and HPET while
 * eight guests boot on two cores.  On 2026-12-04 one of 8 guests
 * ("tsc: PIT calibration deviates from HPET: 456904 2300045") took the PIT's
 * 457 MHz for a 2.3 GHz TSC; with `tsc=reliable clocksource=tsc` nothing
 * corrected it, and that guest's clock ran 5 x fast: its ranks' 240 s
 * connection timeout passed in 48 s and aborted an 8 x 20 job.
 *
 * Usage: tsc-khz   (x86-64 hosts only; exit status 1 elsewhere)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}

int main(void)
{
    const struct timespec nap = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
    double khz[5];

    /* the median of five 50 ms windows: a window the host preempted us in
     * the middle of is only one of them */
    for (int i = 0; i < 5; ++i) {
        double t0 = now_s();
        uint64_t c0 = __rdtsc();
        double t1;
        uint64_t c1;

        nanosleep(&nap, NULL);
        t1 = now_s();
        c1 = __rdtsc();
        khz[i] = (double) (c1 - c0) / (t1 - t0) / 1000.0;
    }
    qsort(khz, 5, sizeof(khz[0]), cmp_double);
    printf("%.0f\n", khz[2]);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "tsc-khz: not an x86-64 host\n");
    return 1;
}
#endif
