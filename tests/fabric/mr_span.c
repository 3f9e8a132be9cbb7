/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file mr_span.c
 * @brief Does the device register memory regions that do not start on a
 *        page, including ones that cross one more page than their length
 *        rounds up to?  (The nested tier's check of its device model.)
 *
 * Usage: mr_span -d DEV
 * Registers, from one page-aligned buffer of 4 pages, the regions
 * (offset, length): (0, 4096), (64, 256), (4000, 200), (100, 8192),
 * (4095, 2), (2048, 12288) and prints one line per region:
 *   "mr OFFSET LENGTH pages P: ok" or "... : failed (errno text)".
 * Exit 0 when every region registered and deregistered, 1 when one
 * failed, 2 on bad usage or no device.
 *
 * Why: a real ESXi device registers any byte range a process gives it, as
 * every verbs device does.  QEMU 7.2's PVRDMA model mapped a region as
 * ROUND_UP(length) bytes and refused ("Invalid nchunks/length") one whose
 * pages (the driver's nchunks) are more than that: a 200-byte buffer that
 * crosses a page boundary.  Open MPI's openib registers its connection's
 * CTS buffer from malloc() (opal_btl_openib_connect_base_alloc_cts), so
 * openib failed on the tier whenever malloc placed it across a page
 * ("Failed to reg mr!", 2026-12-06).  The bed's QEMU carries
 * qemu-mr-page-span.patch; this program is the check that it does.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "pvrdma_device.h"

static const struct {
    size_t offset, length;
} regions[] = {
    {0, 4096}, {64, 256}, {4000, 200}, {100, 8192}, {4095, 2}, {2048, 12288},
};

int main(int argc, char **argv)
{
    const char *dev = NULL;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    long page = sysconf(_SC_PAGESIZE);
    size_t i, failed = 0;
    char *buf;
    int c;

    while ((c = getopt(argc, argv, "d:")) != -1) {
        if (c != 'd') {
            break;
        }
        dev = optarg;
    }
    if ((dev == NULL) || (c != -1)) {
        fprintf(stderr, "usage: mr_span -d DEV\n");
        return 2;
    }
    ctx = pvrdma_common_open_device(dev);
    if (ctx == NULL) {
        fprintf(stderr, "mr_span: cannot open RDMA device %s: %s\n", dev, strerror(errno));
        return 2;
    }
    pd = ibv_alloc_pd(ctx);
    if (pd == NULL || posix_memalign((void **)&buf, (size_t)page, 4 * (size_t)page) != 0) {
        fprintf(stderr, "mr_span: no PD or no memory on %s\n", ibv_get_device_name(ctx->device));
        return 2;
    }
    memset(buf, 0x5a, 4 * (size_t)page);
    for (i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
        size_t off = regions[i].offset, len = regions[i].length;
        size_t pages = (off + len + (size_t)page - 1) / (size_t)page - off / (size_t)page;
        struct ibv_mr *mr;

        errno = 0;
        mr = ibv_reg_mr(pd, buf + off, len,
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
        if (mr == NULL) {
            printf("mr %zu %zu pages %zu: failed (%s)\n", off, len, pages,
                   strerror(errno ? errno : EINVAL));
            failed++;
        } else {
            printf("mr %zu %zu pages %zu: ok\n", off, len, pages);
        }
        if (mr != NULL && ibv_dereg_mr(mr) != 0) {
            printf("mr %zu %zu pages %zu: deregistration failed\n", off, len, pages);
            failed++;
        }
    }
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    free(buf);
    return failed ? 1 : 0;
}
