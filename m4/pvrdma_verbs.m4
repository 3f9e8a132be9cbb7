# PVRDMA_CHECK_VERBS: libibverbs (rdma-core).  Sets IBVERBS_LIBS and
# HAVE_IBV_QUERY_GID_EX.
AC_DEFUN([PVRDMA_CHECK_VERBS], [
    AC_CHECK_HEADER([infiniband/verbs.h], [],
        [AC_MSG_ERROR([infiniband/verbs.h not found: install the libibverbs development files (Debian: apt-get install libibverbs-dev)])])
    pvrdma_save_LIBS=$LIBS
    AC_CHECK_LIB([ibverbs], [ibv_get_device_list], [IBVERBS_LIBS=-libverbs],
        [AC_MSG_ERROR([libibverbs not found: install the libibverbs development files (Debian: apt-get install libibverbs-dev)])])
    LIBS="$LIBS -libverbs"
    # ibv_query_gid_ex() is an inline wrapper of _ibv_query_gid_ex
    # (rdma-core >= 32); older libraries use the sysfs fallback.
    AC_CHECK_FUNCS([_ibv_query_gid_ex],
        [AC_DEFINE([HAVE_IBV_QUERY_GID_EX], [1],
                   [Define if libibverbs has ibv_query_gid_ex()])])
    LIBS=$pvrdma_save_LIBS
    AC_SUBST([IBVERBS_LIBS])
])

# PVRDMA_CHECK_HWLOC: hwloc >= 2.0 (NUMA distances of devices).
AC_DEFUN([PVRDMA_CHECK_HWLOC], [
    PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
        [AC_MSG_ERROR([hwloc >= 2.0 not found ($HWLOC_PKG_ERRORS): install the hwloc development files (Debian: apt-get install libhwloc-dev) or set HWLOC_CFLAGS and HWLOC_LIBS])])
])

# PVRDMA_CHECK_SODIUM: libsodium (the MAC of connection datagrams,
# common/auth.c).
AC_DEFUN([PVRDMA_CHECK_SODIUM], [
    PKG_CHECK_MODULES([SODIUM], [libsodium >= 1.0.16], [],
        [AC_MSG_ERROR([libsodium not found ($SODIUM_PKG_ERRORS): install its development files (Debian: apt-get install libsodium-dev) or set SODIUM_CFLAGS and SODIUM_LIBS])])
])
