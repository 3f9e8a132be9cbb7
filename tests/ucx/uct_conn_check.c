/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file uct_conn_check.c
 * @brief UCT-level checks of the "pvrdma" transport's connection resources:
 *        the shared CQ budget and credits under bursts on many endpoints,
 *        and connection churn (run with the transport preloaded).
 *
 *   server:  uct_conn_check -d DEV -p PORT [-a ABANDON] [-e EPS -n MSGS | -c CYCLES]
 *   client:  uct_conn_check -d DEV -p PORT [-e EPS -n MSGS | -c CYCLES] HOST
 *   client:  uct_conn_check -d DEV -p PORT -a ABANDON HOST
 *
 * The two processes open one pvrdma iface each on DEV (e.g. rxe0:1) and
 * exchange its addresses over a TCP socket, then:
 *
 * - burst (-e E -n N): the client connects E endpoints to the server's
 *   iface (the server gets E passive channels) and sends N active messages
 *   on each, round robin, every endpoint as many as it takes each round
 *   until the transport says UCS_ERR_NO_RESOURCE: each burst ends when the
 *   CQ budget or the credits run out (with a small UCX_PVRDMA_CQ_LEN on the
 *   client, the CQ budget); then it progresses and goes on.  Every message
 *   carries (endpoint, sequence) and a size and payload that are functions
 *   of them (test_pattern.h); the server checks each one, and that each
 *   endpoint's arrive in order.  "ok burst: ..." names the number of bursts
 *   and the largest.
 * - churn (-c C): C times, the client creates an endpoint, sends one
 *   message, flushes and destroys the endpoint (the server's channel is
 *   freed on the disconnect, which the client's transport resends until
 *   it is acknowledged: the client progresses until the server's verdict).
 *   The server counts its QPs (`rdma resource show qp`) before the first
 *   connection and, for up to 30 s, after the last: "ok QPs: ..." when they
 *   are as many again.  -P KB lets the pinned memory at the end exceed the
 *   start by KB (the receive pool keeps chunks it grew by while several
 *   channels were open at once: lost disconnects).  Both print the memory their process has
 *   pinned (/proc/self/status VmPin, registered memory) after the first
 *   connection and at the end: "ok pinned: start S kB, end E kB"; the end
 *   may not exceed the start (a leak of receive buffers grows it).
 * - abandon (-a A): a first client opens A endpoints to the server's iface
 *   (each sends a connection request) and exits 2 s later without ever
 *   progressing or closing them: no confirmation, no disconnect, as if it
 *   died.  The server then runs the burst or churn with a second client as
 *   above; what became of the abandoned connections the transport says at
 *   close (tests/bed/ucx.sh reads it).
 *
 * - stall (-k, both sides; the client also -g GOFILE): the per-endpoint stall
 *   kick (issue 34, item 4).  The client connects endpoints A (0) and B (1),
 *   prints "stall: endpoint B 0xPTR connected", and from then on sends one
 *   message on A every 5 ms (completions and credits keep arriving on the
 *   iface) until it ends.  When GOFILE exists (the test script has set the
 *   client's egress to drop every packet to B's peer QP: tests/bed/ucx.sh),
 *   it sends N messages on B and flushes B, while A goes on.  The drop is
 *   lifted a few seconds later; nothing else is sent on B, so with a long
 *   UCX_PVRDMA_TIMEOUT only a kick of B (a later packet, which the peer
 *   answers with a sequence NAK and RC resends) ends the wait before RC's
 *   timer.  "ok stall: ..." says after how long B's flush completed and
 *   what A sent meanwhile; the server checks every message of both.
 *
 * Last line: "PASSED: ..." or "FAILED: ..." (exit 1); UCT errors "uct_conn_check:
 * UCT error: WHAT: STATUS" (exit 2), TCP "uct_conn_check: TCP: ..." (exit 3),
 * usage (exit 4), "uct_conn_check: stalled: ..." when nothing moved for -w
 * seconds (default 120; exit 5).
 */
#define _GNU_SOURCE
#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>

#include "../common/side_channel.h"
#include "../common/test_pattern.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define AM_ID        7
#define HELLO_MAGIC  0x7563746367636b31ull /* "uctcgck1" */
#define MAX_ADDR     256
#define MAX_SIZE     2048   /* payload bytes, below any SEG_SIZE */

typedef struct {
    uint64_t magic;
    uint32_t eps, msgs, cycles, abandon, stall;
    uint32_t dev_len, iface_len;
    uint8_t  dev_addr[MAX_ADDR];
    uint8_t  iface_addr[MAX_ADDR];
} hello_t;

typedef struct {
    uint32_t ep;
    uint32_t seq;
} msg_hdr_t;

static uct_worker_h worker;
static uct_iface_h iface;
static uint64_t test_key;
static unsigned opt_eps = 16, opt_msgs = 100, opt_cycles, opt_abandon;
static int opt_stall;                    /* -k */
static const char *go_file = "/tmp/uct_conn_check.go";   /* -g */
static double stall_limit = 120;
static double last_move;
/* server state */
static uint32_t *expected;    /* next sequence number per endpoint */
static uint64_t received, bad;
static long pin_start = -1, pin_end = -1;
static int qp_start = -1, qp_end = -1;   /* server, churn: its RDMA QPs */
static long pin_slack_kb;                /* -P: growth allowed */

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(int code, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static void die(int code, const char *kind, const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fprintf(stderr, "uct_conn_check: %s: ", kind);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(NULL);
    _exit(code);
}

#define UCT_CHECK(_call, _what) \
    do { \
        ucs_status_t _s = (_call); \
        if (_s != UCS_OK) { \
            die(2, "UCT error", "%s: %s", _what, ucs_status_string(_s)); \
        } \
    } while (0)

/* Registered memory of this process, in kB (-1 if the kernel has no line) */
static long vm_pinned_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "VmPin: %ld kB", &kb) == 1) {
            break;
        }
    }
    fclose(f);
    return kb;
}

/* This process's QPs as the kernel lists them (`rdma resource show qp`),
 * -1 if that cannot be run: what the transport really holds, not what it
 * says it holds */
static int rdma_qps(void)
{
    char line[512], me[32];
    int n = 0;
    FILE *f = popen("rdma resource show qp 2>/dev/null", "r");

    if (f == NULL) {
        return -1;
    }
    snprintf(me, sizeof(me), " pid %d ", (int)getpid());
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = ' ';
        n += (strstr(line, me) != NULL);
    }
    return (pclose(f) == 0) ? n : -1;
}

static size_t msg_size(uint32_t ep, uint32_t seq)
{
    return (size_t)(tp_mix(((uint64_t)ep << 32) | seq) % (MAX_SIZE + 1));
}

static void progress(const char *what)
{
    if (uct_worker_progress(worker) > 0) {
        last_move = now_sec();
    } else if ((stall_limit > 0) && (now_sec() - last_move > stall_limit)) {
        die(5, "stalled", "%s: nothing moved for %.0f s", what, stall_limit);
    }
}

/* --- TCP side channel ----------------------------------------------------- */

static void xfer(int fd, void *buf, size_t len, int out)
{
    int err = sc_xfer(fd, buf, len, out);

    if (err != 0) {
        die(3, "TCP", "%s: %s", out ? "send" : "recv",
            (err < 0) ? "connection closed by the peer" : strerror(err));
    }
}

/* the server (no @p host) accepts, the client connects */
static int tcp_connect(const char *host, int port)
{
    const char *what = "connect";
    int err, fd;

    fd = (host == NULL) ? sc_accept(port, &err, &what) : sc_connect(host, port, &err);
    if (fd < 0) {
        die(3, "TCP", "%s %s:%d: %s", what, (host != NULL) ? host : "port", port,
            (err < 0) ? gai_strerror(err) : strerror(err));
    }
    return fd;
}

/* --- UCT ------------------------------------------------------------------ */

static ucs_status_t am_handler(void *arg, void *data, size_t length,
                               unsigned flags)
{
    const msg_hdr_t *hdr = data;
    size_t size;
    long long off;

    (void)arg;
    (void)flags;
    last_move = now_sec();
    if ((length < sizeof(*hdr)) || (hdr->ep >= opt_eps)) {
        printf("FAIL message %" PRIu64 ": %zu bytes, endpoint %u\n", received,
               length, (length >= sizeof(*hdr)) ? hdr->ep : 0);
        ++bad;
        ++received;
        return UCS_OK;
    }

    size = msg_size(hdr->ep, hdr->seq);
    if (hdr->seq != expected[hdr->ep]) {
        printf("FAIL endpoint %u: message %u arrived, %u expected\n", hdr->ep,
               hdr->seq, expected[hdr->ep]);
        ++bad;
    } else if (length != sizeof(*hdr) + size) {
        printf("FAIL endpoint %u message %u: %zu bytes, %zu expected\n",
               hdr->ep, hdr->seq, length, sizeof(*hdr) + size);
        ++bad;
    } else if ((off = tp_check(hdr + 1, size,
                               tp_key(test_key, hdr->seq, hdr->ep))) >= 0) {
        printf("FAIL endpoint %u message %u (%zu bytes): wrong byte at "
               "offset %lld\n", hdr->ep, hdr->seq, size, off);
        ++bad;
    }
    expected[hdr->ep] = hdr->seq + 1;
    ++received;

    if (opt_cycles > 0) {
        /* churn: one connection alive at these two */
        if (hdr->seq == 1) {
            pin_start = vm_pinned_kb();
        }
    }
    return UCS_OK;
}

static size_t pack_msg(void *dest, void *arg)
{
    const msg_hdr_t *m = arg;
    msg_hdr_t *hdr     = dest;
    size_t size        = msg_size(m->ep, m->seq);

    *hdr = *m;
    tp_fill(hdr + 1, size, tp_key(test_key, m->seq, m->ep));
    return sizeof(*hdr) + size;
}

/* One message; 1 when it went, 0 when the transport has no resources */
static int send_msg(uct_ep_h ep, uint32_t index, uint32_t seq)
{
    msg_hdr_t m = { .ep = index, .seq = seq };
    ssize_t ret = uct_ep_am_bcopy(ep, AM_ID, pack_msg, &m, 0);

    if (ret >= 0) {
        last_move = now_sec();
        return 1;
    }
    if (ret == UCS_ERR_NO_RESOURCE) {
        return 0;
    }
    die(2, "UCT error", "am_bcopy on endpoint %u: %s", index,
        ucs_status_string((ucs_status_t)ret));
}

static void flush_ep(uct_ep_h ep)
{
    ucs_status_t status;

    while ((status = uct_ep_flush(ep, 0, NULL)) != UCS_OK) {
        if ((status != UCS_INPROGRESS) && (status != UCS_ERR_NO_RESOURCE)) {
            die(2, "UCT error", "ep flush: %s", ucs_status_string(status));
        }
        progress("flush");
    }
}

static uct_ep_h create_ep(const hello_t *peer)
{
    uct_ep_params_t params;
    uct_ep_h ep;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                        UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = iface;
    params.dev_addr   = (const uct_device_addr_t*)peer->dev_addr;
    params.iface_addr = (const uct_iface_addr_t*)peer->iface_addr;
    UCT_CHECK(uct_ep_create(&params, &ep), "ep_create");
    return ep;
}

static void open_iface(const char *dev, uct_md_h *md_p, hello_t *hello)
{
    uct_component_h *components;
    unsigned num_components, i;
    uct_component_attr_t attr;
    uct_md_config_t *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_iface_attr_t iattr;
    ucs_async_context_t *async;
    char md_name[UCT_MD_NAME_MAX];
    const char *colon = strchr(dev, ':');
    uct_md_h md = NULL;

    if ((colon == NULL) || ((size_t)(colon - dev) >= sizeof(md_name))) {
        die(4, "usage", "-d DEV:PORT, e.g. rxe0:1 (got '%s')", dev);
    }
    memcpy(md_name, dev, colon - dev);
    md_name[colon - dev] = '\0';

    UCT_CHECK(uct_query_components(&components, &num_components),
              "query_components");
    for (i = 0; i < num_components; ++i) {
        memset(&attr, 0, sizeof(attr));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        UCT_CHECK(uct_component_query(components[i], &attr),
                  "component_query");
        if (!strcmp(attr.name, "pvrdma")) {
            UCT_CHECK(uct_md_config_read(components[i], NULL, NULL,
                                         &md_config), "md_config_read");
            UCT_CHECK(uct_md_open(components[i], md_name, md_config, &md),
                      "md_open");
            uct_config_release(md_config);
            break;
        }
    }
    uct_release_component_list(components);
    if (md == NULL) {
        die(2, "UCT error", "no component 'pvrdma' (is libuct_pvrdma.so "
            "preloaded?): %s", ucs_status_string(UCS_ERR_NO_DEVICE));
    }

    UCT_CHECK(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                       &async), "async_context_create");
    UCT_CHECK(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker),
              "worker_create");
    UCT_CHECK(uct_md_iface_config_read(md, "pvrdma", NULL, NULL, &config),
              "iface_config_read");
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE |
                                  UCT_IFACE_PARAM_FIELD_STATS_ROOT |
                                  UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "pvrdma";
    params.mode.device.dev_name = dev;
    params.stats_root           = NULL;
    params.rx_headroom          = 0;
    UCT_CHECK(uct_iface_open(md, worker, &params, config, &iface),
              "iface_open");
    uct_config_release(config);
    UCT_CHECK(uct_iface_set_am_handler(iface, AM_ID, am_handler, NULL, 0),
              "set_am_handler");
    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    UCT_CHECK(uct_iface_query(iface, &iattr), "iface_query");
    if ((iattr.device_addr_len > MAX_ADDR) || (iattr.iface_addr_len > MAX_ADDR)) {
        die(2, "UCT error", "addresses too long: %s",
            ucs_status_string(UCS_ERR_BUFFER_TOO_SMALL));
    }
    if (iattr.cap.am.max_bcopy < sizeof(msg_hdr_t) + MAX_SIZE) {
        die(4, "usage", "am_bcopy takes %zu bytes, the test sends %zu",
            iattr.cap.am.max_bcopy, sizeof(msg_hdr_t) + MAX_SIZE);
    }
    memset(hello, 0, sizeof(*hello));
    hello->dev_len   = iattr.device_addr_len;
    hello->iface_len = iattr.iface_addr_len;
    UCT_CHECK(uct_iface_get_device_address(iface,
                      (uct_device_addr_t*)hello->dev_addr), "get_device_address");
    UCT_CHECK(uct_iface_get_address(iface,
                      (uct_iface_addr_t*)hello->iface_addr), "get_address");
    *md_p = md;
}

/* client: bursts on E endpoints until every one has sent N */
static void run_burst(const hello_t *peer, unsigned *bursts_p,
                      unsigned *largest_p)
{
    uct_ep_h *eps    = calloc(opt_eps, sizeof(*eps));
    uint32_t *next   = calloc(opt_eps, sizeof(*next));
    uint64_t total   = (uint64_t)opt_eps * opt_msgs, sent = 0;
    unsigned bursts = 0, largest = 0, burst = 0, e;
    int went;

    if ((eps == NULL) || (next == NULL)) {
        die(4, "usage", "out of memory");
    }
    for (e = 0; e < opt_eps; ++e) {
        eps[e] = create_ep(peer);
    }

    while (sent < total) {
        went = 0;
        for (e = 0; e < opt_eps; ++e) {
            while ((next[e] < opt_msgs) && send_msg(eps[e], e, next[e])) {
                ++next[e];
                ++sent;
                ++burst;
                went = 1;
            }
        }
        if (!went && (burst > 0)) {
            /* every endpoint was refused: the burst ended */
            ++bursts;
            largest = (burst > largest) ? burst : largest;
            burst   = 0;
        }
        progress("burst");
    }
    if (burst > 0) {
        ++bursts;
        largest = (burst > largest) ? burst : largest;
    }

    for (e = 0; e < opt_eps; ++e) {
        flush_ep(eps[e]);
    }
    for (e = 0; e < opt_eps; ++e) {
        uct_ep_destroy(eps[e]);
    }
    free(eps);
    free(next);
    *bursts_p  = bursts;
    *largest_p = largest;
}

/* client: C connections, one message each */
static void run_churn(const hello_t *peer)
{
    unsigned i;
    uct_ep_h ep;

    for (i = 0; i < opt_cycles; ++i) {
        ep = create_ep(peer);
        while (!send_msg(ep, 0, i)) {
            progress("churn: send");
        }
        flush_ep(ep);
        uct_ep_destroy(ep);
        if (i == 0) {
            pin_start = vm_pinned_kb();
        }
    }
    /* let the disconnects go out */
    for (i = 0; i < 1000; ++i) {
        uct_worker_progress(worker);
    }
    pin_end = vm_pinned_kb();
}

/* client -a: connection requests it never follows up */
static void run_abandon(const hello_t *peer)
{
    unsigned i;

    for (i = 0; i < opt_abandon; ++i) {
        (void)create_ep(peer);
    }
    sleep(2);   /* the requests leave; their replies are never read */
    printf("ok abandoned %u endpoints\n", opt_abandon);
    fflush(stdout);
    _exit(0);   /* no ep destroy: no disconnect */
}

/* client -k: A streams (one message per 5 ms) while B's WRs are lost on
 * the wire and B's flush waits; returns the messages sent on both */
static uint64_t run_stall(const hello_t *peer)
{
    uct_ep_h eps[2];
    uint32_t next[2] = { 0, 0 }, a_during;
    double next_a = 0, t0, waited;
    ucs_status_t status;
    unsigned e;

    for (e = 0; e < 2; ++e) {
        eps[e] = create_ep(peer);
        while (!send_msg(eps[e], e, next[e])) {
            progress("stall: connect");
        }
        ++next[e];
        flush_ep(eps[e]);
    }
    printf("stall: endpoint B %p connected, waiting for %s\n", (void*)eps[1],
           go_file);
    fflush(stdout);

    /* A: one message per 5 ms from here to the end */
#define STALL_STREAM_A() \
    do { \
        if ((now_sec() >= next_a) && send_msg(eps[0], 0, next[0])) { \
            ++next[0]; \
            next_a = now_sec() + 0.005; \
        } \
        progress("stall"); \
    } while (0)

    while (access(go_file, F_OK) != 0) {
        STALL_STREAM_A();
    }
    t0       = now_sec();
    a_during = next[0];
    while (next[1] < 1 + opt_msgs) {
        if (send_msg(eps[1], 1, next[1])) {
            ++next[1];
        } else {
            STALL_STREAM_A();
        }
    }
    while ((status = uct_ep_flush(eps[1], 0, NULL)) != UCS_OK) {
        if ((status != UCS_INPROGRESS) && (status != UCS_ERR_NO_RESOURCE)) {
            die(2, "UCT error", "flush of endpoint B: %s",
                ucs_status_string(status));
        }
        STALL_STREAM_A();
    }
#undef STALL_STREAM_A
    waited   = now_sec() - t0;
    a_during = next[0] - a_during;
    printf("ok stall: endpoint B's %u messages and its flush completed after "
           "%.1f s, while endpoint A sent %u messages\n", opt_msgs, waited,
           a_during);
    flush_ep(eps[0]);
    uct_ep_destroy(eps[0]);
    uct_ep_destroy(eps[1]);
    return (uint64_t)next[0] + next[1];
}

static int pin_verdict(void)
{
    if (opt_cycles == 0) {
        return 1;
    }
    if ((pin_start < 0) || (pin_end < 0)) {
        printf("FAIL pinned memory unknown (no VmPin in /proc/self/status)\n");
        return 0;
    }
    if (pin_end > pin_start + pin_slack_kb) {
        printf("FAIL pinned: start %ld kB, end %ld kB after %u connections\n",
               pin_start, pin_end, opt_cycles);
        return 0;
    }
    printf("ok pinned: start %ld kB, end %ld kB after %u connections%s\n",
           pin_start, pin_end, opt_cycles,
           (pin_end > pin_start) ? " (within -P)" : "");
    return 1;
}

int main(int argc, char **argv)
{
    const char *dev = "rxe0:1", *host;
    hello_t hello, peer;
    int port = 13600, c, fd, pass;
    unsigned bursts = 0, largest = 0;
    uint64_t result[2], want;
    uct_md_h md;

    while ((c = getopt(argc, argv, "d:p:e:n:c:w:a:P:kg:")) != -1) {
        switch (c) {
        case 'd': dev         = optarg; break;
        case 'p': port        = atoi(optarg); break;
        case 'e': opt_eps     = strtoul(optarg, NULL, 0); break;
        case 'n': opt_msgs    = strtoul(optarg, NULL, 0); break;
        case 'c': opt_cycles  = strtoul(optarg, NULL, 0); break;
        case 'w': stall_limit = atof(optarg); break;
        case 'a': opt_abandon = strtoul(optarg, NULL, 0); break;
        case 'P': pin_slack_kb = atol(optarg); break;
        case 'k': opt_stall   = 1; break;
        case 'g': go_file     = optarg; break;
        default:
            die(4, "usage", "uct_conn_check -d DEV -p PORT [-a ABANDON] "
                "[-e EPS -n MSGS | -c CYCLES | -k [-g GOFILE] -n MSGS] "
                "[-w SEC] [HOST]");
        }
    }
    if (opt_cycles > 0) {
        opt_eps  = 1;
        opt_msgs = opt_cycles;
    }
    if (opt_stall) {
        opt_eps = 2;   /* A and B */
    }
    if ((opt_eps == 0) || (opt_msgs == 0)) {
        die(4, "usage", "-e and -n must be > 0");
    }
    host     = (optind < argc) ? argv[optind] : NULL;
    test_key = tp_name(opt_cycles ? "uct churn" :
                       opt_stall ? "uct stall" : "uct burst");
    expected = calloc(opt_eps, sizeof(*expected));

    open_iface(dev, &md, &hello);
    if ((opt_cycles > 0) && (optind >= argc)) {
        qp_start = rdma_qps();   /* server: its connection QP only */
    }
    hello.magic  = HELLO_MAGIC;
    hello.eps    = opt_eps;
    hello.msgs   = opt_msgs;
    hello.cycles = opt_cycles;
    hello.abandon = opt_abandon;
    hello.stall  = opt_stall;
    if (opt_abandon > 0) {
        /* the abandoning client first; the server then takes the next */
        fd = tcp_connect(host, port);
        xfer(fd, &hello, sizeof(hello), 1);
        xfer(fd, &peer, sizeof(peer), 0);
        if ((peer.magic != HELLO_MAGIC) || (peer.abandon != opt_abandon)) {
            die(4, "usage", "the peer runs with another -a");
        }
        if (host != NULL) {
            run_abandon(&peer);
        }
        close(fd);
        hello.abandon = 0;
    }
    fd = tcp_connect(host, port);
    xfer(fd, &hello, sizeof(hello), 1);
    xfer(fd, &peer, sizeof(peer), 0);
    if ((peer.magic != HELLO_MAGIC) || (peer.eps != opt_eps) ||
        (peer.msgs != opt_msgs) || (peer.cycles != opt_cycles) ||
        (peer.stall != (uint32_t)opt_stall)) {
        die(4, "usage", "the peer runs with other options (-e/-n/-c/-k)");
    }
    last_move = now_sec();
    want      = (uint64_t)opt_eps * opt_msgs;

    if (host != NULL) {
        if (opt_cycles > 0) {
            run_churn(&peer);
        } else if (opt_stall) {
            want = run_stall(&peer);
        } else {
            run_burst(&peer, &bursts, &largest);
            printf("ok burst: %u endpoints x %u messages in %u bursts, the "
                   "largest %u messages\n", opt_eps, opt_msgs, bursts,
                   largest);
        }
        xfer(fd, &want, sizeof(want), 1);      /* all sent and flushed */
        /* progress until the server answers: disconnects not yet
         * acknowledged are resent from progress */
        for (;;) {
            struct pollfd pfd = { .fd = fd, .events = POLLIN };

            if (poll(&pfd, 1, 0) > 0) {
                break;
            }
            uct_worker_progress(worker);
        }
        xfer(fd, result, sizeof(result), 0);   /* server: received, bad */
        pass = (result[0] == want) && (result[1] == 0);
        if (!pass) {
            printf("FAIL the server got %" PRIu64 " of %" PRIu64
                   " messages, %" PRIu64 " wrong\n", result[0], want,
                   result[1]);
        }
    } else {
        if (opt_stall) {
            /* how many A sent is known when the client is done */
            for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };

                if (poll(&pfd, 1, 0) > 0) {
                    break;
                }
                progress("receive");
            }
            xfer(fd, &want, sizeof(want), 0);
        }
        while (received < want) {
            progress("receive");
        }
        /* the client has flushed and closed its endpoints (churn: the
         * last disconnect is on its way) */
        if (!opt_stall) {
            xfer(fd, &result[0], sizeof(result[0]), 0);
        }
        if (opt_cycles > 0) {
            /* the last disconnects (resent while datagrams are lost): no
             * channel left, as many QPs as before the first connection;
             * looked at every 0.5 s for up to 30 s */
            double until = now_sec() + 30.0, next = 0;
            while (now_sec() < until) {
                uct_worker_progress(worker);
                if (now_sec() >= next) {
                    next   = now_sec() + 0.5;
                    qp_end = rdma_qps();
                    if (qp_end == qp_start) {
                        break;
                    }
                }
            }
            pin_end = vm_pinned_kb();
        }
        result[0] = received;
        result[1] = bad;
        xfer(fd, result, sizeof(result), 1);
        pass = (bad == 0);
    }

    if ((opt_cycles > 0) && (host == NULL)) {
        if ((qp_start < 0) || (qp_end < 0)) {
            printf("FAIL QPs unknown ('rdma resource show qp' failed)\n");
            pass = 0;
        } else if (qp_end != qp_start) {
            printf("FAIL QPs: %d before the first connection, %d 30 s after "
                   "the last (passive channels left open)\n", qp_start,
                   qp_end);
            pass = 0;
        } else {
            printf("ok QPs: %d before the first connection, %d after the "
                   "last\n", qp_start, qp_end);
        }
    }
    pass = pin_verdict() && pass;
    close(fd);
    uct_iface_close(iface);
    uct_worker_destroy(worker);
    uct_md_close(md);
    if (pass) {
        printf("PASSED: %s, %" PRIu64 " messages, data verified\n",
               opt_cycles ? "connection churn" :
               opt_stall ? "one endpoint stalled, one streaming" :
                           "bursts on many endpoints",
               want);
        return 0;
    }
    printf("FAILED\n");
    return 1;
}
