# PVRDMA_CHECK_UCX: UCX public headers and libraries, the UCX source tree of
# exactly the installed version (for UCX's internal headers), and a config.h
# for those headers generated from `ucx_info -b`.  Sets UCX_CPPFLAGS,
# UCX_LIBS, UCX_IB_LIBS, UCX_MODULE_DIR, and defines the PVRDMA_UCX_* feature
# macros (pvrdma_config.h) of ucx-tl-pvrdma/pvrdma_compat.h.
AC_DEFUN([PVRDMA_CHECK_UCX], [
    AC_ARG_WITH([ucx],
        [AS_HELP_STRING([--with-ucx=DIR],
            [UCX installation prefix (default: pkg-config ucx)])])
    AC_ARG_WITH([ucx-src],
        [AS_HELP_STRING([--with-ucx-src=DIR],
            [UCX source tree of exactly the installed UCX version (default:
             obtained by scripts/fetch-ucx-src.sh from Debian's source
             package into $PVRDMA_UCX_SRC_CACHE or BUILDDIR/ucx-src)])])
    AC_ARG_WITH([ucx-module-dir],
        [AS_HELP_STRING([--with-ucx-module-dir=DIR],
            [where UCX keeps its modules (default: UCX libdir/ucx)])])

    AS_IF([test "x$with_ucx" = xno],
        [AC_MSG_ERROR([--without-ucx given: use --disable-ucx to skip the UCX transport])])

    # -- public headers and libraries
    AS_IF([test -n "$with_ucx" && test "x$with_ucx" != xyes],
        [AS_IF([test ! -d "$with_ucx"],
             [AC_MSG_ERROR([--with-ucx=$with_ucx: no such directory. Point it at the UCX installation prefix, or use --disable-ucx])])
         pvrdma_ucx_pub_cppflags="-I$with_ucx/include"
         pvrdma_ucx_libdir=
         for pvrdma_d in lib lib64 lib/x86_64-linux-gnu; do
             AS_IF([test -f "$with_ucx/$pvrdma_d/libuct.so"],
                   [pvrdma_ucx_libdir=$with_ucx/$pvrdma_d; break])
         done
         AS_IF([test -z "$pvrdma_ucx_libdir"],
             [AC_MSG_ERROR([--with-ucx=$with_ucx: libuct.so not found in $with_ucx/lib, lib64 or lib/x86_64-linux-gnu])])
         pvrdma_ucx_info_path="$with_ucx/bin$PATH_SEPARATOR$PATH"],
        [PKG_CHECK_EXISTS([ucx], [],
             [AC_MSG_ERROR([UCX not found by pkg-config: install UCX's development files (Debian: apt-get install libucx-dev), pass --with-ucx=DIR, or use --disable-ucx])])
         pvrdma_ucx_pub_cppflags=`$PKG_CONFIG --cflags-only-I ucx`
         pvrdma_ucx_libdir=`$PKG_CONFIG --variable=libdir ucx`
         pvrdma_ucx_info_path=$PATH])

    UCX_LIBS="-L$pvrdma_ucx_libdir -luct -lucs"

    pvrdma_save_CPPFLAGS=$CPPFLAGS
    pvrdma_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $pvrdma_ucx_pub_cppflags"
    LIBS="$UCX_LIBS $LIBS"
    AC_CHECK_HEADER([uct/api/uct.h], [],
        [AC_MSG_ERROR([uct/api/uct.h not found (with $pvrdma_ucx_pub_cppflags): install UCX's development files (Debian: apt-get install libucx-dev), pass --with-ucx=DIR, or use --disable-ucx])])
    AC_MSG_CHECKING([for uct_query_components in -luct])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <uct/api/uct.h>]],
            [[uct_component_h *c; unsigned n; return (int)uct_query_components(&c, &n);]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([cannot link with $UCX_LIBS (see config.log): install UCX's development files, pass --with-ucx=DIR, or use --disable-ucx])])
    AC_COMPUTE_INT([pvrdma_ucx_major], [UCT_VERNO_MAJOR], [#include <uct/api/version.h>],
        [AC_MSG_ERROR([cannot read UCT_VERNO_MAJOR from uct/api/version.h])])
    AC_COMPUTE_INT([pvrdma_ucx_minor], [UCT_VERNO_MINOR], [#include <uct/api/version.h>],
        [AC_MSG_ERROR([cannot read UCT_VERNO_MINOR from uct/api/version.h])])
    AC_COMPUTE_INT([pvrdma_ucx_patch], [UCT_VERNO_PATCH], [#include <uct/api/version.h>],
        [AC_MSG_ERROR([cannot read UCT_VERNO_PATCH from uct/api/version.h])])
    CPPFLAGS=$pvrdma_save_CPPFLAGS
    LIBS=$pvrdma_save_LIBS
    pvrdma_ucx_version="$pvrdma_ucx_major.$pvrdma_ucx_minor.$pvrdma_ucx_patch"

    # -- the installed library must be the version of the headers
    AC_PATH_PROG([UCX_INFO], [ucx_info], [], [$pvrdma_ucx_info_path])
    AS_IF([test -z "$UCX_INFO"],
        [AC_MSG_ERROR([ucx_info not found: it is needed to reproduce UCX's build configuration (Debian: apt-get install ucx-utils)])])
    AC_MSG_CHECKING([UCX version])
    pvrdma_ucx_info_version=`$UCX_INFO -v 2>/dev/null | sed -n 's/^# *\(Library \)\{0,1\}@<:@Vv@:>@ersion:\{0,1\} *\(@<:@0-9.@:>@*\).*/\2/p' | head -n 1`
    AC_MSG_RESULT([headers $pvrdma_ucx_version, ucx_info $pvrdma_ucx_info_version])
    AS_IF([test "x$pvrdma_ucx_info_version" != "x$pvrdma_ucx_version"],
        [AC_MSG_ERROR([UCX headers are version $pvrdma_ucx_version but $UCX_INFO reports '$pvrdma_ucx_info_version': mixed UCX installations (check --with-ucx and PATH)])])

    # -- module directory
    AC_MSG_CHECKING([where UCX keeps its modules])
    AS_IF([test -n "$with_ucx_module_dir"],
          [UCX_MODULE_DIR=$with_ucx_module_dir],
          [UCX_MODULE_DIR=$pvrdma_ucx_libdir/ucx])
    AC_MSG_RESULT([$UCX_MODULE_DIR])
    AS_IF([test ! -d "$UCX_MODULE_DIR"],
        [AC_MSG_WARN([$UCX_MODULE_DIR does not exist (yet)])])
    # UCX's IB module, for transports that reuse uct_ib_* functions.
    UCX_IB_LIBS="-L$UCX_MODULE_DIR -luct_ib"

    # -- UCX source tree of the same version (internal headers)
    AC_MSG_CHECKING([for the UCX $pvrdma_ucx_version source tree])
    AS_IF([test -n "$with_ucx_src" && test "x$with_ucx_src" != xyes && test "x$with_ucx_src" != xno],
        [pvrdma_ucx_src=$with_ucx_src],
        [AC_MSG_RESULT([fetching])
         pvrdma_ucx_cache=${PVRDMA_UCX_SRC_CACHE:-`pwd`/ucx-src}
         AC_MSG_NOTICE([running $srcdir/scripts/fetch-ucx-src.sh $pvrdma_ucx_cache])
         pvrdma_ucx_src=`$SHELL "$srcdir/scripts/fetch-ucx-src.sh" "$pvrdma_ucx_cache" 2>&AS_MESSAGE_LOG_FD` ||
             AC_MSG_ERROR([scripts/fetch-ucx-src.sh could not obtain the UCX $pvrdma_ucx_version source (its messages are at the end of config.log): pass --with-ucx-src=DIR with an extracted UCX $pvrdma_ucx_version source tree, or use --disable-ucx])
         AC_MSG_CHECKING([for the UCX $pvrdma_ucx_version source tree])])
    AS_IF([test ! -f "$pvrdma_ucx_src/src/uct/ib/base/ib_md.h"],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([$pvrdma_ucx_src is not a UCX source tree (no src/uct/ib/base/ib_md.h): pass --with-ucx-src=DIR with the extracted UCX $pvrdma_ucx_version source, or use --disable-ucx])])
    pvrdma_ucx_src=`cd "$pvrdma_ucx_src" && pwd`
    pvrdma_ucx_src_version=`sed -n 's/^d.fine(.ucx_ver_\(major\|minor\|patch\)., *\(@<:@0-9@:>@*\)).*/\2/p' "$pvrdma_ucx_src/configure.ac" 2>/dev/null | paste -sd. -`
    AS_IF([test "x$pvrdma_ucx_src_version" != "x$pvrdma_ucx_version"],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([$pvrdma_ucx_src is UCX '$pvrdma_ucx_src_version' but the installed UCX is $pvrdma_ucx_version: internal structures must match exactly; pass --with-ucx-src=DIR with the $pvrdma_ucx_version source])])
    AC_MSG_RESULT([$pvrdma_ucx_src])

    # -- config.h for UCX's internal headers: the installed library's own
    # build configuration (`ucx_info -b`), so that layout-affecting macros
    # (ENABLE_STATS, ENABLE_DEBUG_DATA, UCS_MAX_LOG_LEVEL, ENABLE_MT,
    # HAVE_TL_*...) match the ABI.  Package identity macros are dropped:
    # they would clash with ours and mean nothing to the headers.
    AC_MSG_CHECKING([for UCX build configuration])
    pvrdma_ucx_cfgdir=`pwd`/ucx-config
    AS_MKDIR_P([$pvrdma_ucx_cfgdir])
    {
        echo "/* Generated by configure from '$UCX_INFO -b' (UCX $pvrdma_ucx_version). */"
        echo "#ifndef PVRDMA_UCX_CONFIG_H"
        echo "#define PVRDMA_UCX_CONFIG_H"
        $UCX_INFO -b | grep '^#define' |
            grep -v -E '^#define +(PACKAGE|PACKAGE_@<:@A-Z@:>@+|VERSION|LT_OBJDIR|UCX_CONFIGURE_FLAGS)( |$)'
        echo "#endif"
    } > "$pvrdma_ucx_cfgdir/config.h.tmp"
    AS_IF([grep -q '^#define  *UCS_MAX_LOG_LEVEL' "$pvrdma_ucx_cfgdir/config.h.tmp"],
        [mv "$pvrdma_ucx_cfgdir/config.h.tmp" "$pvrdma_ucx_cfgdir/config.h"
         AC_MSG_RESULT([$pvrdma_ucx_cfgdir/config.h])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([`$UCX_INFO -b` did not print UCX's build configuration (no UCS_MAX_LOG_LEVEL)])])

    # -isystem: UCX's internal headers are not -Wextra clean (unused
    # parameters, sign comparisons in inline functions); as system headers
    # they do not break --enable-werror builds, and they are still searched
    # before /usr/include, so the source tree's headers win.
    UCX_CPPFLAGS="-DHAVE_CONFIG_H -isystem $pvrdma_ucx_cfgdir -isystem $pvrdma_ucx_src/src $pvrdma_ucx_pub_cppflags"

    CPPFLAGS="$pvrdma_save_CPPFLAGS $UCX_CPPFLAGS"
    AC_MSG_CHECKING([whether UCX internal headers compile])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include <ucs/debug/log.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/ib/base/ib_md.h>
#include <uct/ib/base/ib_iface.h>
]], [[return (int)sizeof(uct_ib_iface_t);]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([UCX internal headers from $pvrdma_ucx_src do not compile with $UCX_CPPFLAGS (see config.log)])])
    _PVRDMA_UCX_CHECK_FEATURES
    CPPFLAGS=$pvrdma_save_CPPFLAGS

    AC_SUBST([UCX_CPPFLAGS])
    AC_SUBST([UCX_LIBS])
    AC_SUBST([UCX_IB_LIBS])
    AC_SUBST([UCX_MODULE_DIR])
])


# The headers the feature tests include: those of ucx-tl-pvrdma/pvrdma.h and
# pvrdma_md.h.
m4_define([_PVRDMA_UCX_INCLUDES], [[
#include <ucs/debug/log.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/topo/base/topo.h>
#include <uct/api/v2/uct_v2.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
]])

# _PVRDMA_UCX_FEATURE(MACRO, WHAT, BODY, DESCRIPTION): define MACRO to 1 when
# BODY compiles against the UCX source tree's headers (CPPFLAGS holds
# UCX_CPPFLAGS, the TL's own flags).
AC_DEFUN([_PVRDMA_UCX_FEATURE], [
    AC_MSG_CHECKING([whether UCX $2])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM(_PVRDMA_UCX_INCLUDES, [$3])],
        [AC_MSG_RESULT([yes])
         AC_DEFINE([$1], [1], [$4])],
        [AC_MSG_RESULT([no])])
])

# _PVRDMA_UCX_MEMBER(MACRO, AGGREGATE.MEMBER, DESCRIPTION)
AC_DEFUN([_PVRDMA_UCX_MEMBER], [
    AC_CHECK_MEMBER([$2], [AC_DEFINE([$1], [1], [$3])], [],
                    _PVRDMA_UCX_INCLUDES)
])

# _PVRDMA_UCX_CHECK_FEATURES: the UCX internal API differences between the
# UCX versions the transport builds against (1.13 to 1.18), one macro each
# for ucx-tl-pvrdma/pvrdma_compat.h, which says what each one changes.
# Signatures are compared with __builtin_types_compatible_p: a mismatched
# function pointer is only a warning for some compilers.
AC_DEFUN([_PVRDMA_UCX_CHECK_FEATURES], [
    # UCX 1.14
    _PVRDMA_UCX_FEATURE([PVRDMA_UCX_MD_QUERY_V2],
        [md query fills uct_md_attr_v2_t],
        [[_Static_assert(__builtin_types_compatible_p(uct_md_query_func_t,
              ucs_status_t (*)(uct_md_h, uct_md_attr_v2_t*)), "");]],
        [Define to 1 if uct_md_ops_t.query fills a uct_md_attr_v2_t (UCX 1.14)])
    _PVRDMA_UCX_FEATURE([PVRDMA_UCX_MEM_REG_V2],
        [md mem_reg takes uct_md_mem_reg_params_t],
        [[_Static_assert(__builtin_types_compatible_p(uct_md_mem_reg_func_t,
              ucs_status_t (*)(uct_md_h, void*, size_t,
                               const uct_md_mem_reg_params_t*, uct_mem_h*)),
              "");]],
        [Define to 1 if uct_md_ops_t.mem_reg takes uct_md_mem_reg_params_t (UCX 1.14)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_MD_MEM_ATTACH], [uct_md_ops_t.mem_attach],
        [Define to 1 if uct_md_ops_t has mem_attach (UCX 1.14)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_EP_CONNECT_TO_EP_V2],
        [uct_iface_internal_ops_t.ep_connect_to_ep_v2],
        [Define to 1 if uct_iface_internal_ops_t has ep_connect_to_ep_v2 (UCX 1.14)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_MPOOL_CHUNK_GROWTH],
        [uct_iface_mpool_config_t.max_chunk_size],
        [Define to 1 if UCT_IFACE_MPOOL_CONFIG_FIELDS takes a chunk size and a grow factor (UCX 1.14)])
    _PVRDMA_UCX_FEATURE([PVRDMA_UCX_TOPO_NAME_PRIORITY],
        [ucs_topo_sys_device_set_name takes a priority],
        [[return (int)ucs_topo_sys_device_set_name(0, "", 1);]],
        [Define to 1 if ucs_topo_sys_device_set_name takes a priority (UCX 1.14)])
    # UCX 1.15
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_IFACE_IS_REACHABLE_V2],
        [uct_iface_internal_ops_t.iface_is_reachable_v2],
        [Define to 1 if uct_iface_internal_ops_t has iface_is_reachable_v2 (UCX 1.15)])
    AC_CHECK_DECL([UCT_MD_FLAG_INVALIDATE_RMA],
        [AC_DEFINE([PVRDMA_UCX_MD_FLAG_INVALIDATE_RMA], [1],
            [Define to 1 if UCT has UCT_MD_FLAG_INVALIDATE_RMA (UCX 1.15)])],
        [], _PVRDMA_UCX_INCLUDES)
    # UCX 1.16
    _PVRDMA_UCX_FEATURE([PVRDMA_UCX_MKEY_PACK_V2],
        [md mkey_pack takes the address and length],
        [[_Static_assert(__builtin_types_compatible_p(uct_md_mkey_pack_func_t,
              ucs_status_t (*)(uct_md_h, uct_mem_h, void*, size_t,
                               const uct_md_mkey_pack_params_t*, void*)),
              "");]],
        [Define to 1 if uct_md_ops_t.mkey_pack takes the address and length (UCX 1.16)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_MD_IS_SOCKADDR_ACCESSIBLE],
        [uct_md_ops_t.is_sockaddr_accessible],
        [Define to 1 if uct_md_ops_t still has is_sockaddr_accessible (UCX < 1.16)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_EP_IS_CONNECTED],
        [uct_iface_internal_ops_t.ep_is_connected],
        [Define to 1 if uct_iface_internal_ops_t has ep_is_connected (UCX 1.16)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_MD_ATTR_REG_ALIGNMENT],
        [uct_md_attr_v2_t.reg_alignment],
        [Define to 1 if uct_md_attr_v2_t has reg_alignment (UCX 1.16)])
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_RKEY_COMPARE], [uct_component_t.rkey_compare],
        [Define to 1 if uct_component_t has rkey_compare (UCX 1.16)])
    AC_CHECK_DECL([ucs_rcache_set_params],
        [AC_DEFINE([PVRDMA_UCX_RCACHE_CONFIG_UCS], [1],
            [Define to 1 if the rcache configuration is UCS's ucs_rcache_config_t (UCX 1.16)])],
        [], _PVRDMA_UCX_INCLUDES)
    # UCX 1.17
    _PVRDMA_UCX_FEATURE([PVRDMA_UCX_RCACHE_GET_ALIGN],
        [ucs_rcache_get takes an alignment],
        [[return (int)ucs_rcache_get(NULL, NULL, 0, 1, 0, NULL, NULL);]],
        [Define to 1 if ucs_rcache_get takes the alignment (not ucs_rcache_params_t) (UCX 1.17)])
    AC_CHECK_HEADER([ucs/sys/ptr_arith.h],
        [AC_DEFINE([PVRDMA_UCX_PTR_ARITH_H], [1],
            [Define to 1 if UCX has ucs/sys/ptr_arith.h (UCX 1.17)])],
        [], _PVRDMA_UCX_INCLUDES)
    # UCX 1.18
    _PVRDMA_UCX_MEMBER([PVRDMA_UCX_RCACHE_MERGE], [ucs_rcache_ops_t.merge],
        [Define to 1 if ucs_rcache_ops_t has merge (UCX 1.18)])
    _PVRDMA_UCX_FEATURE([PVRDMA_UCX_AM_SHORT_FILL_HINT],
        [uct_am_short_fill_data takes a memcpy hint],
        [[uct_am_short_fill_data(NULL, 0, NULL, 0, UCS_ARCH_MEMCPY_NT_NONE);]],
        [Define to 1 if uct_am_short_fill_data takes a memcpy hint (UCX 1.18)])
    AC_CHECK_DECL([UCT_IFACE_FLAG_INTER_NODE],
        [AC_DEFINE([PVRDMA_UCX_IFACE_FLAG_INTER_NODE], [1],
            [Define to 1 if UCT has UCT_IFACE_FLAG_INTER_NODE (UCX 1.18)])],
        [], _PVRDMA_UCX_INCLUDES)
])
