#!/bin/sh
# Regenerate the build system: ./autogen.sh && mkdir -p build && cd build && ../configure
set -e
cd "$(dirname "$0")"
exec autoreconf -fi
