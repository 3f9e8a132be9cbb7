# PVRDMA_CHECK_OMPI: Open MPI devel headers and install locations for an
# out-of-tree BTL component.  Sets OMPI_CPPFLAGS, OMPI_CFLAGS,
# OMPI_COMPONENT_DIR, OMPI_DATA_DIR.
AC_DEFUN([PVRDMA_CHECK_OMPI], [
    AC_ARG_WITH([ompi],
        [AS_HELP_STRING([--with-ompi=DIR],
            [Open MPI devel headers: DIR holds opal_config.h, or DIR/openmpi,
             DIR/include or DIR/include/openmpi does
             (default: from `mpicc --showme:incdirs`)])])
    AC_ARG_WITH([ompi-src],
        [AS_HELP_STRING([--with-ompi-src=DIR],
            [the installed Open MPI version's source tree, for internal
             headers its devel package does not ship (Debian 13's 5.0.7);
             default: fetched from Debian's archive when needed by
             scripts/fetch-ompi-src.sh into $PVRDMA_OMPI_SRC_CACHE or
             BUILDDIR/ompi-src])])
    AC_ARG_WITH([ompi-component-dir],
        [AS_HELP_STRING([--with-ompi-component-dir=DIR],
            [where Open MPI loads components
             (default: `ompi_info --path pkglibdir`)])])
    AC_ARG_WITH([ompi-data-dir],
        [AS_HELP_STRING([--with-ompi-data-dir=DIR],
            [where Open MPI looks for help-*.txt files
             (default: `ompi_info --path pkgdatadir`)])])

    AS_IF([test "x$with_ompi" = xno],
        [AC_MSG_ERROR([--without-ompi given: use --disable-ompi to skip the Open MPI BTL])])

    AS_IF([test -n "$with_ompi" && test "x$with_ompi" != xyes],
        [pvrdma_ompi_candidates="$with_ompi $with_ompi/openmpi $with_ompi/include $with_ompi/include/openmpi"
         AS_IF([test ! -d "$with_ompi"],
             [AC_MSG_ERROR([--with-ompi=$with_ompi: no such directory. Point it at the Open MPI devel headers (the directory holding opal_config.h), or use --disable-ompi])])],
        [AC_PATH_PROG([MPICC], [mpicc])
         AS_IF([test -z "$MPICC"],
             [AC_MSG_ERROR([mpicc not found, so the Open MPI devel headers cannot be located: install Open MPI's development files (Debian: apt-get install libopenmpi-dev), pass --with-ompi=DIR, or use --disable-ompi])])
         pvrdma_ompi_candidates=`$MPICC --showme:incdirs 2>/dev/null`])

    AC_MSG_CHECKING([for Open MPI devel headers (opal_config.h)])
    pvrdma_ompi_inc=
    for pvrdma_d in $pvrdma_ompi_candidates; do
        AS_IF([test -f "$pvrdma_d/opal_config.h"],
              [pvrdma_ompi_inc=$pvrdma_d; break])
    done
    AS_IF([test -z "$pvrdma_ompi_inc"],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([opal_config.h not found in: $pvrdma_ompi_candidates. The BTL needs Open MPI's internal devel headers (Debian: apt-get install libopenmpi-dev); pass --with-ompi=DIR or use --disable-ompi])])
    AC_MSG_RESULT([$pvrdma_ompi_inc])

    # Open MPI's headers include each other both as "opal/..." (relative to
    # the openmpi/ directory) and as "openmpi/opal/..." (its parent).
    # -isystem: keep warnings from Open MPI's own headers out of
    # --enable-werror builds.
    OMPI_CPPFLAGS="-isystem $pvrdma_ompi_inc"
    pvrdma_ompi_parent=`dirname "$pvrdma_ompi_inc"`
    AS_IF([test "`basename $pvrdma_ompi_inc`" = openmpi],
          [OMPI_CPPFLAGS="$OMPI_CPPFLAGS -isystem $pvrdma_ompi_parent"])

    pvrdma_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS $HWLOC_CFLAGS"
    m4_define([PVRDMA_OMPI_BTL_TEST], [AC_LANG_PROGRAM([[
#include "opal_config.h"
#include "opal/mca/btl/btl.h"
#if OPAL_MAJOR_VERSION != 4 && OPAL_MAJOR_VERSION != 5
#error "the pvrdma BTL targets the BTL interfaces of Open MPI 4.x and 5.x"
#endif
]], [[return (int)sizeof(mca_btl_base_module_t);]])])
    AC_MSG_CHECKING([for Open MPI 4.x or 5.x BTL headers])
    AC_COMPILE_IFELSE([PVRDMA_OMPI_BTL_TEST],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         # Debian 13's devel package names headers in opal_config.h that
         # it does not install: take them from the source package of the
         # installed version, searched after every installed header.
         AS_IF([test -n "$with_ompi_src" && test "x$with_ompi_src" != xyes],
             [pvrdma_ompi_src=$with_ompi_src],
             [pvrdma_ompi_cache=${PVRDMA_OMPI_SRC_CACHE:-`pwd`/ompi-src}
              AC_MSG_NOTICE([running $srcdir/scripts/fetch-ompi-src.sh $pvrdma_ompi_cache])
              pvrdma_ompi_src=`$SHELL "$srcdir/scripts/fetch-ompi-src.sh" "$pvrdma_ompi_cache" 2>&AS_MESSAGE_LOG_FD` ||
                  AC_MSG_ERROR([cannot compile against opal/mca/btl/btl.h with $OMPI_CPPFLAGS (see config.log), and scripts/fetch-ompi-src.sh could not obtain the Open MPI source for the headers the devel package may lack: pass --with-ompi-src=DIR, --with-ompi=DIR, or use --disable-ompi])])
         AS_IF([test ! -d "$pvrdma_ompi_src/opal/mca"],
             [AC_MSG_ERROR([$pvrdma_ompi_src is not an Open MPI source tree (no opal/mca)])])
         OMPI_CPPFLAGS="$OMPI_CPPFLAGS -idirafter $pvrdma_ompi_src"
         # Open MPI 5's internal headers include PMIx's (an external
         # library there, in its own directory on Debian).
         pvrdma_pmix_cflags=`$PKG_CONFIG --cflags-only-I pmix 2>/dev/null | sed 's/-I/-isystem /g'`
         OMPI_CPPFLAGS="$OMPI_CPPFLAGS $pvrdma_pmix_cflags"
         CPPFLAGS="$pvrdma_save_CPPFLAGS $OMPI_CPPFLAGS $HWLOC_CFLAGS"
         AC_MSG_CHECKING([for Open MPI BTL headers with the source tree's internal headers])
         AC_COMPILE_IFELSE([PVRDMA_OMPI_BTL_TEST],
             [AC_MSG_RESULT([yes])],
             [AC_MSG_RESULT([no])
              AC_MSG_ERROR([cannot compile against opal/mca/btl/btl.h with $OMPI_CPPFLAGS: Open MPI 4.x or 5.x devel headers are required (see config.log for the compiler error); pass --with-ompi=DIR or use --disable-ompi])])])

    # Where Open MPI 4.1 and 5.0 differ for the BTL: feature tests here,
    # one compat header (ompi-btl-pvrdma/btl_pvrdma_compat.h) uses them.
    # Passed as -D flags, as the BTL includes opal_config.h, not ours.
    AC_MSG_CHECKING([for Open MPI 5's BTL interface differences])
    pvrdma_ompi_compat=
    AC_PREPROC_IFELSE([AC_LANG_SOURCE([[#include "opal/mca/threads/mutex.h"]])],
        [pvrdma_ompi_compat="$pvrdma_ompi_compat -DPVRDMA_OMPI_MCA_THREADS=1"])
    AC_PREPROC_IFELSE([AC_LANG_SOURCE([[#include "opal_config.h"
#include "opal/mca/pmix/pmix-internal.h"]])],
        [pvrdma_ompi_compat="$pvrdma_ompi_compat -DPVRDMA_OMPI_PMIX_INTERNAL=1"])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include "opal_config.h"
#include "opal/mca/btl/btl.h"]],
        [[const mca_btl_base_receive_descriptor_t *d = 0; (void)d;]])],
        [pvrdma_ompi_compat="$pvrdma_ompi_compat -DPVRDMA_OMPI_RECV_DESC=1"])
    dnl 5.0: a function pointer whose targets return a copy (strdup).  A
    dnl static assertion: a mismatched pointer assignment only warns.
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include "opal_config.h"
#include "opal/util/proc.h"]],
        [[_Static_assert(__builtin_types_compatible_p(__typeof__(opal_get_proc_hostname),
                                                      char *(*)(const opal_proc_t *)),
                         "4.1: a function, not a pointer");]])],
        [pvrdma_ompi_compat="$pvrdma_ompi_compat -DPVRDMA_OMPI_HOSTNAME_COPY=1"])
    AS_IF([test -n "$pvrdma_ompi_compat"],
        [AC_MSG_RESULT([$pvrdma_ompi_compat])], [AC_MSG_RESULT([none (the 4.1 interface)])])
    OMPI_CPPFLAGS="$OMPI_CPPFLAGS$pvrdma_ompi_compat"

    # Open MPI's free lists and LIFOs (inline in its headers, so compiled
    # into the BTL) use a 16-byte compare-and-swap when opal_config.h says
    # OPAL_HAVE_SYNC_BUILTIN_CSWAP_INT128, as Debian's x86_64 build does
    # (built with -mcx16).  Without -mcx16 gcc emits a call to
    # __sync_val_compare_and_swap_16, which no library provides: the plugin
    # then fails to load when bound at load time (-z now, as Debian's
    # hardening flags link it) and would crash at the first threaded
    # free-list access otherwise.
    AC_MSG_CHECKING([for the flags Open MPI's 16-byte atomics need])
    OMPI_CFLAGS=
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include "opal_config.h"
#if OPAL_HAVE_SYNC_BUILTIN_CSWAP_INT128
__int128 pvrdma_v;
#endif
]], [[
#if OPAL_HAVE_SYNC_BUILTIN_CSWAP_INT128
return (int)__sync_val_compare_and_swap(&pvrdma_v, (__int128)0, (__int128)1);
#else
return 0;
#endif
]])],
        [AC_MSG_RESULT([none])],
        [pvrdma_save_CFLAGS=$CFLAGS
         CFLAGS="$CFLAGS -mcx16"
         AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include "opal_config.h"
__int128 pvrdma_v;
]], [[return (int)__sync_val_compare_and_swap(&pvrdma_v, (__int128)0, (__int128)1);]])],
             [AC_MSG_RESULT([-mcx16])
              OMPI_CFLAGS=-mcx16],
             [AC_MSG_RESULT([unknown])
              AC_MSG_ERROR([Open MPI was built with 16-byte compare-and-swap (OPAL_HAVE_SYNC_BUILTIN_CSWAP_INT128) but this compiler cannot inline it, even with -mcx16; see config.log])])
         CFLAGS=$pvrdma_save_CFLAGS])
    CPPFLAGS=$pvrdma_save_CPPFLAGS

    AC_PATH_PROG([OMPI_INFO], [ompi_info])
    AC_MSG_CHECKING([where Open MPI loads components])
    AS_IF([test -n "$with_ompi_component_dir"],
          [OMPI_COMPONENT_DIR=$with_ompi_component_dir],
          [test -n "$OMPI_INFO"],
          [OMPI_COMPONENT_DIR=`$OMPI_INFO --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p'`
           AS_IF([test -z "$OMPI_COMPONENT_DIR"],
                 [OMPI_COMPONENT_DIR=`$OMPI_INFO --path pkglibdir 2>/dev/null | sed -n 's/^.*Pkglibdir: *//p'`])])
    AS_IF([test -z "$OMPI_COMPONENT_DIR"],
        [AC_MSG_RESULT([unknown])
         AC_MSG_ERROR([cannot ask ompi_info where Open MPI loads components: pass --with-ompi-component-dir=DIR or use --disable-ompi])])
    AC_MSG_RESULT([$OMPI_COMPONENT_DIR])

    AC_MSG_CHECKING([where Open MPI looks for help files])
    AS_IF([test -n "$with_ompi_data_dir"],
          [OMPI_DATA_DIR=$with_ompi_data_dir],
          [test -n "$OMPI_INFO"],
          [OMPI_DATA_DIR=`$OMPI_INFO --path pkgdatadir --parsable 2>/dev/null | sed -n 's/^path:pkgdatadir://p'`
           AS_IF([test -z "$OMPI_DATA_DIR"],
                 [OMPI_DATA_DIR=`$OMPI_INFO --path pkgdatadir 2>/dev/null | sed -n 's/^.*Pkgdatadir: *//p'`])])
    AS_IF([test -z "$OMPI_DATA_DIR"],
        [AC_MSG_RESULT([unknown])
         AC_MSG_ERROR([cannot ask ompi_info for Open MPI's pkgdatadir: pass --with-ompi-data-dir=DIR or use --disable-ompi])])
    AC_MSG_RESULT([$OMPI_DATA_DIR])

    dnl pvrdma-mpi/btl names Open MPI's own parameter file beside the
    dnl package's (mca_base_param_files replaces the default list)
    AC_MSG_CHECKING([where Open MPI reads its system parameter file])
    AS_IF([test -n "$OMPI_INFO"],
          [OMPI_SYSCONF_DIR=`$OMPI_INFO --path sysconfdir --parsable 2>/dev/null | sed -n 's/^path:sysconfdir://p'`])
    AS_IF([test -z "$OMPI_SYSCONF_DIR"], [OMPI_SYSCONF_DIR=/etc/openmpi])
    AC_MSG_RESULT([$OMPI_SYSCONF_DIR])

    dnl What pvrdma-mpi/btl sets that depends on the Open MPI series: the
    dnl shared-memory BTL's name (vader in 4.1, sm in 5.0) and, in 5.0, the
    dnl component paths.  Open MPI 5's prterun (Debian 13) exports
    dnl OMPI_MCA_mca_base_component_path naming PMIx's plugin directory, so
    dnl no component outside libmpi loads under mpirun; and whatever the
    dnl OMPI_ variable names, prterun copies to PMIx's, whose scan then
    dnl warns about every Open MPI file there.  Setting both, each to its
    dnl own directory, loads ours and keeps PMIx quiet (bed, 2026-11-28).
    AC_MSG_CHECKING([what pvrdma-mpi/btl sets for this Open MPI series])
    AS_IF([echo "$pvrdma_ompi_compat" | grep -q PVRDMA_OMPI_MCA_THREADS],
        [OMPI_SM_BTL=sm
         OMPI_COMPONENT_PATH=$OMPI_COMPONENT_DIR
         pvrdma_pmix_libdir=`$PKG_CONFIG --variable=libdir pmix 2>/dev/null`
         PMIX_COMPONENT_PATH=${pvrdma_pmix_libdir:+$pvrdma_pmix_libdir/pmix}],
        [OMPI_SM_BTL=vader
         OMPI_COMPONENT_PATH=
         PMIX_COMPONENT_PATH=])
    AC_MSG_RESULT([btl $OMPI_SM_BTL${OMPI_COMPONENT_PATH:+, component paths $OMPI_COMPONENT_PATH and $PMIX_COMPONENT_PATH}])

    AC_SUBST([OMPI_SM_BTL])
    AC_SUBST([OMPI_COMPONENT_PATH])
    AC_SUBST([PMIX_COMPONENT_PATH])
    AC_SUBST([OMPI_CPPFLAGS])
    AC_SUBST([OMPI_CFLAGS])
    AC_SUBST([OMPI_COMPONENT_DIR])
    AC_SUBST([OMPI_DATA_DIR])
    AC_SUBST([OMPI_SYSCONF_DIR])
])
