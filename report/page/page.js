/* page.js: the report's page (report/index.html, by report/page.sh) and mbd-bench compare's
 * (bench/compare_html.c). Charts are SVG drawn here, with no library: hover a point for its
 * value and spread, click a legend entry to hide it, double-click to show it alone. */
"use strict";
var mbdPage = (function () {
    var SVG = "http://www.w3.org/2000/svg";
    var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                   "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#637939", "#843c39", "#7b4173"];
    var VERDICT_COLOURS = {"faster": "#1a7f37", "slower": "#c62828", "within noise": "#9aa0a6"};
    var colours = {}, used = 0;

    /* The same series name has the same colour on every chart. */
    function colour(name) {
        if (!(name in colours))
            colours[name] = VERDICT_COLOURS[name] || PALETTE[used++ % PALETTE.length];
        return colours[name];
    }

    /* SIMD variants dashed, momentum ones dotted: solvers told apart without colour too. */
    function dash(name) {
        return /simd/.test(name) ? "6 3" : /momentum|mujoco/i.test(name) ? "2 3" : "";
    }

    function node(tag, attrs, parent, text) {
        var e = tag.indexOf("svg:") === 0 ? document.createElementNS(SVG, tag.slice(4)) :
            document.createElement(tag);
        for (var k in attrs || {})
            e.setAttribute(k, attrs[k]);
        if (text !== undefined)
            e.textContent = text;
        if (parent)
            parent.appendChild(e);
        return e;
    }

    function time(ns) {
        var units = ["ns", "µs", "ms", "s"], u = 0;
        for (; u < 3 && Math.abs(ns) >= 1000; u++)
            ns /= 1000;
        return ns.toPrecision(3) + " " + units[u];
    }

    /* Three significant digits; k, M, G from 10 000 on. */
    function number(x) {
        var prefixes = ["", "k", "M", "G", "T"], p = 0;
        for (; Math.abs(x) >= (p ? 1e3 : 1e4) && p < 4; p++)
            x /= 1000;
        return (Math.abs(x) < 1e-2 && x !== 0 ? x.toExponential(2) : String(+x.toPrecision(3))) + prefixes[p];
    }

    /* ---- scales and axes ---------------------------------------------------------- */

    function scale(lo, hi, log, a, b) {
        var f = log ? Math.log10 : function (v) { return v; };
        var l = f(lo), h = f(hi);
        if (h === l) { l -= 0.5; h += 0.5; }
        var pad = 0.04 * (h - l);
        l -= pad; h += pad;
        return function (v) { return a + (f(v) - l) / (h - l) * (b - a); };
    }

    function ticks(lo, hi, log) {
        var out = [];
        if (log) {
            var steps = Math.log10(hi / lo) < 2.5 ? [1, 2, 5] : [1];
            for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
                steps.forEach(function (s) {
                    var v = s * Math.pow(10, e);
                    if (v >= lo / 1.0001 && v <= hi * 1.0001) out.push(v);
                });
            return out.length >= 3 ? out : ticks(lo, hi, false).filter(function (v) { return v > 0; });
        }
        var span = hi - lo || Math.abs(hi) || 1, step = Math.pow(10, Math.floor(Math.log10(span / 5)));
        step *= span / step > 25 ? 5 : span / step > 10 ? 2 : 1;
        for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
            out.push(+v.toPrecision(12));
        return out;
    }

    /* ---- the line chart ------------------------------------------------------------- */

    /* Draws plot = {series: [{name, points: [{x, y, cv, label}]}], xLabel, yLabel, xLog, yLog,
     * format} into box, leaving out the names in hidden; returns the SVG. */
    function draw(box, plot, hidden, onLegend) {
        box.textContent = "";
        var width = Math.max(300, box.clientWidth || 640), narrow = width < 560;
        var height = Math.round(Math.min(440, Math.max(260, width * 0.58)));
        var m = {left: 62, right: narrow ? 12 : 120, top: 12, bottom: 42};
        var svg = node("svg:svg", {viewBox: "0 0 " + width + " " + height, width: "100%",
                                role: "img", "aria-label": plot.yLabel + " against " + plot.xLabel}, box);
        var shown = plot.series.filter(function (s) { return !hidden[s.name]; });
        var all = [];
        shown.forEach(function (s) {
            s.points.forEach(function (p) {
                if (isFinite(p.y) && (!plot.yLog || p.y > 0) && (!plot.xLog || p.x > 0)) all.push(p);
            });
        });
        var legend = node("div", {"class": "legend"}, box);
        plot.series.forEach(function (s) {
            var item = node("button", {type: "button", "class": hidden[s.name] ? "off" : "",
                                       title: "click: hide or show; double-click: this one alone"}, legend);
            node("span", {"class": "swatch", style: "border-color:" + colour(s.name) +
                          (dash(s.name) ? ";border-top-style:dashed" : "")}, item);
            item.appendChild(document.createTextNode(s.name));
            item.addEventListener("click", function () { onLegend(s.name, false); });
            item.addEventListener("dblclick", function () { onLegend(s.name, true); });
        });
        if (!all.length) {
            node("svg:text", {x: width / 2, y: height / 2, "text-anchor": "middle"}, svg, "no series shown");
            return svg;
        }
        var xs = all.map(function (p) { return p.x; }), ys = all.map(function (p) { return p.y; });
        var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
        var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
        if (plot.yZero && !plot.yLog) y0 = Math.min(0, y0);
        var X = scale(x0, x1, plot.xLog, m.left, width - m.right);
        var Y = scale(y0, y1, plot.yLog, height - m.bottom, m.top);
        var fmt = plot.format || number;
        var axes = node("svg:g", {"class": "axes"}, svg);
        var whole = xs.every(function (x) { return x === Math.round(x); });
        var xticks = ticks(x0, x1, plot.xLog).filter(function (v) { return !whole || v === Math.round(v); });
        xticks.forEach(function (v) {
            node("svg:line", {x1: X(v), x2: X(v), y1: m.top, y2: height - m.bottom, "class": "grid"}, axes);
            node("svg:text", {x: X(v), y: height - m.bottom + 15, "text-anchor": "middle"}, axes, number(v));
        });
        ticks(y0, y1, plot.yLog).forEach(function (v) {
            node("svg:line", {x1: m.left, x2: width - m.right, y1: Y(v), y2: Y(v), "class": "grid"}, axes);
            node("svg:text", {x: m.left - 5, y: Y(v) + 4, "text-anchor": "end"}, axes, fmt(v));
        });
        node("svg:text", {x: (m.left + width - m.right) / 2, y: height - 6, "text-anchor": "middle",
                       "class": "label"}, axes, plot.xLabel + (plot.xLog ? " (log)" : ""));
        node("svg:text", {x: 12, y: m.top + 2, "class": "label"}, axes, plot.yLabel + (plot.yLog ? " (log)" : ""));
        var ends = [], groups = [];
        shown.forEach(function (s) {
            var pts = s.points.filter(function (p) { return all.indexOf(p) >= 0; })
                .sort(function (a, b) { return a.x - b.x; });
            if (!pts.length) return;
            var g = node("svg:g", {"class": "series", "data-name": s.name}, svg);
            groups.push(g);
            if (!plot.dots)
                node("svg:path", {d: pts.map(function (p, k) { return (k ? "L" : "M") + X(p.x).toFixed(1) + " " + Y(p.y).toFixed(1); }).join(""),
                               stroke: colour(s.name), "stroke-dasharray": dash(s.name), fill: "none"}, g);
            pts.forEach(function (p) {
                p.sx = X(p.x); p.sy = Y(p.y); p.series = s.name; p.group = g;
                node("svg:circle", {cx: p.sx, cy: p.sy, r: plot.dots ? 3 : 2.5, fill: colour(s.name)}, g);
            });
            var last = pts[pts.length - 1];
            if (!narrow && !plot.dots) ends.push({y: last.sy, x: last.sx, name: s.name});
        });
        /* Each line named at its right end, labels pushed apart where they would overlap. */
        ends.sort(function (a, b) { return a.y - b.y; });
        for (var k = 1; k < ends.length; k++)
            ends[k].y = Math.max(ends[k].y, ends[k - 1].y + 11);
        ends.forEach(function (e) {
            node("svg:text", {x: width - m.right + 6, y: e.y + 4, fill: colour(e.name), "class": "end"}, svg, e.name);
        });
        hover(box, svg, all, groups, plot, width);
        return svg;
    }

    /* The nearest point to the pointer: its series highlighted, its value in a tip. */
    function hover(box, svg, points, groups, plot, width) {
        var tip = node("div", {"class": "tip", hidden: ""}, box);
        var fmt = plot.format || number;
        function move(event) {
            var r = svg.getBoundingClientRect(), k = width / r.width;
            var px = (event.clientX - r.left) * k, py = (event.clientY - r.top) * k, best = null, d = 900;
            points.forEach(function (p) {
                var e = (p.sx - px) * (p.sx - px) + (p.sy - py) * (p.sy - py);
                if (e < d) { d = e; best = p; }
            });
            groups.forEach(function (g) { g.classList.toggle("dim", !!best && g !== best.group); });
            if (!best) { tip.hidden = true; return; }
            tip.hidden = false;
            tip.textContent = (best.label || best.series) + "\n" + plot.xLabel + " " + number(best.x) + ": " +
                fmt(best.y) + (best.cv > 0 ? " ± " + (100 * best.cv).toFixed(1) + " % (cv)" : "");
            tip.style.left = Math.min(best.sx / k + 12, r.width - 180) + "px";
            tip.style.top = (best.sy / k + 12) + "px";
        }
        svg.addEventListener("pointermove", move);
        svg.addEventListener("pointerdown", move); /* a tap, on a touch screen */
        svg.addEventListener("pointerleave", function () {
            tip.hidden = true;
            groups.forEach(function (g) { g.classList.remove("dim"); });
        });
    }

    /* A chart with its controls: spec = {selects: {name: [values]}, plot(choice) -> plot},
     * redrawn on every change; the hidden series are kept by name across choices. */
    function panel(parent, spec) {
        var figure = node("figure", {"class": "chart"}, parent);
        var controls = node("div", {"class": "controls"}, figure);
        var box = node("div", {"class": "plot"}, figure);
        var choice = {}, hidden = {}, logs = {xLog: spec.xLog, yLog: spec.yLog};
        Object.keys(spec.selects || {}).forEach(function (name) {
            var values = spec.selects[name];
            if (!values.length) return;
            choice[name] = values[0];
            if (values.length < 2) return;
            var label = node("label", {}, controls, name + " ");
            var select = node("select", {}, label);
            values.forEach(function (v) { node("option", {value: v}, select, v); });
            select.addEventListener("change", function () { choice[name] = select.value; redraw(); });
        });
        ["xLog", "yLog"].forEach(function (axis) {
            if (logs[axis] === undefined) return;
            var label = node("label", {}, controls);
            var box2 = node("input", {type: "checkbox"}, label);
            box2.checked = logs[axis];
            label.appendChild(document.createTextNode(" log " + axis.charAt(0)));
            box2.addEventListener("change", function () { logs[axis] = box2.checked; redraw(); });
        });
        var all = node("button", {type: "button"}, controls, "show all");
        all.addEventListener("click", function () { hidden = {}; redraw(); });
        function legend(name, alone) {
            var names = current.series.map(function (s) { return s.name; });
            if (alone) {
                names.forEach(function (n) { hidden[n] = n !== name; });
            } else {
                hidden[name] = !hidden[name];
            }
            redraw();
        }
        var current;
        function redraw() {
            current = spec.plot(choice);
            current.xLog = logs.xLog; current.yLog = logs.yLog;
            draw(box, current, hidden, legend);
        }
        redraw();
        var width = box.clientWidth;
        window.addEventListener("resize", function () {
            if (box.clientWidth !== width) { width = box.clientWidth; redraw(); }
        });
        if (spec.caption) node("figcaption", {}, figure, spec.caption);
        return figure;
    }

    /* ---- the report's tables and charts --------------------------------------------- */

    /* A .dat table as objects keyed by its header's column names. */
    function rows(table) {
        if (!table) return [];
        return table.rows.map(function (r) {
            var o = {};
            table.columns.forEach(function (c, k) { o[c] = r[k]; });
            return o;
        });
    }

    function distinct(list, key) {
        var seen = [];
        list.forEach(function (r) { if (seen.indexOf(r[key]) < 0) seen.push(r[key]); });
        return seen;
    }

    function numeric(values) { return values.slice().sort(function (a, b) { return a - b; }).map(String); }

    /* Series named by key over the rows, x and y from columns (or functions). */
    function series(list, key, x, y, cv) {
        return distinct(list, key).map(function (name) {
            return {name: name, points: list.filter(function (r) { return r[key] === name; }).map(function (r) {
                return {x: r[x], y: typeof y === "function" ? y(r) : r[y], cv: cv ? r[cv] : 0};
            })};
        });
    }

    var CHARTS = {
        percall: function (t) {
            var list = rows(t.percall);
            return {selects: {family: distinct(list, "family"), measure: ["time per call", "time per body"]},
                    xLog: true, yLog: true, caption: "One call on one thread; median of the repetitions, cv in the tip.",
                    plot: function (c) {
                        var per = c.measure === "time per body";
                        return {series: series(list.filter(function (r) { return r.family === c.family; }),
                                               "variant", "n", per ? "ns_per_body" : "median_ns", "cv"),
                                xLabel: "N (bodies)", yLabel: c.measure, format: time};
                    }};
        },
        ratio: function (t) {
            var list = rows(t.ratio);
            return {selects: {measure: ["solve_ratio", "call_ratio"]}, xLog: true, yLog: false,
                    plot: function (c) {
                        return {series: series(list, "family", "n", c.measure), xLabel: "N (bodies)",
                                yLabel: "poisson-sweep / poisson-ldlt, " + c.measure.replace("_", " ")};
                    }};
        },
        phases: function (t) {
            var list = rows(t.phases);
            return {selects: {family: distinct(list, "family"), phase: ["step_ns", "solve_ns", "kinematics_ns", "integrator_ns"]},
                    xLog: false, yLog: true, plot: function (c) {
                        return {series: series(list.filter(function (r) { return r.family === c.family; }), "variant", "n", c.phase),
                                xLabel: "N (bodies)", yLabel: "one RK4 step: " + c.phase.replace("_ns", ""), format: time};
                    }};
        },
        batch: function (t) {
            var list = rows(t.batch);
            var measures = {"states per second": "states_per_second", "parallel efficiency": "efficiency",
                            "ns per body and state": "ns_per_body_state"};
            return {selects: {family: distinct(list, "family"), N: numeric(distinct(list, "n")),
                              K: numeric(distinct(list, "k")), measure: Object.keys(measures)},
                    xLog: false, yLog: false, caption: "One batch of K states over the threads (wall-clock).",
                    plot: function (c) {
                        var chosen = list.filter(function (r) {
                            return r.family === c.family && String(r.n) === c.N && String(r.k) === c.K;
                        });
                        return {series: series(chosen, "variant", "threads", measures[c.measure]), yZero: true,
                                xLabel: "threads", yLabel: c.measure};
                    }};
        },
        scaling: function (t) {
            var list = rows(t.scaling);
            return {selects: {family: distinct(list, "family")}, xLog: true, yLog: false, plot: function (c) {
                return {series: series(list.filter(function (r) { return r.family === c.family; }), "variant", "n", "ns_per_body", "cv"),
                        xLabel: "N (bodies)", yLabel: "time per body", format: time, yZero: true};
            }};
        },
        derivatives: function (t) {
            var list = rows(t.derivatives);
            var measures = {"multiple of one bodies forward call": "x_forward", "time per call": "median_ns",
                            "relative deviation from the reference": "max_rel_dev"};
            return {selects: {family: distinct(list, "family"), measure: Object.keys(measures)},
                    xLog: true, yLog: true, caption: "One call of each method on one thread; median of the repetitions.",
                    plot: function (c) {
                        return {series: series(list.filter(function (r) { return r.family === c.family; }),
                                               "variant", "n", measures[c.measure], "cv"),
                                xLabel: "N (bodies)", yLabel: c.measure, format: c.measure === "time per call" ? time : undefined};
                    }};
        },
        mujoco: function (t) {
            var list = rows(t.mujoco);
            return {selects: {family: distinct(list, "family")}, xLog: true, yLog: true, plot: function (c) {
                var mine = list.filter(function (r) { return r.family === c.family; });
                var peer = mine.filter(function (r, k) { return mine.findIndex(function (q) { return q.n === r.n; }) === k; });
                var s = series(mine, "variant", "n", "median_ns", "cv");
                s.push({name: "MuJoCo forward", points: peer.map(function (r) { return {x: r.n, y: r.mujoco_ns}; })});
                s.push({name: "MuJoCo factor+solve", points: peer.map(function (r) { return {x: r.n, y: r.mujoco_factor_solve_ns}; })});
                return {series: s, xLabel: "N (bodies)", yLabel: "time per call", format: time};
            }};
        }
    };

    /* The fastest variant at each family and N, a cell coloured by it; the tip lists all. */
    function crossover(parent, table) {
        var list = rows(table), families = distinct(list, "family"), ns = numeric(distinct(list, "n"));
        var figure = node("figure", {"class": "chart map"}, parent);
        var wrap = node("div", {"class": "scroll"}, figure);
        var grid = node("table", {"class": "map"}, wrap), head = node("tr", {}, node("thead", {}, grid));
        node("th", {}, head, "family \\ N");
        ns.forEach(function (n) { node("th", {}, head, n); });
        var body = node("tbody", {}, grid), winners = [];
        families.forEach(function (f) {
            var tr = node("tr", {}, body);
            node("th", {}, tr, f);
            ns.forEach(function (n) {
                var cell = list.filter(function (r) { return r.family === f && String(r.n) === n; })
                    .sort(function (a, b) { return a.median_ns - b.median_ns; });
                var td = node("td", {}, tr);
                if (!cell.length) return;
                var win = cell[0].variant;
                if (winners.indexOf(win) < 0) winners.push(win);
                td.style.background = colour(win);
                td.title = f + ", N = " + n + "\n" + cell.map(function (r) {
                    return r.variant + ": " + time(r.median_ns) + " (" + r.relative_to_fastest.toFixed(2) + "×)";
                }).join("\n");
                td.textContent = win.replace(/poisson-/, "p-").replace(/-momentum/, "-m");
            });
        });
        var legend = node("div", {"class": "legend"}, figure);
        winners.forEach(function (w) {
            var item = node("span", {"class": "key"}, legend);
            node("span", {"class": "swatch block", style: "background:" + colour(w)}, item);
            item.appendChild(document.createTextNode(w));
        });
        node("figcaption", {}, figure, "The fastest solver per family and N; hover (or tap) a cell for every solver's time.");
    }

    /* ---- Markdown, as much of it as report/README.md uses ---------------------------- */

    function escape(text) {
        return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    }

    function inline(text) {
        return escape(text)
            .replace(/`([^`]+)`/g, "<code>$1</code>")
            .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
            .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, function (all, label, href) {
                return /^(javascript|data):/i.test(href) ? label : "<a href=\"" + href + "\">" + label + "</a>";
            })
            .replace(/\b(PASS|MISS)\b/g, "<span class=\"$1\">$1</span>");
    }

    function table(lines, parent) {
        var cells = function (l) { return l.replace(/^\||\|$/g, "").split("|").map(function (c) { return c.trim(); }); };
        var wrap = node("div", {"class": "scroll"}, parent), t = node("table", {}, wrap);
        var tr = node("tr", {}, node("thead", {}, t));
        cells(lines[0]).forEach(function (c) { node("th", {}, tr).innerHTML = inline(c); });
        var body = node("tbody", {}, t);
        lines.slice(2).forEach(function (l) {
            var row = node("tr", {}, body);
            cells(l).forEach(function (c) { node("td", {}, row).innerHTML = inline(c); });
        });
    }

    /* Renders the Markdown text into parent; an image whose file names a chart of tables
     * becomes that chart, drawn here. */
    function markdown(text, parent, tables) {
        var lines = text.split("\n"), k = 0, section = parent;
        function block(test) {
            var out = [];
            while (k < lines.length && test(lines[k])) out.push(lines[k++]);
            return out;
        }
        while (k < lines.length) {
            var line = lines[k], m;
            if (!line.trim()) { k++; continue; }
            if ((m = /^(#{1,4}) (.*)/.exec(line))) {
                if (m[1].length <= 2) section = node("section", {}, parent);
                node("h" + m[1].length, {id: m[2].toLowerCase().replace(/[^a-z0-9]+/g, "-")}, section).innerHTML = inline(m[2]);
                k++;
            } else if (/^```/.test(line)) {
                k++;
                node("pre", {}, section, block(function (l) { return !/^```/.test(l); }).join("\n"));
                k++;
            } else if (/^\|/.test(line)) {
                table(block(function (l) { return /^\|/.test(l); }), section);
            } else if ((m = /^!\[([^\]]*)\]\(([^)]+)\)\s*$/.exec(line))) {
                var chart = m[2].replace(/\.(png|svg)$/, "");
                if (chart === "crossover" && tables.crossover) crossover(section, tables.crossover);
                else if (CHARTS[chart] && tables[chart]) panel(section, CHARTS[chart](tables));
                else node("img", {src: m[2].replace(/\.png$/, ".svg"), alt: m[1], loading: "lazy"}, node("figure", {}, section));
                k++;
            } else if (/^[-*] /.test(line)) {
                var ul = node("ul", {}, section);
                block(function (l) { return /^([-*] |  )/.test(l); }).forEach(function (l) {
                    if (/^[-*] /.test(l)) node("li", {}, ul).innerHTML = inline(l.slice(2));
                    else ul.lastChild.innerHTML += " " + inline(l.trim());
                });
            } else {
                node("p", {}, section).innerHTML = inline(block(function (l) {
                    return l.trim() && !/^(#|\||```|!\[|[-*] )/.test(l);
                }).join("\n"));
            }
        }
    }

    /* ---- the two pages ----------------------------------------------------------------- */

    function report(root, data) {
        markdown(data.readme, root, data.tables);
        if (data.tables.scaling) {
            var h = document.getElementById("linear-in-n-up-to-10-000-bodies");
            var at = node("div", {}, null);
            if (h) h.parentNode.insertBefore(at, h.nextSibling); else root.appendChild(at);
            panel(at, CHARTS.scaling(data.tables));
        }
    }

    var VERDICT_CLASS = {"faster": "PASS", "slower": "MISS", "within noise": ""};

    function compare(root, data) {
        node("h1", {}, root, "mbd-bench compare");
        var s = data.summary;
        node("p", {}, root).innerHTML = "A: <code>" + escape(data.a) + "</code>, B: <code>" + escape(data.b) +
            "</code>. " + data.pairs.length + " rows in both: <span class=PASS>" + s.faster + " faster</span>, " +
            "<span class=MISS>" + s.slower + " slower</span>, " + s.noise + " within noise; geometric mean of B/A " +
            (s.geomean === null ? "-" : s.geomean.toFixed(4)) + ". Faster or slower: the medians differ by more " +
            "than the larger of 2 % and three times the runs' combined relative spread.";
        var sorted = data.pairs.slice().sort(function (a, b) { return a[3] - b[3]; });
        panel(root, {xLog: false, yLog: true, caption: "Every row's B/A, sorted; hover for its name.",
                     plot: function () {
                         return {dots: true, xLabel: "rows, by B/A", yLabel: "B / A", series:
                                 ["faster", "within noise", "slower"].map(function (v) {
                                     return {name: v, points: sorted.map(function (p, k) {
                                         return {x: k + 1, y: p[3], cv: Math.hypot(p[6] || 0, p[7] || 0), label: p[0], verdict: p[5]};
                                     }).filter(function (p) { return p.verdict === v; })};
                                 })};
                     }});
        var filter = node("input", {type: "search", placeholder: "filter rows by name", "class": "filter"}, root);
        var wrap = node("div", {"class": "scroll"}, root), t = node("table", {"class": "sortable"}, wrap);
        var columns = ["name", "A", "B", "B/A", "noise", "verdict"], order = {key: 3, sign: 1};
        var tr = node("tr", {}, node("thead", {}, t)), body = node("tbody", {}, t);
        columns.forEach(function (c, k) {
            var th = node("th", {title: "sort"}, tr, c);
            th.addEventListener("click", function () {
                order = {key: k, sign: order.key === k ? -order.sign : 1};
                fill();
            });
        });
        function fill() {
            var needle = filter.value.toLowerCase();
            body.textContent = "";
            data.pairs.filter(function (p) { return p[0].toLowerCase().indexOf(needle) >= 0; })
                .sort(function (a, b) { return order.sign * (a[order.key] < b[order.key] ? -1 : a[order.key] > b[order.key] ? 1 : 0); })
                .forEach(function (p) {
                    var row = node("tr", {}, body);
                    node("td", {}, row, p[0]);
                    node("td", {}, row, time(p[1]));
                    node("td", {}, row, time(p[2]));
                    node("td", {}, row, p[3].toFixed(3));
                    node("td", {}, row, "±" + (100 * p[4]).toFixed(1) + " %");
                    node("td", {"class": VERDICT_CLASS[p[5]]}, row, p[5]);
                });
        }
        filter.addEventListener("input", fill);
        fill();
        [["a", data.only_a], ["b", data.only_b]].forEach(function (only) {
            if (!only[1].length) return;
            node("h2", {}, root, "Only in " + data[only[0]]);
            var ul = node("ul", {}, root);
            only[1].forEach(function (n) { node("li", {}, ul, n); });
        });
    }

    return {report: report, compare: compare};
})();
