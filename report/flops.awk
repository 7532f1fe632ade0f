# flops.awk DISASSEMBLY CALLGRIND_OUT...: the double-precision operations that each callgrind
# dump counted, one line per dump.
# DISASSEMBLY is objdump -d --no-show-raw-insn of the (static) binary (or the lines of it
# that hold arithmetic instructions); CALLGRIND_OUT is
# callgrind's output with --dump-instr=yes (one cost line per instruction address).

# Operations per execution of an instruction: 0 for anything that is not arithmetic.
function weight(mnemonic, operands,    w) {
    if (mnemonic ~ /^v?(add|sub|mul|div|sqrt)sd$/) w = 1
    else if (mnemonic ~ /^v?(add|sub|mul|div|sqrt)pd$/) w = 2
    else if (mnemonic ~ /^vfn?m(add|sub)[0-9]+sd$/) w = 2
    else if (mnemonic ~ /^vfn?m(add|sub)[0-9]+pd$/) w = 4
    else return 0
    if (mnemonic ~ /pd$/ && operands ~ /ymm/) w *= 2
    if (mnemonic ~ /pd$/ && operands ~ /zmm/) w *= 4
    return w
}

FNR == NR {
    if (match($0, /^ *[0-9a-f]+:\t/)) {
        n = split($0, field, "\t")
        split(field[n], word, " ")
        w = weight(word[1], field[n])
        if (w) ops[strtonum("0x" substr($1, 1, length($1) - 1))] = w
    }
    next
}
FNR == 1 {
    if (dumps++) print_total()
    total = 0; at = 0; call_cost = 0
}
function print_total() { printf "%.0f\n", total }
# The line after calls= is the call's inclusive cost: it moves the position only.
/^calls=/ { call_cost = 1; next }
/^(0x|\+|-|\*)/ {
    if ($1 ~ /^0x/) at = strtonum($1)
    else if ($1 ~ /^\+/) at += substr($1, 2)
    else if ($1 ~ /^-/) at -= substr($1, 2)
    if (call_cost) { call_cost = 0; next }
    if (at in ops) total += ops[at] * $3
}
END { if (dumps) print_total() }
