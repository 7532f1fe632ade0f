# robots.awk: the libraries side by side on real robots, from mbd-bench's robot suites.
#
#   awk -v section=S -f report/robots.awk DAT/robots.dat [DAT/robot_derivatives.dat]
#
# S: table (forward calls: each library's fastest as a multiple of the fastest), derivatives
# (each method's time, as a multiple of one forward call and of analytic's), targets (rows of
# the report's targets table), chart (robot index, robot, nv, variant, ns: the robots in
# order of nv, for report/robots.gp). A variant's library is the prefix of a plugin's name
# (pinocchio-aba: Pinocchio, mujoco-smooth: MuJoCo); every other variant is mbd's.

function library(variant) {
    if (variant ~ /^pinocchio-/) return "Pinocchio"
    if (variant ~ /^mujoco-/) return "MuJoCo"
    return "mbd"
}
function remember(list, name, value) {
    if (!((name, value) in seen)) { seen[name, value] = 1; list[++count[name]] = value }
}
function time_text(ns) {
    if (ns < 1e3) return sprintf("%.0f ns", ns)
    if (ns < 1e6) return sprintf("%.1f µs", ns / 1e3)
    return sprintf("%.2f ms", ns / 1e6)
}
function target_row(what, value, verdict) { printf "| %s | %s | %s |\n", what, value, verdict }
# The robots in order of nv, then name (insertion sort of robots[1..n] into order[]).
function sort_robots(    i, j, x) {
    for (i = 1; i <= count["robot"]; i++) order[i] = robots[i]
    for (i = 2; i <= count["robot"]; i++) {
        x = order[i]
        for (j = i - 1; j >= 1 && (nv[order[j]] > nv[x] || (nv[order[j]] == nv[x] && order[j] > x)); j--)
            order[j + 1] = order[j]
        order[j + 1] = x
    }
}

/^#/ || NF == 0 { next }
FILENAME ~ /robots\.dat$/ && $5 ~ /^[0-9]/ {
    ns[$1, $2] = $5; nv[$1] = $3
    remember(robots, "robot", $1); remember(variants, "variant", $2)
    lib = library($2); remember(libraries, "library", lib)
    if (!((($1, lib) in best)) || $5 + 0 < best[$1, lib] + 0) { best[$1, lib] = $5; best_variant[$1, lib] = $2 }
}
FILENAME ~ /robot_derivatives\.dat$/ && $6 ~ /^[0-9]/ {
    dns[$1, $2] = $6; forward[$1] = $8; nv[$1] = $5
    remember(robots, "robot", $1); remember(methods, "method", $2)
}

# A table's two header lines: the first columns (cells and their alignment rule), then a
# right-aligned column for each of names[1..n], formatted by format.
function print_header(cells, rule, names, n, format,    k) {
    printf "%s", cells
    for (k = 1; k <= n; k++) printf format, names[k]
    printf "\n%s", rule
    for (k = 1; k <= n; k++) printf "--:|"
    printf "\n"
}

function print_table(    i, r, l, fastest) {
    print_header("| robot | nv | fastest |", "|---|--:|---|", libraries, count["library"], " %s |")
    for (i = 1; i <= count["robot"]; i++) {
        r = order[i]; fastest = ""
        for (l = 1; l <= count["library"]; l++)
            if ((r, libraries[l]) in best && (fastest == "" || best[r, libraries[l]] + 0 < best[r, fastest] + 0))
                fastest = libraries[l]
        printf "| %s | %d | `%s` %s |", r, nv[r], best_variant[r, fastest], time_text(best[r, fastest])
        for (l = 1; l <= count["library"]; l++)
            printf " %s |", (r, libraries[l]) in best ? sprintf("%.2f× (`%s`)", best[r, libraries[l]] / best[r, fastest], best_variant[r, libraries[l]]) : "–"
        printf "\n"
    }
}

function print_derivatives(    i, r, m, analytic) {
    print_header("| robot | nv | one `bodies` call |", "|---|--:|--:|", methods, count["method"], " `%s` |")
    for (i = 1; i <= count["robot"]; i++) {
        r = order[i]
        if (!((r, "analytic") in dns) && !(r in forward)) continue
        analytic = (r, "analytic") in dns ? dns[r, "analytic"] : 0
        printf "| %s | %d | %s |", r, nv[r], time_text(forward[r])
        for (m = 1; m <= count["method"]; m++)
            printf " %s |", !((r, methods[m]) in dns) ? "–" : \
                sprintf("%s (%.1f× forward%s)", time_text(dns[r, methods[m]]), dns[r, methods[m]] / forward[r],
                        analytic && methods[m] != "analytic" ? sprintf(", %.2f× analytic", dns[r, methods[m]] / analytic) : "")
        printf "\n"
    }
}

# Over every robot where both were measured: the worst of a variant's time over a
# library's fastest (low: the smallest, else the largest) and where; a targets row.
function ratio_target(what, variant, lib, limit, low,    i, r, x, worst, where, n) {
    n = 0
    for (i = 1; i <= count["robot"]; i++) {
        r = order[i]
        if (!((r, variant) in ns) || !((r, lib) in best)) continue
        x = ns[r, variant] / best[r, lib]; n++
        if (n == 1 || (low ? x < worst : x > worst)) { worst = x; where = r }
    }
    target_row(what, n ? sprintf("worst %.2f× (%s), %d robots", worst, where, n) : "not measured (no such plugin in this run)",
               !n ? "n/a" : (low ? worst >= limit : worst <= limit) ? "PASS" : "MISS")
}
# The same for the derivatives: a method's time over one forward call (den "forward"), or
# another method's time over its.
function method_target(what, num, den, limit, low,    i, r, x, worst, where, n) {
    n = 0
    for (i = 1; i <= count["robot"]; i++) {
        r = order[i]
        if (!((r, num) in dns)) continue
        if (den == "forward") { if (!(r in forward)) continue; x = dns[r, num] / forward[r] }
        else { if (!((r, den) in dns)) continue; x = dns[r, den] / dns[r, num] }
        n++
        if (n == 1 || (low ? x < worst : x > worst)) { worst = x; where = r }
    }
    target_row(what, n ? sprintf("worst %.2f× (%s), %d robots", worst, where, n) : "not measured",
               !n ? "n/a" : (low ? worst >= limit : worst <= limit) ? "PASS" : "MISS")
}
function print_targets() {
    ratio_target("every robot: Pinocchio's `aba` ≥ 3.5× mbd's fastest forward call", "pinocchio-aba", "mbd", 3.5, 1)
    method_target("every robot: `analytic` derivatives ≤ 4 `bodies` forward calls", "analytic", "forward", 4, 0)
    method_target("every robot: Pinocchio's `computeABADerivatives` ≥ 2× `analytic`", "analytic", "pinocchio-aba", 2, 1)
}
function print_chart(    i, r, v) {
    for (i = 1; i <= count["robot"]; i++)
        for (v = 1; v <= count["variant"]; v++)
            if ((order[i], variants[v]) in ns)
                print i, order[i], nv[order[i]], variants[v], ns[order[i], variants[v]]
}
END {
    sort_robots()
    if (section == "table") print_table()
    else if (section == "derivatives") print_derivatives()
    else if (section == "targets") print_targets()
    else if (section == "chart") print_chart()
}
