/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file test_pattern.h
 * @brief Test data whose every byte is a function of (test, message,
 *        direction, offset), shared by every data-checking test program.
 *
 * Why a 64-bit mixing hash and not a simple formula: a pattern that repeats
 * (every 128 KiB, or within 512 B) or that depends only on the size lets a
 * transport that moves the wrong piece pass: a rendezvous whose READs all use
 * remote offset 0, a split transfer that delivers piece k%2 for piece k,
 * stale data of an earlier message of the same size.  Here each aligned
 * 8-byte word is splitmix64(key + word index), so no two words of any two
 * messages agree except by chance (2^-64 per word).
 *
 * Usage: key = tp_key(tp_name("p2p"), message_number, direction); then
 * tp_fill(buf, len, key) on the sender and tp_check(buf, len, key) (returns
 * the first wrong offset, or -1) on the receiver.  Header only, C11, no
 * dependencies: the MPI programs, the UCP check and the unit tests include it.
 */
#ifndef PVRDMA_TEST_PATTERN_H
#define PVRDMA_TEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "test_pattern.h: tp_fill writes words little-endian, as tp_byte reads them"
#endif

/** splitmix64's finaliser: a bijection that mixes every input bit. */
static inline uint64_t tp_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/** A test's identity from its name (FNV-1a, then mixed). */
static inline uint64_t tp_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *name != '\0'; ++name) {
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    }
    return tp_mix(h);
}

/** The key of one message: test, message number (or tag, or size index),
 *  direction (e.g. sender rank * nranks + receiver rank, or 0/1). */
static inline uint64_t tp_key(uint64_t test, uint64_t message, uint64_t direction)
{
    return tp_mix(tp_mix(test ^ tp_mix(message)) + direction);
}

/** The byte at @p off of the message with @p key. */
static inline unsigned char tp_byte(uint64_t key, size_t off)
{
    return (unsigned char)(tp_mix(key + (off >> 3)) >> ((off & 7) * 8));
}

static inline void tp_fill(void *buf, size_t len, uint64_t key)
{
    unsigned char *p = (unsigned char*)buf;
    size_t w, nwords = len >> 3;
    uint64_t v;

    for (w = 0; w < nwords; ++w) {
        v = tp_mix(key + w);
        memcpy(p + (w << 3), &v, sizeof(v));
    }
    for (w = nwords << 3; w < len; ++w) {
        p[w] = tp_byte(key, w);
    }
}

/** First offset whose byte is wrong, or -1 when all @p len bytes are right. */
static inline long long tp_check(const void *buf, size_t len, uint64_t key)
{
    const unsigned char *p = (const unsigned char*)buf;
    size_t w, b, nwords = len >> 3;
    uint64_t v, got;

    for (w = 0; w < nwords; ++w) {
        v = tp_mix(key + w);
        memcpy(&got, p + (w << 3), sizeof(got));
        if (got != v) {
            for (b = w << 3; ; ++b) {
                if (p[b] != tp_byte(key, b)) {
                    return (long long)b;
                }
            }
        }
    }
    for (b = nwords << 3; b < len; ++b) {
        if (p[b] != tp_byte(key, b)) {
            return (long long)b;
        }
    }
    return -1;
}

#endif
