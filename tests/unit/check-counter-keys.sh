#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every counters key and event the bed suites and benchmarks read (lib.sh
# counters/counters_sum/counters_max, keys as a literal "...") is one the
# plugins print (common/pvrdma_counters.h): a renamed key fails here, in
# the unit tests, instead of turning a bed check into "?" hours later.
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
src=$(cat ompi-btl-pvrdma/*.c ucx-tl-pvrdma/*.c common/*.c)
printed=$(echo "$src" | grep -oE 'counters_add\(&?[a-z]+, "[a-z0-9_]+"' | sed -E 's/.*"(.*)"/\1/' | sort -u)
events=$(echo "$src" | grep -oE 'counters_begin\(&?[a-z]+, "[a-z0-9_]+"' | sed -E 's/.*"(.*)"/\1/' | sort -u)
uses=$(grep -ohE '\bcounters(_sum|_max)? +[^ ]+ +"[a-z0-9_ ]+"' tests/bed/*.sh scripts/bench/*.sh validation/*.sh 2>/dev/null)
bad=0 n=0
[ -n "$printed" ] && [ -n "$events" ] || { echo "FAIL no counters_add/counters_begin found in the plugins"; exit 1; }
while read -r _ ev keys; do
    [ -n "$ev" ] || continue
    # an event passed in a variable is checked where it is set
    case $ev in *'$'*) ev= ;; esac
    for e in $(echo "$ev" | tr -d "'\"" | tr '|' ' '); do
        echo "$events" | grep -qx -- "$e" || { echo "FAIL event '$e' is read (\"$ev\") but no plugin prints it"; bad=1; }
    done
    for k in $(echo "$keys" | tr -d '"'); do
        n=$((n + 1))
        echo "$printed" | grep -qx -- "$k" || { echo "FAIL key '$k' is read (event $ev) but no plugin prints it"; bad=1; }
    done
done <<<"$uses"
[ "$n" -gt 0 ] || { echo "FAIL no counters use found in tests/bed"; exit 1; }
[ "$bad" = 0 ] && echo "PASS $n counters keys read by the bed suites, all printed ($(echo "$printed" | wc -l) keys, events: $(echo $events))"
exit $bad
