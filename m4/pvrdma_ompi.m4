# PVRDMA_CHECK_OMPI: Open MPI devel headers and install locations for an
# out-of-tree BTL component.  Sets OMPI_CPPFLAGS, OMPI_CFLAGS,
# OMPI_COMPONENT_DIR, OMPI_DATA_DIR.
AC_DEFUN([PVRDMA_CHECK_OMPI], [
    AC_ARG_WITH([ompi],
        [AS_HELP_STRING([--with-ompi=DIR],
            [Open MPI devel headers: DIR holds opal_config.h, or DIR/openmpi,
             DIR/include or DIR/include/openmpi does
             (default: from `mpicc --showme:incdirs`)])])
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
    AC_MSG_CHECKING([for Open MPI 4.x BTL headers])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include "opal_config.h"
#include "opal/mca/btl/btl.h"
#if OPAL_MAJOR_VERSION != 4
#error "the pvrdma BTL targets the Open MPI 4.x BTL interface"
#endif
]], [[return (int)sizeof(mca_btl_base_module_t);]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([cannot compile against opal/mca/btl/btl.h with $OMPI_CPPFLAGS: Open MPI 4.x devel headers are required (see config.log for the compiler error); pass --with-ompi=DIR or use --disable-ompi])])

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

    AC_SUBST([OMPI_CPPFLAGS])
    AC_SUBST([OMPI_CFLAGS])
    AC_SUBST([OMPI_COMPONENT_DIR])
    AC_SUBST([OMPI_DATA_DIR])
    AC_SUBST([OMPI_SYSCONF_DIR])
])
