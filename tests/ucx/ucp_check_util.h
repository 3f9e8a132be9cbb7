/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file ucp_check_util.h
 * @brief What the parts of ucp_tag_check share: its exit codes and
 *        globals, the error and exit helpers, the TCP side channel and the
 *        UCP request helpers (all in ucp_check_util.c).
 */
#ifndef UCP_CHECK_UTIL_H
#define UCP_CHECK_UTIL_H

#include <ucp/api/ucp.h>

#include <stddef.h>
#include <stdint.h>

enum {
    EXIT_DATA    = 1,
    EXIT_UCP     = 2,
    EXIT_TCP     = 3,
    EXIT_USAGE   = 4,
    EXIT_STALLED = 5
};

extern ucp_worker_h worker;
extern double stall_limit; /* seconds (-w); 0 = none */
extern int closing;        /* all data checked: the peer may go away */

/* --- errors --------------------------------------------------------------- */

/** Flush stdio and _exit(@p code), running no library destructors. */
void leave(int code) __attribute__((noreturn));
/** "ucp_tag_check: UCP error: WHAT: <status string>" on stderr, exit 2. */
void ucp_die(ucs_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/** "ucp_tag_check: TCP: WHAT: <strerror>" on stderr (err 0: closed), exit 3. */
void tcp_die(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/** Seconds on the monotonic clock. */
double now_sec(void);
/** Exit 5 ("ucp_tag_check: stalled: WHAT: ...") -w seconds after @p since. */
void check_stall(double since, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** The ep error handler (-e): "peer failure" (exit 2) unless closing. */
void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status);

/* --- TCP side channel ----------------------------------------------------- */

/** Send @p len bytes to the peer or die (tcp_die, @p what). */
void tcp_send(int fd, const void *buf, size_t len, const char *what);
/** Receive @p len bytes from the peer while progressing the worker, or die. */
void tcp_recv_progress(int fd, void *buf, size_t len, const char *what);
/** Send the one-byte @p token. */
void tcp_token(int fd, char token, const char *what);
/** Receive one byte and exit 3 unless it is @p token. */
void tcp_expect(int fd, char token, const char *what);
/** The client's side channel to @p host:@p port, or exit 3. */
int tcp_connect(const char *host, int port);
/** The server's side channel: one client accepted on @p port, or exit 3. */
int tcp_accept(int port);

/* --- UCP helpers ---------------------------------------------------------- */

/** Post a tag send: its request, or NULL when it completed in place. */
void *post_send(ucp_ep_h ep, const void *buf, size_t len, ucp_tag_t tag,
                const char *what, size_t a);
/** Post a tag receive on the worker: always a request. */
void *post_recv(void *buf, size_t len, ucp_tag_t tag, const char *what,
                size_t a);
/** 1 when @p *req is done (checked, freed, set to NULL); an error dies. */
int req_done(void **req, int is_recv, ucp_tag_recv_info_t *info,
             const char *what, size_t a, ucp_tag_t tag, size_t len);
/** Progress until @p *req is done (req_done) or stalls (check_stall). */
void wait_one(void **req, int is_recv, ucp_tag_recv_info_t *info,
              const char *what, size_t a, ucp_tag_t tag, size_t len);
/** 1 when @p buf holds the message of @p key, else 0 and a "FAIL ..." line. */
int check_msg(const unsigned char *buf, size_t len, size_t got,
              uint64_t key, const char *dir, const char *prefix);

#endif /* UCP_CHECK_UTIL_H */
