#!/bin/bash
# Differential test: `dlaunch hostlist` against Slurm's own scontrol.
#
# Several hundred pseudo-random expressions and host sets (fixed seed, so a
# failure reproduces) must give byte-identical output from
#   $DLAUNCH hostlist expand EXPR    and  scontrol show hostnames EXPR
#   $DLAUNCH hostlist compress HOSTS and  scontrol show hostlist HOSTS
# and first/count must agree with the head and length of scontrol's list.
# Invalid expressions must be refused by both (scontrol exits 0 but says
# "Invalid hostlist" on stderr). Inputs where dlaunch differs on purpose
# (see src/slurm/hostlist.h) are checked on dlaunch's side only.
#
# Environment (set by ctest): DLAUNCH, the binary. Exit 77 (skip) without
# scontrol 22.05. HOSTLIST_DIFF_SEED and HOSTLIST_DIFF_CASES vary the run.
set -u

if ! command -v scontrol >/dev/null 2>&1; then
  echo "SKIP: scontrol not installed"
  exit 77
fi
if [[ -z "${DLAUNCH:-}" || ! -x "$DLAUNCH" ]]; then
  echo "FAIL: DLAUNCH must name the dlaunch binary (got '${DLAUNCH:-}')"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# scontrol will not start, even for these local commands, without a
# configuration; it never contacts the controller named here.
cat >"$work/slurm.conf" <<'EOF'
ClusterName=t
SlurmctldHost=localhost
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1
EOF
export SLURM_CONF="$work/slurm.conf"

version=$(scontrol --version 2>&1)
if [[ "$version" != "slurm"*" 22.05."* ]]; then
  echo "SKIP: the expected output is that of Slurm 22.05, found '$version'"
  exit 77
fi
if [[ "$(scontrol show hostnames 'n[1-2]' 2>&1)" != $'n1\nn2' ]]; then
  echo "SKIP: scontrol does not run here: $(scontrol show hostnames 'n[1-2]' 2>&1 | head -3)"
  exit 77
fi

RANDOM=${HOSTLIST_DIFF_SEED:-20240522}
cases=${HOSTLIST_DIFF_CASES:-160}

total=0
identical=0
failures=0

fail() {
  failures=$((failures + 1))
  if ((failures <= 20)); then
    echo "MISMATCH: $*"
  fi
}

# --- Running both tools ------------------------------------------------------

# The whole of FILE, byte for byte, into REPLY (builtins only: forks are
# what makes this test slow).
slurp() {
  REPLY=
  IFS= read -r -d '' REPLY <"$1"
}

# Runs scontrol show KIND ARG; sets s_ok (1 unless it said "Invalid hostlist").
run_scontrol() {
  scontrol show "$1" "$2" >"$work/s.out" 2>"$work/s.err"
  s_ok=1
  [[ -s "$work/s.err" ]] || return 0
  slurp "$work/s.err"
  [[ "$REPLY" == *"Invalid hostlist"* ]] && s_ok=0
}

# Runs dlaunch hostlist ACTION -- ARG; sets d_ok (1 when it exited 0).
run_dlaunch() {
  d_ok=1
  "$DLAUNCH" hostlist "$1" -- "$2" >"$work/d.out" 2>"$work/d.err" || d_ok=0
}

describe() {
  printf '%s | scontrol: %s%s | dlaunch: %s%s' "$1" \
    "$(head -c 300 "$work/s.out" | tr '\n' ' ')" "$(head -c 200 "$work/s.err" | tr '\n' ' ')" \
    "$(head -c 300 "$work/d.out" | tr '\n' ' ')" "$(head -c 200 "$work/d.err" | tr '\n' ' ')"
}

same_output() {
  slurp "$work/s.out"
  local expected=$REPLY
  slurp "$work/d.out"
  [[ "$REPLY" == "$expected" ]]
}

# Both must accept EXPR and print the same bytes, or both must refuse it.
compare() {  # ACTION KIND EXPR
  total=$((total + 1))
  run_scontrol "$2" "$3"
  run_dlaunch "$1" "$3"
  if ((s_ok != d_ok)); then
    fail "$1 accepted by $( ((s_ok)) && echo scontrol || echo dlaunch) only: $(describe "$3")"
  elif ((s_ok)) && ! same_output; then
    fail "$1 output differs: $(describe "$3")"
  else
    identical=$((identical + 1))
    return 0
  fi
  return 1
}

# compare_expansion EXPR [CHECK]: expand, then, unless CHECK is 0, first and
# count against the head and length of scontrol's list.
compare_expansion() {
  compare expand hostnames "$1" || return
  ((s_ok && ${2:-1})) || return
  local lines
  mapfile -t lines <"$work/s.out"
  if ((${#lines[@]} > 0)); then
    run_dlaunch first "$1"
    slurp "$work/d.out"
    [[ $d_ok == 1 && "$REPLY" == "${lines[0]}"$'\n' ]] ||
      fail "first: $1 | scontrol's first: ${lines[0]} | dlaunch: $(cat "$work/d.out" "$work/d.err")"
  fi
  run_dlaunch count "$1"
  slurp "$work/d.out"
  [[ $d_ok == 1 && "$REPLY" == "${#lines[@]}"$'\n' ]] ||
    fail "count: $1 | scontrol lists ${#lines[@]} | dlaunch: $(cat "$work/d.out" "$work/d.err")"
}

# --- Generators (they set REPLY; no subshells, so the seed fixes the run) -----

pick() {  # pick WORD... -> REPLY
  local words=("$@")
  REPLY=${words[RANDOM % ${#words[@]}]}
}

# A number near the places where padding and digit counts change, sometimes
# zero padded: 7, 010, 99, 0100, 1000, ...
gen_number() {
  local base value
  pick 0 0 0 7 95 995 9995
  base=$REPLY
  value=$((base + RANDOM % 8))
  if ((RANDOM % 3 == 0)); then
    printf -v REPLY '%0*d' $((${#value} + 1 + RANDOM % 2)) "$value"
  else
    REPLY=$value
  fi
}

# LOW or LOW-HIGH, HIGH sometimes padded too (Slurm ignores HIGH's padding).
gen_range() {
  gen_number
  local low=$REPLY high
  ((RANDOM % 3 == 0)) && return
  high=$((10#$low + RANDOM % 12))
  ((RANDOM % 4 == 0)) && printf -v high '%0*d' $((${#high} + 1)) "$high"
  REPLY="$low-$high"
}

gen_group() {
  local group="" i n=$((1 + RANDOM % 3))
  for ((i = 0; i < n; i++)); do
    gen_range
    group+="${group:+,}$REPLY"
  done
  REPLY="[$group]"
}

gen_token() {
  local token groups i
  pick n node rack gpu- c1n x.y "" n
  token=$REPLY
  if ((RANDOM % 4 == 0)); then  # a plain name: n, n07, n1a, c1n9
    case $((RANDOM % 3)) in
      0) gen_number; token+=$REPLY ;;
      1) gen_number; token+="${REPLY}a" ;;
      2) [[ -z "$token" ]] && token=h ;;
    esac
    REPLY=$token
    return
  fi
  pick 1 1 1 1 2 2 2 3
  groups=$REPLY
  for ((i = 0; i < groups; i++)); do
    if ((i > 0)); then
      pick -node n "" 0 - b s1
      token+=$REPLY
    fi
    gen_group
    token+=$REPLY
  done
  REPLY=$token
}

gen_expression() {
  local expression="" i n=$((1 + RANDOM % 3)) separator
  for ((i = 0; i < n; i++)); do
    gen_token
    pick , , , " "
    separator=$REPLY
    expression+="${expression:+$separator}$REPLY"
  done
  REPLY=$expression
}

# A host list the way schedulers hand them out: runs of numbers, with
# repeats, steps back, padding changes and the odd other name.
gen_hosts() {
  local hosts="" prefix number width i n=$((1 + RANDOM % 20)) host
  pick n node rack1-node "" c1n
  prefix=$REPLY
  pick 0 1 7 8 9 97 98 99 998
  number=$REPLY
  width=0
  for ((i = 0; i < n; i++)); do
    case $((RANDOM % 12)) in
      0) pick n node rack1-node "" c1n; prefix=$REPLY ;;
      1) ;;                                   # the same number again
      2) number=$((number > 0 ? number - 1 : 0)) ;;
      3) number=$((number + 2 + RANDOM % 5)) ;;
      4) pick 0 0 2 3 4; width=$REPLY ;;      # padding changes
      *) number=$((number + 1)) ;;
    esac
    printf -v host '%s%0*d' "$prefix" "$width" "$number"
    case $((RANDOM % 15)) in
      0) host="${prefix:-h}" ;;                # no number
      1) host="${host}a" ;;                    # number in the middle
      2) gen_token; host=$REPLY ;;             # an expression among the names
    esac
    hosts+="${hosts:+,}$host"
  done
  REPLY=$hosts
}

# A valid expression with one fault that scontrol 22.05 refuses as well.
gen_invalid() {
  local fault
  pick "n[5-3]" "n[]" "n[,1]" "n[1,]" "n[1,,3]" "n[a-b]" "n[a]" "n[1a]" "n[1-2x]" "n[-3]" \
    "n[1--3]" "n[1-2-3]" "n[0x1-3]" "n[1.5]" "n[1-3:2]" "n[-]" "a[1,b]" "n[[1-3]]" "n[1-3]]" \
    "n[1-2]a" "n[1-2]-ib0" "n[1]x[1-2]y" "rack[1-2]-node[3-1]" "a[]b[1]" "n[01-3]]" "[9-1]"
  fault=$REPLY
  gen_expression
  if ((RANDOM % 2)); then REPLY="$REPLY,$fault"; else REPLY="$fault,$REPLY"; fi
}

# --- The cases -------------------------------------------------------------

fixed_expressions=(
  'rack[1-2]-node[01-03]' 'n[1-10]' 'n[01-10]' 'n[001-3]' 'n[1-010]' 'n[9-010]' 'n[0-3]'
  'n[00-3]' 'n[1-3,5,7-8]' 'n[3,1,2]' 'n1,n2,n3,n01,n3' 'n[1-3]x[1-2]' 'a[1-2][3-4]'
  '[1-2][1-2]' 'a[1-2]b[3-4]c[5-6]d[7-8]' 'a[1,3-4]b[7,5]c[1-2,0]' 'n1a,n2a' 'host' 'n01'
  'n1 n2' ',a,' 'a,,b' '' 'n[1-65536]' 'n[4294967290-4294967300]' 'n[1234567890123-1234567890125]'
  # Slurm's limit of 65536 hosts in one range (MAX_RANGE), on both sides of
  # it; several ranges or groups may name more together.
  'n[0-65535]' 'n[1-65537]' 'n[0-65536]' 'n[0-99999999999]' 'n[7,1-65537]' 'a[1-2]b[0-65536]'
  'a[1-40000],b[1-40000]' 'n[1-40000,40001-80000]' 'n[1-65536]x[1-2]'
)
fixed_host_sets=(
  'n1,n2,n3,n01,n3' 'rack1-node01,rack1-node02,rack2-node01' 'n3,n2,n1' 'n1,n1' 'n9,n10'
  'n09,n10' 'n9,n010' 'n99,n100' 'n099,n100' 'n0099,n100' 'n[8-9],n[010-011]' 'n[9-010],n11'
  'n[009-010],n11' 'n[1-3],n[4-5]' 'n[1-3],n[3-5]' 'a,b,a' 'x,x1,x2' 'x1,x,x2' 'a[1][3],a14'
  'n[1-65536],n65537' 'n[1-65536],n[65537-70000]'
  'n1[1-2],n13' '1,2,3' '01,02' 'a-1,a-2' '' 'n[1-3,4-5]' 'n05,n6' 'n[098-100],n101'
)
# Inputs where dlaunch departs from scontrol on purpose (src/slurm/hostlist.h):
# scontrol's answers come from lenient C parsing; dlaunch refuses them.
dlaunch_refuses=(
  'n[' 'n[1-3' 'n]' 'n1-3]' 'n]a[1-2]' 'a[1-2]b[' 'n[ 1]' 'n[1 - 2]' 'n[+1-2]' 'n[1-]'
  'n[3a-4]' 'n[99999999999999999999]'
)

for expression in "${fixed_expressions[@]}"; do compare_expansion "$expression"; done
for hosts in "${fixed_host_sets[@]}"; do compare compress hostlist "$hosts"; done

for ((k = 0; k < cases; k++)); do
  gen_expression
  expression=$REPLY
  compare_expansion "$expression" $((k % 4 == 0))  # every process start counts: sample
  compare compress hostlist "$expression"
  gen_hosts
  hosts=$REPLY
  compare compress hostlist "$hosts"
done

invalid=0
for ((k = 0; k < cases / 4; k++)); do
  gen_invalid
  expression=$REPLY
  invalid=$((invalid + 1))
  compare expand hostnames "$expression" && ((s_ok)) && fail "expected both to refuse: $expression"
done

refused=0
for expression in "${dlaunch_refuses[@]}"; do
  if "$DLAUNCH" hostlist expand -- "$expression" >/dev/null 2>&1; then
    fail "dlaunch accepted malformed '$expression'"
  else
    refused=$((refused + 1))
  fi
done
# count and first never expand, so compare_expansion does not ask them about
# refused lists: they must refuse a range over Slurm's limit too.
for expression in 'n[1-65537]' 'n[0-99999999999]' 'a[1-2]b[0-65536]'; do
  for action in count first; do
    if "$DLAUNCH" hostlist "$action" -- "$expression" >"$work/d.out" 2>"$work/d.err" ||
      ! grep -q 'of more than 65536 hosts' "$work/d.err"; then
      fail "dlaunch $action accepted '$expression': $(cat "$work/d.out" "$work/d.err")"
    fi
  done
done

echo "hostlist scontrol diff: $total expressions, $identical identical" \
  "($invalid invalid ones refused by both; $refused malformed ones refused by dlaunch alone)"
if ((failures > 0)); then
  echo "FAIL: $failures mismatches"
  exit 1
fi
exit 0
