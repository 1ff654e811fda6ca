# `median VALUE...`: the median of its arguments (the mean of the middle two for an even count).
# Sourced by kafka.sh, pairs.sh and idle-cpu.sh.
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
