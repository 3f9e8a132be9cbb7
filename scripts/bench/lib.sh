# shellcheck shell=bash
# Helpers of the bench scripts (sourced).

# median of the numbers given as arguments (non-numbers are ignored)
median() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
