#!/usr/bin/env bash
# page.sh RESULTS_DIR: report/index.html, the report as one self-contained page: its text
# (report/README.md, written first), the charts' tables RESULTS_DIR/dat/*.dat as compact JSON
# (the page draws them, report/page/page.js), the style and the script, all inline.
set -euo pipefail
cd "$(dirname "$0")/.."

dat=${1:?usage: report/page.sh RESULTS_DIR}/dat

# One .dat table as {"columns": [...], "rows": [[...], ...]}, numbers as numbers; the
# header's names end where a parenthesis (a note) begins.
table_json() {
    awk 'function value(v) {
             if (v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) return sprintf("%.10g", v + 0)
             gsub(/["\\]/, "\\\\&", v); return "\"" v "\"" }
         NR == 1 { sub(/^# */, ""); printf "{\"columns\": ["
                   for (k = 1; k <= NF && $k !~ /^\(/; k++) printf "%s\"%s\"", (k > 1 ? ", " : ""), $k
                   printf "], \"rows\": ["; next }
         /^#/ || !NF { next }
         { printf "%s[", (rows++ ? ", " : "")
           for (k = 1; k <= NF; k++) printf "%s%s", (k > 1 ? ", " : ""), value($k)
           printf "]" }
         END { print "]}" }' "$1"
}

tables() {
    local sep=""
    printf '{'
    for t in percall ratio phases batch crossover scaling mujoco derivatives; do
        [ -s "$dat/$t.dat" ] || continue
        printf '%s"%s": ' "$sep" "$t"
        table_json "$dat/$t.dat"
        sep=", "
    done
    printf '}'
}

# The data, with "</" written "<\/" so that nothing in it can close the script.
data() { jq -c -n --rawfile readme report/README.md --slurpfile tables <(tables) \
            '{readme: $readme, tables: $tables[0]}' | sed 's#</#<\\/#g'; }

{
    printf '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    printf '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    printf '<title>mbdbench: benchmark report</title>\n<style>\n'
    cat report/page/page.css
    printf '</style>\n</head>\n<body>\n<main id="page"></main>\n<script>\n'
    cat report/page/page.js
    printf '</script>\n<script>mbdPage.report(document.getElementById("page"), '
    data
    printf ');</script>\n</body>\n</html>\n'
} > report/.index.html.tmp
sync report/.index.html.tmp
mv report/.index.html.tmp report/index.html
echo "page.sh: report/index.html written" >&2
