/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_md.c
 * @brief Component and memory domain of the UCT "pvrdma" transport:
 *        device listing, registration (behind UCX's rcache) and rkeys.
 */
#include "pvrdma.h"

#include <ucm/api/ucm.h>
#include <ucs/sys/string.h>
#include <sys/mman.h>


static ucs_config_field_t uct_pvrdma_md_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_pvrdma_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"RCACHE", "yes",
     "Cache memory registrations (strongly recommended on PVRDMA, where every\n"
     "registration is a command serialised through the hypervisor).",
     ucs_offsetof(uct_pvrdma_md_config_t, rcache_enable), UCS_CONFIG_TYPE_BOOL},

    {"", UCT_PVRDMA_RCACHE_CONFIG_DEFAULTS, NULL,
     ucs_offsetof(uct_pvrdma_md_config_t, rcache),
     UCS_CONFIG_TYPE_TABLE(UCT_PVRDMA_RCACHE_CONFIG_TABLE)},

    {"MAX_REG", "inf",
     "Largest single memory registration. The device's max_mr_size is the\n"
     "upper bound (128 MiB on QEMU's PVRDMA model); a smaller value can be\n"
     "set.",
     ucs_offsetof(uct_pvrdma_md_config_t, max_reg), UCS_CONFIG_TYPE_MEMUNITS},

    {"FORK_INIT", "try",
     "Protect registered memory across fork()/system() with ibv_fork_init,\n"
     "which kernels before 5.13 need: try (when the kernel needs it; if memory\n"
     "was registered before, say so at diag level), yes (the device is not\n"
     "used when it fails), no. RDMAV_FORK_SAFE=1 does the same inside\n"
     "libibverbs.",
     ucs_offsetof(uct_pvrdma_md_config_t, fork_init), UCS_CONFIG_TYPE_TERNARY},

    {"REG_COST_OVERHEAD", "50us",
     "Estimated fixed cost of one memory registration (PVRDMA: a hypervisor\n"
     "command round trip). Used by UCP to choose zero-copy thresholds.",
     ucs_offsetof(uct_pvrdma_md_config_t, reg_cost_overhead),
     UCS_CONFIG_TYPE_TIME},

    {"REG_COST_GROWTH", "0.25ns",
     "Estimated registration cost per byte (page pinning and page directory).",
     ucs_offsetof(uct_pvrdma_md_config_t, reg_cost_growth),
     UCS_CONFIG_TYPE_TIME},

    {NULL}
};


/* ----------------------------------------------------------------------- */
/*  Resources                                                              */
/* ----------------------------------------------------------------------- */

static ucs_status_t
uct_pvrdma_query_md_resources(uct_component_t *component UCS_V_UNUSED,
                              uct_md_resource_desc_t **resources_p,
                              unsigned *num_resources_p)
{
    uct_md_resource_desc_t *resources;
    struct ibv_device **devs;
    int i, num_devs;

    /* No verbs device (or no verbs stack at all) is not an error: the
     * component then simply offers nothing. */
    devs = ibv_get_device_list(&num_devs);
    if ((devs == NULL) || (num_devs == 0)) {
        ucs_debug("pvrdma: no verbs devices found");
        if (devs != NULL) {
            ibv_free_device_list(devs);
        }
        return uct_md_query_empty_md_resource(resources_p, num_resources_p);
    }

    resources = ucs_calloc(num_devs, sizeof(*resources), "pvrdma md resources");
    if (resources == NULL) {
        ibv_free_device_list(devs);
        return UCS_ERR_NO_MEMORY;
    }

    for (i = 0; i < num_devs; ++i) {
        ucs_strncpy_zero(resources[i].md_name, ibv_get_device_name(devs[i]),
                         sizeof(resources[i].md_name));
    }

    ibv_free_device_list(devs);
    *resources_p     = resources;
    *num_resources_p = num_devs;
    return UCS_OK;
}


/* UCP ranks devices by their distance to the process (NUMA): a device
 * whose PCI function UCS's topology knows gets its index; software
 * devices (rxe) have none and stay "unknown", as in uct/ib. */
static void uct_pvrdma_md_set_sys_dev(uct_pvrdma_md_t *md)
{
    char bdf[UCS_SYS_BDF_NAME_MAX];

    md->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    if ((pvrdma_common_dev_pci_name(md->dev_name, bdf, sizeof(bdf)) != 0) ||
        (ucs_topo_find_device_by_bdf_name(bdf, &md->sys_dev) != UCS_OK)) {
        md->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
        ucs_debug("pvrdma: %s: system device unknown", md->dev_name);
        return;
    }
    (void)uct_pvrdma_topo_set_name(md->sys_dev, md->dev_name);
    ucs_debug("pvrdma: %s: PCI %s, sys_dev %d", md->dev_name, bdf,
              md->sys_dev);
}


ucs_status_t uct_pvrdma_query_tl_devices(uct_md_h uct_md,
                                         uct_tl_device_resource_t **devices_p,
                                         unsigned *num_devices_p)
{
    uct_pvrdma_md_t *md = ucs_derived_of(uct_md, uct_pvrdma_md_t);
    uct_tl_device_resource_t *devices;
    struct pvrdma_common_port *ports;
    unsigned num_devices = 0;
    size_t i, count;
    char why[256];
    int ret;

    ret = pvrdma_common_device_ports(md->ctx, &ports, &count, why,
                                     sizeof(why));
    if (ret != 0) {
        return UCS_ERR_NO_MEMORY;
    }
    if (why[0] != '\0') {
        ucs_diag("pvrdma: %s: %s", md->dev_name, why);
    }

    devices = ucs_calloc(count, sizeof(*devices), "pvrdma tl devices");
    if ((devices == NULL) && (count > 0)) {
        pvrdma_common_ports_free(ports);
        return UCS_ERR_NO_MEMORY;
    }
    /* UCT offers only ports that can carry traffic now */
    for (i = 0; i < count; ++i) {
        if (!ports[i].active) {
            ucs_debug("pvrdma: %s:%u is not active (%s)", ports[i].dev_name,
                      ports[i].port_num,
                      ibv_port_state_str(ports[i].port_attr.state));
            continue;
        }
        ucs_snprintf_zero(devices[num_devices].name,
                          sizeof(devices[num_devices].name), "%s:%u",
                          md->dev_name, ports[i].port_num);
        devices[num_devices].type       = UCT_DEVICE_TYPE_NET;
        devices[num_devices].sys_device = md->sys_dev;
        ++num_devices;
    }
    pvrdma_common_ports_free(ports);

    *devices_p     = devices;
    *num_devices_p = num_devices;
    return UCS_OK;
}


/* ----------------------------------------------------------------------- */
/*  Registration                                                           */
/* ----------------------------------------------------------------------- */

static int uct_pvrdma_access_flags(unsigned flags)
{
    int access = IBV_ACCESS_LOCAL_WRITE;

    /* Without explicit access flags UCT means "everything" */
    if (!(flags & UCT_MD_MEM_ACCESS_ALL) ||
        (flags & UCT_MD_MEM_ACCESS_REMOTE_PUT)) {
        access |= IBV_ACCESS_REMOTE_WRITE;
    }
    if (!(flags & UCT_MD_MEM_ACCESS_ALL) ||
        (flags & UCT_MD_MEM_ACCESS_REMOTE_GET)) {
        access |= IBV_ACCESS_REMOTE_READ;
    }
    return access;
}


static ucs_status_t uct_pvrdma_reg_mr(uct_pvrdma_md_t *md, void *address,
                                      size_t length, int silent,
                                      struct ibv_mr **mr_p)
{
    size_t page = ucs_get_page_size();
    uintptr_t start, end;
    struct ibv_mr *mr;

    if (length > md->max_reg) {
        ucs_log(silent ? UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_ERROR,
                "pvrdma: %s cannot register %zu bytes (max_reg %zu)",
                md->dev_name, length, md->max_reg);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    /* Whole pages: QEMU's pvrdma device model refuses an MR that starts
     * inside a page and crosses into the next (EFAULT), and the device pins
     * whole pages anyway.  Keys and addresses stay valid for the buffer
     * inside.  Always remote read and write: a cached region is shared by
     * every later user whatever access it asks for. */
    start = ucs_align_down_pow2((uintptr_t)address, page);
    end   = ucs_align_up_pow2((uintptr_t)address + length, page);
    mr    = ibv_reg_mr(md->pd, (void*)start, end - start,
                       uct_pvrdma_access_flags(UCT_MD_MEM_ACCESS_ALL));
    if (mr == NULL) {
        ucs_log(silent ? UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_ERROR,
                "pvrdma: ibv_reg_mr(%s, address %p, length %zu) failed: %m",
                md->dev_name, address, length);
        return (errno == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    *mr_p = mr;
    return UCS_OK;
}


static void uct_pvrdma_dereg_mr(uct_pvrdma_md_t *md, struct ibv_mr *mr)
{
    int ret = ibv_dereg_mr(mr);

    if (ret != 0) {
        ucs_warn("pvrdma: ibv_dereg_mr(%s) failed: %s", md->dev_name,
                 strerror(ret));
    }
}


static ucs_status_t
uct_pvrdma_rcache_mem_reg_cb(void *context,
                             ucs_rcache_t *rcache UCS_V_UNUSED, void *arg,
                             ucs_rcache_region_t *rregion,
                             uint16_t rcache_mem_reg_flags)
{
    uct_pvrdma_md_t *md     = context;
    uct_pvrdma_memh_t *memh = ucs_derived_of(rregion, uct_pvrdma_memh_t);
    unsigned flags          = *(unsigned*)arg;
    int silent              = (rcache_mem_reg_flags &
                               UCS_RCACHE_MEM_REG_HIDE_ERRORS) ||
                              (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS);

    memh->cached = 1;
    return uct_pvrdma_reg_mr(md, (void*)rregion->super.start,
                             rregion->super.end - rregion->super.start,
                             silent, &memh->mr);
}


static void uct_pvrdma_rcache_mem_dereg_cb(void *context,
                                           ucs_rcache_t *rcache UCS_V_UNUSED,
                                           ucs_rcache_region_t *rregion)
{
    uct_pvrdma_memh_t *memh = ucs_derived_of(rregion, uct_pvrdma_memh_t);

    uct_pvrdma_dereg_mr(context, memh->mr);
}


static void uct_pvrdma_rcache_dump_region_cb(void *context UCS_V_UNUSED,
                                             ucs_rcache_t *rcache UCS_V_UNUSED,
                                             ucs_rcache_region_t *rregion,
                                             char *buf, size_t max)
{
    uct_pvrdma_memh_t *memh = ucs_derived_of(rregion, uct_pvrdma_memh_t);

    snprintf(buf, max, "lkey 0x%x rkey 0x%x", memh->mr->lkey, memh->mr->rkey);
}


static ucs_rcache_ops_t uct_pvrdma_rcache_ops = {
    .mem_reg     = uct_pvrdma_rcache_mem_reg_cb,
    .mem_dereg   = uct_pvrdma_rcache_mem_dereg_cb,
    UCT_PVRDMA_RCACHE_OPS_COMPAT
    .dump_region = uct_pvrdma_rcache_dump_region_cb
};


/* The md's mem_reg op (signature: uct_pvrdma_mem_reg_op, pvrdma_compat.h) */
ucs_status_t uct_pvrdma_mem_reg(uct_md_h uct_md, void *address, size_t length,
                                unsigned flags, uct_mem_h *memh_p)
{
    uct_pvrdma_md_t *md = ucs_derived_of(uct_md, uct_pvrdma_md_t);
    ucs_rcache_region_t *rregion;
    uct_pvrdma_memh_t *memh;
    ucs_status_t status;

    if (length == 0) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (md->rcache != NULL) {
        status = uct_pvrdma_rcache_get(md->rcache, address, length,
                                       ucs_get_page_size(),
                                       PROT_READ | PROT_WRITE, &flags,
                                       &rregion);
        if (status != UCS_OK) {
            return status;
        }

        *memh_p = ucs_derived_of(rregion, uct_pvrdma_memh_t);
        return UCS_OK;
    }

    memh = ucs_calloc(1, sizeof(*memh), "pvrdma memh");
    if (memh == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_pvrdma_reg_mr(md, address, length,
                               flags & UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh->mr);
    if (status != UCS_OK) {
        ucs_free(memh);
        return status;
    }

    *memh_p = memh;
    return UCS_OK;
}


static void uct_pvrdma_mem_invalidate_cb(void *arg)
{
    uct_invoke_completion(arg, UCS_OK);
}


static ucs_status_t
uct_pvrdma_mem_dereg(uct_md_h uct_md, const uct_md_mem_dereg_params_t *params)
{
    uct_pvrdma_md_t *md = ucs_derived_of(uct_md, uct_pvrdma_md_t);
    uct_pvrdma_memh_t *memh;
    unsigned flags;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, md->rcache != NULL);

    memh  = params->memh;
    flags = UCT_MD_MEM_DEREG_FIELD_VALUE(params, flags, FIELD_FLAGS, 0);

    if (memh->cached) {
        if (flags & UCT_MD_MEM_DEREG_FLAG_INVALIDATE) {
            ucs_rcache_region_invalidate(md->rcache, &memh->super,
                                         uct_pvrdma_mem_invalidate_cb,
                                         params->comp);
        }
        ucs_rcache_region_put(md->rcache, &memh->super);
        return UCS_OK;
    }

    uct_pvrdma_dereg_mr(md, memh->mr);
    ucs_free(memh);
    return UCS_OK;
}


/* The md's mkey_pack op (signature: uct_pvrdma_mkey_pack_op) */
ucs_status_t uct_pvrdma_mkey_pack(uct_mem_h memh, void *rkey_buffer)
{
    uct_pvrdma_packed_rkey_t *packed = rkey_buffer;

    packed->rkey = ((uct_pvrdma_memh_t*)memh)->mr->rkey;
    return UCS_OK;
}


static ucs_status_t
uct_pvrdma_rkey_unpack(uct_component_t *component UCS_V_UNUSED,
                       const void *rkey_buffer, uct_rkey_t *rkey_p,
                       void **handle_p)
{
    const uct_pvrdma_packed_rkey_t *packed = rkey_buffer;

    *rkey_p   = packed->rkey;
    *handle_p = NULL;
    return UCS_OK;
}


/* ----------------------------------------------------------------------- */
/*  RDMA WRITE probe                                                       */
/* ----------------------------------------------------------------------- */

int uct_pvrdma_md_rdma_write_ok(uct_pvrdma_md_t *md,
                                const struct pvrdma_common_probe_port *port)
{
    uct_pvrdma_write_probe_t result;
    char why[256];
    int cache;

    cache = port->port_num <= UCT_PVRDMA_MD_PROBE_PORTS;
    pthread_mutex_lock(&md->probe_lock);
    result = cache ? md->write_probe[port->port_num] :
                     UCT_PVRDMA_WRITE_UNKNOWN;
    if (result != UCT_PVRDMA_WRITE_UNKNOWN) {
        goto out;
    }

    if (pvrdma_common_rdma_write_usable(md->ctx, md->pd, port, why,
                                        sizeof(why))) {
        result = UCT_PVRDMA_WRITE_OK;
        ucs_debug("pvrdma: %s:%d: %s", md->dev_name, port->port_num, why);
    } else {
        result = UCT_PVRDMA_WRITE_BROKEN;
        ucs_diag("pvrdma: %s:%d: %s: send/recv only, no PUT "
                 "(UCX_PVRDMA_RDMA_WRITE=try)", md->dev_name, port->port_num,
                 why);
    }

    if (cache) {
        md->write_probe[port->port_num] = result;
    }
out:
    pthread_mutex_unlock(&md->probe_lock);
    return result == UCT_PVRDMA_WRITE_OK;
}


/* ----------------------------------------------------------------------- */
/*  Query, open, close                                                     */
/* ----------------------------------------------------------------------- */

static ucs_status_t uct_pvrdma_md_query(uct_md_h uct_md,
                                        uct_pvrdma_md_attr_t *attr)
{
    uct_pvrdma_md_t *md = ucs_derived_of(uct_md, uct_pvrdma_md_t);

    UCT_PVRDMA_MD_CAP(attr, flags)            = UCT_MD_FLAG_REG |
                                                UCT_MD_FLAG_NEED_MEMH |
                                                UCT_MD_FLAG_NEED_RKEY;
    if (md->rcache != NULL) {
        UCT_PVRDMA_MD_CAP(attr, flags)       |= UCT_PVRDMA_MD_FLAGS_INVALIDATE;
    }
    UCT_PVRDMA_MD_CAP(attr, reg_mem_types)    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    UCT_PVRDMA_MD_CAP(attr, alloc_mem_types)  = 0;
    UCT_PVRDMA_MD_CAP(attr, detect_mem_types) = 0;
    UCT_PVRDMA_MD_CAP(attr, access_mem_types) = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    UCT_PVRDMA_MD_CAP(attr, max_alloc)        = 0;
    UCT_PVRDMA_MD_CAP(attr, max_reg)          = md->max_reg;
    uct_pvrdma_md_attr_set_v2(attr, ucs_get_page_size());
    attr->rkey_packed_size = sizeof(uct_pvrdma_packed_rkey_t);
    attr->reg_cost         = md->reg_cost;
    memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
    return UCS_OK;
}


static void uct_pvrdma_md_close(uct_md_h uct_md)
{
    uct_pvrdma_md_t *md = ucs_derived_of(uct_md, uct_pvrdma_md_t);

    if (md->rcache != NULL) {
        ucs_rcache_destroy(md->rcache);
    }
    ibv_dealloc_pd(md->pd);
    ibv_close_device(md->ctx);
    pthread_mutex_destroy(&md->probe_lock);
    ucs_free(md);
}


static uct_md_ops_t uct_pvrdma_md_ops = {
    .close                  = uct_pvrdma_md_close,
    .query                  = uct_pvrdma_md_query,
    .mem_alloc              = ucs_empty_function_return_unsupported,
    .mem_free               = ucs_empty_function_return_unsupported,
    .mem_advise             = ucs_empty_function_return_unsupported,
    .mem_reg                = uct_pvrdma_mem_reg_op,
    .mem_dereg              = uct_pvrdma_mem_dereg,
    .mem_query              = ucs_empty_function_return_unsupported,
    .mkey_pack              = uct_pvrdma_mkey_pack_op,
    UCT_PVRDMA_MD_OPS_COMPAT
    .detect_memory_type     = ucs_empty_function_return_unsupported
};


/* Fork protection before this md registers anything (common/fork.c). */
static ucs_status_t uct_pvrdma_md_fork_init(int knob)
{
    enum pvrdma_common_fork_mode mode = (knob == UCS_YES) ? PVRDMA_COMMON_FORK_YES :
                                        (knob == UCS_NO)  ? PVRDMA_COMMON_FORK_NO :
                                                            PVRDMA_COMMON_FORK_TRY;
    char why[256];

    if (pvrdma_common_fork_init(mode, why, sizeof(why)) != 0) {
        ucs_error("pvrdma: %s (UCX_PVRDMA_FORK_INIT=yes)", why);
        return UCS_ERR_UNSUPPORTED;
    }
    ucs_log((ibv_is_fork_initialized() == IBV_FORK_DISABLED) &&
            (mode != PVRDMA_COMMON_FORK_NO) ? UCS_LOG_LEVEL_DIAG :
                                              UCS_LOG_LEVEL_DEBUG,
            "pvrdma: %s", why);
    return UCS_OK;
}


static ucs_status_t uct_pvrdma_md_open(uct_component_t *component UCS_V_UNUSED,
                                       const char *md_name,
                                       const uct_md_config_t *uct_md_config,
                                       uct_md_h *md_p)
{
    const uct_pvrdma_md_config_t *config =
            ucs_derived_of(uct_md_config, uct_pvrdma_md_config_t);
    ucs_rcache_params_t rcache_params;
    uct_pvrdma_md_t *md;
    ucs_status_t status;
    int ret;

    md = ucs_calloc(1, sizeof(*md), "pvrdma md");
    if (md == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    md->super.ops       = &uct_pvrdma_md_ops;
    md->super.component = &uct_pvrdma_component;
    ucs_strncpy_zero(md->dev_name, md_name, sizeof(md->dev_name));
    pthread_mutex_init(&md->probe_lock, NULL);

    status = uct_pvrdma_md_fork_init(config->fork_init);
    if (status != UCS_OK) {
        goto err_free;
    }

    md->ctx = pvrdma_common_open_device(md_name);
    if (md->ctx == NULL) {
        ucs_error("pvrdma: cannot open verbs device %s: %m", md_name);
        status = UCS_ERR_NO_DEVICE;
        goto err_free;
    }

    ret = ibv_query_device(md->ctx, &md->dev_attr);
    if (ret != 0) {
        ucs_error("pvrdma: ibv_query_device(%s) failed: %s", md_name,
                  strerror(ret));
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    md->is_pvrdma = pvrdma_common_is_pvrdma(md_name, &md->dev_attr);
    uct_pvrdma_md_set_sys_dev(md);

    md->pd = ibv_alloc_pd(md->ctx);
    if (md->pd == NULL) {
        ucs_error("pvrdma: ibv_alloc_pd(%s) failed: %m", md_name);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    /* Honest limit: the device's max_mr_size (on PVRDMA also the reach of
     * one page directory), optionally lowered by the user. */
    md->max_reg = pvrdma_common_frag_limit(md->dev_attr.max_mr_size,
                                           md->is_pvrdma ?
                                           PVRDMA_COMMON_MR_LIMIT : 0,
                                           (config->max_reg == SIZE_MAX) ?
                                           0 : config->max_reg);
    if (md->max_reg > SIZE_MAX) {
        md->max_reg = SIZE_MAX;
    }
    /* a buffer of max_reg bytes may touch two more pages (see
     * uct_pvrdma_reg_mr) */
    if ((md->dev_attr.max_mr_size > 4 * ucs_get_page_size()) &&
        (md->max_reg > md->dev_attr.max_mr_size - 2 * ucs_get_page_size())) {
        md->max_reg = md->dev_attr.max_mr_size - 2 * ucs_get_page_size();
    }
    md->reg_cost = ucs_linear_func_make(config->reg_cost_overhead,
                                        config->reg_cost_growth);

    if (config->rcache_enable) {
        /* regions in whole pages (see uct_pvrdma_reg_mr) */
        uct_pvrdma_rcache_set_params(&rcache_params, &config->rcache,
                                     ucs_get_page_size());
        rcache_params.region_struct_size = sizeof(uct_pvrdma_memh_t);
        rcache_params.ucm_events         = UCM_EVENT_VM_UNMAPPED;
        rcache_params.context            = md;
        rcache_params.ops                = &uct_pvrdma_rcache_ops;
        status = ucs_rcache_create(&rcache_params, md->dev_name, NULL,
                                   &md->rcache);
        if (status != UCS_OK) {
            /* e.g. memory hooks unavailable: fall back to direct
             * registration, which is correct but slower */
            ucs_diag("pvrdma: %s: registration cache unavailable (%s), "
                     "registering directly", md->dev_name,
                     ucs_status_string(status));
            md->rcache = NULL;
        } else {
            md->reg_cost = ucs_linear_func_make(
                    uct_pvrdma_rcache_overhead(&config->rcache), 0);
        }
    }

    ucs_debug("pvrdma: opened md %s%s max_reg %zu rcache %s", md->dev_name,
              md->is_pvrdma ? " (PVRDMA)" : "", md->max_reg,
              (md->rcache != NULL) ? "on" : "off");
    *md_p = &md->super;
    return UCS_OK;

err_close:
    ibv_close_device(md->ctx);
err_free:
    pthread_mutex_destroy(&md->probe_lock);
    ucs_free(md);
    return status;
}


uct_component_t uct_pvrdma_component = {
    .query_md_resources = uct_pvrdma_query_md_resources,
    .md_open            = uct_pvrdma_md_open,
    .cm_open            = ucs_empty_function_return_unsupported,
    .rkey_unpack        = uct_pvrdma_rkey_unpack,
    .rkey_ptr           = ucs_empty_function_return_unsupported,
    .rkey_release       = ucs_empty_function_return_success,
    UCT_PVRDMA_COMPONENT_COMPAT
    .name               = UCT_PVRDMA_NAME,
    .md_config          = {
        .name           = "PVRDMA memory domain",
        .prefix         = UCT_PVRDMA_CONFIG_PREFIX,
        .table          = uct_pvrdma_md_config_table,
        .size           = sizeof(uct_pvrdma_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(
                                  &uct_pvrdma_component),
    .flags              = 0,
    .md_vfs_init        = ucs_empty_function
};
