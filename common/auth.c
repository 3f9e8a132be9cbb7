/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file auth.c
 * @brief The MAC and replay window of connection datagrams (see
 *        pvrdma_auth.h for the choice of primitive).
 */
#include "pvrdma_auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

int pvrdma_common_auth_init(void)
{
    /* 0: initialised now, 1: already; -1: failure */
    return (sodium_init() < 0) ? EIO : 0;
}

void pvrdma_common_auth_mac(uint8_t mac[PVRDMA_COMMON_AUTH_MAC_LEN],
                            const uint8_t key[PVRDMA_COMMON_AUTH_KEY_LEN],
                            const void *msg, size_t len, size_t mac_off,
                            uint32_t dest_qpn)
{
    static const uint8_t zero[PVRDMA_COMMON_AUTH_MAC_LEN];
    const uint8_t *p = msg;
    crypto_generichash_state st;
    uint8_t qpn[4] = {(uint8_t) (dest_qpn >> 24), (uint8_t) (dest_qpn >> 16),
                      (uint8_t) (dest_qpn >> 8), (uint8_t) dest_qpn};

    (void) crypto_generichash_init(&st, key, PVRDMA_COMMON_AUTH_KEY_LEN,
                                   PVRDMA_COMMON_AUTH_MAC_LEN);
    (void) crypto_generichash_update(&st, p, mac_off);
    (void) crypto_generichash_update(&st, zero, sizeof(zero));
    (void) crypto_generichash_update(&st, p + mac_off + PVRDMA_COMMON_AUTH_MAC_LEN,
                                     len - mac_off - PVRDMA_COMMON_AUTH_MAC_LEN);
    (void) crypto_generichash_update(&st, qpn, sizeof(qpn));
    (void) crypto_generichash_final(&st, mac, PVRDMA_COMMON_AUTH_MAC_LEN);
}

bool pvrdma_common_auth_verify(const uint8_t key[PVRDMA_COMMON_AUTH_KEY_LEN],
                               const void *msg, size_t len, size_t mac_off,
                               uint32_t dest_qpn)
{
    uint8_t mac[PVRDMA_COMMON_AUTH_MAC_LEN];

    if (len < mac_off + PVRDMA_COMMON_AUTH_MAC_LEN) {
        return false;
    }
    pvrdma_common_auth_mac(mac, key, msg, len, mac_off, dest_qpn);
    return sodium_memcmp(mac, (const uint8_t *) msg + mac_off, sizeof(mac)) == 0;
}

int pvrdma_common_replay_init(struct pvrdma_common_replay *r, uint32_t cap)
{
    memset(r, 0, sizeof(*r));
    r->e = calloc(cap, sizeof(*r->e));
    if (r->e == NULL) {
        return ENOMEM;
    }
    r->cap = cap;
    return 0;
}

void pvrdma_common_replay_fini(struct pvrdma_common_replay *r)
{
    free(r->e);
    memset(r, 0, sizeof(*r));
}

/* The sender's entry, made (evicting the least recently used) if new */
static struct pvrdma_common_replay_entry *
replay_entry(struct pvrdma_common_replay *r, const uint8_t src[16], uint32_t qpn,
             bool *is_new)
{
    struct pvrdma_common_replay_entry *e, *lru = NULL;

    *is_new = false;
    for (uint32_t i = 0; i < r->n; ++i) {
        e = &r->e[i];
        if ((e->qpn == qpn) && !memcmp(e->src, src, sizeof(e->src))) {
            return e;
        }
        if ((lru == NULL) || (e->used < lru->used)) {
            lru = e;
        }
    }
    if (r->n < r->cap) {
        e = &r->e[r->n++];
    } else if (lru != NULL) {
        e = lru;
        r->evicted++;
    } else {
        return NULL;   /* cap 0 */
    }
    memset(e, 0, sizeof(*e));
    memcpy(e->src, src, sizeof(e->src));
    e->qpn  = qpn;
    *is_new = true;
    return e;
}

bool pvrdma_common_replay_fresh(struct pvrdma_common_replay *r,
                                const uint8_t src[16], uint32_t qpn,
                                uint64_t seq)
{
    struct pvrdma_common_replay_entry *e;
    bool is_new;
    uint64_t back;

    e = replay_entry(r, src, qpn, &is_new);
    if (e == NULL) {
        return false;
    }
    e->used = ++r->clock;
    if (is_new || (seq > e->top)) {
        back    = is_new ? 64 : seq - e->top;
        e->seen = (back >= 64) ? 1 : ((e->seen << back) | 1);
        e->top  = seq;
        return true;
    }
    back = e->top - seq;
    r->refused_back = back;   /* read only when false is returned */
    if (back >= 64) {
        r->superseded++;
        return false;   /* too old to tell */
    }
    if (e->seen & (UINT64_C(1) << back)) {
        return false;   /* seen */
    }
    e->seen |= UINT64_C(1) << back;
    return true;
}
