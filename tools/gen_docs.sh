#!/bin/sh
# gen_docs.sh — the generated pages of the manual: docs/kinds.md from `bench list --verbose` and
# docs/datasets.md from `bench datasets --verbose`, so the documented definitions, parameters,
# defaults and ranges are the ones the binary has.
#   tools/gen_docs.sh BENCH DIR          write DIR/kinds.md and DIR/datasets.md
#   tools/gen_docs.sh BENCH --check      regenerate into a temporary directory and compare with
#                                        docs/ beside this script: exit 1 with the diff and the
#                                        command to regenerate when they differ (the `docs` test)
# BENCH is the bench executable (build/harness/bench), not the ./bench launcher.
# Each kind's section of kinds.md opens with its pattern (`bench pattern`, causal where the kind
# has a causal mask) at n = $pattern_n, drawn into DIR/figures/patterns/KIND.png; a kind with no
# computed set (defined by its own reference) also gets its weights on the `local` dataset. The
# images are drawn when writing only; the page records the sha256 of the pattern's cells
# (`bench pattern --data`), so --check catches a changed pattern from the data, cheaply and
# exactly, without gnuplot (whose image bytes vary with its version and fonts).
# Each entry of the verbose listing is "  NAME  SUMMARY", then its definition lines (indented 6),
# then one line per parameter ("      NAME(padded to 14) = DEFAULT SUMMARY RANGE"), then one per
# weight ("      weight NAME [DIMS] (WHERE) SUMMARY": a table of weights). An entry that
# does not read that way is copied verbatim into a code block instead of being guessed at.
set -eu

usage() {
    echo "usage: tools/gen_docs.sh BENCH DIR | tools/gen_docs.sh BENCH --check" >&2
    exit 2
}
[ $# -eq 2 ] || usage
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if [ ! -f "$1" ] || [ ! -x "$1" ]; then
    echo "gen_docs.sh: $1 is not an executable" >&2
    exit 2
fi
bench=$(CDPATH= cd -- "$(dirname -- "$1")" && pwd)/$(basename -- "$1")   # meson passes it relative
shown=${bench#"$top/"}                                                 # as the regenerate command names it

# to_markdown < LISTING: the entries of the listing's first section as markdown.
to_markdown() {
    awk '
    function esc(s) {                       # plain text in a table cell or paragraph
        gsub(/\\/, "\\\\", s); gsub(/\*/, "\\*", s); gsub(/_/, "\\_", s)
        gsub(/\|/, "\\|", s); gsub(/</, "\\<", s)
        return s
    }
    function code(s) {                      # inline code in a table cell
        gsub(/\|/, "\\|", s)
        return "`" s "`"
    }
    # A parameter line: 6 spaces, a name padded to 14 columns, " = ", the default, the summary,
    # and the range at the end: [min, max], [min, max], integer or {choice, ...}.
    function parse_param(line,    s, name, pad, rest, def, cut, pos, i, range, summary) {
        s = substr(line, 7)
        if (!match(s, /^[a-z_][a-z0-9_]*/)) return 0
        name = substr(s, 1, RLENGTH)
        pad = (RLENGTH < 14) ? 14 - RLENGTH : 0
        rest = substr(s, RLENGTH + 1)
        if (substr(rest, 1, pad + 3) != sprintf("%" pad "s = ", "")) return 0
        rest = substr(rest, pad + 4)
        if (!match(rest, /^[^ ]+/)) return 0
        def = substr(rest, 1, RLENGTH)
        rest = substr(rest, RLENGTH + 1)
        sub(/^ +/, "", rest)
        if (rest ~ /\}$/) cut = " {"
        else if (rest ~ /\](, integer)?$/) cut = " ["
        else return 0
        pos = 0                             # the last " [" or " {": the range
        while ((i = index(substr(rest, pos + 1), cut)) > 0) pos += i
        if (pos == 0) return 0
        summary = substr(rest, 1, pos - 1)
        range = substr(rest, pos + 1)
        prow[np++] = "| " code(name) " | " code(def) " | " code(range) " | " esc(summary) " |"
        return 1
    }
    # A weight line (bench list --verbose): 6 spaces, "weight", its name, its dims "[a,b]", then
    # where they hold and its summary.
    function parse_weight(line,    s, wname, dims) {
        if (!match(line, /^      weight [a-z0-9_]+ \[[0-9,]+\] /)) return 0
        s = substr(line, 14)
        wname = substr(s, 1, index(s, " ") - 1)
        s = substr(s, length(wname) + 2)
        dims = substr(s, 1, index(s, " ") - 1)
        wrow[nw++] = "| " code(wname) " | " code(dims) " | " esc(substr(s, length(dims) + 2)) " |"
        return 1
    }
    function flush(    i) {
        if (name == "") return
        print ""
        print "## `" name "`"
        print ""
        if (!regular) {
            print "```text"
            for (i = 0; i < nraw; i++) print raw[i]
            print "```"
        } else {
            print esc(summary)
            if (nd > 0) {
                print ""
                print "```text"
                for (i = 0; i < nd; i++) print def[i]
                print "```"
            }
            if (np > 0) {
                print ""
                print "| parameter | default | range | meaning |"
                print "|---|---|---|---|"
                for (i = 0; i < np; i++) print prow[i]
            }
            if (nw > 0) {
                print ""
                print "Weights (inputs: given in the `--input` file as datasets of these names, else drawn from the kind'"'"'s seed):"
                print ""
                print "| weight | dims | meaning |"
                print "|---|---|---|"
                for (i = 0; i < nw; i++) print wrow[i]
            }
        }
        name = ""
    }
    BEGIN { section = 0; name = ""; n = 0 }
    section == 0 { if ($0 ~ /:$/) section = 1; next }      # the header line of the first section
    section == 2 { next }
    /^$/ { section = 2; next }                               # the first section ends
    /^  [^ ]/ {
        flush()
        name = $1
        summary = substr($0, 3 + length(name) + 1)
        sub(/^ +/, "", summary)
        regular = 1; nd = 0; np = 0; nw = 0; nraw = 0
        raw[nraw++] = substr($0, 3)
        names[n++] = name
        next
    }
    {
        if (name == "") { regular = 0; next }
        raw[nraw++] = substr($0, 3)
        if (substr($0, 1, 6) != "      ") { regular = 0; next }
        if (parse_weight($0)) next
        if (nw > 0) { regular = 0; next }     # anything after a weight: not the format
        if (parse_param($0)) next
        if (np > 0) regular = 0               # definition text after a parameter: not the format
        def[nd++] = substr($0, 7)
    }
    END {
        flush()
    }
    '
}

# The pattern figures: n, and parameters that make a pattern visible at that n for kinds whose
# defaults (sized for long sequences) would cover all of it; a kind not listed is drawn at its
# defaults.
pattern_n=256
pattern_params() {
    case $1 in
    window) echo window=32 ;;
    global) echo globals=4 window=16 ;;
    bigbird) echo block=16 ;;
    dilated) echo window=32 ;;
    random) echo block=16 random=4 ;;
    sink) echo sinks=4 window=32 ;;
    document) echo doc=64 ;;
    *) echo ;;
    esac
}

# patterns DIR: for each kind, $tmp/pattern_KIND.md (the lines its section opens with) and,
# when DIR is given, its images in DIR/figures/patterns/.
patterns() {
    for kind in $("$bench" complete kinds); do
        # shellcheck disable=SC2046 # the parameters are separate words
        set -- $(pattern_params "$kind")
        causal=1
        if ! "$bench" pattern "$kind" "$@" --n "$pattern_n" --causal 1 --data "$tmp/cells" \
            > /dev/null 2>&1; then
            causal=0
            "$bench" pattern "$kind" "$@" --n "$pattern_n" --causal 0 --data "$tmp/cells" > /dev/null
        fi
        [ -z "${draw:-}" ] || "$bench" pattern "$kind" "$@" --n "$pattern_n" --causal "$causal" \
            --out "$draw/figures/patterns/$kind.png" > /dev/null
        sum=$(sha256sum < "$tmp/cells" | cut -c1-16)
        cmd="bench pattern $kind${*:+ $*} --n $pattern_n --causal $causal"
        {
            printf '![%s: the scores it computes at n = %s](figures/patterns/%s.png)\n\n' \
                "$kind" "$pattern_n" "$kind"
            printf '`%s` (cells sha256 %s)\n' "$cmd" "$sum"
            if head -1 "$tmp/cells" | grep -q ' source none '; then
                [ -z "${draw:-}" ] || "$bench" pattern "$kind" --dataset local --n 64 \
                    --out "$draw/figures/patterns/${kind}_weights.png" > /dev/null
                printf '\nNo computed set: its weights on the `local` dataset instead (one-hot probes of v through its forward; `bench pattern %s --dataset local --n 64`):\n\n' "$kind"
                printf '![%s: its weights on local at n = 64](figures/patterns/%s_weights.png)\n' \
                    "$kind" "$kind"
            fi
        } > "$tmp/pattern_$kind.md"
    done
}

# page LISTING TITLE SOURCE USAGE NOTE [PATTERNS]: one page on stdout; with PATTERNS, each
# section opens with the lines of $tmp/pattern_NAME.md.
page() {
    to_markdown < "$1" > "$tmp/entries.md"
    printf '# %s\n\n' "$2"
    printf 'Generated from `%s` by `tools/gen_docs.sh`: do not edit by hand.\n' "$3"
    printf 'Regenerate with `tools/gen_docs.sh build/harness/bench docs` (the `docs` test of\n'
    printf '`./bench test` fails while this page differs from what the binary prints).\n\n'
    printf '%s\n%s\n\n' "$4" "$5"
    awk '/^## `/ { n = substr($0, 5, length($0) - 5); printf "%s[`%s`](#%s)", sep, n, n; sep = " · " }
         END { print "" }' "$tmp/entries.md"
    awk -v dir="${6:+$tmp}" '
        { print }
        dir != "" && /^## `/ {
            f = dir "/pattern_" substr($0, 5, length($0) - 5) ".md"
            if ((getline line < f) > 0) {
                print ""
                print line
                while ((getline line < f) > 0) print line
                close(f)
            }
        }' "$tmp/entries.md"
}

# write DIR: both pages into DIR (the pattern images too unless $draw is empty).
write() {
    [ -z "${draw:-}" ] || mkdir -p "$draw/figures/patterns"
    patterns
    "$bench" list --verbose > "$tmp/kinds.txt"
    "$bench" datasets --verbose > "$tmp/datasets.txt"
    page "$tmp/kinds.txt" "Kinds" "bench list --verbose" \
        'Measure one with `bench run KIND NAME=VALUE ...`; sweep kinds with `--kinds LIST` and a parameter with `--set NAME=V1,V2`.' \
        'How the engines compute them: [engines.md](engines.md). Adding a kind: [adding-a-kind.md](adding-a-kind.md). Each opens with the scores it computes (`bench pattern`, [cli.md](cli.md#bench-pattern)): query rows down, key columns across.' \
        patterns > "$1/kinds.md"
    page "$tmp/datasets.txt" "Datasets" "bench datasets --verbose" \
        'Choose with `--dataset NAME`; set a parameter with `NAME=VALUE` in `bench run` or sweep it with `--set NAME=V1,V2`.' \
        'Positions, notation, and the `needle` and `file` datasets in detail: [accuracy.md](accuracy.md#the-inputs).' \
        > "$1/datasets.md"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$2" = --check ]; then
    mkdir "$tmp/new"
    write "$tmp/new"
    status=0
    for f in kinds.md datasets.md; do
        if ! diff -u "$top/docs/$f" "$tmp/new/$f" > "$tmp/diff" 2>&1; then
            cat "$tmp/diff"
            echo "docs/$f is out of date with $shown." >&2
            status=1
        fi
    done
    if [ "$status" -ne 0 ]; then
        echo "Regenerate with:  tools/gen_docs.sh $shown docs   (from $top), and commit docs/" >&2
    else
        echo "docs/kinds.md and docs/datasets.md match $shown"
    fi
    exit "$status"
fi

mkdir -p "$2"
draw=$2
write "$2"
echo "wrote $2/kinds.md and $2/datasets.md"
