# bash completion for attnbench: the bench binary and the ./bench launcher.
#
# Enable it for this shell, or for every shell from ~/.bashrc:
#   source /path/to/attnbench/tools/bench-completion.bash
# (`meson install` also puts it where bash-completion finds it by itself:
# share/bash-completion/completions/bench.)
#
# The words come from bench itself (`bench complete commands | kinds | datasets | options CMD |
# values CMD OPTION | params NAME... | choices NAME PARAM`, printed from the tables the commands
# parse with: `values export --format` lists the export formats' registry), so the
# completion follows the binary it completes: a new kind, dataset, command or option needs no edit
# here. Through the launcher (./bench, or any path to it) the binary asked is the launcher's
# build/harness/bench, once built; the launcher's own commands (test, format, fuzz, help) are
# completed here.

# _bench_exe WORD: sets _bench_bin to the binary to ask for WORD (the command as typed; empty
# when there is none yet, e.g. the launcher before its first build) and _bench_launcher to 1 when
# WORD is the launcher.
_bench_exe() {
    local w=${1/#\~/$HOME}
    _bench_launcher=0 _bench_bin=""
    if [[ $w == */* && -f ${w%/*}/meson.build && -f ${w%/*}/harness/cli/main.c ]]; then
        _bench_launcher=1
        [[ -x ${w%/*}/build/harness/bench ]] && _bench_bin=${w%/*}/build/harness/bench
    elif [[ $w == */* ]]; then
        [[ -x $w ]] && _bench_bin=$w
    else
        _bench_bin=$(command -v -- "$w")
    fi
    return 0
}

# _bench_list CUR PREFIX WORD...: COMPREPLY gets PREFIX+WORD for each WORD that starts CUR
# (CUR without PREFIX), as a comma list when the value is one: "full,win" -> "full,window".
_bench_list() {
    local cur=$1 prefix=$2 head=""
    shift 2
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        cur=${cur##*,}
    fi
    local w
    for w in "$@"; do
        [[ $w == "$cur"* ]] && COMPREPLY+=("$prefix$head$w")
    done
}

_bench() {
    COMPREPLY=()
    local line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -ra words <<<"$line"
    local cur=""
    if [[ $line != *[[:space:]] && ${#words[@]} -gt 0 ]]; then
        cur=${words[-1]}
        unset 'words[-1]'
    fi
    _bench_exe "${words[0]}"
    local exe=$_bench_bin
    local nwords=${#words[@]}

    if ((nwords == 1)); then # the command
        local cmds=()
        [[ -n $exe ]] && mapfile -t cmds < <("$exe" complete commands 2>/dev/null)
        ((_bench_launcher)) && cmds+=(test format fuzz help)
        _bench_list "$cur" "" "${cmds[@]}" --help --version
        return 0
    fi
    local cmd=${words[1]}
    if [[ $cmd == help && $nwords == 2 ]]; then
        local cmds=()
        [[ -n $exe ]] && mapfile -t cmds < <("$exe" complete commands 2>/dev/null)
        ((_bench_launcher)) && cmds+=(test format fuzz)
        _bench_list "$cur" "" "${cmds[@]}"
        return 0
    fi
    case $cmd in # the launcher's commands
    test) _bench_list "$cur" "" --portable --sanitize --help; return 0 ;;
    format) _bench_list "$cur" "" --check --help; return 0 ;;
    fuzz) _bench_list "$cur" "" --help; return 0 ;;
    esac
    [[ -n $exe ]] || return 0

    # the command's options: "--name METAVAR" or "--name"
    local -A meta=()
    local name mv
    while read -r name mv; do
        [[ -n $name ]] && meta[$name]=${mv:-}
    done < <("$exe" complete options "$cmd" 2>/dev/null)

    # the words so far: the positionals, and the values of --kinds and --dataset
    local -a pos=()
    local kinds="" datasets="" i=2
    while ((i < nwords)); do
        local w=${words[i]}
        if [[ $w == --*=* ]]; then
            [[ ${w%%=*} == --kinds ]] && kinds=${w#*=}
            [[ ${w%%=*} == --dataset ]] && datasets=${w#*=}
        elif [[ $w == --* ]]; then
            if [[ -n ${meta[$w]:-} ]] && ((i + 1 < nwords)); then
                [[ $w == --kinds ]] && kinds=${words[i + 1]}
                [[ $w == --dataset ]] && datasets=${words[i + 1]}
                ((i++))
            fi
        else
            pos+=("$w")
        fi
        ((i++))
    done

    # a value: "--opt VALUE" or "--opt=VALUE"
    local opt="" prefix=""
    local prev=${words[nwords - 1]}
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*} prefix=${cur%%=*}=
        cur=${cur#*=}
    elif ((nwords > 2)) && [[ $prev == --* && -n ${meta[$prev]:-} ]]; then
        opt=$prev
    fi
    # bash splits words at '=' and ':' (COMP_WORDBREAKS): a reply is cut to what follows them
    local typed=$prefix$cur
    local cut=""
    [[ $typed == *[=:]* ]] && cut=${typed%"${typed##*[=:]}"}

    if [[ -n $opt ]]; then
        _bench_value "$exe" "$cmd" "$opt" "${meta[$opt]:-}" "$cur" "$prefix" "$kinds" "$datasets"
    elif [[ $cur == -* ]]; then
        _bench_list "$cur" "" "${!meta[@]}"
    elif [[ $cmd == run ]]; then
        _bench_run_word "$exe" "$cur" "$datasets" "${pos[@]}"
    elif [[ $cmd == pattern ]]; then
        _bench_pattern_word "$exe" "$cur" "$kinds" "${pos[@]}"
    elif [[ $cmd != list && $cmd != datasets && $cmd != info ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur") # a results file
        compopt -o filenames 2>/dev/null
    fi
    if [[ -n $cut ]]; then
        local k
        for k in "${!COMPREPLY[@]}"; do COMPREPLY[k]=${COMPREPLY[k]#"$cut"}; done
    fi
    return 0
}

# The value of option opt of command cmd (its metavar mv): kinds, datasets, modes, parameters,
# the values the command lists for it (bench complete values), files.
_bench_value() {
    local exe=$1 cmd=$2 opt=$3 mv=$4 cur=$5 prefix=$6 kinds=$7 datasets=$8
    local -a names=()
    case $opt in
    --kinds)
        mapfile -t names < <("$exe" complete kinds)
        _bench_list "$cur" "$prefix" "${names[@]}"
        ;;
    --dataset)
        if [[ ${cur##*,} == file=* ]]; then
            local head=${cur%"${cur##*,}"}file= f
            while read -r f; do COMPREPLY+=("$prefix$head$f"); done < <(compgen -f -- "${cur##*,file=}")
        else
            mapfile -t names < <("$exe" complete datasets)
            _bench_list "$cur" "$prefix" "${names[@]/#file/file=}"
            compopt -o nospace 2>/dev/null
        fi
        ;;
    --mode) _bench_list "$cur" "$prefix" prefill decode ;;
    --pass) _bench_list "$cur" "$prefix" forward backward train ;;
    --set)
        local -a owners=()
        IFS=, read -ra owners <<<"$kinds,$datasets"
        if [[ $cur == *=* ]]; then # the choices of a named parameter, if it has any
            local o
            for o in "${owners[@]}"; do
                [[ -n $o ]] && mapfile -t -O "${#names[@]}" names < <("$exe" complete choices "$o" "${cur%%=*}")
            done
            ((${#names[@]})) || return 0
            mapfile -t names < <(printf '%s\n' "${names[@]}" | sort -u)
            _bench_list "${cur#*=}" "$prefix${cur%%=*}=" "${names[@]}"
        else
            mapfile -t names < <("$exe" complete params "${owners[@]}")
            _bench_list "$cur" "$prefix" "${names[@]/%/=}"
            compopt -o nospace 2>/dev/null
        fi
        ;;
    *)
        mapfile -t names < <("$exe" complete values "$cmd" "$opt" 2>/dev/null)
        if ((${#names[@]})); then # a fixed list: --format, --table
            _bench_list "$cur" "$prefix" "${names[@]}"
            return 0
        fi
        case $mv in
        *DIR*) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        *FILE* | *PATH* | *.h5*) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        esac
        [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
        compopt -o filenames 2>/dev/null
        ;;
    esac
}

# bench run KIND [NAME=VALUE ...]: the kind first, then its parameters and the dataset's.
_bench_run_word() {
    local exe=$1 cur=$2 datasets=$3
    shift 3
    local -a names=()
    if (($# == 0)); then
        mapfile -t names < <("$exe" complete kinds)
        _bench_list "$cur" "" "${names[@]}"
    elif [[ $cur == *=* ]]; then
        mapfile -t names < <("$exe" complete choices "$1" "${cur%%=*}")
        [[ -n ${datasets:-} ]] || datasets=gaussian
        ((${#names[@]})) || mapfile -t names < <("$exe" complete choices "$datasets" "${cur%%=*}")
        _bench_list "${cur#*=}" "${cur%%=*}=" "${names[@]}"
    else
        mapfile -t names < <("$exe" complete params "$1" "${datasets:-gaussian}")
        _bench_list "$cur" "" "${names[@]/%/=}"
        compopt -o nospace 2>/dev/null
    fi
}

# bench pattern KIND [NAME=VALUE ...] or --kinds K1,K2 [NAME=VALUE ...]: the kind first (unless
# --kinds), then the parameters of the kinds drawn.
_bench_pattern_word() {
    local exe=$1 cur=$2 kinds=$3
    shift 3
    local -a names=() owners=()
    if [[ -n $kinds ]]; then
        IFS=, read -ra owners <<<"$kinds"
    elif (($# == 0)); then
        mapfile -t names < <("$exe" complete kinds)
        _bench_list "$cur" "" "${names[@]}"
        return 0
    else
        owners=("$1")
    fi
    if [[ $cur == *=* ]]; then
        local o
        for o in "${owners[@]}"; do
            mapfile -t -O "${#names[@]}" names < <("$exe" complete choices "$o" "${cur%%=*}")
        done
        _bench_list "${cur#*=}" "${cur%%=*}=" "${names[@]}"
    else
        mapfile -t names < <("$exe" complete params "${owners[@]}")
        _bench_list "$cur" "" "${names[@]/%/=}"
        compopt -o nospace 2>/dev/null
    fi
}

complete -F _bench bench # also ./bench and /path/to/bench: bash falls back to the last part
