#!/bin/sh
# floors.sh BUILD: the floors of algorithms/ checked from the library's objects. Each folder
# is a floor; algorithms/README.md lists them in its map, ground floor first. From the
# symbols that `nm` sees, a folder whose object leaves a symbol undefined that another
# folder's object defines calls that folder: every such call must go down a floor (so
# that no two folders call each other, round any circle). Prints the calls between
# folders; fails, naming the caller, the callee and the symbol, on any call up or across.
set -eu
build=${1:?usage: floors.sh BUILD}
order=$(sed -n 's/^| `\([a-z_]*\)\/` |.*/\1/p' "$(dirname "$0")/README.md" | tr "\n" " ")
[ -n "$order" ] || { echo "floors.sh: no floors in algorithms/README.md's map" >&2; exit 1; }
for folder in $order; do
  for object in "$build/algorithms/$folder"/*.o; do
    [ -e "$object" ] || continue
    nm -g "$object" | sed "s|^|$folder ${object##*/} |"
  done
done | awk -v order="$order" '
  BEGIN { n = split(order, names, " "); for (k = 1; k <= n; k++) floor[names[k]] = k }
  NF == 5 && $4 ~ /^[TDBRCVWGS]$/ { home[$5] = $1 }
  NF == 4 && $3 == "U" { caller[++calls] = $1; file[calls] = $2; symbol[calls] = $4 }
  END {
    for (k = 1; k <= calls; k++) {
      callee = home[symbol[k]]
      if (callee == "" || callee == caller[k]) continue
      edge = caller[k] " -> " callee
      if (!(edge in seen)) { seen[edge] = symbol[k]; edges[++count] = edge }
      if (floor[callee] >= floor[caller[k]]) {
        printf "floors.sh: %s/%s calls %s (%s/), not a floor below\n", caller[k],
               file[k], symbol[k], callee > "/dev/stderr"
        bad++
      }
    }
    for (k = 1; k <= count; k++) printf "  %s (%s, ...)\n", edges[k], seen[edges[k]]
    printf "floors (ground first): %s: %d calls between folders, %d up or across\n",
           order, count, bad
    exit bad > 0
  }'
