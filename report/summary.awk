# summary.awk: the numbers that report/README.md quotes, read from mbd-bench's tables.
#
#   awk -v section=S [-v mhz=F] [-v fp64_scalar=G -v fp64_simd=G -v triad_one=B -v triad_all=B] \
#       -f report/summary.awk DAT/percall.dat DAT/ratio.dat \
#       DAT/phases.dat DAT/batch.dat DAT/crossover.dat DAT/scaling.dat [DAT/flops.dat] \
#       [DAT/mujoco.dat] [DAT/derivatives.dat]
#
# S is one of targets, percall, ratio, phases, batch, crossover, friction, scaling, flops,
# derivatives;
# each prints Markdown. mhz (the clock that flops per cycle assume) is for flops.
# fp64_scalar and fp64_simd (GFLOP/s, one thread), triad_one and triad_all (GB/s, one
# thread and all) are the machine's rates that mbd-bench's machine suite measured in the
# same run (bench/machine.c): the targets that are ratios to them read n/a without them.
# Times in the tables are medians in ns. The targets are checked here, against the
# measurements, never in timed unit tests.

function remember(list, count_name, value) {
    if (!((count_name, value) in seen)) {
        seen[count_name, value] = 1
        list[++count[count_name]] = value
    }
}

# Ascending numeric sort of list[1..n], in place.
function sort_numbers(list, n,    i, j, x) {
    for (i = 2; i <= n; i++) {
        x = list[i]
        for (j = i - 1; j >= 1 && list[j] + 0 > x + 0; j--)
            list[j + 1] = list[j]
        list[j + 1] = x
    }
}

function time_text(ns) {
    if (ns < 1e3) return sprintf("%.0f ns", ns)
    if (ns < 1e6) return sprintf("%.1f µs", ns / 1e3)
    if (ns < 1e9) return sprintf("%.2f ms", ns / 1e6)
    return sprintf("%.2f s", ns / 1e9)
}

# A table cell that holds a number (not "NaN", not empty).
function measured(x) { return x ~ /^[-+]?[0-9]/ }

# Families with friction time the friction iteration, not the solvers: no solver target.
function frictionless(family) { return family !~ /-friction$/ }

/^#/ || NF == 0 { next }

FILENAME ~ /percall\.dat$/ {
    call[$1, $2, $3] = $6
    per_body[$1, $2, $3] = $8
    dofs_of[$1, $3] = $5
    remember(families, "family", $1)
    remember(variants, "variant", $2)
    remember(ns, "n", $3)
}
FILENAME ~ /ratio\.dat$/ {
    solve_ratio[$1, $2] = $3
    call_ratio[$1, $2] = $4
    remember(ratio_ns, "ratio_n", $2)
}
FILENAME ~ /phases\.dat$/ {
    integrator[$1, $2, $3] = $4; kinematics[$1, $2, $3] = $5
    solve[$1, $2, $3] = $6; step[$1, $2, $3] = $7
    remember(phase_variants, "phase_variant", $2)
    remember(phase_ns, "phase_n", $3)
}
FILENAME ~ /batch\.dat$/ {
    rate[$1, $2, $3, $5] = $7
    efficiency[$1, $2, $3, $5] = $8
    per_body_state[$1, $2, $3, $5] = $9
    batch_k = $4
    remember(batch_families, "batch_family", $1)
    remember(batch_variants, "batch_variant", $2)
    remember(batch_ns, "batch_n", $3)
    if ($5 + 0 > max_threads) max_threads = $5 + 0
}
FILENAME ~ /crossover\.dat$/ {
    relative[$1, $2, $3] = $5
}
FILENAME ~ /scaling\.dat$/ {
    scale_call[$1, $2, $3] = $6
    scale_per_body[$1, $2, $3] = $8
    remember(scale_families, "scale_family", $1)
    remember(scale_variants, "scale_variant", $2)
    remember(scale_ns, "scale_n", $3)
}
FILENAME ~ /mujoco\.dat$/ && $2 == "bodies" && $3 == 10 {
    mujoco_ratio[$1] = $6 / $8
}
FILENAME ~ /derivatives\.dat$/ {
    deriv_ns[$1, $2, $3] = $6
    deriv_x[$1, $2, $3] = $9
    deriv_dev[$1, $2, $3] = $10
    remember(deriv_families, "deriv_family", $1)
    remember(deriv_methods, "deriv_method", $2)
    remember(deriv_ns_list, "deriv_n", $3)
}
FILENAME ~ /flops\.dat$/ {
    flops_per_body[$1, $2] = $5
    flops_n[$1, $2] = $3
}

# ---- targets ------------------------------------------------------------------------

# The O(N) solvers: all but dense (O(N^3)) and sparse (O(N d^2), d the tree's depth).
function linear_variant(variant) {
    return variant !~ /^(dense|sparse)/
}

function target_row(what, value, verdict) {
    printf "| %s | %s | %s |\n", what, value, verdict
}

# The worst ns per body of variant on the families matching family_re, for N >= 10: an
# absolute time, which says as much about the CPU as about the code (information only).
function per_body_info(variant, family_re, joints,    f, i, key, worst, where) {
    worst = -1
    for (f = 1; f <= count["family"]; f++)
        for (i = 1; i <= count["n"]; i++) {
            key = families[f] SUBSEP variant SUBSEP ns[i]
            if (families[f] ~ family_re && ns[i] >= 10 && (key in per_body) && per_body[key] > worst) {
                worst = per_body[key]
                where = families[f] ", N = " ns[i]
            }
        }
    target_row(sprintf("`%s` ns per body, %s, N ≥ 10 (absolute: information)", variant, joints),
               worst < 0 ? "not measured (needs N ≥ 10)" : sprintf("worst %.1f ns per body (%s)", worst, where),
               "info")
}

# T(variant) / T(bodies) over every frictionless family and N >= 10: the smallest (low)
# or the largest, where it is in ratio_where; -1 where not measured.
function ratio_to_bodies(variant, low,    f, i, a, b, r, worst) {
    worst = -1
    for (f = 1; f <= count["family"]; f++)
        for (i = 1; i <= count["n"]; i++) {
            a = families[f] SUBSEP variant SUBSEP ns[i]
            b = families[f] SUBSEP "bodies" SUBSEP ns[i]
            if (!(a in call) || !(b in call) || !frictionless(families[f]) || ns[i] < 10) continue
            r = call[a] / call[b]
            if (worst < 0 || (low ? r < worst : r > worst)) { worst = r; ratio_where = families[f] ", N = " ns[i] }
        }
    return worst
}

# How many times faster bodies is than a peer library's solver, measured in the same run.
function peer_target(peer, limit,    worst) {
    worst = ratio_to_bodies(peer, 1)
    target_row(sprintf("`%s` ≥ %g× `bodies`'s time (every frictionless family, N ≥ 10)", peer, limit),
               worst < 0 ? "not measured (no " peer " plugin in this run)" : sprintf("worst %.2f× (%s)", worst, ratio_where),
               worst < 0 ? "n/a" : worst >= limit ? "PASS" : "MISS")
}

# Our other O(N) solvers against bodies.
function within_target(variant, limit,    worst) {
    worst = ratio_to_bodies(variant, 0)
    target_row(sprintf("`%s` ≤ %.2f× `bodies` (every frictionless family, N ≥ 10)", variant, limit),
               worst < 0 ? "not measured" : sprintf("worst %.2f× (%s)", worst, ratio_where),
               worst < 0 ? "n/a" : worst <= limit ? "PASS" : "MISS")
}

# t(big) / t(small) of every O(N) variant (all but dense and sparse) whose name matches
# only, of times on every frictionless family, against [lo, hi]: a linear solver gives
# big / small.
function growth_target(label, scope, times, fams, nfams, vars, nvars, small, big, lo_limit, hi_limit,
                       only, f, v, a, b, r, lo, hi, lo_at, hi_at, tried, outside) {
    lo = 1e300; hi = -1
    for (f = 1; f <= nfams; f++)
        for (v = 1; v <= nvars; v++) {
            if (!linear_variant(vars[v]) || vars[v] !~ only || !frictionless(fams[f])) continue
            a = fams[f] SUBSEP vars[v] SUBSEP big
            b = fams[f] SUBSEP vars[v] SUBSEP small
            if (!(a in times) || !(b in times)) continue
            r = times[a] / times[b]
            tried++
            if (r < lo_limit || r > hi_limit) outside++
            if (r < lo) { lo = r; lo_at = vars[v] " on " fams[f] }
            if (r > hi) { hi = r; hi_at = vars[v] " on " fams[f] }
        }
    target_row(sprintf("O(N) solvers linear: %s in [%g, %g] (%s)", label, lo_limit, hi_limit, scope),
               tried ? sprintf("%.2f (%s) to %.2f (%s); %d of %d outside", lo, lo_at, hi, hi_at, outside + 0, tried) : sprintf("not measured (needs N = %d and %d)", small, big),
               !tried ? "n/a" : outside ? "MISS" : "PASS")
}

# The least efficiency on all cores for K = 1024 and N >= 10, over the batch variants
# whose names match the pattern (exclude 0) or do not (exclude 1).
function efficiency_target(pattern, exclude, which,    f, v, i, key, worst, where, label) {
    worst = 2
    for (f = 1; f <= count["batch_family"]; f++)
        for (v = 1; v <= count["batch_variant"]; v++) {
            if ((batch_variants[v] ~ pattern) == exclude) continue
            for (i = 1; i <= count["batch_n"]; i++) {
                key = batch_families[f] SUBSEP batch_variants[v] SUBSEP batch_ns[i] SUBSEP max_threads
                if (batch_ns[i] >= 10 && (key in efficiency) && measured(efficiency[key]) && efficiency[key] < worst) {
                    worst = efficiency[key]
                    where = batch_variants[v] " on " batch_families[f] ", N = " batch_ns[i]
                }
            }
        }
    label = max_threads >= 2 ? sprintf("all %d cores", max_threads) : "all cores"
    label = sprintf("OpenMP batch efficiency ≥ 90%% on %s, K = 1024, N ≥ 10, %s", label, which)
    if (max_threads < 2 || batch_k != 1024 || worst == 2)
        target_row(label, max_threads < 2 ? "not measured (one thread only)" : batch_k != 1024 ? "not measured (K = " batch_k ")" : "not measured", "n/a")
    else
        target_row(label, sprintf("worst %.0f%% (%s)", 100 * worst, where), worst >= 0.9 ? "PASS" : "MISS")
}

# The SIMD bodies batch on one thread against the one-state batch, on the batch families
# whose joints match (autotree-chain: 1 DOF, chain-cardan: 2 DOF), N >= 10: the smallest
# speedup per state of the lanes (target: at least limit, a share of the lanes), and the
# largest ns per body per state (information).
function simd_target(family, limit, joints,    i, lane_key, one_key, r, worst, where, slowest) {
    worst = -1; slowest = -1
    for (i = 1; i <= count["batch_n"]; i++) {
        lane_key = family SUBSEP "bodies-simd" SUBSEP batch_ns[i] SUBSEP 1
        one_key = family SUBSEP "bodies" SUBSEP batch_ns[i] SUBSEP 1
        if (batch_ns[i] < 10 || !(lane_key in per_body_state) || !measured(per_body_state[lane_key])) continue
        slowest = per_body_state[lane_key] > slowest ? per_body_state[lane_key] : slowest
        if (!(one_key in per_body_state) || !measured(per_body_state[one_key])) continue
        r = per_body_state[one_key] / per_body_state[lane_key]
        if (worst < 0 || r < worst) { worst = r; where = "N = " batch_ns[i] }
    }
    target_row(sprintf("bodies-simd ≥ %g× the one-state batch per state on one thread%s, %s (%s)", limit,
                       lanes ? " in " lanes " lanes" : "", joints, family),
               worst < 0 ? "not measured" : sprintf("worst %.2f× (%s)", worst, where),
               worst < 0 ? "n/a" : worst >= limit ? "PASS" : "MISS")
    target_row(sprintf("bodies-simd ns per body per state on one thread, %s (%s; absolute: information)", joints, family),
               slowest < 0 ? "not measured" : sprintf("worst %.1f", slowest), "info")
}

# The worst of bodies' time over MuJoCo's at N = 10 (bench/mujoco.sh's table).
function mujoco_target(limit,    f, worst, where) {
    worst = -1
    for (f in mujoco_ratio)
        if (mujoco_ratio[f] > worst) {
            worst = mujoco_ratio[f]
            where = f
        }
    target_row(sprintf("`bodies` ≤ %.1f× MuJoCo's forward time at N = 10, every family", limit),
               worst < 0 ? "not measured" : sprintf("worst %.3f× (%s)", worst, where),
               worst < 0 ? "n/a" : worst <= limit ? "PASS" : "MISS")
}

# ---- derivatives (issue's targets; docs/derivatives.md) ---------------------------------

# Whether the derivatives suite measured method at all.
function has_method(method,    m) {
    for (m = 1; m <= count["deriv_method"]; m++)
        if (deriv_methods[m] == method) return 1
    return 0
}

# The text of a target that needs methods a and b (b may be ""), where either is missing.
function missing_methods(a, b) {
    if (!count["deriv_method"]) return "not measured (no derivatives suite in this run)"
    if (!has_method(a)) return "not measured (no `" a "` method in this build)"
    if (b != "" && !has_method(b)) return "not measured (no `" b "` method in this build)"
    return ""
}

# T(a) / T(b) at N on family (or the worst over the families where family is ""), against limit.
function method_ratio_target(a, b, n, family, limit,    f, key_a, key_b, r, worst, where, missing) {
    missing = missing_methods(a, b)
    worst = -1
    for (f = 1; f <= count["deriv_family"] && missing == ""; f++) {
        if (family != "" && deriv_families[f] != family) continue
        key_a = deriv_families[f] SUBSEP a SUBSEP n; key_b = deriv_families[f] SUBSEP b SUBSEP n
        if (!(key_a in deriv_ns) || !(key_b in deriv_ns)) continue
        r = deriv_ns[key_a] / deriv_ns[key_b]
        if (r > worst) { worst = r; where = deriv_families[f] }
    }
    target_row(sprintf("`%s` ≤ %g× `%s` at N = %d, %s", a, limit, b, n, family == "" ? "every family" : family),
               missing != "" ? missing : worst < 0 ? "not measured (needs N = " n ")" : sprintf("worst %.3f× (%s)", worst, where),
               missing != "" || worst < 0 ? "n/a" : worst <= limit ? "PASS" : "MISS")
}

# method's time as a multiple of one bodies forward call on family (one model: arm7).
function forward_multiple_target(method, family, limit,    i, key, x, missing) {
    missing = missing_methods(method, "")
    x = -1
    for (i = 1; i <= count["deriv_n"] && missing == ""; i++) {
        key = family SUBSEP method SUBSEP deriv_ns_list[i]
        if ((key in deriv_x) && measured(deriv_x[key])) x = deriv_x[key]
    }
    target_row(sprintf("`%s` ≤ %g× one `bodies` call on %s", method, limit, family),
               missing != "" ? missing : x < 0 ? "not measured" : sprintf("%.2f×", x),
               missing != "" || x < 0 ? "n/a" : x <= limit ? "PASS" : "MISS")
}

# The lanes' speedup per state over one state, 0.6 of the lane count (measured: 5.3x to
# 5.7x in 8 lanes on AMD EPYC Zen 4); 2x where the lane count is unknown.
function simd_targets(    limit) {
    limit = lanes ? 0.6 * lanes : 2
    simd_target("autotree-chain", limit, "1-DOF joints")
    simd_target("chain-cardan", limit, "2-DOF joints")
}

# The worst friction call over the frictionless one, chain-revolute at N = n, every variant.
function friction_target(n, limit,    v, a, b, r, worst, where) {
    worst = -1
    for (v = 1; v <= count["variant"]; v++) {
        a = "chain-revolute-friction" SUBSEP variants[v] SUBSEP n
        b = "chain-revolute" SUBSEP variants[v] SUBSEP n
        if (!(a in call) || !(b in call)) continue
        r = call[a] / call[b]
        if (r > worst) { worst = r; where = variants[v] }
    }
    target_row(sprintf("a friction call ≤ %g× the frictionless call, chain-revolute, N = %d, every solver", limit, n),
               worst < 0 ? "not measured" : sprintf("worst %.2f× (%s)", worst, where),
               worst < 0 ? "n/a" : worst <= limit ? "PASS" : "MISS")
}

# ---- ratios to the machine's own rates (bench/machine.c) --------------------------------

# The shares that the targets below ask for, properties of the code rather than of the CPU
# (docs/performance.md, "Ratios to the machine"): set from this build on AMD EPYC (Zen 4),
# less a margin for the run's noise; -v sets them otherwise (tests/test_bench.c).
BEGIN {
    if (BODIES_SCALAR_SHARE == "") BODIES_SCALAR_SHARE = 0.7
    if (SIMD_PEAK_SHARE == "") SIMD_PEAK_SHARE = 0.95
    if (BATCH_BANDWIDTH_SHARE == "") BATCH_BANDWIDTH_SHARE = 0.6
    # all threads stream at least what one does: where other load slowed them, one's rate
    bandwidth = triad_all + 0 > triad_one + 0 ? triad_all + 0 : triad_one + 0
}

# Counted flops per ns (GFLOP/s) of variant's one-state calls at flops.dat's N, over the
# one-thread FP64 peak (peak, GFLOP/s): the smallest over the frictionless families, or -1.
function flop_share(variant, peak,    f, fkey, key, r, worst) {
    worst = -1
    for (f = 1; f <= count["family"]; f++) {
        fkey = families[f] SUBSEP variant
        key = fkey SUBSEP flops_n[fkey]
        if (!(fkey in flops_per_body) || !(key in per_body) || !frictionless(families[f])) continue
        r = flops_per_body[fkey] / per_body[key] / peak
        if (worst < 0 || r < worst) { worst = r; share_where = sprintf("%s, N = %d: %.1f GFLOP/s", families[f], flops_n[fkey], r * peak) }
    }
    return worst
}

# A target of a share (measured, -1: not measured; missing: why there is no peak) against
# limit, at least (low) or at most.
function share_row(what, measured_share, limit, low, missing) {
    target_row(what, missing != "" ? missing : measured_share < 0 ? "not measured" :
                     sprintf("worst %.2f (%s)", measured_share, share_where),
               missing != "" || measured_share < 0 ? "n/a" :
               (low ? measured_share >= limit : measured_share <= limit) ? "PASS" : "MISS")
}

function no_rate(rate) { return rate > 0 ? "" : "not measured (no machine suite in this run)" }

# bodies, one state: mostly scalar code, so against the scalar peak (two FMAs a cycle on
# any x86 core since 2013); information: its share of the SIMD peak.
function bodies_flops_target(limit,    share) {
    share = fp64_scalar > 0 ? flop_share("bodies", fp64_scalar) : -1
    share_row(sprintf("`bodies`' flop rate ≥ %.2f × the scalar FP64 peak, one thread, every frictionless family", limit),
              share, limit, 1, no_rate(fp64_scalar))
    share = fp64_simd > 0 ? flop_share("bodies", fp64_simd) : -1
    target_row("`bodies`' flop rate over the SIMD FP64 peak, one thread (information)",
               no_rate(fp64_simd) != "" ? no_rate(fp64_simd) : share < 0 ? "not measured" : sprintf("worst %.2f (%s)", share, share_where),
               "info")
}

# bodies-simd on one thread: bodies' counted flops per body and state (flops.dat, N = 100,
# the same arithmetic in every lane) over its ns per body per state, at N >= 10, against
# the SIMD peak; the smallest share over the batch families and N.
function simd_flops_target(limit,    f, i, key, fkey, r, worst) {
    worst = -1
    for (f = 1; f <= count["batch_family"] && fp64_simd > 0; f++) {
        fkey = batch_families[f] SUBSEP "bodies"
        for (i = 1; i <= count["batch_n"]; i++) {
            key = batch_families[f] SUBSEP "bodies-simd" SUBSEP batch_ns[i] SUBSEP 1
            if (batch_ns[i] < 10 || !(fkey in flops_per_body) || !(key in per_body_state) || !measured(per_body_state[key])) continue
            r = flops_per_body[fkey] / per_body_state[key] / fp64_simd
            if (worst < 0 || r < worst) { worst = r; share_where = sprintf("%s, N = %d: %.1f GFLOP/s", batch_families[f], batch_ns[i], r * fp64_simd) }
        }
    }
    share_row(sprintf("bodies-simd's flop rate per state ≥ %.2f × the SIMD FP64 peak, one thread, N ≥ 10", limit),
              worst, limit, 1, no_rate(fp64_simd))
}

# The batches on all threads: the bytes a state moves at the least (q, q̇ and τ read, q̈
# written: 4 nv doubles; nq = nv on the batch families) times the states per second, over
# the triad bandwidth; the largest share over every variant, family and N. Their states
# stay in cache from one timed batch to the next; an application's would come from
# memory, and at a share near 1 the batch would wait for them.
function batch_memory_target(limit,    key, e, bytes, r, worst) {
    worst = -1
    for (key in rate) {
        split(key, e, SUBSEP)
        if (bandwidth <= 0 || e[4] != max_threads || !measured(rate[key]) || !((e[1], e[3]) in dofs_of)) continue
        bytes = 4 * 8 * dofs_of[e[1], e[3]]
        r = bytes * rate[key] / 1e9 / bandwidth
        if (r > worst) { worst = r; share_where = sprintf("%s on %s, N = %d: %.2f GB/s", e[2], e[1], e[3], r * bandwidth) }
    }
    share_row(sprintf("batches' state traffic ≤ %.2f × the triad bandwidth, all %d threads, K = %d (compute-bound)",
                      limit, max_threads, batch_k), worst, limit, 0, no_rate(bandwidth))
}

function print_targets() {
    print "| target | measured | result |"
    print "|---|---|---|"
    peer_target("pinocchio-aba", 3.5)
    per_body_info("bodies", "^(chain-revolute|autotree-chain|autotree-binary)$", "1-DOF joints")
    per_body_info("bodies", "^(chain-cylindrical|chain-cardan)$", "2-DOF joints")
    bodies_flops_target(BODIES_SCALAR_SHARE)
    within_target("poisson-ldlt", 1.25)
    within_target("poisson-sweep", 1.8)
    mujoco_target(0.3)
    growth_target("t(1000) / t(100)", "frictionless families", call, families, count["family"],
                  variants, count["variant"], 100, 1000, 8.5, 11.5, ".")
    growth_target("t(10 000) / t(1000)", "scaling suite", scale_call, scale_families,
                  count["scale_family"], scale_variants, count["scale_variant"], 1000, 10000, 9, 11.5, ".")
    growth_target("t(10 000) / t(1000)", "scaling suite, `bodies`: 1.1× per body", scale_call,
                  scale_families, count["scale_family"], scale_variants, count["scale_variant"],
                  1000, 10000, 9, 11, "^bodies$")
    efficiency_target("^dense", 1, "every variant but dense")
    efficiency_target("^dense", 0, "dense (inside: OpenBLAS's dpotrf and dpotrs, see section 4)")
    simd_targets()
    simd_flops_target(SIMD_PEAK_SHARE)
    batch_memory_target(BATCH_BANDWIDTH_SHARE)
    friction_target(100, 3)
    method_ratio_target("analytic", "finite-difference", 30, "chain-revolute", 0.2)
    forward_multiple_target("analytic", "arm7", 5)
    method_ratio_target("automatic", "analytic", 30, "", 3)
}

# ---- chart 1: time per call -----------------------------------------------------------

# Log-log slope of family/variant between N = a and N = b, or "".
function slope(family, variant, a, b,    ka, kb) {
    ka = family SUBSEP variant SUBSEP a; kb = family SUBSEP variant SUBSEP b
    if (!(ka in call) || !(kb in call) || a == b) return ""
    return log(call[kb] / call[ka]) / log(b / a)
}

# The two largest N at which family/variant was measured, into last[1] < last[2].
function last_two(family, variant, last,    i) {
    last[1] = last[2] = ""
    for (i = 1; i <= count["n"]; i++)
        if ((family, variant, ns[i]) in call) { last[1] = last[2]; last[2] = ns[i] }
}

function print_percall(    f, v, n_max, best, best_v, second, second_v, key, linear, cubic, last, s) {
    sort_numbers(ns, count["n"])
    print "| family | fastest at the largest N | time per call | per body | runner-up | slopes of the O(N) solvers | slopes of dense and sparse |"
    print "|---|---|---|---|---|---|---|"
    for (f = 1; f <= count["family"]; f++) {
        n_max = ""; best = second = 1e300
        for (v = 1; v <= count["variant"]; v++) {
            last_two(families[f], variants[v], last)
            if (last[2] != "" && (n_max == "" || last[2] + 0 > n_max + 0)) n_max = last[2]
        }
        for (v = 1; v <= count["variant"]; v++) {
            key = families[f] SUBSEP variants[v] SUBSEP n_max
            if (!(key in call)) continue
            if (call[key] < best) { second = best; second_v = best_v; best = call[key]; best_v = variants[v] }
            else if (call[key] < second) { second = call[key]; second_v = variants[v] }
        }
        linear = cubic = ""
        for (v = 1; v <= count["variant"]; v++) {
            last_two(families[f], variants[v], last)
            if (last[1] == "") continue
            s = slope(families[f], variants[v], last[1], last[2])
            if (!linear_variant(variants[v]))
                cubic = cubic (cubic ? ", " : "") sprintf("%.2f (N %d→%d)", s, last[1], last[2])
            else
                linear = linear (linear ? ", " : "") sprintf("%.2f", s)
        }
        printf "| %s | `%s`, N = %d | %s | %.0f ns | `%s`, %.2f× | %s | %s |\n", families[f], best_v, n_max,
               time_text(best), best / n_max, second_v, second / best, linear, cubic
    }
}

# ---- chart 2: sweep over LDL^T --------------------------------------------------------

# "from lo to hi (mean m), inside Ivanov's band" over the N of family in table.
function ratio_range(family, table,    i, r, lo, hi, sum, k) {
    lo = 1e300; hi = -1
    for (i = 1; i <= count["ratio_n"]; i++) {
        if (!((family, ratio_ns[i]) in table) || !measured(table[family, ratio_ns[i]])) continue
        r = table[family, ratio_ns[i]] + 0
        if (r < lo) lo = r
        if (r > hi) hi = r
        sum += r; k++
    }
    if (!k) return "not measured"
    return sprintf("from %.2f to %.2f (mean %.2f), %s Ivanov's 1.3–1.4", lo, hi, sum / k,
                   hi < 1.3 ? "below" : lo > 1.4 ? "above" : lo >= 1.3 && hi <= 1.4 ? "inside" : "straddling")
}

function print_ratio() {
    sort_numbers(ratio_ns, count["ratio_n"])
    printf "Over N = %d to %d, T(poisson-sweep) / T(poisson-ldlt) of the solve phase runs, on 2-DOF Cardan chains, %s; ",
           ratio_ns[1], ratio_ns[count["ratio_n"]], ratio_range("chain-cardan", solve_ratio)
    printf "on 1-DOF revolute chains, %s. ", ratio_range("chain-revolute", solve_ratio)
    printf "For whole calls (kinematics included) it runs, on Cardan chains, %s; on revolute chains, %s.",
           ratio_range("chain-cardan", call_ratio), ratio_range("chain-revolute", call_ratio)
}

# ---- chart 3: the phases of an RK4 step -------------------------------------------------

function print_phases(    v, n, key, parts, gap, worst_gap, text) {
    sort_numbers(phase_ns, count["phase_n"])
    n = phase_ns[count["phase_n"]]
    for (v = 1; v <= count["phase_variant"]; v++) {
        key = "chain-cardan" SUBSEP phase_variants[v] SUBSEP n
        if (!(key in solve)) continue
        parts = integrator[key] + kinematics[key] + solve[key]
        text = text (text ? "; " : "") sprintf("`%s` %s (solve %.0f%%, kinematics %.0f%%, integrator %.1f%%)",
                    phase_variants[v], time_text(parts), 100 * solve[key] / parts,
                    100 * kinematics[key] / parts, 100 * integrator[key] / parts)
    }
    for (key in solve) {
        parts = integrator[key] + kinematics[key] + solve[key]
        gap = step[key] / parts - 1
        if (gap < 0) gap = -gap
        if (gap > worst_gap) worst_gap = gap
    }
    printf "At N = %d on the Cardan chain one RK4 step costs: %s. ", n, text
    printf "Over all bars, the step timed as one differs from the sum of its three parts by at most %.0f%%.\n", 100 * worst_gap
}

# ---- chart 4: OpenMP batches ------------------------------------------------------------

function print_batch(    f, v, i, key, best, best_v, lo, hi, lo_at, hi_at, e) {
    printf "With K = %d states per batch and %d threads: ", batch_k, max_threads
    for (f = 1; f <= count["batch_family"]; f++)
        for (i = 1; i <= count["batch_n"]; i++) {
            best = -1
            for (v = 1; v <= count["batch_variant"]; v++) {
                key = batch_families[f] SUBSEP batch_variants[v] SUBSEP batch_ns[i] SUBSEP max_threads
                if ((key in rate) && rate[key] > best) { best = rate[key]; best_v = batch_variants[v] }
            }
            if (best > 0)
                printf "%s N = %d peaks at %.3g states/s (`%s`); ", batch_families[f], batch_ns[i], best, best_v
        }
    lo = 1e300; hi = -1
    for (key in efficiency) {
        split(key, e, SUBSEP)
        if (e[4] != max_threads || !measured(efficiency[key])) continue
        if (efficiency[key] < lo) { lo = efficiency[key]; lo_at = e[2] " on " e[1] ", N = " e[3] }
        if (efficiency[key] > hi) { hi = efficiency[key]; hi_at = e[2] " on " e[1] ", N = " e[3] }
    }
    if (hi >= 0)
        printf "parallel efficiency on %d threads runs from %.0f%% (%s) to %.0f%% (%s).\n",
               max_threads, 100 * lo, lo_at, 100 * hi, hi_at
    else
        print "parallel efficiency needs more than one thread."
}

# ---- chart 5: crossover -----------------------------------------------------------------

# The winner at each N of family, runs of the same winner merged, with the range of the
# runner-up's ratio.
function print_crossover() {
    sort_numbers(ns, count["n"])
    crossover_runs(families, count["family"], ns, count["n"], variants, count["variant"], relative)
}

# For each of fams[1..nfams], the runs of N (ns[1..nn], ascending) over which one of
# vars[1..nvars] is fastest, from rel[family, n, variant] (1: the fastest).
function crossover_runs(fams, nfams, ns, nn, vars, nvars, rel,
                        f, v, i, n, key, win, runner, text, run_win, run_from, run_to, rlo, rhi) {
    for (f = 1; f <= nfams; f++) {
        text = ""; run_win = ""
        for (i = 1; i <= nn; i++) {
            n = ns[i]; win = ""; runner = 1e300
            for (v = 1; v <= nvars; v++) {
                key = fams[f] SUBSEP n SUBSEP vars[v]
                if (!(key in rel)) continue
                if (rel[key] + 0 <= 1.0 && win == "") win = vars[v]
                else if (rel[key] + 0 < runner) runner = rel[key] + 0
            }
            if (win == "") continue
            if (win != run_win) {
                if (run_win != "") text = text run_text(run_win, run_from, run_to, rlo, rhi) "; "
                run_win = win; run_from = n; rlo = 1e300; rhi = -1
            }
            run_to = n
            if (runner < 1e300) { if (runner < rlo) rlo = runner; if (runner > rhi) rhi = runner }
        }
        if (run_win != "") text = text run_text(run_win, run_from, run_to, rlo, rhi)
        printf "- **%s**: %s.\n", fams[f], text
    }
}

# ---- friction: chain-revolute-friction against chain-revolute ----------------------------

function print_friction(    cols, ncols, v, k, a, b, row, any) {
    ncols = split("10 100 300 1000", cols, " ")
    printf "| variant |"
    for (k = 1; k <= ncols; k++) printf " N = %d |", cols[k]
    printf "\n|---|"
    for (k = 1; k <= ncols; k++) printf "---|"
    printf "\n"
    for (v = 1; v <= count["variant"]; v++) {
        row = "| `" variants[v] "` |"; any = 0
        for (k = 1; k <= ncols; k++) {
            a = "chain-revolute-friction" SUBSEP variants[v] SUBSEP cols[k]
            b = "chain-revolute" SUBSEP variants[v] SUBSEP cols[k]
            if ((a in call) && (b in call)) {
                row = row sprintf(" %s (%.1f×) |", time_text(call[a]), call[a] / call[b]); any = 1
            } else {
                row = row " — |"
            }
        }
        if (any) print row
    }
}

# ---- scaling: ns per body up to N = 10 000 -------------------------------------------

function print_scaling(    f, v, i, key, row, a, b) {
    sort_numbers(scale_ns, count["scale_n"])
    printf "| family | variant |"
    for (i = 1; i <= count["scale_n"]; i++) printf " N = %d |", scale_ns[i]
    printf " t(%d) / t(%d) |\n|---|---|", scale_ns[count["scale_n"]], scale_ns[1]
    for (i = 1; i <= count["scale_n"] + 1; i++) printf "---|"
    printf "\n"
    for (f = 1; f <= count["scale_family"]; f++)
        for (v = 1; v <= count["scale_variant"]; v++) {
            row = "| " scale_families[f] " | `" scale_variants[v] "` |"
            for (i = 1; i <= count["scale_n"]; i++) {
                key = scale_families[f] SUBSEP scale_variants[v] SUBSEP scale_ns[i]
                row = row ((key in scale_per_body) ? sprintf(" %.0f |", scale_per_body[key]) : " — |")
            }
            a = scale_families[f] SUBSEP scale_variants[v] SUBSEP scale_ns[count["scale_n"]]
            b = scale_families[f] SUBSEP scale_variants[v] SUBSEP scale_ns[1]
            print row (((a in scale_call) && (b in scale_call)) ? sprintf(" %.2f |", scale_call[a] / scale_call[b]) : " — |")
        }
}

# ---- flops: operations per body against time per body ---------------------------------

function print_flops(    f, v, key, fkey, cycles) {
    print "| family | variant | ns per body | flops per body | flops per cycle |"
    print "|---|---|---:|---:|---:|"
    for (f = 1; f <= count["family"]; f++)
        for (v = 1; v <= count["variant"]; v++) {
            fkey = families[f] SUBSEP variants[v]
            if (!(fkey in flops_per_body)) continue
            key = families[f] SUBSEP variants[v] SUBSEP flops_n[fkey]
            if (!(key in per_body)) continue
            cycles = per_body[key] * mhz / 1000
            printf "| %s | `%s` | %.0f | %.0f | %.2f |\n", families[f], variants[v], per_body[key],
                   flops_per_body[fkey], flops_per_body[fkey] / cycles
        }
}

# Each method's time as a multiple of one bodies forward call at each N, one table per
# family; each method's worst deviation from the reference; then which method is fastest
# from which N, as print_crossover says it for the solvers.
function print_derivatives(    f, m, i, key, line, worst, dev_any, best, part) {
    if (!count["deriv_family"]) { print "Not measured: this run has no derivatives suite."; return }
    sort_numbers(deriv_ns_list, count["deriv_n"])
    line = "| family | N"
    for (m = 1; m <= count["deriv_method"]; m++) line = line " | `" deriv_methods[m] "`"
    print line " |"
    line = "|---|---"
    for (m = 1; m <= count["deriv_method"]; m++) line = line "|---"
    print line "|"
    for (f = 1; f <= count["deriv_family"]; f++)
        for (i = 1; i <= count["deriv_n"]; i++) {
            line = ""
            for (m = 1; m <= count["deriv_method"]; m++) {
                key = deriv_families[f] SUBSEP deriv_methods[m] SUBSEP deriv_ns_list[i]
                line = line " | " ((key in deriv_x) && measured(deriv_x[key]) ? sprintf("%.1f×", deriv_x[key]) : "–")
            }
            if (line ~ /×/) printf "| %s | %d%s |\n", deriv_families[f], deriv_ns_list[i], line
        }
    print ""
    for (m = 1; m <= count["deriv_method"]; m++) {
        worst = -1
        for (key in deriv_dev) {
            split(key, part, SUBSEP)
            if (part[2] == deriv_methods[m] && measured(deriv_dev[key]) && deriv_dev[key] > worst) worst = deriv_dev[key]
        }
        if (worst >= 0) { dev_any = 1; printf "- `%s`: largest relative deviation from the reference %.1e.\n", deriv_methods[m], worst }
    }
    if (!dev_any) print "- Accuracy: no reference method (`automatic` or `analytic`) in this build to measure against."
    print ""
    for (f = 1; f <= count["deriv_family"]; f++)
        for (i = 1; i <= count["deriv_n"]; i++) {
            best = 1e300
            for (m = 1; m <= count["deriv_method"]; m++) {
                key = deriv_families[f] SUBSEP deriv_methods[m] SUBSEP deriv_ns_list[i]
                if (key in deriv_ns) best = deriv_ns[key] + 0 < best ? deriv_ns[key] + 0 : best
            }
            for (m = 1; m <= count["deriv_method"]; m++) {
                key = deriv_families[f] SUBSEP deriv_methods[m] SUBSEP deriv_ns_list[i]
                if (key in deriv_ns) deriv_relative[deriv_families[f], deriv_ns_list[i], deriv_methods[m]] = deriv_ns[key] / best
            }
        }
    crossover_runs(deriv_families, count["deriv_family"], deriv_ns_list, count["deriv_n"],
                   deriv_methods, count["deriv_method"], deriv_relative)
}

function run_text(win, from, to, lo, hi) {
    return sprintf("`%s` at N = %s (runner-up %s)", win, from == to ? from : from "–" to,
                   hi < 0 ? "none" : lo == hi ? sprintf("%.2f× slower", lo) : sprintf("%.2f–%.2f× slower", lo, hi))
}

END {
    if (section == "targets") print_targets()
    else if (section == "percall") print_percall()
    else if (section == "ratio") print_ratio()
    else if (section == "phases") print_phases()
    else if (section == "batch") print_batch()
    else if (section == "crossover") print_crossover()
    else if (section == "friction") print_friction()
    else if (section == "scaling") print_scaling()
    else if (section == "flops") print_flops()
    else if (section == "derivatives") print_derivatives()
    else { print "summary.awk: unknown section '" section "'" > "/dev/stderr"; exit 2 }
}
