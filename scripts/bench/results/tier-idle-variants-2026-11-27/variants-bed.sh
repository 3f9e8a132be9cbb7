#!/bin/bash
# scratch (not committed): OpenFOAM t2np2 doorbells for idle-wait variants
export PVRDMA_EXITS_ONLY=none
. "$(dirname "$0")/exits-bed.sh" >/dev/null
for v in ${EXPLORE_VARIANTS:-"ucxstock:"}; do
    name=${v%%:*} set=${v#*:}
    t=pvrdma
    [ "$name" = ucxstock ] && t=ucx-stock
    [ "${name#ucx}" != "$name" ] && [ "$name" != ucxstock ] && t=pvrdma-ucx
    mkdir -p "$LOGDIR/$name"; cp -a "$LOGDIR/foam/cases" "$LOGDIR/$name/" 2>/dev/null
    ( export EXITS_KIND=$name
      IFS=, ; for kv in $set; do [ -n "$kv" ] && export "$kv"; done; unset IFS
      env | grep -E '^(OMPI_MCA_btl_pvrdma|UCX_PVRDMA)' | sed "s/^/$name env: /"
      VALIDATION_RUN_WRAPPER="bash $LOGDIR/foam-meter.sh" timeout 900 "$TOP/validation/run_weak_scaling.sh" \
        --bed-inner --out "$LOGDIR/$name" --cases t2np2 --transports $t \
        --ranks-per-host 1 --run-timeout 400 --hostfile /run/tb/hostfile >"$LOGDIR/$name.log" 2>&1 )
    f=$LOGDIR/spans/$name.t2np2-$t-1
    st=$(awk -F, -v t="$t" '$6 == t { print $9 " " $10; exit }' "$LOGDIR/$name/results.csv" 2>/dev/null)
    line="$name [$set] $st"
    for key in doorbell.qp.send doorbell.qp.recv doorbell.cq.poll doorbell.cq.arm 'command.*'; do
        line+=" ${key#doorbell.}=$(( $(meter_count "$f" node1 "$key") + $(meter_count "$f" node2 "$key") ))"
    done
    echo "$line" | tee -a "$LOGDIR/explore.txt"
done
