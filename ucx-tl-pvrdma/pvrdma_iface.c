/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file pvrdma_iface.c
 * @brief Interface of the UCT "pvrdma" transport: configuration table,
 *        query, addresses, reachability, flush and fence, the iface class,
 *        its ops table and the transport registration.  Resource set-up is
 *        in pvrdma_iface_init.c, completion progress in pvrdma_progress.c.
 */
#include "pvrdma.h"
#include "pvrdma_impl.h"

#include <ucs/sys/string.h>
#include <ucs/arch/cpu.h>
#include <arpa/inet.h>


const char *uct_pvrdma_ternary_names[] = {
    [UCS_NO]  = "no",
    [UCS_YES] = "yes",
    [UCS_TRY] = "try",
    [UCS_TRY + 1] = NULL
};


static ucs_config_field_t uct_pvrdma_iface_config_table[] = {
    {"", "ALLOC=huge,thp,mmap,heap", NULL,
     ucs_offsetof(uct_pvrdma_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"SEG_SIZE", "8k",
     "Size of send and receive buffers: the largest active message (short,\n"
     "bcopy and zcopy including the header) and the largest bcopy RMA.",
     ucs_offsetof(uct_pvrdma_iface_config_t, seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"TX_QUEUE_LEN", "256",
     "Send work requests per QP (clamped to the device's max_qp_wr).",
     ucs_offsetof(uct_pvrdma_iface_config_t, tx_queue_len),
     UCS_CONFIG_TYPE_UINT},

    {"RX_QUEUE_LEN", "64",
     "Receive buffers posted for every connected peer endpoint; also the\n"
     "number of send credits a peer starts with (clamped to max_qp_wr).\n"
     "A connection gets fewer (at least 8) when the CQ is short: 1/96 of\n"
     "the CQ entries still free for receives, or 1/(2 x the job's peers\n"
     "not yet connected) when the launcher gives the job's size\n"
     "(OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS). Each is a locked\n"
     "SEG_SIZE buffer: 64 x 8 KiB x 159 peers is 84 MiB per process.",
     ucs_offsetof(uct_pvrdma_iface_config_t, rx_queue_len),
     UCS_CONFIG_TYPE_UINT},

    {"RX_BATCH", "32",
     "Receives are reposted, and credits returned, in batches of this many\n"
     "(one doorbell per batch). At most three quarters of a connection's\n"
     "receive queue (RX_QUEUE_LEN, or fewer when the CQ is short) is used.\n"
     "A credit return is a packet of its own (an 8-byte RDMA WRITE): 32 of\n"
     "64 halves them against 16 (measured on the SoftRoCE bed: am_lat 8 B\n"
     "typical 339-358 us with 16, 315-322 us with 32, rc_verbs 320-329 us).",
     ucs_offsetof(uct_pvrdma_iface_config_t, rx_batch), UCS_CONFIG_TYPE_UINT},

    {"TX_MODERATION", "16",
     "Request a send completion only every this many sends (selective\n"
     "signalling); at most half of TX_QUEUE_LEN is used.",
     ucs_offsetof(uct_pvrdma_iface_config_t, tx_moderation),
     UCS_CONFIG_TYPE_UINT},

    {"TX_MAX_SGE", "0",
     "Scatter/gather entries per send; 0 takes min(4, device max_sge).",
     ucs_offsetof(uct_pvrdma_iface_config_t, tx_max_sge),
     UCS_CONFIG_TYPE_UINT},

    {"CQ_LEN", "65536",
     "Completion queue entries of the interface (clamped to max_cqe, rounded\n"
     "down to a power of two and halved while the device refuses the size:\n"
     "QEMU's pvrdma model takes 4096). Every connection from a peer reserves\n"
     "its receive queue in it: RX_QUEUE_LEN, or fewer (down to 8) once a\n"
     "full queue would take more than 1/96 of the entries still free, so\n"
     "that many peers fit (a real ESXi PVRDMA device, max_cqe 262144: about\n"
     "920 peers with full queues and ~1220 in all; QEMU's 4096: ~190). Send\n"
     "work requests in flight use what receives do not reserve, at least\n"
     "TX_QUEUE_LEN.",
     ucs_offsetof(uct_pvrdma_iface_config_t, cq_len), UCS_CONFIG_TYPE_UINT},

    {"POLL_BATCH", "16",
     "Completions fetched by one ibv_poll_cq call.",
     ucs_offsetof(uct_pvrdma_iface_config_t, poll_batch),
     UCS_CONFIG_TYPE_UINT},

    {"CQ_IDLE_POLLS", "-1",
     "After this many consecutive empty CQ polls with no send outstanding,\n"
     "or once the idle wait has backed off (after UCX_PVRDMA_IDLE_SPIN) for\n"
     "10 ms, arm the\n"
     "CQ and wait for its completion event instead of polling (an empty poll\n"
     "is a doorbell, i.e. a VM exit, on PVRDMA; reading the event is a system\n"
     "call); while armed the CQ is still polled every 100 ms, and a device\n"
     "that does not deliver CQ events is then polled as if this were 0.\n"
     "0 never arms; -1 means 64 on PVRDMA and 0 on other devices.",
     ucs_offsetof(uct_pvrdma_iface_config_t, cq_idle_polls),
     UCS_CONFIG_TYPE_INT},

    {"RDMA_READ", "no",
     "Use RDMA READ for GET operations: yes, no, or try (when the device\n"
     "supports it). \"no\" (the default, as the BTL's btl_pvrdma_rdma_read)\n"
     "offers no GET, so UCP's rendezvous writes the data with RDMA WRITE\n"
     "(PUT): READ is what PVRDMA does least well (many hosts report\n"
     "max_qp_rd_atom 0) and what fails first when packets are lost (SoftRoCE\n"
     "under load: READ rendezvous ended in remote QP errors in 4 of 7 runs\n"
     "of 4 x 8 ranks all-to-all; README, Limits).",
     ucs_offsetof(uct_pvrdma_iface_config_t, rdma_read),
     UCS_CONFIG_TYPE_ENUM(uct_pvrdma_ternary_names)},

    {"RDMA_WRITE", "try",
     "Use RDMA WRITE (PUT, and internally for credit returns and flush):\n"
     "yes, no, or try (run a loopback probe once per device port: QEMU's\n"
     "pvrdma device model turns every WRITE into a SEND). Without WRITE the\n"
     "interface offers no PUT (UCP then uses AM-based protocols and software\n"
     "RMA), sends AMs as plain SENDs and returns credits with SENDs; a\n"
     "connection uses this send/recv-only mode when either end is in it.",
     ucs_offsetof(uct_pvrdma_iface_config_t, rdma_write),
     UCS_CONFIG_TYPE_ENUM(uct_pvrdma_ternary_names)},

    {"MAX_RD_ATOMIC", "4",
     "Outstanding RDMA READs per QP (clamped to the device's limits).",
     ucs_offsetof(uct_pvrdma_iface_config_t, max_rd_atomic),
     UCS_CONFIG_TYPE_UINT},

    {"GID_INDEX", "-1",
     "GID table index to use; -1 chooses automatically (RoCE v2 IPv4-mapped\n"
     "first, then RoCE v2, then RoCE v1).",
     ucs_offsetof(uct_pvrdma_iface_config_t, gid_index), UCS_CONFIG_TYPE_INT},

    {"PATH_MTU", "0",
     "Path MTU in bytes (256, 512, 1024, 2048 or 4096); 0 uses the port's\n"
     "active MTU.",
     ucs_offsetof(uct_pvrdma_iface_config_t, path_mtu),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"TIMEOUT", "16",
     "Local ACK timeout exponent of RC QPs (4.096us * 2^value, 16 = 268 ms,\n"
     "as the BTL's btl_pvrdma_rc_timeout): how long a lost packet that no\n"
     "later packet reveals (the last of a burst) stalls a QP before it is\n"
     "retransmitted. With 18 (1.07 s, rc_verbs' 1 s) MPI messages in both\n"
     "directions at once ran at 0.44-0.66 of the BTL's speed up to 512 KiB\n"
     "on the lossy SoftRoCE bed, with 16 at 0.94-1.20; 14 (67 ms) resends\n"
     "whole windows of RDMA WRITEs whenever an ACK is merely late.",
     ucs_offsetof(uct_pvrdma_iface_config_t, timeout), UCS_CONFIG_TYPE_UINT},

    {"RETRY_COUNT", "7",
     "Transport retries of RC QPs before a peer is declared unreachable.",
     ucs_offsetof(uct_pvrdma_iface_config_t, retry_count),
     UCS_CONFIG_TYPE_UINT},

    {"RNR_RETRY", "7",
     "Receiver-not-ready retries (7 means infinite).",
     ucs_offsetof(uct_pvrdma_iface_config_t, rnr_retry),
     UCS_CONFIG_TYPE_UINT},

    {"CONN_TIMEOUT", "30s",
     "Give up connecting to a peer interface after this time; the endpoint\n"
     "then fails through UCT error handling.",
     ucs_offsetof(uct_pvrdma_iface_config_t, conn_timeout),
     UCS_CONFIG_TYPE_TIME},

    {"KEEPALIVE", "20s",
     "Probe a connected peer that has shown no sign of life (nothing of ours\n"
     "completed by it, no credits from it) for this long while the worker is\n"
     "progressed: one signalled zero-length RDMA WRITE, which a dead peer\n"
     "(process, VM or link) fails within RC's retry window, so the endpoint\n"
     "fails through UCT error handling instead of a receive waiting for ever.\n"
     "0 turns it off. Needs RDMA WRITE (not on send/recv-only connections).",
     ucs_offsetof(uct_pvrdma_iface_config_t, keepalive), UCS_CONFIG_TYPE_TIME},

    {"IDLE_WAIT", "auto",
     "Bounded idle wait (IDLE_SPIN, IDLE_POLL_INTERVAL): auto (on for PVRDMA\n"
     "devices, where an empty CQ poll is a VM exit; off elsewhere, where polls\n"
     "are cheap and backing off only adds latency), yes, no.",
     ucs_offsetof(uct_pvrdma_iface_config_t, idle_wait),
     UCS_CONFIG_TYPE_TERNARY_AUTO},

    {"IDLE_SPIN", "1ms",
     "How long the interface keeps polling its CQ on every progress call\n"
     "after the last completion while it only waits for messages (nothing of\n"
     "its own in flight). Then it backs off to IDLE_POLL_INTERVAL.",
     ucs_offsetof(uct_pvrdma_iface_config_t, idle_spin), UCS_CONFIG_TYPE_TIME},

    {"IDLE_POLL_INTERVAL", "50us",
     "Time between CQ polls of an interface that has waited longer than\n"
     "IDLE_SPIN: an empty poll is a doorbell (a VM exit) on PVRDMA, so a\n"
     "waiting worker rings at most one per this instead of as many as its\n"
     "loop turns; a message arriving meanwhile is seen up to this late.\n"
     "0 polls on every call (lowest latency, most exits).",
     ucs_offsetof(uct_pvrdma_iface_config_t, idle_poll_interval),
     UCS_CONFIG_TYPE_TIME},

    {"IDLE_POLL_SCALE", "16",
     "Back off further where an empty CQ poll is slow: the time between polls\n"
     "of a waiting interface is at least this many times the measured time of\n"
     "an empty poll (at most 10ms), so that polling takes at most 1/this of a\n"
     "waiting worker's time whatever a VM exit costs on its host (~1us on\n"
     "ESXi, where IDLE_POLL_INTERVAL rules). 0: the fixed interval only.",
     ucs_offsetof(uct_pvrdma_iface_config_t, idle_poll_scale),
     UCS_CONFIG_TYPE_UINT},

    {"IDLE_SPIN_SCALE", "2",
     "Pace the idle spin where an empty CQ poll is slow: after the first 50us\n"
     "of a wait (every call polls then, so a short round trip never waits),\n"
     "the spin polls at most once per this many times the measured time of an\n"
     "empty poll. On the nested test tier (~125us polls) a worker waiting for\n"
     "its peer otherwise rang a poll per 125us, most too early to find\n"
     "anything; on a host (~1us polls) a message is seen a microsecond or so\n"
     "later. 0 or 1: poll on every call of the spin.",
     ucs_offsetof(uct_pvrdma_iface_config_t, idle_spin_scale),
     UCS_CONFIG_TYPE_UINT},

    {"IDLE_SPIN_ADAPT", "y",
     "Let the idle spin's pace follow what its polls find: each paced spin\n"
     "poll that finds nothing stretches the pace (IDLE_SPIN_SCALE) by a\n"
     "quarter, each that ends a wait halves the stretch, so that about one in\n"
     "four finds something; never longer than the back-off's interval\n"
     "(IDLE_POLL_INTERVAL) nor half of IDLE_SPIN. The first 50us of a wait\n"
     "still poll on every call. On the nested test tier 91% of the fixed\n"
     "pace's spin polls found nothing in OpenFOAM. n: the fixed pace.",
     ucs_offsetof(uct_pvrdma_iface_config_t, idle_spin_adapt),
     UCS_CONFIG_TYPE_BOOL},

    {"CONN_RETRY", "1s",
     "Resend an unanswered connection message after this time, then each\n"
     "time after twice as long (at most 8 times this and a quarter of\n"
     "CONN_TIMEOUT).",
     ucs_offsetof(uct_pvrdma_iface_config_t, conn_retry),
     UCS_CONFIG_TYPE_TIME},

    {"CONN_PENDING_MAX", "256",
     "Accepted connections whose requester has not yet confirmed them that\n"
     "an iface keeps at a time; requests beyond are not answered (their\n"
     "senders resend them). A connection still unconfirmed after\n"
     "CONN_TIMEOUT (its requester died, or destroyed its endpoint and the\n"
     "disconnect was lost) is closed and its receive buffers and completion\n"
     "queue entries freed.",
     ucs_offsetof(uct_pvrdma_iface_config_t, conn_pending_max),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_GET_ZCOPY", "256k",
     "Largest single RDMA READ; UCP splits larger GETs into several. Large\n"
     "READs answered in one burst lose packets on slow or emulated links and\n"
     "then stall in retransmission. \"inf\" uses the device limit.",
     ucs_offsetof(uct_pvrdma_iface_config_t, max_get_zcopy),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_PUT_ZCOPY", "inf",
     "Largest single RDMA WRITE (\"inf\": the device and registration limit).",
     ucs_offsetof(uct_pvrdma_iface_config_t, max_put_zcopy),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"CREDIT_IMM", "y",
     "Return receive credits in the immediate data of active messages sent\n"
     "to the same peer, when there are any, instead of an 8-byte RDMA WRITE\n"
     "of their own (a packet and an ACK). A batch no message carried goes by\n"
     "WRITE one progress call later. Only on connections with RDMA WRITE\n"
     "and RX_QUEUE_LEN <= 2047; both peers must enable it.",
     ucs_offsetof(uct_pvrdma_iface_config_t, credit_imm),
     UCS_CONFIG_TYPE_BOOL},

    {"TX_COALESCE", "y",
     "Post the active messages of one progress turn to a peer as one\n"
     "work-request list: every ibv_post_send rings a doorbell, a VM exit on\n"
     "PVRDMA. An AM to a peer that already had one posted since progress last\n"
     "ran, or one sent from a completion or pending callback inside progress\n"
     "(the next fragments of a large message), waits until the progress call\n"
     "ends (at most 32 per peer); the first AM after progress always goes at\n"
     "once. n: every AM is posted by itself.",
     ucs_offsetof(uct_pvrdma_iface_config_t, tx_coalesce),
     UCS_CONFIG_TYPE_BOOL},

    {"MAX_CONNECTIONS", "auto",
     "Most endpoints that hold an RC connection (QP) at once. An endpoint\n"
     "that needs one beyond it waits while the least recently used idle\n"
     "connection is closed with its peer's agreement (nothing in flight\n"
     "either way, every message received), and a closed one reconnects on\n"
     "its next send; one that waits a third of UCX_PVRDMA_CONN_TIMEOUT\n"
     "connects over the budget. Each connection also costs the peer a QP.\n"
     "auto: the device's max_qp shared by the processes on this host\n"
     "(OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or SLURM_NTASKS_PER_NODE,\n"
     "else one per CPU), two QPs per connection, so a job that fits the\n"
     "device never closes anything. inf: no budget.",
     ucs_offsetof(uct_pvrdma_iface_config_t, max_connections),
     UCS_CONFIG_TYPE_ULUNITS},

    {"UD_RX_QUEUE_LEN", "64",
     "Receive buffers of the UD QP that carries connection requests.",
     ucs_offsetof(uct_pvrdma_iface_config_t, ud_rx_len),
     UCS_CONFIG_TYPE_UINT},

    UCT_PVRDMA_MPOOL_CONFIG_FIELDS("TX_", -1, 128, "send",
                                   ucs_offsetof(uct_pvrdma_iface_config_t,
                                                tx_mp), ""),

    UCT_PVRDMA_MPOOL_CONFIG_FIELDS("RX_", -1, 128, "receive",
                                   ucs_offsetof(uct_pvrdma_iface_config_t,
                                                rx_mp), ""),

    {NULL}
};


/* ----------------------------------------------------------------------- */
/*  Query and addresses                                                    */
/* ----------------------------------------------------------------------- */

/* The secret reaches peers only through UCP's address exchange (the job's
 * out-of-band channel): a connection message without it is dropped
 * (common/ud.c). */
typedef struct uct_pvrdma_iface_addr {
    uint8_t  ud_qpn[4];     /* big-endian */
    uint8_t  secret[PVRDMA_COMMON_UD_SECRET_LEN];
} UCS_S_PACKED uct_pvrdma_iface_addr_t;


/* Device address: what the peer needs to reach this port.  UCP (address
 * format v1) allows at most 31 bytes, so this is a compact form of the
 * connection address without QP number and PSN. */
typedef struct uct_pvrdma_dev_addr {
    uint8_t  gid[16];
    uint8_t  lid[2];        /* big-endian */
    uint8_t  link_layer;
    uint8_t  gid_type;
    uint8_t  mtu;
    uint8_t  max_dest_rd_atomic;
} UCS_S_PACKED uct_pvrdma_dev_addr_t;


int uct_pvrdma_dev_addr_unpack(const uct_device_addr_t *addr,
                               struct pvrdma_common_addr_info *info)
{
    const uct_pvrdma_dev_addr_t *dev_addr = (const void*)addr;
    struct pvrdma_common_addr_info tmp;
    struct pvrdma_common_addr wire;

    /* validate through the common wire format */
    memset(&tmp, 0, sizeof(tmp));
    memcpy(tmp.gid.raw, dev_addr->gid, sizeof(tmp.gid.raw));
    tmp.lid                = ((uint16_t)dev_addr->lid[0] << 8) |
                             dev_addr->lid[1];
    tmp.link_layer         = dev_addr->link_layer;
    tmp.gid_type           = dev_addr->gid_type;
    tmp.mtu                = dev_addr->mtu;
    tmp.max_dest_rd_atomic = dev_addr->max_dest_rd_atomic;
    if (pvrdma_common_addr_pack(&tmp, &wire) != 0) {
        return -1;
    }
    return pvrdma_common_addr_unpack(&wire, sizeof(wire), info);
}


static ucs_status_t uct_pvrdma_iface_query(uct_iface_h tl_iface,
                                           uct_iface_attr_t *attr)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_iface, uct_pvrdma_iface_t);
    size_t mtu                = iface->profile.mtu_bytes;
    double bw;

    uct_base_iface_query(&iface->super, attr);

    attr->iface_addr_len  = sizeof(uct_pvrdma_iface_addr_t);
    attr->device_addr_len = sizeof(uct_pvrdma_dev_addr_t);
    attr->ep_addr_len     = 0;
    attr->max_conn_priv   = 0;

    attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_AM_SHORT |
                      UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_AM_ZCOPY |
                      UCT_IFACE_FLAG_PENDING |
                      UCT_IFACE_FLAG_CB_SYNC |
                      /* failed completions and unanswered connection
                       * requests reach the iface error handler */
                      UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                      /* uct_pvrdma_ep_check probes a silent peer */
                      UCT_IFACE_FLAG_EP_CHECK |
                      /* a network transport (UCX 1.18 asks) */
                      UCT_PVRDMA_IFACE_FLAG_INTER_NODE;
    if (iface->rdma_write_ok) {
        /* a peer without WRITE does not advertise PUT either: UCP then
         * does not use PUT towards it (our eps to it refuse PUT too) */
        attr->cap.flags |= UCT_IFACE_FLAG_PUT_SHORT |
                           UCT_IFACE_FLAG_PUT_BCOPY |
                           UCT_IFACE_FLAG_PUT_ZCOPY;
    }
    if (iface->profile.rdma_read_ok) {
        attr->cap.flags |= UCT_IFACE_FLAG_GET_BCOPY |
                           UCT_IFACE_FLAG_GET_ZCOPY;
    }

    /* "short" means copied into a registered buffer: PVRDMA has no inline */
    attr->cap.am.max_short       = iface->config.seg_size;
    attr->cap.am.max_bcopy       = iface->config.seg_size;
    attr->cap.am.min_zcopy       = 0;
    attr->cap.am.max_zcopy       = iface->config.seg_size;
    attr->cap.am.opt_zcopy_align = UCS_SYS_PCI_MAX_PAYLOAD;
    attr->cap.am.align_mtu       = mtu;
    attr->cap.am.max_hdr         = ucs_min(iface->config.seg_size, 128);
    attr->cap.am.max_iov         = iface->config.tx_max_sge - 1;

    attr->cap.put.max_short       = iface->config.seg_size;
    attr->cap.put.max_bcopy       = iface->config.seg_size;
    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.max_zcopy       = iface->config.max_put_zcopy;
    attr->cap.put.opt_zcopy_align = UCS_SYS_PCI_MAX_PAYLOAD;
    attr->cap.put.align_mtu       = mtu;
    attr->cap.put.max_iov         = iface->config.tx_max_sge;
    if (!iface->rdma_write_ok) {
        memset(&attr->cap.put, 0, sizeof(attr->cap.put));
    }

    if (iface->profile.rdma_read_ok) {
        attr->cap.get.max_bcopy       = iface->config.seg_size;
        attr->cap.get.min_zcopy       = 0;
        attr->cap.get.max_zcopy       = iface->config.max_get_zcopy;
        attr->cap.get.opt_zcopy_align = UCS_SYS_PCI_MAX_PAYLOAD;
        attr->cap.get.align_mtu       = mtu;
        attr->cap.get.max_iov         = iface->config.tx_max_sge;
    }

    /* Rough model; only ratios between transports matter to UCP */
    bw                        = (iface->port_attr.active_speed == 0) ?
                                1000.0 * UCS_MBYTE : 3000.0 * UCS_MBYTE;
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared    = bw;
    attr->latency             = ucs_linear_func_make(2e-6, 0);
    attr->overhead            = 100e-9;
    attr->priority            = 0;
    return UCS_OK;
}


static ucs_status_t
uct_pvrdma_iface_get_device_address(uct_iface_h tl_iface,
                                    uct_device_addr_t *addr)
{
    uct_pvrdma_iface_t *iface       = ucs_derived_of(tl_iface,
                                                     uct_pvrdma_iface_t);
    uct_pvrdma_dev_addr_t *dev_addr = (uct_pvrdma_dev_addr_t*)addr;

    memcpy(dev_addr->gid, iface->dev_info.gid.raw, sizeof(dev_addr->gid));
    dev_addr->lid[0]             = iface->dev_info.lid >> 8;
    dev_addr->lid[1]             = iface->dev_info.lid & 0xff;
    dev_addr->link_layer         = iface->dev_info.link_layer;
    dev_addr->gid_type           = iface->dev_info.gid_type;
    dev_addr->mtu                = iface->dev_info.mtu;
    dev_addr->max_dest_rd_atomic = iface->dev_info.max_dest_rd_atomic;
    return UCS_OK;
}


static ucs_status_t uct_pvrdma_iface_get_address(uct_iface_h tl_iface,
                                                 uct_iface_addr_t *addr)
{
    uct_pvrdma_iface_t *iface     = ucs_derived_of(tl_iface,
                                                   uct_pvrdma_iface_t);
    uct_pvrdma_iface_addr_t *iaddr = (uct_pvrdma_iface_addr_t*)addr;
    uint32_t qpn                  = htonl(iface->ud.dgram.qp->qp_num);

    memcpy(iaddr->ud_qpn, &qpn, sizeof(qpn));
    memcpy(iaddr->secret, iface->ud.dgram.secret, sizeof(iaddr->secret));
    return UCS_OK;
}


void uct_pvrdma_iface_addr_secret(const uct_iface_addr_t *addr, uint8_t *secret)
{
    memcpy(secret, ((const uct_pvrdma_iface_addr_t*)addr)->secret,
           PVRDMA_COMMON_UD_SECRET_LEN);
}


uint32_t uct_pvrdma_iface_addr_qpn(const uct_iface_addr_t *addr)
{
    const uct_pvrdma_iface_addr_t *iaddr = (const void*)addr;
    uint32_t qpn;

    memcpy(&qpn, iaddr->ud_qpn, sizeof(qpn));
    return ntohl(qpn);
}


/* Reachability of a peer: its device address (required) compatible with
 * ours, and on this very device when same_device; its iface address, when
 * given, names a UD QP.  why (max bytes, may be NULL) gets the reason for a
 * "no".  The ops of every UCX version call it: the one below, and
 * iface_is_reachable_v2 (pvrdma_compat.h). */
int uct_pvrdma_iface_reachable(uct_iface_h tl_iface,
                               const uct_device_addr_t *dev_addr,
                               const uct_iface_addr_t *iface_addr,
                               int same_device, char *why, size_t max)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_iface, uct_pvrdma_iface_t);
    struct pvrdma_common_addr_info remote;
    char err[128];

    if (uct_pvrdma_dev_addr_unpack(dev_addr, &remote) != 0) {
        ucs_snprintf_zero(err, sizeof(err), "invalid device address");
    } else if (pvrdma_common_addr_check_compat(&iface->dev_info, &remote, err,
                                               sizeof(err)) != 0) {
        /* err says why */
    } else if (same_device &&
               (memcmp(&remote.gid, &iface->dev_info.gid,
                       sizeof(remote.gid)) ||
                (remote.lid != iface->dev_info.lid))) {
        ucs_snprintf_zero(err, sizeof(err), "not the same device");
    } else if ((iface_addr != NULL) &&
               (uct_pvrdma_iface_addr_qpn(iface_addr) == 0)) {
        ucs_snprintf_zero(err, sizeof(err), "no UD QP in the iface address");
    } else {
        return 1;
    }

    ucs_debug("pvrdma: peer not reachable: %s", err);
    if ((why != NULL) && (max > 0)) {
        ucs_strncpy_zero(why, err, max);
    }
    return 0;
}


static int uct_pvrdma_iface_is_reachable(const uct_iface_h tl_iface,
                                         const uct_device_addr_t *dev_addr,
                                         const uct_iface_addr_t *iface_addr)
{
    if ((dev_addr == NULL) || (iface_addr == NULL)) {
        return 0;
    }

    return uct_pvrdma_iface_reachable(tl_iface, dev_addr, iface_addr, 0, NULL,
                                      0);
}


static ucs_status_t uct_pvrdma_iface_flush(uct_iface_h tl_iface,
                                           unsigned flags,
                                           uct_completion_t *comp)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_iface, uct_pvrdma_iface_t);
    ucs_status_t status, result = UCS_OK;
    uct_pvrdma_ep_t *ep;

    if (comp != NULL) {
        return UCS_ERR_UNSUPPORTED;
    }

    ucs_list_for_each(ep, &iface->eps, list) {
        status = uct_pvrdma_ep_flush(&ep->super.super, flags, NULL);
        if (status == UCS_INPROGRESS || status == UCS_ERR_NO_RESOURCE) {
            result = UCS_INPROGRESS;
        }
    }

    UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
    return result;
}


static ucs_status_t uct_pvrdma_iface_fence(uct_iface_h tl_iface,
                                           unsigned flags UCS_V_UNUSED)
{
    uct_pvrdma_iface_t *iface = ucs_derived_of(tl_iface, uct_pvrdma_iface_t);
    uct_pvrdma_ep_t *ep;

    ucs_list_for_each(ep, &iface->eps, list) {
        ep->fence = 1;
    }
    return UCS_OK;
}


/* ----------------------------------------------------------------------- */
/*  Class                                                                  */
/* ----------------------------------------------------------------------- */

static uct_iface_ops_t uct_pvrdma_iface_tl_ops;

/* UCX's base ops, and those of later UCX versions (pvrdma_compat.h) */
static uct_iface_internal_ops_t uct_pvrdma_iface_internal_ops = {
    .iface_estimate_perf   = uct_base_iface_estimate_perf,
    .iface_vfs_refresh     = (uct_iface_vfs_refresh_func_t)ucs_empty_function,
    .ep_query              = (uct_ep_query_func_t)
                             ucs_empty_function_return_unsupported,
    .ep_invalidate         = (uct_ep_invalidate_func_t)
                             ucs_empty_function_return_unsupported,
    UCT_PVRDMA_IFACE_INTERNAL_OPS_COMPAT
};


static UCS_CLASS_INIT_FUNC(uct_pvrdma_iface_t, uct_md_h md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    const uct_pvrdma_iface_config_t *config =
            ucs_derived_of(tl_config, uct_pvrdma_iface_config_t);
    ucs_status_t status;
    int i;

    UCT_CHECK_PARAM(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE,
                    "UCT_IFACE_PARAM_FIELD_OPEN_MODE is not defined");
    if (!(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        ucs_error("pvrdma: only UCT_IFACE_OPEN_MODE_DEVICE is supported");
        return UCS_ERR_UNSUPPORTED;
    }

    if (ucs_derived_of(worker, uct_priv_worker_t)->thread_mode ==
        UCS_THREAD_MODE_MULTI) {
        ucs_error("pvrdma: multi-threaded workers are not supported");
        return UCS_ERR_INVALID_PARAM;
    }

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_pvrdma_iface_tl_ops,
                              &uct_pvrdma_iface_internal_ops, md, worker,
                              params, tl_config
                              UCS_STATS_ARG(NULL)
                              UCS_STATS_ARG(UCT_PVRDMA_NAME));

    self->md         = ucs_derived_of(md, uct_pvrdma_md_t);
    self->iface_uuid = ucs_generate_uuid((uintptr_t)self);
    for (i = 0; i < UCT_PVRDMA_QP_HASH_SIZE; ++i) {
        ucs_list_head_init(&self->qp_hash[i]);
    }
    ucs_list_head_init(&self->eps);
    ucs_list_head_init(&self->chans);
    ucs_list_head_init(&self->discs);
    ucs_list_head_init(&self->pending_eps);
    uct_pvrdma_iface_tx_batch_init(self);
    ucs_list_head_init(&self->slot_chunks);
    ucs_list_head_init(&self->deferred_chans);
    ucs_list_head_init(&self->rx_short_chans);
    /* UCS_CLASS_NEW mallocs the object and progress reads this state
     * before anything else sets it, so each group is reset whole by its
     * own init: a field added to a group cannot be missed (fields reset one
     * by one were missed: a stale conn.num_unconfirmed made every request
     * look capped; a stale notify.armed would call ibv_get_cq_event(NULL)) */
    uct_pvrdma_iface_ep_tags_init(&self->ep_tags);
    uct_pvrdma_iface_conn_init(&self->conn);
    uct_pvrdma_iface_op_count_init(&self->op_count);
    uct_pvrdma_iface_notify_init(&self->notify);
    uct_pvrdma_iface_cq_acct_init(&self->cq_acct);
    uct_pvrdma_iface_bufs_init(&self->bufs);
    uct_pvrdma_iface_watch_init(&self->watch);

    status = uct_pvrdma_iface_parse_dev_name(self,
                                             params->mode.device.dev_name);
    if (status != UCS_OK) {
        return status;
    }
    (void)pvrdma_common_retry_counters_read(self->md->dev_name, self->port_num,
                                            &self->retries_at_open);
    status = uct_pvrdma_iface_budget_init(self, config);
    if (status != UCS_OK) {
        return status;
    }
    self->conn.job_peers = uct_pvrdma_budget_job_peers(
            &self->conn.job_peers_src);

    status = uct_pvrdma_iface_init_profile(self, config);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_pvrdma_iface_init_addr(self, config);
    if (status != UCS_OK) {
        return status;
    }

    uct_pvrdma_iface_init_rdma_write(self, config);

    status = uct_pvrdma_iface_init_cq(self);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_pvrdma_iface_init_mpools(self, config, params);
    if (status != UCS_OK) {
        goto err_cq;
    }

    self->scratch = pvrdma_common_page_alloc(sizeof(*self->scratch));
    if (self->scratch == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_mpools;
    }

    self->scratch_mr = ibv_reg_mr(self->md->pd, (void*)self->scratch,
                                  sizeof(*self->scratch),
                                  IBV_ACCESS_LOCAL_WRITE |
                                  IBV_ACCESS_REMOTE_WRITE);
    if (self->scratch_mr == NULL) {
        ucs_error("pvrdma: ibv_reg_mr(scratch) failed: %m");
        status = UCS_ERR_IO_ERROR;
        goto err_scratch_mem;
    }

    self->ud.rx_len = config->ud_rx_len;
    self->ud.tx_full = 0;
    self->ud.tx_done_at = 0;
    status          = uct_pvrdma_ud_init(self);
    if (status != UCS_OK) {
        goto err_scratch;
    }
    uct_pvrdma_iface_report_plan(self);

    ucs_debug("pvrdma: iface %p on %s:%d: gid[%u] %s mtu %u seg %zu "
              "tx %u rx %u sge %u read %d write %d idle_polls %u", self,
              self->md->dev_name, self->port_num, self->gid.index,
              pvrdma_common_gid_type_str(self->gid.type),
              self->profile.mtu_bytes, self->config.seg_size,
              self->config.tx_queue_len, self->config.rx_queue_len,
              self->config.tx_max_sge, self->profile.rdma_read_ok,
              self->rdma_write_ok, self->config.idle_polls);
    return UCS_OK;

err_scratch:
    ibv_dereg_mr(self->scratch_mr);
err_scratch_mem:
    free((void*)self->scratch);
err_mpools:
    ucs_mpool_cleanup(&self->tx_mp, 0);
    ucs_mpool_cleanup(&self->rx_mp, 0);
err_cq:
    uct_pvrdma_iface_cleanup_cq(self);
    return status;
}


static UCS_CLASS_CLEANUP_FUNC(uct_pvrdma_iface_t)
{
    uct_pvrdma_chan_t *chan, *tmp;
    unsigned chans_open = self->conn.num_chans;

    uct_base_iface_progress_disable(&self->super.super,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    if (!ucs_list_is_empty(&self->eps)) {
        ucs_warn("pvrdma: iface %p closed with %zu endpoints still open",
                 self, ucs_list_length(&self->eps));
    }

    uct_pvrdma_iface_print_cost(self, "iface closed", NULL);
    /* the channels peers left open, the disconnects of ours not
     * acknowledged (also in the counters line of report_close) */
    uct_pvrdma_conn_discs_cleanup(self);
    ucs_log(((self->conn.discs_expired > 0) || (self->conn.num_chans > 0)) ?
            UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_DEBUG,
            "pvrdma: %s:%d: iface %p closing: %u passive channels open; "
            "disconnects %" PRIu64 " acknowledged, %" PRIu64 " not",
            self->md->dev_name, self->port_num, self, self->conn.num_chans,
            self->conn.discs_acked, self->conn.discs_expired);
    ucs_list_for_each_safe(chan, tmp, &self->chans, list) {
        uct_pvrdma_chan_destroy(chan);
    }
    uct_pvrdma_iface_report_close(self, chans_open);
    uct_pvrdma_iface_ep_tags_cleanup(&self->ep_tags);
    uct_pvrdma_ud_cleanup(self);
    uct_pvrdma_slots_cleanup(self);
    ibv_dereg_mr(self->scratch_mr);
    free((void*)self->scratch);
    /* receive buffers the user still holds are the user's leak */
    ucs_mpool_cleanup(&self->tx_mp, 0);
    ucs_mpool_cleanup(&self->rx_mp, 0);
    uct_pvrdma_iface_cleanup_cq(self);
}


UCS_CLASS_DEFINE(uct_pvrdma_iface_t, uct_base_iface_t);

static UCS_CLASS_DEFINE_NEW_FUNC(uct_pvrdma_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t*,
                                 const uct_iface_config_t*);

static UCS_CLASS_DEFINE_DELETE_FUNC(uct_pvrdma_iface_t, uct_iface_t);


static uct_iface_ops_t uct_pvrdma_iface_tl_ops = {
    .ep_put_short             = uct_pvrdma_ep_put_short,
    .ep_put_bcopy             = uct_pvrdma_ep_put_bcopy,
    .ep_put_zcopy             = uct_pvrdma_ep_put_zcopy,
    .ep_get_short             = ucs_empty_function_return_unsupported,
    .ep_get_bcopy             = uct_pvrdma_ep_get_bcopy,
    .ep_get_zcopy             = uct_pvrdma_ep_get_zcopy,
    .ep_am_short              = uct_pvrdma_ep_am_short,
    .ep_am_short_iov          = uct_base_ep_am_short_iov,
    .ep_am_bcopy              = uct_pvrdma_ep_am_bcopy,
    .ep_am_zcopy              = uct_pvrdma_ep_am_zcopy,
    .ep_atomic_cswap64        = ucs_empty_function_return_unsupported,
    .ep_atomic_cswap32        = ucs_empty_function_return_unsupported,
    .ep_atomic32_post         = ucs_empty_function_return_unsupported,
    .ep_atomic64_post         = ucs_empty_function_return_unsupported,
    .ep_atomic32_fetch        = ucs_empty_function_return_unsupported,
    .ep_atomic64_fetch        = ucs_empty_function_return_unsupported,
    .ep_pending_add           = uct_pvrdma_ep_pending_add,
    .ep_pending_purge         = uct_pvrdma_ep_pending_purge,
    .ep_flush                 = uct_pvrdma_ep_flush,
    .ep_fence                 = uct_pvrdma_ep_fence,
    .ep_check                 = uct_pvrdma_ep_check,
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_pvrdma_ep_t),
    .ep_connect               = ucs_empty_function_return_unsupported,
    .ep_disconnect            = ucs_empty_function_return_unsupported,
    .cm_ep_conn_notify        = ucs_empty_function_return_unsupported,
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_pvrdma_ep_t),
    .ep_get_address           = ucs_empty_function_return_unsupported,
    .ep_connect_to_ep         = ucs_empty_function_return_unsupported,
    .iface_accept             = ucs_empty_function_return_unsupported,
    .iface_reject             = ucs_empty_function_return_unsupported,
    .iface_flush              = uct_pvrdma_iface_flush,
    .iface_fence              = uct_pvrdma_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_pvrdma_iface_progress,
    .iface_event_fd_get       = ucs_empty_function_return_unsupported,
    .iface_event_arm          = ucs_empty_function_return_unsupported,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(uct_pvrdma_iface_t),
    .iface_query              = uct_pvrdma_iface_query,
    .iface_get_device_address = uct_pvrdma_iface_get_device_address,
    .iface_get_address        = uct_pvrdma_iface_get_address,
    .iface_is_reachable       = uct_pvrdma_iface_is_reachable
};


UCT_TL_DEFINE_ENTRY(&uct_pvrdma_component, pvrdma, uct_pvrdma_query_tl_devices,
                    uct_pvrdma_iface_t, UCT_PVRDMA_CONFIG_PREFIX,
                    uct_pvrdma_iface_config_table, uct_pvrdma_iface_config_t);

/* Registered from the ELF constructor: Debian's UCX (1.13 as 1.18) only
 * loads the modules named at its build time, so the library is activated
 * with LD_PRELOAD. */
UCT_SINGLE_TL_INIT(&uct_pvrdma_component, pvrdma, ctor,,)
