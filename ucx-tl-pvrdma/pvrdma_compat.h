/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_compat.h
 * @brief The differences in UCX's internal API between the UCX versions
 *        the transport builds against: Debian 12's 1.13.1 and Debian 13's
 *        1.18.1.  All of them are here, as wrappers and initialiser macros
 *        the .c files use; nothing else in the transport tests a version.
 *
 * configure finds each difference by compiling against the UCX source tree
 * (m4/pvrdma_ucx.m4, _PVRDMA_UCX_CHECK_FEATURES) and defines a PVRDMA_UCX_*
 * macro in pvrdma_config.h; the comments name the release that made the
 * change, so each macro is also right for the releases in between.
 */
#ifndef UCT_PVRDMA_COMPAT_H
#define UCT_PVRDMA_COMPAT_H

#include "pvrdma_config.h"

#include <uct/api/v2/uct_v2.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <ucs/type/param.h>
#if PVRDMA_UCX_PTR_ARITH_H
/* 1.17 moved ucs_align_*_pow2 and ucs_rounddown_pow2 out of ucs/sys/math.h */
#  include <ucs/sys/ptr_arith.h>
#endif


/* ----------------------------------------------------------------------- */
/*  Memory domain                                                          */
/* ----------------------------------------------------------------------- */

/* The attributes the md query op fills: 1.14 made it uct_md_attr_v2_t,
 * whose capabilities are top-level fields (uct_md_attr_t keeps them in
 * .cap); UCT_PVRDMA_MD_CAP(attr, flags) names the field in either. */
#if PVRDMA_UCX_MD_QUERY_V2
typedef uct_md_attr_v2_t uct_pvrdma_md_attr_t;
#  define UCT_PVRDMA_MD_CAP(_attr, _field)  ((_attr)->_field)
#else
typedef uct_md_attr_t    uct_pvrdma_md_attr_t;
#  define UCT_PVRDMA_MD_CAP(_attr, _field)  ((_attr)->cap._field)
#endif


/* What only uct_md_attr_v2_t has (UCX zeroes the rest before the query):
 * - cache_mem_types: UCP (1.14 on) keeps its own registration cache only
 *   for the memory types an md names here; 1.13's UCP cached every md's
 *   registrations, so host memory keeps that behaviour (the md's own rcache
 *   sits below it, as on 1.13);
 * - reg_alignment (1.16): registrations are whole pages
 *   (uct_pvrdma_reg_mr); 0 would leave UCP aligning ranges to 0. */
static UCS_F_ALWAYS_INLINE void
uct_pvrdma_md_attr_set_v2(uct_pvrdma_md_attr_t *attr UCS_V_UNUSED,
                          size_t page_size UCS_V_UNUSED)
{
#if PVRDMA_UCX_MD_QUERY_V2
    attr->cache_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
#endif
#if PVRDMA_UCX_MD_ATTR_REG_ALIGNMENT
    attr->reg_alignment   = page_size;
#endif
}


/* Invalidation (mem_dereg with UCT_MD_MEM_DEREG_FLAG_INVALIDATE: the
 * completion fires once the rkey no longer gives access, i.e. when the
 * rcache has deregistered the MR).  1.15 added UCT_MD_FLAG_INVALIDATE_RMA
 * for it, and UCP 1.18 asks for that one, no longer for
 * UCT_MD_FLAG_INVALIDATE, before it puts rendezvous RMA on a
 * CONNECT_TO_IFACE transport under peer error handling. */
#if PVRDMA_UCX_MD_FLAG_INVALIDATE_RMA
#  define UCT_PVRDMA_MD_FLAGS_INVALIDATE \
    (UCT_MD_FLAG_INVALIDATE | UCT_MD_FLAG_INVALIDATE_RMA)
#else
#  define UCT_PVRDMA_MD_FLAGS_INVALIDATE  UCT_MD_FLAG_INVALIDATE
#endif


/* The version-neutral md ops (pvrdma_md.c) and the signatures UCX wants. */
ucs_status_t uct_pvrdma_mem_reg(uct_md_h uct_md, void *address, size_t length,
                                unsigned flags, uct_mem_h *memh_p);
ucs_status_t uct_pvrdma_mkey_pack(uct_mem_h memh, void *rkey_buffer);

/* 1.14: mem_reg takes uct_md_mem_reg_params_t (flags optional in it). */
#if PVRDMA_UCX_MEM_REG_V2
static inline ucs_status_t
uct_pvrdma_mem_reg_op(uct_md_h uct_md, void *address, size_t length,
                      const uct_md_mem_reg_params_t *params, uct_mem_h *memh_p)
{
    return uct_pvrdma_mem_reg(uct_md, address, length,
                              UCS_PARAM_VALUE(UCT_MD_MEM_REG_FIELD, params,
                                              flags, FLAGS, 0),
                              memh_p);
}
#else
#  define uct_pvrdma_mem_reg_op  uct_pvrdma_mem_reg
#endif

/* 1.16: mkey_pack also gets the address and length of the region. */
#if PVRDMA_UCX_MKEY_PACK_V2
static inline ucs_status_t
uct_pvrdma_mkey_pack_op(uct_md_h uct_md UCS_V_UNUSED, uct_mem_h memh,
                        void *address UCS_V_UNUSED, size_t length UCS_V_UNUSED,
                        const uct_md_mkey_pack_params_t *params UCS_V_UNUSED,
                        void *rkey_buffer)
{
    return uct_pvrdma_mkey_pack(memh, rkey_buffer);
}
#else
static inline ucs_status_t
uct_pvrdma_mkey_pack_op(uct_md_h uct_md UCS_V_UNUSED, uct_mem_h memh,
                        const uct_md_mkey_pack_params_t *params UCS_V_UNUSED,
                        void *rkey_buffer)
{
    return uct_pvrdma_mkey_pack(memh, rkey_buffer);
}
#endif


/* uct_md_ops_t entries that come and go: mem_attach (1.14, importing
 * exported keys: not offered), is_sockaddr_accessible (gone in 1.16). */
#if PVRDMA_UCX_MD_MEM_ATTACH
#  define UCT_PVRDMA_MD_OPS_MEM_ATTACH \
    .mem_attach             = (uct_md_mem_attach_func_t) \
                              ucs_empty_function_return_unsupported,
#else
#  define UCT_PVRDMA_MD_OPS_MEM_ATTACH
#endif
#if PVRDMA_UCX_MD_IS_SOCKADDR_ACCESSIBLE
#  define UCT_PVRDMA_MD_OPS_IS_SOCKADDR_ACCESSIBLE \
    .is_sockaddr_accessible = ucs_empty_function_return_zero_int,
#else
#  define UCT_PVRDMA_MD_OPS_IS_SOCKADDR_ACCESSIBLE
#endif
#define UCT_PVRDMA_MD_OPS_COMPAT \
    UCT_PVRDMA_MD_OPS_MEM_ATTACH \
    UCT_PVRDMA_MD_OPS_IS_SOCKADDR_ACCESSIBLE


/* 1.16: UCP's ucp_rkey_compare calls every component's rkey_compare (no
 * NULL check).  Our unpacked rkey is the MR's rkey: UCX's base comparison
 * of the two values is right. */
#if PVRDMA_UCX_RKEY_COMPARE
#  define UCT_PVRDMA_COMPONENT_COMPAT \
    .rkey_compare       = uct_base_rkey_compare,
#else
#  define UCT_PVRDMA_COMPONENT_COMPAT
#endif


/* 1.14: sys devices have named priorities; uct/ib names its devices with
 * 20, and so does this md (the same PCI function, the same name). */
#define UCT_PVRDMA_SYS_DEV_NAME_PRIO   20
#if PVRDMA_UCX_TOPO_NAME_PRIORITY
#  define uct_pvrdma_topo_set_name(_sys_dev, _name) \
    ucs_topo_sys_device_set_name(_sys_dev, _name, UCT_PVRDMA_SYS_DEV_NAME_PRIO)
#else
#  define uct_pvrdma_topo_set_name(_sys_dev, _name) \
    ucs_topo_sys_device_set_name(_sys_dev, _name)
#endif


/* ----------------------------------------------------------------------- */
/*  Registration cache                                                     */
/* ----------------------------------------------------------------------- */

/* 1.16 moved the rcache configuration from uct_md (uct_md_rcache_config_t,
 * uct_md_config_rcache_table, uct_md_set_rcache_params) to ucs
 * (ucs_rcache_config_t, ucs_config_rcache_table, ucs_rcache_set_params). */
#if PVRDMA_UCX_RCACHE_CONFIG_UCS
typedef ucs_rcache_config_t    uct_pvrdma_rcache_config_t;
#  define UCT_PVRDMA_RCACHE_CONFIG_TABLE  ucs_config_rcache_table
#else
typedef uct_md_rcache_config_t uct_pvrdma_rcache_config_t;
#  define UCT_PVRDMA_RCACHE_CONFIG_TABLE  uct_md_config_rcache_table
#endif

/* Regions are whole pages (see uct_pvrdma_reg_mr).  Up to 1.16 the rcache
 * aligns every region to params.alignment, set from the table's
 * RCACHE_ADDR_ALIGN, whose default this md raises to a page; 1.17 dropped
 * both (RCACHE_ADDR_ALIGN is then an unknown variable) and takes the
 * alignment in every ucs_rcache_get instead. */
#if PVRDMA_UCX_RCACHE_GET_ALIGN
#  define UCT_PVRDMA_RCACHE_CONFIG_DEFAULTS  ""
#else
#  define UCT_PVRDMA_RCACHE_CONFIG_DEFAULTS  "RCACHE_ADDR_ALIGN=4096"
#endif


static inline void
uct_pvrdma_rcache_set_params(ucs_rcache_params_t *params,
                             const uct_pvrdma_rcache_config_t *config,
                             size_t page_size UCS_V_UNUSED)
{
#if PVRDMA_UCX_RCACHE_CONFIG_UCS
    ucs_rcache_set_params(params, config);
#else
    uct_md_set_rcache_params(params, config);
#endif
#if !PVRDMA_UCX_RCACHE_GET_ALIGN
    params->max_alignment = page_size;
    params->alignment     = page_size;
#endif
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_pvrdma_rcache_get(ucs_rcache_t *rcache, void *address, size_t length,
                      size_t alignment UCS_V_UNUSED, int prot, void *arg,
                      ucs_rcache_region_t **region_p)
{
#if PVRDMA_UCX_RCACHE_GET_ALIGN
    return ucs_rcache_get(rcache, address, length, alignment, prot, arg,
                          region_p);
#else
    return ucs_rcache_get(rcache, address, length, prot, arg, region_p);
#endif
}


/* Lookup cost of the rcache, for the md's reg_cost: uct_md_rcache_overhead
 * went with the uct_md configuration in 1.16; its value ("auto": 180 ns,
 * what 1.13 says for x86) is kept. */
#define UCT_PVRDMA_RCACHE_OVERHEAD_AUTO  180e-9

static inline double
uct_pvrdma_rcache_overhead(const uct_pvrdma_rcache_config_t *config)
{
#if PVRDMA_UCX_RCACHE_CONFIG_UCS
    return (config->overhead == UCS_TIME_AUTO) ?
           UCT_PVRDMA_RCACHE_OVERHEAD_AUTO : ucs_time_to_sec(config->overhead);
#else
    return uct_md_rcache_overhead(config);
#endif
}


/* 1.18 calls ops->merge (unchecked) for every cached region a new one
 * absorbs; the md has nothing to carry over. */
#if PVRDMA_UCX_RCACHE_MERGE
static inline void
uct_pvrdma_rcache_merge_cb(void *context UCS_V_UNUSED,
                           ucs_rcache_t *rcache UCS_V_UNUSED,
                           void *arg UCS_V_UNUSED,
                           ucs_rcache_region_t *region UCS_V_UNUSED)
{
}
#  define UCT_PVRDMA_RCACHE_OPS_COMPAT \
    .merge       = uct_pvrdma_rcache_merge_cb,
#else
#  define UCT_PVRDMA_RCACHE_OPS_COMPAT
#endif


/* ----------------------------------------------------------------------- */
/*  Interface                                                              */
/* ----------------------------------------------------------------------- */

/* 1.14: memory pools get a maximal chunk size and a grow factor; the
 * values of uct/ib's pools (128m, 1.0: chunks do not grow, as before). */
#if PVRDMA_UCX_MPOOL_CHUNK_GROWTH
#  define UCT_PVRDMA_MPOOL_CONFIG_FIELDS(_prefix, _dfl_max, _dfl_grow, \
                                         _mp_name, _offset, _desc) \
    UCT_IFACE_MPOOL_CONFIG_FIELDS(_prefix, _dfl_max, _dfl_grow, 128m, 1.0, \
                                  _mp_name, _offset, _desc)
#else
#  define UCT_PVRDMA_MPOOL_CONFIG_FIELDS(_prefix, _dfl_max, _dfl_grow, \
                                         _mp_name, _offset, _desc) \
    UCT_IFACE_MPOOL_CONFIG_FIELDS(_prefix, _dfl_max, _dfl_grow, \
                                  _mp_name, _offset, _desc)
#endif


/* 1.18: uct_am_short_fill_data takes a memcpy hint (non-temporal stores);
 * the header and a short payload go to a bounce buffer the device reads
 * right away: no hint. */
#if PVRDMA_UCX_AM_SHORT_FILL_HINT
#  define uct_pvrdma_am_short_fill_data(_buf, _hdr, _payload, _length) \
    uct_am_short_fill_data(_buf, _hdr, _payload, _length, \
                           UCS_ARCH_MEMCPY_NT_NONE)
#else
#  define uct_pvrdma_am_short_fill_data(_buf, _hdr, _payload, _length) \
    uct_am_short_fill_data(_buf, _hdr, _payload, _length)
#endif


/* 1.18: UCP takes a transport without UCT_IFACE_FLAG_INTER_NODE for shared
 * memory (its eps are "intra-node", and it leaves the transport out of
 * network-only worker addresses).  Before 1.18 every transport was. */
#if PVRDMA_UCX_IFACE_FLAG_INTER_NODE
#  define UCT_PVRDMA_IFACE_FLAG_INTER_NODE  UCT_IFACE_FLAG_INTER_NODE
#else
#  define UCT_PVRDMA_IFACE_FLAG_INTER_NODE  0
#endif


/* The version-neutral reachability tests (pvrdma_iface.c, pvrdma_ep.c). */
int uct_pvrdma_iface_reachable(uct_iface_h tl_iface,
                               const uct_device_addr_t *dev_addr,
                               const uct_iface_addr_t *iface_addr,
                               int same_device, char *why, size_t max);
int uct_pvrdma_ep_is_peer(uct_ep_h tl_ep, const uct_device_addr_t *dev_addr,
                          const uct_iface_addr_t *iface_addr);


/* 1.15: UCP asks through iface_is_reachable_v2: the device address is
 * required, the iface address optional, and scope DEVICE asks whether the
 * peer is on this very device (UCP's intra-node test).  The reason for a
 * "no" goes to the caller's info string when it gives one. */
#if PVRDMA_UCX_IFACE_IS_REACHABLE_V2
static inline int
uct_pvrdma_iface_is_reachable_v2(const uct_iface_h tl_iface,
                                 const uct_iface_is_reachable_params_t *params)
{
    char *info   = UCS_PARAM_VALUE(UCT_IFACE_IS_REACHABLE_FIELD, params,
                                   info_string, INFO_STRING, NULL);
    size_t max   = UCS_PARAM_VALUE(UCT_IFACE_IS_REACHABLE_FIELD, params,
                                   info_string_length, INFO_STRING_LENGTH, 0);
    int same_dev = UCS_PARAM_VALUE(UCT_IFACE_IS_REACHABLE_FIELD, params,
                                   scope, SCOPE,
                                   UCT_IFACE_REACHABILITY_SCOPE_NETWORK) ==
                   UCT_IFACE_REACHABILITY_SCOPE_DEVICE;

    if (!(params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR)) {
        ucs_error("pvrdma: is_reachable without a device address");
        return 0;
    }
    return uct_pvrdma_iface_reachable(tl_iface, params->device_addr,
                                      UCS_PARAM_VALUE(
                                              UCT_IFACE_IS_REACHABLE_FIELD,
                                              params, iface_addr, IFACE_ADDR,
                                              NULL),
                                      same_dev, info, max);
}
#  define UCT_PVRDMA_IFACE_OPS_IS_REACHABLE_V2 \
    .iface_is_reachable_v2 = uct_pvrdma_iface_is_reachable_v2,
#else
#  define UCT_PVRDMA_IFACE_OPS_IS_REACHABLE_V2
#endif


/* 1.16: UCP asks whether an ep (when it reconfigures a UCP ep) is the one
 * to a peer's device and iface address; ep addresses are not ours
 * (CONNECT_TO_IFACE only). */
#if PVRDMA_UCX_EP_IS_CONNECTED
static inline int
uct_pvrdma_ep_is_connected_v2(const uct_ep_h tl_ep,
                              const uct_ep_is_connected_params_t *params)
{
    if (!ucs_test_all_flags(params->field_mask,
                            UCT_EP_IS_CONNECTED_FIELD_DEVICE_ADDR |
                            UCT_EP_IS_CONNECTED_FIELD_IFACE_ADDR) ||
        (params->field_mask & UCT_EP_IS_CONNECTED_FIELD_EP_ADDR)) {
        return 0;
    }
    return uct_pvrdma_ep_is_peer(tl_ep, params->device_addr,
                                 params->iface_addr);
}
#  define UCT_PVRDMA_IFACE_OPS_EP_IS_CONNECTED \
    .ep_is_connected       = uct_pvrdma_ep_is_connected_v2,
#else
#  define UCT_PVRDMA_IFACE_OPS_EP_IS_CONNECTED
#endif


/* 1.14: ep_connect_to_ep_v2 (CONNECT_TO_EP transports only). */
#if PVRDMA_UCX_EP_CONNECT_TO_EP_V2
#  define UCT_PVRDMA_IFACE_OPS_CONNECT_TO_EP_V2 \
    .ep_connect_to_ep_v2   = (uct_ep_connect_to_ep_v2_func_t) \
                             ucs_empty_function_return_unsupported,
#else
#  define UCT_PVRDMA_IFACE_OPS_CONNECT_TO_EP_V2
#endif

/* The uct_iface_internal_ops_t entries after the four every version has
 * (1.16 also dropped uct_base_iface_internal_ops, which had those four). */
#define UCT_PVRDMA_IFACE_INTERNAL_OPS_COMPAT \
    UCT_PVRDMA_IFACE_OPS_CONNECT_TO_EP_V2 \
    UCT_PVRDMA_IFACE_OPS_IS_REACHABLE_V2 \
    UCT_PVRDMA_IFACE_OPS_EP_IS_CONNECTED

#endif
