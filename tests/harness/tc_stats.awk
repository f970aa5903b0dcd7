# The parser of the library's TC_STATS=1 lines, shared by the shell drivers
# that check which path the calls took (tests/pmpi/run_with_stats.sh,
# tests/cluster/run_cluster.sh). At finalize every process prints, per
# operation it ran,
#
#   topocoll-stats rank=R op=OP calls=C shm=S hier=H ... pmpi=P ...
#
# (key=value pairs, src/base/stats.c). A driver runs awk on this file's text
# followed by its own program (POSIX awk takes one program: the text is
# concatenated:  awk -v ... "$(cat tests/harness/tc_stats.awk)
# $program" FILE) and reads, after the input:
#
#   tc_stats_field(line, key)   the value of key in a line ("" when absent)
#   tc_stats_n[R, OP]           how many lines rank R printed for OP
#   tc_stats_line[R, OP]        the last such line
#   tc_stats_nop[OP]            lines for OP, any rank (one process's output)
#   tc_stats_lineop[OP]         the last line for OP, any rank
function tc_stats_field(line, key,    n, i, kv, f) {
    n = split(line, f, " ")
    for (i = 1; i <= n; i++) {
        split(f[i], kv, "=")
        if (kv[1] == key)
            return kv[2]
    }
    return ""
}
/^topocoll-stats rank=/ {
    tc_stats_r = tc_stats_field($0, "rank")
    tc_stats_o = tc_stats_field($0, "op")
    tc_stats_n[tc_stats_r, tc_stats_o]++
    tc_stats_line[tc_stats_r, tc_stats_o] = $0
    tc_stats_nop[tc_stats_o]++
    tc_stats_lineop[tc_stats_o] = $0
}
