/**
 * @file ucp_tag_check.c
 * @brief UCP tag-matching check with data verification, for the "pvrdma"
 *        UCT transport (run with UCX_TLS=pvrdma and the transport preloaded).
 *
 *   server:  ucp_tag_check -p PORT [-m MAXSIZE]
 *   client:  ucp_tag_check -p PORT [-m MAXSIZE] SERVER_HOST
 *   silent server:  ucp_tag_check -p PORT -S   (exchanges addresses, then
 *            never progresses UCP: a peer that does not answer, to check
 *            that the client fails with an error instead of hanging)
 *
 * The two processes exchange UCP worker addresses over a TCP socket, then for
 * every size 0, 1, 2, ... (a ladder up to MAXSIZE, default 16 MiB) the client
 * sends a patterned buffer, the server checks every byte and sends it back
 * transformed, and the client checks the answer.  Prints one line per size
 * and exits 0 only when every byte of every message was right.
 */
#define _GNU_SOURCE
#include <ucp/api/ucp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA   0x1234ull
#define TAG_REPLY  0x5678ull

static ucp_worker_h worker;

static int die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "ucp_tag_check: %s: %s\n", what,
            ucs_status_string(status));
    exit(2);
}

/* --- address exchange over TCP -------------------------------------------- */

static int xfer_all(int fd, void *buf, size_t len, int out)
{
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        n = out ? send(fd, (char*)buf + done, len - done, 0) :
                  recv(fd, (char*)buf + done, len - done, 0);
        if (n <= 0) {
            if ((n < 0) && (errno == EINTR)) {
                continue;
            }
            return -1;
        }
        done += n;
    }
    return 0;
}

static int tcp_connect(const char *host, int port)
{
    struct addrinfo hints = {0}, *res, *ai;
    char port_str[16];
    int fd = -1, i, unreachable = 0, err = 0;

    snprintf(port_str, sizeof(port_str), "%d", port);
    hints.ai_family   = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port_str, &hints, &res) != 0) {
        fprintf(stderr, "ucp_tag_check: cannot resolve %s\n", host);
        exit(2);
    }

    /* the server may not listen yet (refused): retry for a while; a host
     * that does not answer at all (each try costs seconds) only a few times,
     * so a dead peer is reported, not waited for past the caller's timeout */
    for (i = 0; (i < 120) && (unreachable < 3); ++i) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) {
                err = errno;
                continue;
            }
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return fd;
            }
            err = errno;
            close(fd);
            fd = -1;
        }
        if (err != ECONNREFUSED) {
            ++unreachable;
        }
        sleep(1);
    }
    freeaddrinfo(res);
    fprintf(stderr, "ucp_tag_check: cannot connect to %s:%d: %s\n", host, port,
            strerror(err));
    exit(2);
}

static int tcp_accept(int port)
{
    struct sockaddr_in addr = {0};
    int lfd, fd, one = 1;

    lfd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    addr.sin_family      = AF_INET;
    addr.sin_port        = htons(port);
    addr.sin_addr.s_addr = INADDR_ANY;
    if ((bind(lfd, (struct sockaddr*)&addr, sizeof(addr)) != 0) ||
        (listen(lfd, 1) != 0)) {
        perror("ucp_tag_check: bind/listen");
        exit(2);
    }
    fd = accept(lfd, NULL, NULL);
    close(lfd);
    if (fd < 0) {
        perror("ucp_tag_check: accept");
        exit(2);
    }
    return fd;
}

/* --- UCP helpers ----------------------------------------------------------- */

static ucs_status_t wait_req(void *req)
{
    ucs_status_t status;

    if (req == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    do {
        ucp_worker_progress(worker);
        status = ucp_request_check_status(req);
    } while (status == UCS_INPROGRESS);
    ucp_request_free(req);
    return status;
}

static void send_cb(void *req, ucs_status_t status, void *arg)
{
    (void)req; (void)status; (void)arg;
}

static void recv_cb(void *req, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *arg)
{
    (void)req; (void)status; (void)info; (void)arg;
}

static ucs_status_t tag_send(ucp_ep_h ep, const void *buf, size_t len,
                             ucp_tag_t tag)
{
    ucp_request_param_t param = {0};

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
    param.cb.send      = send_cb;
    return wait_req(ucp_tag_send_nbx(ep, buf, len, tag, &param));
}

static ucs_status_t tag_recv(void *buf, size_t len, ucp_tag_t tag,
                             size_t *recvd)
{
    ucp_request_param_t param = {0};
    ucp_tag_recv_info_t info;
    ucs_status_t status;
    void *req;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                         UCP_OP_ATTR_FIELD_RECV_INFO;
    param.cb.recv      = recv_cb;
    param.recv_info.tag_info = &info;
    req = ucp_tag_recv_nbx(worker, buf, len, tag, UINT64_MAX, &param);
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    if (req == NULL) {
        *recvd = info.length; /* completed in place */
        return UCS_OK;
    }
    do {
        ucp_worker_progress(worker);
        status = ucp_request_check_status(req);
    } while (status == UCS_INPROGRESS);
    if (status == UCS_OK) {
        status = ucp_tag_recv_request_test(req, &info);
        *recvd = info.length;
    }
    ucp_request_free(req);
    return status;
}

static uint8_t pattern(size_t size, size_t i, int reply)
{
    return (uint8_t)((i * 131u) ^ (size * 7u) ^ (i >> 9) ^ (reply ? 0xa5 : 0));
}

static int verify(const uint8_t *buf, size_t size, int reply, size_t *bad)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        if (buf[i] != pattern(size, i, reply)) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

/* --- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    size_t max_size = 16u << 20, sizes[128], nsizes = 0, s, i, recvd, bad;
    ucp_worker_attr_t wattr = {0};
    ucp_worker_params_t wparams = {0};
    ucp_ep_params_t eparams = {0};
    ucp_params_t params = {0};
    ucp_context_h context;
    ucp_config_t *config;
    const char *host = NULL;
    void *peer_addr;
    uint64_t len64;
    ucp_ep_h ep;
    uint8_t *buf;
    ucs_status_t status;
    int port = 13500, opt, fd, failed = 0, silent = 0;
    void *close_req;

    while ((opt = getopt(argc, argv, "p:m:S")) != -1) {
        switch (opt) {
        case 'S': silent = 1; break;
        case 'p': port = atoi(optarg); break;
        case 'm': max_size = strtoull(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: %s [-p port] [-m maxsize] [server]\n",
                    argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        host = argv[optind];
    }

    /* 0, 1, 2, 3, ... powers of two and their neighbours up to max_size */
    sizes[nsizes++] = 0;
    for (s = 1; (s <= max_size) && (nsizes < 120); s *= 2) {
        if ((s > 2) && (s - 1 != sizes[nsizes - 1])) {
            sizes[nsizes++] = s - 1;
        }
        sizes[nsizes++] = s;
        if ((s > 2) && (s + 1 <= max_size) && (s < 65536)) {
            sizes[nsizes++] = s + 1;
        }
    }
    if (sizes[nsizes - 1] != max_size) {
        sizes[nsizes++] = max_size;
    }

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        die("ucp_config_read", status);
    }
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_TAG;
    status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        die("ucp_init", status);
    }

    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(context, &wparams, &worker);
    if (status != UCS_OK) {
        die("ucp_worker_create", status);
    }

    wattr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
    status = ucp_worker_query(worker, &wattr);
    if (status != UCS_OK) {
        die("ucp_worker_query", status);
    }

    fd    = host ? tcp_connect(host, port) : tcp_accept(port);
    len64 = wattr.address_length;
    if (xfer_all(fd, &len64, sizeof(len64), 1) ||
        xfer_all(fd, wattr.address, wattr.address_length, 1) ||
        xfer_all(fd, &len64, sizeof(len64), 0) ||
        ((peer_addr = malloc(len64)) == NULL) ||
        xfer_all(fd, peer_addr, len64, 0)) {
        fprintf(stderr, "ucp_tag_check: address exchange failed\n");
        return 2;
    }

    if (silent) {
        sleep(120);
        return 0;
    }

    eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    eparams.address    = peer_addr;
    status = ucp_ep_create(worker, &eparams, &ep);
    if (status != UCS_OK) {
        die("ucp_ep_create", status);
    }

    buf = malloc(max_size ? max_size : 1);
    if (buf == NULL) {
        return 2;
    }

    for (i = 0; i < nsizes; ++i) {
        s = sizes[i];
        if (host != NULL) {
            for (size_t k = 0; k < s; ++k) {
                buf[k] = pattern(s, k, 0);
            }
            status = tag_send(ep, buf, s, TAG_DATA);
            if (status != UCS_OK) {
                die("tag_send", status);
            }
            memset(buf, 0xee, s);
            status = tag_recv(buf, s, TAG_REPLY, &recvd);
            if (status != UCS_OK) {
                die("tag_recv", status);
            }
            if ((recvd != s) || !verify(buf, s, 1, &bad)) {
                printf("FAIL size %zu: reply %s at byte %zu\n", s,
                       (recvd != s) ? "has wrong length" : "corrupted",
                       (recvd != s) ? recvd : bad);
                failed = 1;
            } else {
                printf("ok size %zu\n", s);
            }
        } else {
            memset(buf, 0xee, s);
            status = tag_recv(buf, s, TAG_DATA, &recvd);
            if (status != UCS_OK) {
                die("tag_recv", status);
            }
            if ((recvd != s) || !verify(buf, s, 0, &bad)) {
                printf("FAIL size %zu: request corrupted\n", s);
                failed = 1;
            }
            for (size_t k = 0; k < s; ++k) {
                buf[k] = pattern(s, k, 1);
            }
            status = tag_send(ep, buf, s, TAG_REPLY);
            if (status != UCS_OK) {
                die("tag_send", status);
            }
        }
        fflush(stdout);
    }

    /* both sides done before tearing down */
    len64 = failed;
    xfer_all(fd, &len64, sizeof(len64), 1);
    xfer_all(fd, &len64, sizeof(len64), 0);

    close_req = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
    (void)wait_req(close_req);
    close(fd);
    free(buf);
    free(peer_addr);
    ucp_worker_release_address(worker, wattr.address);
    ucp_worker_destroy(worker);
    ucp_cleanup(context);

    printf("%s: %zu sizes from 0 to %zu bytes, data verified both ways\n",
           failed ? "FAILED" : "PASSED", nsizes, max_size);
    return failed;
}
