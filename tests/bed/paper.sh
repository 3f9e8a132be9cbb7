#!/bin/bash
# The paper's shapes in one job per transport (issue #36), run inside node1 by
# scripts/testbed/tb: every rank connected to every other (mpi_check connect,
# timed apart), then every byte of allpairs, MPI_Alltoallv and MPI_Bcast
# checked, over btl pvrdma (its defaults: the RDMA WRITE rendezvous) and over
# pml ucx with UCX_TLS=pvrdma,self.  Start-up (MPI_Init on the slowest rank),
# connection and exchange times are the "MPI_Init took" and "ok - TEST (S)"
# lines of each log; the plan lines (peers, CQ entries, locked memory) are
# in the logs too.  By hand, not in CI (8 x 20 takes about an hour):
#   scripts/testbed/tb run --hosts 8 --mem 2304 --timeout 10800 --out OUT -- \
#       bash tests/bed/paper.sh          # n8np160
#   scripts/testbed/tb run --hosts 4 --mem 2560 ... -- bash tests/bed/paper.sh   # n4np80
#   PAPER_RPN  ranks per node (default 20); SCALE_ONLY=btl or ucx: one transport
export SCALE_RPN=${PAPER_RPN:-20} SCALE_BTL_RPN=${PAPER_RPN:-20}
export SCALE_ONLY=${SCALE_ONLY:-"btl ucx"} SCALE_BTL_WRITE=${SCALE_BTL_WRITE:-auto}
export SCALE_ARGS=${SCALE_ARGS:-"connect allpairs alltoallv bcast"}
# The RC ACK timeout at exponent 21 (8.6 s): the BTL's first 8 x 20 that passed
# (2026-12-06) ran with it; at 19 (2.1 s) every QP resent through the guests'
# seconds-long TX stalls, and run 10 of 2026-12-04 never finished its exchange
export SCALE_RC_TIMEOUT=${SCALE_RC_TIMEOUT:-21} SCALE_TIMEOUT=${SCALE_TIMEOUT:-5400}
# UCX's connection messages wait behind 20 busy ranks too (hosts4.sh says why),
# and at 8 x 20 behind node1's ranks, which start last: with 120 s the first
# UCX try (2026-12-06) gave up on node1's ranks two minutes into the exchange.
# 30 minutes, as the BTL's 900 x 2 s below.
export SCALE_CONN_TIMEOUT=${SCALE_CONN_TIMEOUT:-1800s}
# and so do the BTL's: at 8 x 20 (2026-12-04) node1, which also runs mpirun,
# took 4 x the other nodes' stall kicks and its ranks answered some
# requests only after the BTL's 240 s (120 x 2 s): the job was aborted
# with every other pair connected.  30 minutes here.
export SCALE_BTL_CONNECT_RETRIES=${SCALE_BTL_CONNECT_RETRIES:-900}
# 20 busy ranks on one emulated vCPU that gets a quarter of a host core
# starve the guest's network stack: at 8 x 20 (2026-11-27) a live guest
# (heartbeat on its console every 30-50 s, TX stalls of 6-11 s) missed the
# watcher's port-22 probe for 2 minutes and the check was ended.  The
# watcher waits 10 minutes here.
export BED_WATCH_MISSES=${BED_WATCH_MISSES:-30}
# and mpirun's ssh sessions wait 20 minutes for a silent guest, not 3
# (lib.sh, ssh_patience: run 9 of 2026-12-04 was aborted by a master that
# gave up on a live guest)
export BED_SSH_ALIVE_COUNT=${BED_SSH_ALIVE_COUNT-40}
# mpirun says which daemon it lost, and how ("daemon N failed with status")
export OMPI_MCA_plm_base_verbose=${OMPI_MCA_plm_base_verbose-1}
# The ranks run at nice 19 (lib.sh, BED_RANK_NICE): the guest's packet
# processing and Open MPI's daemons come before them.  BED_RANK_NICE= : off.
export BED_RANK_NICE=${BED_RANK_NICE-19}
# rxe's send rings: a WQE slot is 512 B (208 B of rxe_send_wqe + 64 B of
# SGEs or inline data, rounded up to a power of two) and a ring of N WRs
# gets the next power of two above N slots, so the BTL's 256 WRs cost 256
# KiB of guest kernel memory per RC QP (on PVRDMA: 32 KiB).  At 8 x 20 that
# is 3,180 QPs and 0.8 GB of each 2 GiB guest: in run 8 (2026-12-04) every
# guest fell to 83-110 MiB available by the time all pairs had connected,
# node1 thrashed, its ssh masters to the other guests stopped answering for
# 3 minutes (ServerAlive) and mpirun took it for a lost daemon.  63 WRs: 32
# KiB per QP.  The send budget is the CQ's, shared by all peers (159 here),
# so no peer needs more than that many WRs in flight.
export SCALE_BTL_SQ=${SCALE_BTL_SQ-63}
# pml ucx has two RC QPs per connection (endpoint and passive channel):
# 6,360 per guest at 8 x 20, 1.6 GB of rings at its default 256 WRs
export SCALE_UCX_TXQ=${SCALE_UCX_TXQ-63}
# and no shared receive queue: every passive channel posts its own
# receives, RX_QUEUE_LEN (64) buffers of 8 KiB while the CQ has room (rxe's
# has room for all): 159 x 64 x 8.3 KiB = 84 MiB locked per rank, 1.7 GB of
# each 2,304 MiB guest.  The second 8 x 20 try (2026-12-06) grew to ~100 MiB
# per rank and 7 of 8 guests ran their OOM killer.  16 receives: 21 MiB.
export SCALE_UCX_RXQ=${SCALE_UCX_RXQ-16}
# every node's rxe counters after each job, in its log (lib.sh)
export BED_RXE_COUNTERS=${BED_RXE_COUNTERS-1}
exec bash "$(dirname "$0")/scale.sh"
