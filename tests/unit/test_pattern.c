/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file test_pattern.c
 * @brief The test data pattern (tests/common/test_pattern.h) catches the
 *        misplaced-data faults that the old patterns let through.
 *
 * Each case builds what a broken transport would deliver and asserts that
 * tp_check reports the first wrong byte:
 * - a rendezvous whose every 256 KiB READ used remote offset 0;
 * - a transfer split in 64 KiB pieces that delivered piece k%2 for piece k;
 * - stale data: an earlier message of the same size (same test, same peer);
 * - the halves of a 512-byte block swapped; another peer's message;
 * - the other direction's message of the same exchange.
 * And that the right data passes, for lengths that are not multiples of 8.
 */
#include "../common/test_pattern.h"
#include "test_util.h"

#include <stdlib.h>

#define MIB (1024u * 1024u)

static unsigned char *msg(size_t len, uint64_t key)
{
    unsigned char *b = malloc(len ? len : 1);

    tp_fill(b, len, key);
    return b;
}

static void test_right_data_passes(void)
{
    static const size_t lens[] = {0, 1, 7, 8, 9, 255, 4096, 65537, 4 * MIB + 3};
    uint64_t t = tp_name("unit");

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); ++i) {
        unsigned char *b = msg(lens[i], tp_key(t, i, 1));

        CHECK_EQ(tp_check(b, lens[i], tp_key(t, i, 1)), (uint64_t)-1);
        for (size_t off = 0; off < lens[i]; off += 4093) {
            CHECK_EQ(b[off], tp_byte(tp_key(t, i, 1), off));
        }
        free(b);
    }
}

/* every 256 KiB chunk of a 1 MiB message read from remote offset 0 */
static void test_read_from_offset_zero(void)
{
    const size_t len = MIB, chunk = 256 * 1024;
    uint64_t key = tp_key(tp_name("p2p"), 20, 1);
    unsigned char *b = msg(len, key);

    for (size_t off = chunk; off < len; off += chunk) {
        memcpy(b + off, b, chunk);
    }
    CHECK_EQ(tp_check(b, len, key), chunk);
    free(b);
}

/* 64 KiB pieces: piece k%2 delivered for piece k */
static void test_split_piece_mixup(void)
{
    const size_t len = 4 * MIB, piece = 64 * 1024;
    uint64_t key = tp_key(tp_name("p2p"), 22, 1);
    unsigned char *b = msg(len, key);

    for (size_t k = 2; k < len / piece; ++k) {
        memcpy(b + k * piece, b + (k % 2) * piece, piece);
    }
    CHECK_EQ(tp_check(b, len, key), 2 * piece);
    free(b);
}

/* stale: message 7 of a size still in the buffer when message 8 of the same
 * size was expected; another peer's and the other direction's message */
static void test_stale_and_foreign(void)
{
    const size_t len = 8192;
    uint64_t t = tp_name("nb");
    unsigned char *b = msg(len, tp_key(t, 7, 3));

    CHECK_EQ(tp_check(b, len, tp_key(t, 8, 3)), 0);
    CHECK_EQ(tp_check(b, len, tp_key(t, 7, 4)), 0);
    CHECK_EQ(tp_check(b, len, tp_key(tp_name("p2p"), 7, 3)), 0);
    free(b);
}

/* the two halves of a 512-byte block swapped, and one byte flipped at the
 * very end (partial last word) */
static void test_swaps_and_tail(void)
{
    const size_t len = 4099;
    uint64_t key = tp_key(tp_name("ssend"), 3, 0);
    unsigned char *b = msg(len, key), tmp[256];

    memcpy(tmp, b + 1024, 256);
    memcpy(b + 1024, b + 1280, 256);
    memcpy(b + 1280, tmp, 256);
    CHECK_EQ(tp_check(b, len, key), 1024);
    tp_fill(b, len, key);
    b[len - 1] ^= 1;
    CHECK_EQ(tp_check(b, len, key), len - 1);
    free(b);
}

/* no short period: no 8-byte word repeats in the first 4 MiB of a message */
static void test_no_repeats(void)
{
    const size_t n = 4 * MIB / 8;
    uint64_t key = tp_key(tp_name("unit"), 0, 0), *w = malloc(n * sizeof(*w));
    size_t dups = 0;

    tp_fill(w, n * 8, key);
    for (size_t i = 1; i < n; ++i) {
        dups += w[i] == w[0] || w[i] == w[i - 1];
    }
    CHECK_EQ(dups, 0);
    free(w);
}

int main(void)
{
    test_right_data_passes();
    test_read_from_offset_zero();
    test_split_piece_mixup();
    test_stale_and_foreign();
    test_swaps_and_tail();
    test_no_repeats();
    return test_done("test_pattern");
}
