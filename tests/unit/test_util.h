/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file test_util.h
 * @brief Minimal checks for the unit tests of common/: each failed check
 *        prints file:line and the values, and the test exits non-zero.
 */
#ifndef PVRDMA_TEST_UTIL_H
#define PVRDMA_TEST_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                        \
    do {                                                                   \
        ++test_checks;                                                     \
        if (!(cond)) {                                                     \
            ++test_failures;                                               \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);\
        }                                                                  \
    } while (0)

#define CHECK_EQ(a, b)                                                     \
    do {                                                                   \
        uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);                 \
        ++test_checks;                                                     \
        if (va_ != vb_) {                                                  \
            ++test_failures;                                               \
            fprintf(stderr, "FAIL %s:%d: %s == %s (%" PRIu64 " != %"       \
                    PRIu64 ")\n", __FILE__, __LINE__, #a, #b, va_, vb_);   \
        }                                                                  \
    } while (0)

#define CHECK_STR(a, b)                                                    \
    do {                                                                   \
        const char *sa_ = (a), *sb_ = (b);                                 \
        ++test_checks;                                                     \
        if ((sa_ == NULL) || (sb_ == NULL) || (strcmp(sa_, sb_) != 0)) {   \
            ++test_failures;                                               \
            fprintf(stderr, "FAIL %s:%d: %s == %s (\"%s\" != \"%s\")\n",   \
                    __FILE__, __LINE__, #a, #b, sa_ ? sa_ : "(null)",      \
                    sb_ ? sb_ : "(null)");                                 \
        }                                                                  \
    } while (0)

/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                        \
    do {                                                                   \
        const char *h_ = (hay);                                            \
        ++test_checks;                                                     \
        if ((h_ == NULL) || (strstr(h_, (needle)) == NULL)) {              \
            ++test_failures;                                               \
            fprintf(stderr, "FAIL %s:%d: \"%s\" does not contain \"%s\"\n",\
                    __FILE__, __LINE__, h_ ? h_ : "(null)", (needle));     \
        }                                                                  \
    } while (0)

static inline int test_done(const char *name)
{
    if (test_failures != 0) {
        fprintf(stderr, "%s: %d of %d checks FAILED\n", name, test_failures,
                test_checks);
        return 1;
    }
    printf("%s: all %d checks passed\n", name, test_checks);
    return 0;
}

#endif
