#!/bin/sh
# debian-mirror.sh - print the URL of this machine's Debian archive mirror:
# the first .../debian URI of its apt sources (deb822 "URIs:" or one-line
# "deb" entries), else http://deb.debian.org/debian.  The archive carries
# every suite, so the second stack's trixie root (scripts/stack2/root.sh)
# and deb-src entries (scripts/fetch-debian-src.sh) come from the same one.
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n -e 's,^URIs: *\(https*://[^ ]*/debian/*\)$,\1,p' \
        -e 's,^deb  *\(https*://[^ ]*/debian/*\) .*,\1,p' | head -n 1)
echo "${mirror:-http://deb.debian.org/debian}"
