/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_common.h
 * @brief Verbs code shared by the Open MPI BTL and the UCX transport for
 *        VMware PVRDMA (paravirtual RoCE) devices.
 *
 * Framework-free on purpose: no opal and no ucs here.  Functions return 0 on
 * success or a positive errno value; where a user-fixable problem can occur,
 * the caller passes a buffer (@p why / @p err) that receives one readable
 * sentence, so the plugin can print it with its own help/log facility.
 *
 * Pure functions (no verbs calls, no I/O) are marked "Pure." and are covered
 * by tests/unit.  Everything else talks to libibverbs (and hwloc for NUMA
 * distances).
 *
 * Completion status text: use ibv_wc_status_str() from libibverbs.
 */
#ifndef PVRDMA_COMMON_H
#define PVRDMA_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/*  Identity                                                                */
/* ------------------------------------------------------------------------ */

/** PCI vendor id of VMware (the host fills it; QEMU's model reports 0). */
#define PVRDMA_COMMON_VENDOR_ID     0x15AD
/** PCI device id / vendor_part_id of PVRDMA (2080 decimal). */
#define PVRDMA_COMMON_PART_ID       0x0820
/** Kernel device name prefix: vmw_pvrdma0, vmw_pvrdma1, ... */
#define PVRDMA_COMMON_NAME_PREFIX   "vmw_pvrdma"

/** Largest PVRDMA memory region: its page directory maps at most 262144
 *  pages, 1 GiB with 4 KiB pages, whatever max_mr_size the host reports. */
#define PVRDMA_COMMON_MR_LIMIT      (UINT64_C(1) << 30)

/** Length of device name buffers (same as libibverbs' IBV_SYSFS_NAME_MAX). */
#define PVRDMA_COMMON_DEV_NAME_MAX  64

/**
 * @brief Tell whether a verbs device is a PVRDMA device.  Pure.
 *
 * True when the name starts with "vmw_pvrdma" or the vendor_part_id is
 * 0x0820 (vendor id is not checked: QEMU's model leaves it 0).
 *
 * @param dev_name (IN) device name, may be NULL
 * @param attr     (IN) device attributes, may be NULL
 */
bool pvrdma_common_is_pvrdma(const char *dev_name,
                             const struct ibv_device_attr *attr);

/* ------------------------------------------------------------------------ */
/*  Port specifications: "dev[:port][,dev[:port]...]"                       */
/* ------------------------------------------------------------------------ */

/** Port number meaning "every port of the device". */
#define PVRDMA_COMMON_PORT_ANY 0

/** One element of an include/exclude list. */
struct pvrdma_common_port_spec {
    char    dev_name[PVRDMA_COMMON_DEV_NAME_MAX]; /**< device name */
    uint8_t port_num; /**< 1..255, or PVRDMA_COMMON_PORT_ANY */
};

/** A parsed include or exclude list; count 0 means "empty list". */
struct pvrdma_common_port_list {
    struct pvrdma_common_port_spec *specs; /**< malloc'ed array, or NULL */
    size_t                          count; /**< number of specs */
};

/**
 * @brief Parse "dev[:port][,dev[:port]...]".  Pure.
 *
 * NULL or "" (or only blanks) gives an empty list.  Blanks around elements
 * are ignored.  Errors (EINVAL): empty element ("a,,b"), empty device name,
 * device name too long, port not a decimal number in 1..255, trailing ':'.
 *
 * @param str     (IN)  the list text
 * @param list    (OUT) the result; free with pvrdma_common_port_list_free()
 * @param err     (OUT) message on error (may be NULL)
 * @param err_len (IN)  size of @p err
 * @return 0, EINVAL or ENOMEM (then @p list is empty)
 */
int pvrdma_common_port_list_parse(const char *str,
                                  struct pvrdma_common_port_list *list,
                                  char *err, size_t err_len);

/** @brief Release a list filled by pvrdma_common_port_list_parse(). */
void pvrdma_common_port_list_free(struct pvrdma_common_port_list *list);

/**
 * @brief True when (dev_name, port_num) matches an element of @p list.  Pure.
 */
bool pvrdma_common_port_list_match(const struct pvrdma_common_port_list *list,
                                   const char *dev_name, uint8_t port_num);

/**
 * @brief Apply include/exclude semantics.  Pure.
 *
 * A port is selected when (include is NULL or empty or matches) and
 * (exclude is NULL or does not match).
 */
bool pvrdma_common_port_selected(const struct pvrdma_common_port_list *include,
                                 const struct pvrdma_common_port_list *exclude,
                                 const char *dev_name, uint8_t port_num);

/* ------------------------------------------------------------------------ */
/*  Port discovery                                                          */
/* ------------------------------------------------------------------------ */

/** NUMA node / distance value meaning "unknown". */
#define PVRDMA_COMMON_NUMA_UNKNOWN (-1)

/** One verbs port as seen at discovery time. */
struct pvrdma_common_port {
    char     dev_name[PVRDMA_COMMON_DEV_NAME_MAX]; /**< e.g. "vmw_pvrdma0" */
    uint8_t  port_num;     /**< 1-based port number */
    bool     is_pvrdma;    /**< see pvrdma_common_is_pvrdma() */
    bool     active;       /**< port_attr.state == IBV_PORT_ACTIVE */
    enum ibv_mtu active_mtu; /**< port_attr.active_mtu */
    uint8_t  link_layer;   /**< IBV_LINK_LAYER_ETHERNET / _INFINIBAND */
    /** From /sys/class/infiniband/<dev>/device/numa_node; -1 unknown. */
    int      numa_node;
    /**
     * Distance between the device's NUMA node and the NUMA node(s) of the
     * calling process's CPU binding (hwloc): 0 local, larger is farther
     * (the hwloc/ACPI SLIT value when known), -1 unknown.
     */
    int      numa_distance;
    struct ibv_device_attr dev_attr;  /**< from ibv_query_device() */
    struct ibv_port_attr   port_attr; /**< from ibv_query_port() */
};

/**
 * @brief Ordering used by discovery: PVRDMA first, then ACTIVE, then
 *        NUMA-nearest (unknown distance last), then device name, then port.
 *        Pure; qsort()-compatible on struct pvrdma_common_port.
 */
int pvrdma_common_port_compare(const void *a, const void *b);

/** @brief qsort() @p ports with pvrdma_common_port_compare().  Pure. */
void pvrdma_common_port_sort(struct pvrdma_common_port *ports, size_t count);

/**
 * @brief Enumerate every port of every verbs device, keep the ones selected
 *        by include/exclude, fill NUMA data, and sort them.
 *
 * Ports that are not ACTIVE are returned too (sorted after active ones), so
 * callers can report them; callers use only ports with @c active set.
 *
 * @p why receives, when something the user asked for is unusable, one
 * sentence per problem, "; "-separated, e.g.
 * "device mlx5_9 requested in the include list was not found; port
 * vmw_pvrdma0:1 is DOWN".  It is "" when there is nothing to report.
 * A port listed in include but not found, or not ACTIVE, is reported.
 * When no ACTIVE port remains, @p why also says so.
 *
 * @param include (IN)  include list, or NULL
 * @param exclude (IN)  exclude list, or NULL
 * @param ports   (OUT) malloc'ed array (free with pvrdma_common_ports_free())
 * @param count   (OUT) number of entries
 * @param why     (OUT) explanation buffer (may be NULL)
 * @param why_len (IN)  its size
 * @return 0 when at least one ACTIVE port was found; ENODEV when none
 *         (also when the device list cannot be read; the array may still
 *         hold inactive ports); ENOMEM; EINVAL for NULL outputs.  A device
 *         or port that cannot be opened/queried is skipped and named in
 *         @p why.
 */
int pvrdma_common_ports_discover(const struct pvrdma_common_port_list *include,
                                 const struct pvrdma_common_port_list *exclude,
                                 struct pvrdma_common_port **ports,
                                 size_t *count, char *why, size_t why_len);

/**
 * @brief The ports of one device already open (@p ctx), in port order, with
 *        the same fields as pvrdma_common_ports_discover() fills except NUMA
 *        data (unknown).  A device or port that cannot be queried gives
 *        no entry and is named in @p why.
 * @return 0 (also with no ports: see @p count); ENOMEM; EINVAL for NULL
 *         arguments.
 */
int pvrdma_common_device_ports(struct ibv_context *ctx,
                               struct pvrdma_common_port **ports,
                               size_t *count, char *why, size_t why_len);

/** @brief Release an array from pvrdma_common_ports_discover() or
 *         pvrdma_common_device_ports(). */
void pvrdma_common_ports_free(struct pvrdma_common_port *ports);

/**
 * @brief Read /sys/class/infiniband/<dev>/device/numa_node.
 * @return the node, or PVRDMA_COMMON_NUMA_UNKNOWN (also for "-1").
 */
int pvrdma_common_dev_numa_node(const char *dev_name);

/**
 * @brief Tell whether @p name is a PCI address "dddd:bb:ss.f".  Pure.
 */
bool pvrdma_common_is_pci_bdf(const char *name);

/**
 * @brief The PCI address ("0000:0b:00.0") of a verbs device, from sysfs.
 * @param bdf (OUT) at least 13 bytes
 * @return 0; ENODEV when the device is not a PCI function (rxe, siw);
 *         EINVAL for a bad name.
 */
int pvrdma_common_dev_pci_name(const char *dev_name, char *bdf, size_t len);

/**
 * @brief Open a verbs device by name.
 * @return the context, or NULL with errno set (ENODEV if no such device).
 */
struct ibv_context *pvrdma_common_open_device(const char *dev_name);

/* ------------------------------------------------------------------------ */
/*  MTU helpers                                                             */
/* ------------------------------------------------------------------------ */

/** @brief IBV_MTU_256..4096 -> bytes; 0 for an invalid value.  Pure. */
uint32_t pvrdma_common_mtu_to_bytes(enum ibv_mtu mtu);

/** @brief 256/512/1024/2048/4096 -> IBV_MTU_*; 0 for other values.  Pure. */
enum ibv_mtu pvrdma_common_mtu_from_bytes(uint32_t bytes);

/** @brief The smaller of two valid MTUs.  Pure. */
enum ibv_mtu pvrdma_common_mtu_min(enum ibv_mtu a, enum ibv_mtu b);

/* ------------------------------------------------------------------------ */
/*  Resource profile                                                        */
/* ------------------------------------------------------------------------ */

/** Value meaning "decide from the device" in profile requests. */
#define PVRDMA_COMMON_AUTO (-1)

/**
 * What the user (MCA parameters / UCX config) asked for.
 * For every field, 0 or PVRDMA_COMMON_AUTO (-1) means "auto", except where
 * noted: max_inline and the tri-states use -1 for auto and 0 for "off".
 * Initialise with pvrdma_common_profile_request_init().
 */
struct pvrdma_common_profile_request {
    int64_t max_send_wr;   /**< send queue depth */
    int64_t max_recv_wr;   /**< receive queue depth (per QP, without SRQ) */
    int64_t send_sge;      /**< SGEs per send WR */
    int64_t recv_sge;      /**< SGEs per receive WR */
    int64_t max_inline;    /**< -1 auto, 0 none, >0 bytes */
    int     use_srq;       /**< -1 auto, 0 no, 1 yes */
    int64_t srq_depth;     /**< SRQ receive depth */
    int64_t cq_depth;      /**< CQ entries */
    int64_t mtu;           /**< bytes (256..4096); auto = port active MTU */
    int64_t max_msg_size;  /**< largest single message/RDMA op in bytes */
    int     rdma_read;     /**< -1 auto, 0 never use RDMA READ, 1 use it */
    int64_t max_rd_atomic; /**< outstanding RDMA READs per QP (both roles) */
};

/** Bits of pvrdma_common_profile::clamped: which requests were reduced. */
enum {
    PVRDMA_COMMON_PROFILE_MAX_SEND_WR   = 1u << 0,
    PVRDMA_COMMON_PROFILE_MAX_RECV_WR   = 1u << 1,
    PVRDMA_COMMON_PROFILE_SEND_SGE      = 1u << 2,
    PVRDMA_COMMON_PROFILE_RECV_SGE      = 1u << 3,
    PVRDMA_COMMON_PROFILE_MAX_INLINE    = 1u << 4,
    PVRDMA_COMMON_PROFILE_USE_SRQ       = 1u << 5,
    PVRDMA_COMMON_PROFILE_SRQ_DEPTH     = 1u << 6,
    PVRDMA_COMMON_PROFILE_CQ_DEPTH      = 1u << 7,
    PVRDMA_COMMON_PROFILE_MTU           = 1u << 8,
    PVRDMA_COMMON_PROFILE_MAX_MSG_SIZE  = 1u << 9,
    PVRDMA_COMMON_PROFILE_RDMA_READ     = 1u << 10,
    PVRDMA_COMMON_PROFILE_MAX_RD_ATOMIC = 1u << 11,
    PVRDMA_COMMON_PROFILE_NUM_FIELDS    = 12
};

/** The resources to use, every value within the device caps. */
struct pvrdma_common_profile {
    uint32_t max_send_wr;   /**< <= max_qp_wr */
    uint32_t max_recv_wr;   /**< <= max_qp_wr */
    uint32_t send_sge;      /**< <= max_sge */
    uint32_t recv_sge;      /**< <= max_sge */
    /** Inline bytes to request at QP creation: always 0 on PVRDMA.  The
     *  QP's reported cap.max_inline_data is the final word. */
    uint32_t max_inline;
    bool     use_srq;       /**< only when max_srq > 0 */
    uint32_t srq_depth;     /**< <= max_srq_wr; 0 when !use_srq */
    uint32_t cq_depth;      /**< <= max_cqe */
    enum ibv_mtu mtu;       /**< <= port active MTU */
    uint32_t mtu_bytes;     /**< same, in bytes */
    /** Largest registration; on PVRDMA also <= 1 GiB (page directory). */
    uint64_t max_mr_size;
    uint64_t max_msg_size;  /**< <= port max_msg_sz and max_mr_size */
    /** RDMA READ can be used: device has max_qp_rd_atom > 0 and
     *  max_qp_init_rd_atom > 0 and the user did not disable it.  When false,
     *  rendezvous must use RDMA WRITE. */
    bool     rdma_read_ok;
    uint8_t  max_rd_atomic;      /**< initiator depth (RTS); 0 if !read_ok */
    uint8_t  max_dest_rd_atomic; /**< responder depth (RTR) */
    uint32_t clamped;       /**< PVRDMA_COMMON_PROFILE_* bits */
};

/** @brief Set every request field to auto.  Pure. */
void pvrdma_common_profile_request_init(struct pvrdma_common_profile_request *req);

/**
 * @brief Compute the profile from device/port attributes and a request.
 *        Pure.
 *
 * Auto values: send WR 256, recv WR 256 (SRQ depth 1024), send SGE
 * min(4, max_sge), recv SGE 1, inline 0 on PVRDMA else 64, SRQ when the
 * device has one with max_srq_wr >= 64, CQ send+recv depth, port MTU,
 * max_rd_atomic min(4, caps).  Every value is then clamped to the caps;
 * requests above a cap set the matching bit in @c clamped.
 *
 * @return 0; EINVAL for a NULL argument, a negative value other than -1,
 *         an invalid MTU (not 256/512/1024/2048/4096) or a device that
 *         cannot run RC at all (max_qp_wr, max_sge or max_cqe of 0).
 */
int pvrdma_common_profile_compute(const struct ibv_device_attr *dev_attr,
                                  const struct ibv_port_attr *port_attr,
                                  bool is_pvrdma,
                                  const struct pvrdma_common_profile_request *req,
                                  struct pvrdma_common_profile *profile);

/** @brief Name of one PVRDMA_COMMON_PROFILE_* bit ("max_send_wr"...).  Pure. */
const char *pvrdma_common_profile_field_name(uint32_t bit);

/**
 * @brief Write "send_sge, max_inline" style list of clamped fields.  Pure.
 * @return number of fields listed.
 */
int pvrdma_common_profile_clamped_str(const struct pvrdma_common_profile *profile,
                                      char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/*  GID choice                                                              */
/* ------------------------------------------------------------------------ */

/** GID entry types (values independent of libibverbs' enum). */
enum pvrdma_common_gid_type {
    PVRDMA_COMMON_GID_TYPE_NONE    = 0, /**< empty/unknown entry */
    PVRDMA_COMMON_GID_TYPE_IB      = 1, /**< InfiniBand */
    PVRDMA_COMMON_GID_TYPE_ROCE_V1 = 2, /**< RoCE v1 (IB/RoCE v1) */
    PVRDMA_COMMON_GID_TYPE_ROCE_V2 = 3  /**< RoCE v2 (UDP encapsulated) */
};

/** One GID table entry. */
struct pvrdma_common_gid_entry {
    uint32_t index;                     /**< GID table index */
    union ibv_gid gid;                  /**< the GID (all zero: empty) */
    enum pvrdma_common_gid_type type;   /**< entry type */
};

/** @brief All 16 bytes zero.  Pure. */
bool pvrdma_common_gid_is_zero(const union ibv_gid *gid);
/** @brief ::ffff:a.b.c.d.  Pure. */
bool pvrdma_common_gid_is_ipv4_mapped(const union ibv_gid *gid);
/** @brief fe80::/10.  Pure. */
bool pvrdma_common_gid_is_link_local(const union ibv_gid *gid);
/** @brief Text form (inet_ntop IPv6).  @p buf >= 46 bytes.  Pure. */
const char *pvrdma_common_gid_str(const union ibv_gid *gid, char *buf, size_t len);
/** @brief "IB", "RoCE v1", "RoCE v2", "none".  Pure. */
const char *pvrdma_common_gid_type_str(enum pvrdma_common_gid_type type);

/**
 * @brief Choose the GID to use from a GID table.  Pure.
 *
 * Without a forced index, preference (lowest index wins within a tier):
 *  1. RoCE v2 with an IPv4-mapped GID (::ffff:a.b.c.d)
 *  2. RoCE v2, not link-local
 *  3. RoCE v1 with an IPv4-mapped GID
 *  4. RoCE v1, any non-zero GID
 *  5. any other non-zero GID (RoCE v2 link-local, IB)
 * With @p forced_index >= 0 that entry is used if it exists and is not
 * empty.
 *
 * @param entries      (IN)  the table (may contain empty entries)
 * @param count        (IN)  number of entries
 * @param forced_index (IN)  -1 for automatic choice, else a GID index
 * @param chosen       (OUT) position in @p entries of the choice
 * @param err, err_len (OUT) message on error
 * @return 0; ENOENT no usable GID at all; ERANGE forced index not in the
 *         table; ENODATA forced index names an empty entry; EINVAL NULL.
 */
int pvrdma_common_gid_choose(const struct pvrdma_common_gid_entry *entries,
                             size_t count, int forced_index, size_t *chosen,
                             char *err, size_t err_len);

/**
 * @brief Read a port's whole GID table (gid_tbl_len entries, empty ones
 *        included as type NONE) with ibv_query_gid_ex(), or ibv_query_gid()
 *        plus sysfs gid_attrs/types where that is missing.
 * @param entries (OUT) malloc'ed array, free() it
 * @return 0 or errno.
 */
int pvrdma_common_gid_table_read(struct ibv_context *ctx, uint8_t port_num,
                                 const struct ibv_port_attr *port_attr,
                                 struct pvrdma_common_gid_entry **entries,
                                 size_t *count);

/**
 * @brief Read the GID table and choose the GID (RoCE); for InfiniBand link
 *        layer the LID addresses the port, and the GID is index
 *        @p forced_index or 0 (optional: a zero GID is accepted there).
 * @return 0 or an errno as pvrdma_common_gid_choose(), with @p err filled.
 */
int pvrdma_common_gid_select(struct ibv_context *ctx, uint8_t port_num,
                             const struct ibv_port_attr *port_attr,
                             int forced_index,
                             struct pvrdma_common_gid_entry *out,
                             char *err, size_t err_len);

/* ------------------------------------------------------------------------ */
/*  Connection address (wire format)                                        */
/* ------------------------------------------------------------------------ */

/** Wire format version stored in pvrdma_common_addr::version. */
#define PVRDMA_COMMON_ADDR_VERSION 1

/**
 * Wire form of an RC connection address: only byte arrays, multi-byte
 * integers big-endian, so the layout is the same on every compiler and
 * host.  Exactly PVRDMA_COMMON_ADDR_WIRE_SIZE bytes.  Never access the
 * fields directly: use pack/unpack.
 */
struct pvrdma_common_addr {
    uint8_t version;        /**< PVRDMA_COMMON_ADDR_VERSION */
    uint8_t link_layer;     /**< IBV_LINK_LAYER_* */
    uint8_t gid_type;       /**< enum pvrdma_common_gid_type */
    uint8_t mtu;            /**< enum ibv_mtu (active/profile MTU) */
    uint8_t reserved;       /**< 0; ignored on receipt */
    uint8_t max_dest_rd_atomic; /**< responder depth of this QP (0: no
                                     incoming RDMA READ) */
    uint8_t lid[2];         /**< big-endian */
    uint8_t qpn[4];         /**< big-endian, 24 bits used */
    uint8_t psn[4];         /**< big-endian, 24 bits used */
    uint8_t gid[16];        /**< raw GID */
};

/** Size of struct pvrdma_common_addr on the wire. */
#define PVRDMA_COMMON_ADDR_WIRE_SIZE 32

/** Host form of a connection address. */
struct pvrdma_common_addr_info {
    union ibv_gid gid;
    uint32_t qpn;           /**< 24-bit QP number */
    uint32_t psn;           /**< 24-bit initial packet sequence number */
    uint16_t lid;           /**< LID (InfiniBand), 0 on RoCE */
    enum ibv_mtu mtu;
    enum pvrdma_common_gid_type gid_type;
    uint8_t  link_layer;    /**< IBV_LINK_LAYER_* */
    uint8_t  max_dest_rd_atomic;
};

/**
 * Returned by pvrdma_common_addr_check_compat() when the peer uses another
 * link layer or GID type: the two ports cannot talk to each other.
 */
#define PVRDMA_COMMON_EADDR_MISMATCH EPROTONOSUPPORT

/**
 * @brief Host form -> wire form.  Pure.
 * @return 0; EINVAL if qpn/psn exceed 24 bits or mtu is invalid.
 */
int pvrdma_common_addr_pack(const struct pvrdma_common_addr_info *info,
                            struct pvrdma_common_addr *wire);

/**
 * @brief Wire form -> host form.  Pure.
 * @param len (IN) bytes available at @p wire
 * @return 0; EINVAL if len < PVRDMA_COMMON_ADDR_WIRE_SIZE; EPROTO for an
 *         unknown version or invalid field values.
 */
int pvrdma_common_addr_unpack(const void *wire, size_t len,
                              struct pvrdma_common_addr_info *info);

/**
 * @brief Can a local port with @p local connect to @p remote?  Pure.
 * @return 0; PVRDMA_COMMON_EADDR_MISMATCH when link layer or GID type
 *         differ; EINVAL when the remote address is unusable (zero GID on
 *         RoCE, LID 0 on InfiniBand).  @p err explains.
 */
int pvrdma_common_addr_check_compat(const struct pvrdma_common_addr_info *local,
                                    const struct pvrdma_common_addr_info *remote,
                                    char *err, size_t err_len);

/* ------------------------------------------------------------------------ */
/*  RC QP state transitions                                                 */
/* ------------------------------------------------------------------------ */

/** Parameters of the RC QP transitions (local side). */
struct pvrdma_common_qp_params {
    uint8_t  port_num;        /**< local port */
    uint16_t pkey_index;      /**< 0 */
    /** INIT access flags; 0 means LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ. */
    unsigned access_flags;
    enum ibv_mtu mtu;         /**< local MTU; path MTU = min(local, remote) */
    uint8_t  link_layer;      /**< local link layer; Ethernet -> GRH */
    uint8_t  sgid_index;      /**< local GID index (RoCE) */
    uint8_t  hop_limit;       /**< GRH hop limit (64) */
    uint8_t  traffic_class;   /**< GRH traffic class (0) */
    uint8_t  sl;              /**< service level (0) */
    uint8_t  max_dest_rd_atomic; /**< responder depth (RTR) */
    uint8_t  min_rnr_timer;   /**< RTR (12 = 0.64 ms) */
    uint8_t  timeout;         /**< RTS local ACK timeout exponent (14) */
    uint8_t  retry_cnt;       /**< RTS (7) */
    uint8_t  rnr_retry;       /**< RTS (7 = infinite) */
    uint8_t  max_rd_atomic;   /**< initiator depth (RTS) */
};

/**
 * @brief Create an RC QP whose send and receive completions go to @p cq
 *        (receives from @p srq when not NULL: then no receive queue).
 *
 * Asks for @p cap; when the provider refuses and inline data was asked
 * for, asks again without (PVRDMA has none).
 * @param cap (IN/OUT) wanted; on success what the provider granted
 * @return the QP in RESET, or NULL with errno.
 */
struct ibv_qp *pvrdma_common_rc_qp_create(struct ibv_pd *pd, struct ibv_cq *cq,
                                          struct ibv_srq *srq,
                                          struct ibv_qp_cap *cap);

/**
 * @brief Fill @p buf with @p len bytes from the kernel's CSPRNG (getrandom;
 *        the connection secrets).  @return 0 or errno.
 */
int pvrdma_common_random_bytes(void *buf, size_t len);

/** @brief A random first PSN (24 bits) for a new QP. */
uint32_t pvrdma_common_psn_new(void);

/** @brief Fill the defaults given in the field comments.  Pure. */
void pvrdma_common_qp_params_init(struct pvrdma_common_qp_params *params);

/**
 * @brief Defaults, then the port and what the profile allows (MTU, RDMA
 *        READ depths).  Pure.  The plugin sets its timer and retry knobs.
 */
void pvrdma_common_qp_params_from_profile(struct pvrdma_common_qp_params *p,
                                          const struct pvrdma_common_profile *profile,
                                          uint8_t port_num, uint8_t link_layer,
                                          uint8_t sgid_index);

/**
 * @brief ibv_modify_qp() with one error convention: 0 or a positive errno
 *        (providers return -1 with errno, or the errno itself).
 */
int pvrdma_common_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                            int mask);

/** @brief RESET -> INIT.  @return 0 or errno of ibv_modify_qp(). */
int pvrdma_common_qp_to_init(struct ibv_qp *qp,
                             const struct pvrdma_common_qp_params *params);

/**
 * @brief INIT -> RTR towards @p remote.
 *
 * Path MTU is min(params->mtu, remote->mtu); on Ethernet the AH carries a
 * GRH with the remote GID, params->sgid_index and hop limit; on
 * InfiniBand the remote LID.  max_dest_rd_atomic comes from @p params.
 */
int pvrdma_common_qp_to_rtr(struct ibv_qp *qp,
                            const struct pvrdma_common_qp_params *params,
                            const struct pvrdma_common_addr_info *remote);

/**
 * @brief RTR -> RTS with the local @p sq_psn.  max_rd_atomic is
 *        min(params->max_rd_atomic, remote->max_dest_rd_atomic) when
 *        @p remote is not NULL.
 */
int pvrdma_common_qp_to_rts(struct ibv_qp *qp,
                            const struct pvrdma_common_qp_params *params,
                            const struct pvrdma_common_addr_info *remote,
                            uint32_t sq_psn);

/** @brief Any state -> ERR (flushes outstanding work).  @return 0/errno. */
int pvrdma_common_qp_to_err(struct ibv_qp *qp);

/**
 * @brief The address vector towards @p dgid / @p dlid from the local side
 *        in @p p (port, SL, GID index, hop limit, traffic class).  Pure.
 *
 * On Ethernet (RoCE) the GRH carries the addressing; on InfiniBand the LID
 * does and a non-zero GID adds a GRH.  RC QPs (RTR) and UD address handles
 * both use it, so the two cannot disagree about how a peer is reached.
 */
void pvrdma_common_ah_attr_fill(struct ibv_ah_attr *ah,
                                const struct pvrdma_common_qp_params *p,
                                const union ibv_gid *dgid, uint16_t dlid);

/* ------------------------------------------------------------------------ */
/*  The UD QP of connection messages (ud.c)                                 */
/* ------------------------------------------------------------------------ */

/** Receives of a UD QP start with the 40-byte GRH area. */
#define PVRDMA_COMMON_UD_GRH_LEN 40
/** At most this many sends in flight (tx slots are a 64-bit map). */
#define PVRDMA_COMMON_UD_TX_MAX  64
/** wr_id bit of sends; receives carry their slot index. */
#define PVRDMA_COMMON_UD_TX_BIT  (UINT64_C(1) << 63)
/** wr_id bits 32..47: the QP's generation (pvrdma_common_ud_reset()), so a
 *  completion from before a reset is told from one after it. */
#define PVRDMA_COMMON_UD_GEN_SHIFT 32
/**
 * Every receive ends in a second SGE of this many bytes, one buffer shared
 * by all receives and never read: a datagram can be as long as the largest
 * IB MTU whatever our messages are, and on SoftRoCE (Linux 6.1,
 * rxe_resp.c: copy_data() fails with -EINVAL when the datagram is longer
 * than the receive, RESPST_ERR_MALFORMED_WQE, class A) one longer datagram
 * puts the whole UD QP into the error state (issue 41).
 */
#define PVRDMA_COMMON_UD_SINK_LEN 4096

#define PVRDMA_COMMON_UD_SECRET_LEN 16

/**
 * The first bytes of every connection message of both plugins.  The
 * plugin owns type and flags; version and auth are written by
 * pvrdma_common_ud_send() and checked on receipt.  @p auth is the
 * receiver's secret: each UD QP draws one at open
 * (getrandom) and its owner publishes it only out of band, with its
 * address (the BTL's modex, UCX's iface address), so only processes of the
 * job can send a datagram that passes: a stray or forged one from another
 * job or tenant on the fabric is dropped and counted before the plugin
 * sees it.
 */
struct pvrdma_common_ud_hdr {
    uint8_t type;
    uint8_t version;
    uint8_t flags;
    uint8_t reserved;
    uint8_t auth[PVRDMA_COMMON_UD_SECRET_LEN];
};

/** What pvrdma_common_ud_open() builds. */
struct pvrdma_common_ud_attr {
    struct ibv_pd *pd;
    struct ibv_cq *cq;         /**< send and receive completions */
    uint8_t        port_num;
    uint32_t       qkey;       /**< own Q_Key (high bit clear) */
    uint8_t        version;    /**< of the plugin's message format */
    uint32_t       rx_count;   /**< receives kept posted */
    uint32_t       tx_count;   /**< sends in flight, <= PVRDMA_COMMON_UD_TX_MAX */
    uint32_t       msg_size;   /**< every message has exactly this size */
};

/** A UD QP with its registered receive and send slots. */
struct pvrdma_common_ud {
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t       *buf;        /**< rx slots (GRH + message), tx slots, sink */
    uint64_t       tx_busy;    /**< bitmap of tx slots in flight */
    uint64_t       resets;     /**< times the QP was found in error and reset */
    const char    *broken_by;  /**< what found it broken (for the log) */
    uint16_t       gen;        /**< generation of the WRs posted now */
    bool           broken;     /**< a completion failed: reset it */
    bool           resetting;  /**< reset; restart once the CQ is drained */
    uint64_t       dropped;    /**< received datagrams that failed the checks */
    uint64_t       forged;     /**< ... of which with a wrong secret */
    uint64_t       spoofed;    /**< came from another QP/GID than they claim
                                    (counted by pvrdma_common_ud_from()) */
    uint8_t        secret[PVRDMA_COMMON_UD_SECRET_LEN]; /**< publish with the address */
    uint8_t        port_num;
    uint32_t       qkey;
    uint32_t       rx_count;
    uint32_t       tx_count;
    uint32_t       msg_size;
    uint8_t        version;
};

/** What one completion of the UD QP was. */
enum pvrdma_common_ud_event {
    PVRDMA_COMMON_UD_SENT,        /**< a send finished, its slot is free */
    PVRDMA_COMMON_UD_SEND_FAILED, /**< a send failed, its slot is free; the
                                       QP is broken */
    PVRDMA_COMMON_UD_RECEIVED,    /**< a message passed the checks; repost after */
    PVRDMA_COMMON_UD_DROPPED,     /**< a datagram failed the checks, or the
                                       receive failed (the QP is broken);
                                       repost (a no-op while broken) */
    PVRDMA_COMMON_UD_STALE        /**< a WR of before the last reset: nothing
                                       to do (its slot was posted again) */
};

/**
 * @brief Allocate and register the slots, create the UD QP on attr->cq,
 *        bring it to RTS and post every receive (one WR list).
 * @param what (OUT) on failure, the step that failed, for the message
 * @return 0 or errno; on failure nothing is left allocated.
 */
int pvrdma_common_ud_open(struct pvrdma_common_ud *ud,
                          const struct pvrdma_common_ud_attr *attr,
                          const char **what);

/** @brief Destroy the QP and free the slots (a zeroed @p ud is fine). */
void pvrdma_common_ud_close(struct pvrdma_common_ud *ud);

/**
 * @brief A zeroed free send slot of msg_size bytes to fill, or NULL when
 *        all are in flight (the caller's retry timer sends again).
 */
void *pvrdma_common_ud_tx_get(struct pvrdma_common_ud *ud);

/**
 * @brief Send the message in the slot @p msg (from pvrdma_common_ud_tx_get)
 *        to UD QP @p qpn / @p qkey through @p ah, signalled, with the
 *        receiver's @p peer_secret (PVRDMA_COMMON_UD_SECRET_LEN bytes, from
 *        its published address) in the header.
 * @return 0 or the errno of ibv_post_send (the slot stays free).
 */
int pvrdma_common_ud_send(struct pvrdma_common_ud *ud, void *msg,
                          struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
                          const uint8_t *peer_secret);

/**
 * @brief The message in a received UD buffer @p rx (GRH first), or NULL when
 *        the datagram is shorter than GRH + @p msg_size, carries another
 *        @p version or not the receiver's @p secret
 *        (PVRDMA_COMMON_UD_SECRET_LEN bytes; NULL: not checked).  Pure.
 */
const void *pvrdma_common_ud_msg_check(const void *rx, uint32_t byte_len,
                                       uint32_t msg_size, uint8_t version,
                                       const uint8_t *secret);

/**
 * @brief Account one completion of the UD QP; for RECEIVED, @p msg points
 *        to the checked message, valid until pvrdma_common_ud_repost().
 *
 * A completion that is not a success (an error, or a flush: nothing
 * destroys the QP while its CQ is polled) means the QP went to the error
 * state: every receive is lost and every later one too.  It sets
 * ud->broken; the owner then recovers the QP after its poll loop with
 * pvrdma_common_ud_reset() and, once the CQ holds no completion from before
 * the reset, pvrdma_common_ud_restart().  Pure (no verbs call).
 */
enum pvrdma_common_ud_event
pvrdma_common_ud_complete(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                          const void **msg);

/**
 * @brief Whether the QP is in the error state although no completion said
 *        so (ibv_query_qp: a device command, so only when a request had no
 *        answer in time), for a device that flushes nothing when a QP
 *        goes to the error state.  Sets ud->broken when it is.
 * @return true when ud->broken is set now.
 */
bool pvrdma_common_ud_check_state(struct pvrdma_common_ud *ud);

/**
 * @brief First step of recovering a broken UD QP: move it to RESET (the
 *        device drops every WR; none of them completes any more, those
 *        already in the CQ come out of pvrdma_common_ud_complete() as
 *        STALE) and begin a new generation.  The QP number stays: the peers'
 *        addresses of it stay valid.  No send slot is handed out until
 *        pvrdma_common_ud_restart().
 * @return 0 or errno (ibv_modify_qp).
 */
int pvrdma_common_ud_reset(struct pvrdma_common_ud *ud);

/**
 * @brief Second step, once every completion polled from the CQ was polled
 *        after pvrdma_common_ud_reset() returned and the CQ was found empty
 *        (so the QP's new WRs never share the CQ with its old ones): back to
 *        RTS, every receive posted again (one WR list), every send slot
 *        free; counts ud->resets.
 * @return 0 or errno.
 */
int pvrdma_common_ud_restart(struct pvrdma_common_ud *ud);

/**
 * @brief Whether the received datagram of @p wc (its buffer @p msg from
 *        pvrdma_common_ud_complete) came from UD QP @p qpn at @p gid, the
 *        address the message claims: the completion's source QP and the
 *        GRH's source GID (ibv_init_ah_from_wc).  A mismatch is counted in
 *        ud->spoofed and ud->dropped; the caller drops the message.
 */
bool pvrdma_common_ud_from(struct pvrdma_common_ud *ud, const struct ibv_wc *wc,
                           const void *msg, uint32_t qpn,
                           const union ibv_gid *gid);

/** @brief Post the receive of @p wc again (nothing while the QP is broken
 *  or being reset: the restart posts every receive).  @return 0 or errno. */
int pvrdma_common_ud_repost(struct pvrdma_common_ud *ud, const struct ibv_wc *wc);

/** @brief An address handle to a peer's UD QP (pvrdma_common_ah_attr_fill).
 *  @return the AH or NULL with errno. */
struct ibv_ah *pvrdma_common_ud_ah_create(struct ibv_pd *pd,
                                          const struct pvrdma_common_qp_params *p,
                                          const union ibv_gid *dgid,
                                          uint16_t dlid);

/* ------------------------------------------------------------------------ */
/*  Fragmentation math                                                      */
/* ------------------------------------------------------------------------ */

/**
 * @brief Largest chunk allowed by all limits: the minimum of the non-zero
 *        arguments (0 means "no limit"); UINT64_MAX when all are 0.  Pure.
 */
uint64_t pvrdma_common_frag_limit(uint64_t max_mr_size, uint64_t max_msg_size,
                                  uint64_t user_limit);

/**
 * @brief Number of chunks of at most @p chunk bytes covering @p len bytes:
 *        ceil(len / chunk), 0 for len 0, overflow-free.  Pure.
 * @return the count; 0 also when chunk is 0 (invalid).
 */
uint64_t pvrdma_common_frag_count(uint64_t len, uint64_t chunk);

/**
 * @brief Offset and length of chunk @p i (0-based) of @p len.  Pure.
 * @return 0; ERANGE when i >= count; EINVAL when chunk is 0.
 */
int pvrdma_common_frag_get(uint64_t len, uint64_t chunk, uint64_t i,
                           uint64_t *offset, uint64_t *frag_len);

/* ------------------------------------------------------------------------ */
/*  Eager flow-control credits                                              */
/* ------------------------------------------------------------------------ */

/**
 * Per-peer credit state.  Each side posts @c initial receives for the peer
 * and starts with @c initial send credits.  Every received message (of any
 * kind) consumes one receive; once reposted it is "owed" back to the sender,
 * either piggybacked on outgoing messages or in an explicit credit-return
 * message once @c owed reaches @c threshold.  The last @c reserved send
 * credits can only be used by credit-return messages, so two peers that
 * both ran out of credits can always return them (no deadlock).
 */
struct pvrdma_common_credits {
    uint32_t initial;    /**< receives posted for the peer */
    uint32_t send;       /**< sender: messages we may still send */
    uint32_t reserved;   /**< credits kept for credit-return messages */
    uint32_t owed;       /**< receiver: reposted receives not yet returned */
    uint32_t threshold;  /**< send an explicit return at owed >= this */
    uint64_t returned;   /**< receiver: total credits given back (stats) */
};

/**
 * @brief Initialise.  Pure.  @p reserved is clamped to [1, initial-1] when
 *        initial > 1 (0 when initial <= 1); @p threshold to
 *        [1, initial - reserved] (so a blocked peer is always unblocked).
 * @return 0; EINVAL when initial is 0.
 */
int pvrdma_common_credits_init(struct pvrdma_common_credits *c,
                               uint32_t initial, uint32_t reserved,
                               uint32_t threshold);

/**
 * @brief Sender: take one credit for a message.  Pure.
 * @param credit_msg (IN) true for an explicit credit-return message, which
 *                        may use the reserved credits
 * @return true when a credit was taken (the message may be sent).
 */
bool pvrdma_common_credits_take(struct pvrdma_common_credits *c,
                                bool credit_msg);

/** @brief Sender: undo a take() whose post failed.  Pure. */
void pvrdma_common_credits_untake(struct pvrdma_common_credits *c);

/**
 * @brief Sender: the peer returned @p n credits.  Pure.
 * @return 0; ERANGE when that would exceed @c initial (protocol error; the
 *         credits are capped at @c initial).
 */
int pvrdma_common_credits_add(struct pvrdma_common_credits *c, uint32_t n);

/**
 * @brief Receiver: credits taken by piggyback() went nowhere (the post that
 *        was to carry them failed): owed again.  Pure.
 */
void pvrdma_common_credits_unpiggyback(struct pvrdma_common_credits *c,
                                      uint32_t n);

/**
 * @brief Receiver: the receives posted so far are the peer's initial
 *        credits (granted at connection time), not reposts owed back.  Pure.
 */
void pvrdma_common_credits_initial_posted(struct pvrdma_common_credits *c);

/*
 * Immediate data of an active message on a UCX connection with RDMA WRITE
 * (host order; the wire carries it big-endian):
 *   bits  0..4   AM id (UCT_AM_ID_BITS)
 *   bits  5..15  credits returned for the reverse connection (0: none)
 *   bits 16..31  tag of the receiver's ep those credits belong to
 * Credits fit: a channel never owes more than its receives, and channels
 * only piggyback when that is <= PVRDMA_COMMON_IMM_CREDITS_MAX.
 */
#define PVRDMA_COMMON_IMM_ID_MASK       0x1fu
#define PVRDMA_COMMON_IMM_CREDITS_SHIFT 5
#define PVRDMA_COMMON_IMM_CREDITS_MAX   0x7ffu
#define PVRDMA_COMMON_IMM_TAG_SHIFT     16

/** @brief Immediate data carrying @p am_id, @p credits and @p tag.  Pure. */
uint32_t pvrdma_common_imm_pack(uint8_t am_id, uint32_t credits, uint16_t tag);

/** @brief The AM id in @p imm.  Pure. */
uint8_t pvrdma_common_imm_am_id(uint32_t imm);

/** @brief The credits in @p imm (0: none).  Pure. */
uint32_t pvrdma_common_imm_credits(uint32_t imm);

/** @brief The ep tag in @p imm.  Pure. */
uint16_t pvrdma_common_imm_tag(uint32_t imm);

/** @brief Receiver: @p n receives from the peer were reposted.  Pure. */
void pvrdma_common_credits_consumed(struct pvrdma_common_credits *c,
                                    uint32_t n);

/**
 * @brief Receiver: take every owed credit to piggyback on an outgoing
 *        message (resets @c owed).  Pure.  @return the number to put in
 *        the header (may be 0).
 */
uint32_t pvrdma_common_credits_piggyback(struct pvrdma_common_credits *c);

/** @brief Receiver: owed >= threshold, send an explicit return.  Pure. */
bool pvrdma_common_credits_need_return(const struct pvrdma_common_credits *c);



/**
 * @brief ibv_create_cq() with @p *depth entries, halving the request while
 *        the device refuses it, but never below @p min_depth.
 *
 * Some devices refuse CQs well below their reported max_cqe (QEMU's pvrdma
 * model: ring of at most 128 pages, i.e. ~8K CQEs).
 *
 * @param depth (IN/OUT) wanted entries; on success the entries requested
 *                       from the device that accepted it
 * @return the CQ, or NULL with errno of the last attempt.
 */
struct ibv_cq *pvrdma_common_create_cq(struct ibv_context *ctx, uint32_t *depth,
                                       uint32_t min_depth,
                                       struct ibv_comp_channel *channel);

/**
 * @brief Zeroed memory of @p size bytes rounded up to whole pages, page
 *        aligned, for small registered buffers (see page.c for why).
 * @return the buffer (release with free()), or NULL.
 */
void *pvrdma_common_page_alloc(size_t size);

/* ------------------------------------------------------------------------ */
/*  What connections cost, and how many fit (scale.c)                       */
/* ------------------------------------------------------------------------ */

/** Fewest receives per peer that still stream: credit returns need a few. */
#define PVRDMA_COMMON_SCALE_RECV_MIN     8
/** Default ceiling of the send WRs in flight on all QPs of one process. */
#define PVRDMA_COMMON_SCALE_SEND_BUDGET  1024

/** Inputs: the job, the device's CQ limit and the transport's knobs. */
struct pvrdma_common_scale_request {
    uint32_t peers;            /**< peers one process may connect to; 0: unknown */
    uint32_t procs_per_device; /**< processes of the job sharing the device */
    uint32_t qps_per_peer;     /**< RC QPs a connection takes (BTL 1, UCX 2) */
    uint32_t cq_max;           /**< largest CQ: max_cqe, the knob, or what the
                                    device accepted at creation */
    uint32_t send_budget;      /**< send WRs in flight, all QPs; 0: auto */
    uint32_t max_send_wr;      /**< send queue of one QP */
    uint32_t send_sge;         /**< SGEs per send WR (sizes the QP ring) */
    uint32_t recv_per_peer;    /**< receives per peer wanted (per-QP queues) */
    bool     use_srq;          /**< receives on one shared queue */
    uint32_t srq_depth;        /**< its depth */
    uint64_t buf_size;         /**< bytes of one receive buffer */
};

/**
 * The plan.  One CQ per process holds every completion that can be due at
 * once: a QP in error flushes all its WRs, unsignalled ones too, so the
 * CQ is sized for send_budget (send WRs in flight on all QPs together)
 * plus every posted receive.  Nothing is ever resized (PVRDMA has no
 * resize_cq).
 */
struct pvrdma_common_scale_plan {
    uint32_t cq_depth;       /**< CQ entries to create */
    uint32_t send_budget;    /**< send WRs in flight on all QPs */
    uint32_t recv_per_peer;  /**< per-QP receives (= credits); 0 with SRQ */
    uint32_t srq_depth;      /**< receives on the SRQ; 0 without */
    uint32_t recv_room;      /**< CQ entries for per-QP receives */
    uint32_t peers_fit_cq;   /**< peers whose receives fit the CQ at
                                  recv_per_peer (UINT32_MAX with SRQ) */
    uint32_t peers_fit_cq_min; /**< the same at PVRDMA_COMMON_SCALE_RECV_MIN */
    uint32_t peers_fit_qp;   /**< peers per process within max_qp when all
                                  procs_per_device processes connect as many */
    bool     recv_reduced;   /**< recv_per_peer lowered so peers fit the CQ */
    uint64_t mem_per_peer;   /**< locked bytes a connection adds (receive
                                  buffers, QP rings; estimate) */
    uint64_t mem_fixed;      /**< locked bytes without peers (CQ ring, SRQ
                                  buffers; estimate) */
};

/**
 * @brief Plan the CQ, send budget and per-peer receives.  Pure.
 *
 * Without SRQ the receives per peer are lowered (not below
 * PVRDMA_COMMON_SCALE_RECV_MIN) until @c peers fit the CQ; the CQ is then
 * sized for exactly @c peers (as large as allowed when peers is 0).
 *
 * @return 0; EINVAL for NULL arguments, a cq_max too small for the send
 *         budget plus one peer, or zero queue sizes.
 */
int pvrdma_common_scale_plan(const struct ibv_device_attr *dev,
                             const struct pvrdma_common_scale_request *req,
                             struct pvrdma_common_scale_plan *plan);

/** @brief Locked bytes at @p peers connected peers under @p plan.  Pure. */
uint64_t pvrdma_common_scale_mem(const struct pvrdma_common_scale_plan *plan,
                                 uint32_t peers);

/* ------------------------------------------------------------------------ */
/*  RDMA WRITE probe (rdma_probe.c)                                         */
/* ------------------------------------------------------------------------ */

/** The port a probe runs on (what a loopback RC QP needs). */
struct pvrdma_common_probe_port {
    uint8_t      port_num;
    uint8_t      link_layer;   /**< IBV_LINK_LAYER_* */
    int          gid_index;    /**< RoCE: local GID index */
    uint16_t     lid;          /**< InfiniBand: port LID */
    enum ibv_mtu mtu;
};

/**
 * @brief Check that an RDMA WRITE really lands in remote memory on this port.
 *
 * Runs a loopback RC QP (one CQ, QP and 192-byte MR, destroyed before
 * returning).  QEMU's pvrdma device model turns WRITEs into SENDs; every
 * real device passes.  Costs a few control verbs: run once per port.
 *
 * @param timeout_ms (IN)  how long to wait for the WRITE's completion
 * @param why        (OUT) one line saying what was observed
 * @return 1 the WRITE works; 0 it does not (@p why says how it failed);
 *         negative errno when the probe itself could not run.
 */
int pvrdma_common_probe_rdma_write(struct ibv_context *ctx, struct ibv_pd *pd,
                                   const struct pvrdma_common_probe_port *port,
                                   int timeout_ms, char *why, size_t why_len);

/** Long enough for a loopback WRITE even on a nested (emulated) device. */
#define PVRDMA_COMMON_WRITE_PROBE_TIMEOUT_MS 2000

/**
 * @brief The policy of pvrdma_common_rdma_write_usable(), pure: WRITE when
 *        the probe saw it work (@p probe_rc 1), not when it saw it fail
 *        (0); when the probe could not run (negative errno), not on a
 *        PVRDMA device (fail closed: it may be QEMU's model) and yes on any
 *        other.  @p what is the probe's own line; @p why gets the decision.
 */
bool pvrdma_common_rdma_write_decide(int probe_rc, bool is_pvrdma,
                                     const char *what, char *why,
                                     size_t why_len);

/**
 * @brief Both plugins' policy when the user leaves RDMA WRITE on "auto":
 *        probe the port; use WRITE unless the probe saw it fail; a probe
 *        that cannot run keeps the device's word, except on a PVRDMA
 *        device (send/recv only, see pvrdma_common_rdma_write_decide()).
 * @param why (OUT) one line for the log saying what was decided and why
 * @return true when RDMA WRITE is to be used on this port.
 */
bool pvrdma_common_rdma_write_usable(struct ibv_context *ctx, struct ibv_pd *pd,
                                     const struct pvrdma_common_probe_port *port,
                                     char *why, size_t why_len);

/* ------------------------------------------------------------------------ */
/* Transport retries of a port (retry_counters.c)                           */
/* ------------------------------------------------------------------------ */

/**
 * Retry events of a port from the kernel's hw_counters: device-wide (every
 * process's QPs), as verbs count nothing per QP.  Read at open and at close,
 * the difference tells a lost packet from a slow one.
 */
struct pvrdma_common_retry_counters {
    int      available;  /**< the device exposes at least one of them */
    uint64_t timeouts;   /**< retransmissions by the requester */
    uint64_t seq_naks;   /**< sequence-error NAKs received */
    uint64_t rnr_naks;   /**< receiver-not-ready NAKs received */
    uint64_t duplicates; /**< duplicate requests received (ACK lost) */
};

/** @brief Read /sys/class/infiniband/DEV/ports/PORT/hw_counters.
 *  @return how many counter files were read (0: none, available = 0). */
int pvrdma_common_retry_counters_read(const char *dev_name, unsigned port,
                                      struct pvrdma_common_retry_counters *c);
/** @brief The same from directory @p dir (unit tests). */
int pvrdma_common_retry_counters_read_dir(const char *dir,
                                          struct pvrdma_common_retry_counters *c);
/** @brief @p delta = @p now - @p start, per field.  Pure. */
void pvrdma_common_retry_counters_since(const struct pvrdma_common_retry_counters *start,
                                        const struct pvrdma_common_retry_counters *now,
                                        struct pvrdma_common_retry_counters *delta);
/** @brief "R retries, S sequence NAKs, N RNR NAKs, D duplicate requests",
 *         or "not exposed by the device (no hw_counters)".  Pure. */
const char *pvrdma_common_retry_counters_str(const struct pvrdma_common_retry_counters *c,
                                             char *buf, size_t len);

#ifdef __cplusplus
}
#endif

/* ---- fork() and registered memory (fork.c) ---------------------------- */

/** The plugins' fork knob: never call ibv_fork_init, try, or require it. */
enum pvrdma_common_fork_mode {
    PVRDMA_COMMON_FORK_NO,
    PVRDMA_COMMON_FORK_TRY,
    PVRDMA_COMMON_FORK_YES
};

/** @brief What @p status means for the user, in words. */
const char *pvrdma_common_fork_status_str(enum ibv_fork_status status);

/**
 * @brief Unless @p mode is NO, call ibv_fork_init() where the kernel needs
 *        it and it is not on yet (RDMAV_FORK_SAFE / IBV_FORK_SAFE already
 *        turn it on inside libibverbs).  Call before the process's first
 *        registration.
 * @param why (OUT) one line: the state the process is in and why
 * @return 0, or the errno of ibv_fork_init() when it failed and @p mode is
 *         YES (with TRY a failure is only said in @p why).
 */
int pvrdma_common_fork_init(enum pvrdma_common_fork_mode mode, char *why,
                            size_t why_len);

/* ---- waiting without ringing (idle_wait.c) ---------------------------- */

/**
 * Bounded idle wait.  On PVRDMA an ibv_poll_cq that finds the CQ empty is a
 * doorbell (a VM exit), so a rank that waits in MPI_Recv rings as many as
 * its loop can turn.  The policy: while something of ours is in flight, or
 * for @c spin_us after the CQ last gave a completion, poll on every call;
 * after that, poll at most once per interval.  The interval is @c poll_us,
 * or, when @c scale is not 0, @c scale times the measured time of an empty
 * poll if that is longer (at most PVRDMA_COMMON_IDLE_POLL_MAX_US): a
 * waiting rank then spends at most 1/scale of its time in empty polls,
 * whatever a VM exit costs on its host (~1 us on ESXi, where poll_us
 * rules; ~125 us on the nested test tier).  A message that arrives during
 * the back-off is seen up to one interval late (its latency cost); the
 * waiting rank rings at most 1e6 / poll_us polls a second.  poll_us 0
 * turns the policy off.  Times in microseconds (CLOCK_MONOTONIC, a vDSO
 * read: no VM exit).
 */
#define PVRDMA_COMMON_IDLE_POLL_MAX_US 10000   /**< scaled interval cap */

struct pvrdma_common_idle_wait {
    uint64_t spin_us;       /**< config: full-speed polling after activity */
    uint64_t poll_us;       /**< config: then one poll per this, 0 = off */
    uint64_t scale;         /**< config: interval >= scale x empty poll, 0 = fixed */
    uint64_t quiet_since;   /**< when the CQ last gave something, 0: busy */
    uint64_t next_poll;     /**< backing off: not before this */
    uint64_t poll_started;  /**< a waiting poll is being timed, 0: none */
    uint64_t cost_x16;      /**< empty poll's time, us x 16 (moving average) */
    uint64_t interval_us;   /**< the back-off interval now */
    uint64_t skipped;       /**< polls not rung (counted at close) */
};

/** @brief Microseconds on CLOCK_MONOTONIC. */
uint64_t pvrdma_common_now_us(void);

/** @brief Set up @p w with the knobs (counters zeroed). */
void pvrdma_common_idle_wait_init(struct pvrdma_common_idle_wait *w,
                                  uint64_t spin_us, uint64_t poll_us,
                                  uint64_t scale);

/**
 * @brief Whether to poll the CQ now.  @p waiting: nothing of ours is in
 *        flight or queued (only receives can come); otherwise always 1.
 *        Reads the clock only when @p waiting and the policy is on.
 */
int pvrdma_common_idle_wait_poll(struct pvrdma_common_idle_wait *w,
                                 int waiting);

/** @brief A timed poll found nothing: its time goes into the average. */
void pvrdma_common_idle_wait_measure(struct pvrdma_common_idle_wait *w);

/** @brief The poll found @p n completions: activity restarts the spin. */
static inline void pvrdma_common_idle_wait_found(struct pvrdma_common_idle_wait *w,
                                                 int n)
{
    if (n > 0) {
        w->quiet_since  = 0;
        w->poll_started = 0;
    } else if (w->poll_started != 0) {
        pvrdma_common_idle_wait_measure(w);
    }
}

#endif /* PVRDMA_COMMON_H */
