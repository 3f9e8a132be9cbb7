# shellcheck shell=bash
# Building cavityFine cases from Debian's icoFoam cavity tutorial, the way the
# paper (and the OpenFOAM user guide) does: a coarse cavity run to t=0.5, then
# a fine mesh whose starting fields are mapped from it (mapFields), run from
# startTime 0.5 to endTime 0.50003, decomposed for NP ranks.
# Cases are cached in CASE_CACHE and reused (keyed by mesh, deltaT and NP).

CAVITY_TUTORIAL=${CAVITY_TUTORIAL:-/usr/share/doc/openfoam-examples/examples/incompressible/icoFoam/cavity/cavity}
export WM_PROJECT_DIR=${WM_PROJECT_DIR:-/usr/share/openfoam}
START_TIME=0.5
END_TIME=0.50003

# foam_set DICT KEY VALUE: set a top-level "KEY value;" entry of an OpenFOAM dictionary.
foam_set() {
    sed -i -E "s|^($2[[:space:]]+).*;|\\1$3;|" "$1"
    grep -qE "^$2[[:space:]]+$3;" "$1" || { echo "cannot set $2 in $1" >&2; return 1; }
}

# decomposition NX NY NP: prints "PX PY": PX*PY = NP with subdomains as square as possible.
decomposition() {
    local nx=$1 ny=$2 np=$3 px best="" bestcost cost
    for px in $(seq 1 "$np"); do
        [ $((np % px)) = 0 ] || continue
        # cost: |cells_x/px - cells_y/py| scaled to avoid floats
        cost=$(( nx * np / px - ny * px ))
        cost=${cost#-}
        if [ -z "$best" ] || [ "$cost" -lt "$bestcost" ]; then best=$px bestcost=$cost; fi
    done
    echo "$best $((np / best))"
}

# coarse_case DIR: the tutorial run to t=0.5 (once).
coarse_case() {
    local dir=$1
    [ -f "$dir/.done" ] && return 0
    rm -rf "$dir"
    cp -r "$CAVITY_TUTORIAL" "$dir" || return 1
    ( cd "$dir" && blockMesh >log.blockMesh 2>&1 && icoFoam >log.icoFoam 2>&1 ) ||
        { echo "coarse cavity run failed (see $dir)" >&2; return 1; }
    [ -d "$dir/0.5" ] || { echo "coarse run did not reach t=0.5 (see $dir)" >&2; return 1; }
    touch "$dir/.done"
}

# build_case CACHE NX NY DELTAT NP: prints the case directory (built once).
build_case() {
    local cache=$1 nx=$2 ny=$3 dt=$4 np=$5 dir d px py
    dir="$cache/cavityFine-${nx}x${ny}-dt${dt}-np${np}"
    if [ -f "$dir/.done" ]; then echo "$dir"; return 0; fi
    mkdir -p "$cache"
    coarse_case "$cache/cavity-coarse" || return 1
    rm -rf "$dir"
    cp -r "$CAVITY_TUTORIAL" "$dir" || return 1
    d=$dir/system
    sed -i -E "s|\(20 20 1\)|($nx $ny 1)|" "$d/blockMeshDict"
    grep -q "($nx $ny 1)" "$d/blockMeshDict" || { echo "cannot set the mesh in $d/blockMeshDict" >&2; return 1; }
    foam_set "$d/controlDict" startTime "$START_TIME" &&
    foam_set "$d/controlDict" endTime "$END_TIME" &&
    foam_set "$d/controlDict" deltaT "$dt" &&
    foam_set "$d/controlDict" writeControl timeStep &&
    foam_set "$d/controlDict" writeInterval 1000000 &&
    foam_set "$d/controlDict" runTimeModifiable false || return 1
    read -r px py <<<"$(decomposition "$nx" "$ny" "$np")"
    cat >"$d/decomposeParDict" <<DICT
FoamFile { version 2.0; format ascii; class dictionary; object decomposeParDict; }
numberOfSubdomains $np;
method simple;
coeffs { n ($px $py 1); delta 0.001; }
simpleCoeffs { n ($px $py 1); delta 0.001; }
DICT
    mv "$dir/0" "$dir/$START_TIME"
    (
        cd "$dir" &&
        blockMesh >log.blockMesh 2>&1 &&
        mapFields ../cavity-coarse -consistent -sourceTime "$START_TIME" >log.mapFields 2>&1 &&
        { [ "$np" = 1 ] || decomposePar -force >log.decomposePar 2>&1; }
    ) || { echo "building $dir failed (see its log.* files)" >&2; return 1; }
    touch "$dir/.done"
    echo "$dir"
}
