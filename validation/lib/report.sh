# shellcheck shell=bash
# Reports from results.csv: the final-state cross-check, table.md in the
# paper's layout, ratios.md beside the paper's ratios, and PNG plots like
# Figures 14-17 (gnuplot). Sourced by run_weak_scaling.sh.
#
# results.csv columns: 1 case, 2 hosts, 3 ranks, 4 mesh, 5 deltaT, 6 transport,
# 7 column, 8 repeat, 9 status, 10 seconds, 11 solver_seconds, 12 signature,
# 13 reason, 14 log

# The paper's Table 1 (seconds) and its 1-host, 20-rank run.
PAPER_TABLE='n2np40 2000_2000_1 1.2e-6 336.49 279.78 501.19
n4np80 4000_2000_1 6e-7 768.74 601.52 1014.25
n8np160 4000_4000_1 3e-7 1583.22 1307.51 2878.94'

# Runs of one case must end in the same solver state whatever the transport:
# a run whose signature differs from the majority is marked FAILED.
cross_check() {
    local csv=$1/results.csv tmp
    tmp=$(mktemp)
    awk -F, -v OFS=, '
        NR == FNR { if (FNR > 1 && $9 == "ok") n[$1 SUBSEP $12]++; next }
        FNR == 1 { print; next }
        {
            if ($9 == "ok") {
                best = ""; bn = 0
                for (k in n) { split(k, p, SUBSEP); if (p[1] == $1 && n[k] > bn) { bn = n[k]; best = p[2] } }
                if ($12 != best) { $9 = "FAILED"; $10 = ""; $13 = "final solver state differs from the other runs of this case (signature " $12 " vs " best ")" }
            }
            print
        }' "$csv" "$csv" >"$tmp" && cat "$tmp" >"$csv"
    rm -f "$tmp"
}

# Per case and column: "min" or "min / median" over ok runs, else FAILED/n/a.
# Prints: case hosts ranks mesh deltaT then one cell per column (tab separated).
summarise() {  # CSV COLUMNS(space separated, _ for spaces)
    awk -F, -v cols="$2" '
        FNR == 1 { next }
        {
            k = $1 SUBSEP $7
            if (!($1 in seen)) { seen[$1] = 1; order[++nc] = $1; info[$1] = $2 "\t" $3 "\t" $4 "\t" $5 }
            if ($9 == "ok") { v[k, ++cnt[k]] = $10 + 0 }
            else if ($9 == "FAILED") failed[k] = 1
            else na[k] = 1
        }
        END {
            ncol = split(cols, C, " ")
            for (i = 1; i <= nc; i++) {
                c = order[i]; line = c "\t" info[c]
                for (j = 1; j <= ncol; j++) {
                    col = C[j]; gsub("_", " ", col); k = c SUBSEP col; n = cnt[k]
                    if (n > 0) {
                        for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (v[k, b] < v[k, a]) { t = v[k, a]; v[k, a] = v[k, b]; v[k, b] = t }
                        med = (n % 2) ? v[k, (n + 1) / 2] : (v[k, n / 2] + v[k, n / 2 + 1]) / 2
                        cell = (n > 1) ? sprintf("%.2f / %.2f", v[k, 1], med) : sprintf("%.2f", v[k, 1])
                        if (failed[k]) cell = cell " (some FAILED)"
                    } else if (failed[k]) cell = "FAILED"
                    else if (na[k]) cell = "n/a"
                    else cell = "-"
                    line = line "\t" cell
                }
                print line
            }
        }' "$1"
}

# Columns present, paper's first: PVRDMA Passthrough TCP, then the others.
report_columns() {
    local extra
    extra=$(awk -F, 'FNR > 1 && $7 != "PVRDMA" && $7 != "Passthrough" && $7 != "TCP" { print $7 }' "$1" |
            awk '!s[$0]++' | tr ' ' _ | tr '\n' ' ')
    echo "PVRDMA Passthrough TCP $extra"
}

# min seconds (number) of a cell, "" when not a time
cell_num() { [[ $1 =~ ^[0-9]+\.[0-9]+ ]] && echo "${BASH_REMATCH[0]}"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo "-"; }

# stack_versions: the MPI stack the runs used (Debian 12: Open MPI 4.1 / UCX
# 1.13; Debian 13: 5.0 / 1.18), as the packages name it.
stack_versions() {
    local ompi ucx os
    ompi=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v*//p' | head -n 1)
    ucx=$(ucx_info -v 2>/dev/null | sed -n 's/^# *\(Library \)\{0,1\}[Vv]ersion:\{0,1\} *\([0-9][0-9.]*\).*/\2/p' | head -n 1)
    os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
    echo "Open MPI ${ompi:-unknown}, UCX ${ucx:-unknown}${os:+, $os}"
}

write_report() {
    local out=$1 label=$2 csv=$1/results.csv cols hdr sep row c
    cross_check "$out"
    cols=$(report_columns "$csv")
    summarise "$csv" "$cols" >"$out/summary.tsv"
    {
        echo "# OpenFOAM cavityFine weak scaling"
        echo
        echo "Bed: $label. Seconds are mpirun wall time, min over repeats (\"min / median\" when repeated)."
        echo
        echo "Stack: $(stack_versions)."
        echo
        hdr="| Cases | Mesh Size | Time Delta (s) |" sep="|---|---|---|"
        for c in $cols; do hdr="$hdr ${c//_/ } (s) |"; sep="$sep---|"; done
        echo "$hdr"; echo "$sep"
        while IFS=$'\t' read -r -a row; do
            local line="| ${row[0]} | ${row[3]} | ${row[4]} |"
            for ((i = 5; i < ${#row[@]}; i++)); do line="$line ${row[$i]} |"; done
            echo "$line"
        done <"$out/summary.tsv"
        echo
        echo "Runs that did not produce a time:"
        awk -F, 'FNR > 1 && $9 != "ok" { printf "- %s %s run %s: %s: %s\n", $1, $6, $8, $9, $13 }' "$csv"
        awk -F, 'FNR > 1 && $9 != "ok" { n++ } END { if (!n) print "- none" }' "$csv"
        echo
        echo "The paper's Table 1 (8 ESXi hosts, ConnectX-5 Ex 100 GbE, 20 ranks per host, Open MPI 4.1.0 openib):"
        echo
        echo "| Cases | Mesh Size | Time Delta (s) | PVRDMA (s) | Passthrough (s) | TCP (s) |"
        echo "|---|---|---|---|---|---|"
        echo "$PAPER_TABLE" | awk '{ gsub("_", " ", $2); printf "| %s | (%s) | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
    } >"$out/table.md"
    write_ratios "$out" "$cols"
    write_plots "$out" "$cols"
    cat "$out/table.md"
    echo
    cat "$out/ratios.md"
}

write_ratios() {
    local out=$1 cols=$2 i=0 row pv pt tc uc paper
    # column index of each transport in summary rows
    local idx=5 ipv="" ipt="" itc="" iuc=""
    for c in $cols; do
        case $c in PVRDMA) ipv=$idx ;; Passthrough) ipt=$idx ;; TCP) itc=$idx ;; PVRDMA-UCX) iuc=$idx ;; esac
        idx=$((idx + 1))
    done
    {
        echo "# Time ratios (lower PVRDMA/Passthrough and higher TCP/PVRDMA are better for PVRDMA)"
        echo
        echo "Multi-host cases in ladder order beside the paper's case at the same position."
        echo
        echo "| Case | PVRDMA/Passthrough | TCP/PVRDMA | TCP/PVRDMA-UCX | Paper case | Paper PVRDMA/Passthrough | Paper TCP/PVRDMA |"
        echo "|---|---|---|---|---|---|---|"
        while IFS=$'\t' read -r -a row; do
            [ "${row[1]}" -gt 1 ] || continue
            i=$((i + 1))
            pv=$(cell_num "${row[$ipv]:-}"); pt=$(cell_num "${row[$ipt]:-}"); tc=$(cell_num "${row[$itc]:-}")
            uc=""; [ -n "$iuc" ] && uc=$(cell_num "${row[$iuc]:-}")
            paper=$(echo "$PAPER_TABLE" | sed -n "${i}p")
            set -- $paper
            echo "| ${row[0]} | $(ratio "$pv" "$pt") | $(ratio "$tc" "$pv") | $(ratio "$tc" "$uc") | ${1:--} | $( [ -n "$paper" ] && ratio "$4" "$5" || echo -) | $( [ -n "$paper" ] && ratio "$6" "$4" || echo -) |"
        done <"$out/summary.tsv"
    } >"$out/ratios.md"
}

# PNG plots with gnuplot (Debian's gnuplot-nox): Figure 14 (times), 15
# (speedup vs ideal), 16 and 17 (ratios, ours beside the paper's).
write_plots() {
    local out=$1 cols=$2 pd=$1/plots
    if ! command -v gnuplot >/dev/null; then
        echo "run_weak_scaling: gnuplot not found (apt-get install gnuplot-nox): no plots" >&2
        return 0
    fi
    mkdir -p "$pd"
    # times.dat: case then min seconds per column ("?" = no time)
    awk -F'\t' '{ line = $1; for (i = 6; i <= NF; i++) { v = $i; if (v ~ /^[0-9.]+/) { split(v, p, " "); v = p[1] } else v = "?"; line = line "\t" v } print line }' \
        "$out/summary.tsv" >"$pd/times.dat"
    # speedup.dat: case, ideal, then per column (work/work_1) * t_1/t, where
    # work = cells * time steps and _1 is the first (smallest) case.
    awk -F'\t' -v span=0.00003 '
        {
            split($4, m, /[() ]+/); w = m[2] * m[3] * int(span / $5 + 0.999)
            if (NR == 1) { w1 = w; h1 = $2 }
            line = $1 "\t" $2 / h1
            for (i = 6; i <= NF; i++) {
                v = $i; t = (v ~ /^[0-9.]+/) ? v + 0 : 0
                if (NR == 1) t1[i] = t
                line = line "\t" ((t > 0 && t1[i] > 0) ? sprintf("%.3f", (w / w1) * t1[i] / t) : "?")
            }
            print line
        }' "$out/summary.tsv" >"$pd/speedup.dat"
    # ratio dats from ratios.md: ours and the paper's at the same ladder position
    awk -F' *\\| *' 'NR > 6 { a = ($3 ~ /^[0-9.]+$/) ? $3 : "?"; p = ($7 ~ /^[0-9.]+$/) ? $7 : "?"; print $2 "\t" a "\t" p }' "$out/ratios.md" >"$pd/ratio16.dat"
    awk -F' *\\| *' 'NR > 6 { a = ($4 ~ /^[0-9.]+$/) ? $4 : "?"; p = ($8 ~ /^[0-9.]+$/) ? $8 : "?"; print $2 "\t" a "\t" p }' "$out/ratios.md" >"$pd/ratio17.dat"
    local pt="" ps="" j=2 c na16="" na17=""
    # a ratio with no value in this run (no Passthrough time on the bed)
    # says so on the figure, instead of a legend entry without bars
    awk '$2 != "?"' "$pd/ratio16.dat" | grep -q . ||
        na16='set xlabel "this run: n/a (no Passthrough time in this run)"'
    awk '$2 != "?"' "$pd/ratio17.dat" | grep -q . ||
        na17='set xlabel "this run: n/a (no PVRDMA and TCP times of the same case)"'
    for c in $cols; do
        pt="$pt${pt:+, }'$pd/times.dat' using $j:xtic(1) title '${c//_/ }' with linespoints lw 2 pt 7"
        ps="$ps${ps:+, }'$pd/speedup.dat' using $((j + 1)):xtic(1) title '${c//_/ }' with linespoints lw 2 pt 7"
        j=$((j + 1))
    done
    gnuplot >"$out/gnuplot.log" 2>&1 <<GP || echo "run_weak_scaling: gnuplot failed (see $out/gnuplot.log)" >&2
set datafile separator "\t"
set datafile missing "?"
set encoding utf8
# noenhanced: every title and label is literal text (in enhanced mode "~"
# overprints, "_" and "^" make subscripts and superscripts, "@" and "&" too)
set terminal pngcairo noenhanced size 900,560 font "sans,11"
set grid ytics
set key top left
set yrange [0:*]
set output "$out/fig14-times.png"
set title "Weak scaling: run time per transport (lower is better)"
set ylabel "seconds"
plot $pt
set output "$out/fig15-speedup.png"
set title "Weak scaling speedup vs ideal (higher is better)"
set ylabel "speedup = (work / work₁) × t₁ / t"
plot $ps, '$pd/speedup.dat' using 2:xtic(1) title 'ideal' with linespoints dt 2 lw 2 pt 6
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set output "$out/fig16-pvrdma-vs-passthrough.png"
set title "PVRDMA vs passthrough time ratio (paper: ≈ 1.2, i.e. PVRDMA at ≈ 80% of passthrough speed)"
set ylabel "PVRDMA / Passthrough"
$na16
plot '$pd/ratio16.dat' using 2:xtic(1) title 'this run', '' using 3 title 'paper (same ladder position)'
unset xlabel
set output "$out/fig17-tcp-vs-pvrdma.png"
set title "TCP vs PVRDMA time ratio (higher: PVRDMA gains more over TCP)"
set ylabel "TCP / PVRDMA"
$na17
plot '$pd/ratio17.dat' using 2:xtic(1) title 'this run', '' using 3 title 'paper (same ladder position)'
GP
}
