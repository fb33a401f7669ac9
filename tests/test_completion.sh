#!/bin/bash
# The bash completion (tools/bench-completion.bash) against the built binary: what a user's TAB
# offers for commands, kinds, datasets, options and parameters, through the binary and the
# launcher. Usage: test_completion.sh BENCH_EXE COMPLETION_SCRIPT LAUNCHER
set -u
exe=$1 launcher=$3
# shellcheck disable=SC1090 # the script under test, given as an argument
source "$2"
failed=0

# check WANT LINE WORD...: TAB at the end of LINE offers every WORD (WANT=1) or none (WANT=0),
# as bash inserts it (after the last '=' or ':' of the word being completed).
check() {
    local want=$1 line=$2 w has
    shift 2
    COMP_LINE=$line COMP_POINT=${#line}
    _bench 2>/dev/null
    for w in "$@"; do
        has=0
        printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$w" && has=1
        if [ "$has" -ne "$want" ]; then
            echo "FAIL: '$line<TAB>' $([ "$want" -eq 1 ] && echo "does not offer" || echo offers)" \
                "'$w' (it offers: ${COMPREPLY[*]:-nothing})"
            failed=1
        fi
    done
}
offers() { check 1 "$@"; }
lacks() { check 0 "$@"; }

offers "$exe swe" sweep
offers "$exe " run sweep plot fit list datasets info --help --version
lacks "$exe " test format # the launcher's commands, not the binary's
offers "$exe --ver" --version
offers "$exe run win" window
offers "$exe " report export compare
offers "$exe export r.h5 --format " csv json markdown
lacks "$exe export r.h5 --format " png
offers "$exe export r.h5 --table s" samples
offers "$exe export r.h5 --format=j" json
offers "$exe plot r.h5 --format " png svg pdf
lacks "$exe plot r.h5 --format " csv
offers "$exe sweep --pass forward,tr" forward,train
offers "$exe run full --pass " forward backward train
offers "$exe run " full window linear
offers "$exe run full --thr" --threads
lacks "$exe run full --thr" --n --heads
offers "$exe run full --" --n --mode --dataset --threads --help
offers "$exe list --" --verbose --help
offers "$exe plot x.h5 --for" --format
offers "$exe run window win" window=
lacks "$exe run full nee" needles= # a parameter of needle, not of the default dataset
offers "$exe run full --dataset needle nee" needles=
offers "$exe run linear map=fa" favor
offers "$exe run full --mode d" decode
offers "$exe sweep --kinds full,win" full,window
offers "$exe sweep --kinds=win" window
offers "$exe sweep --dataset nee" needle
offers "$exe sweep --dataset gaussian,fi" gaussian,file=
offers "$exe sweep --kinds window --set win" window=
lacks "$exe sweep --kinds window --set " map=
offers "$exe sweep --kinds linear --set map=r" relu
offers "$exe " pattern
offers "$exe pattern win" window
offers "$exe pattern window win" window=
lacks "$exe pattern window " needles=
offers "$exe pattern --kinds window,big" window,bigbird
offers "$exe pattern --kinds window,bigbird glo" global_blocks=
offers "$exe pattern linear map=fa" favor
offers "$exe pattern window --" --kinds --n --causal --head --out --data
offers "$exe help " run sweep
offers "$launcher te" test
offers "$launcher " test format fuzz help
offers "$launcher test --s" --sanitize
offers "$launcher format -" --check --help
[ "$failed" -eq 0 ] && echo "completion: all cases pass"
exit "$failed"
