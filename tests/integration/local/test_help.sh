#!/bin/bash
# Help that teaches, for every command `dlaunch help` lists (a new command
# is covered without touching this test): its --help starts with a usage
# line, groups its options under headings, shows typed placeholders (never
# CLI11's TEXT or INT) and ends with 3-5 examples that run dlaunch (some
# through srun, ssh or a pipe, as `dlaunch exec` only runs in srun tasks);
# `dlaunch help CMD` is `dlaunch CMD --help`; a typo in an option gets the
# nearest one and exit code 2 (a UsageError). And the bash completion script
# from `dlaunch completion bash` completes commands, options and values.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

section "dlaunch help lists the commands"
expect_exit 0 "$DLAUNCH" help
mapfile -t commands < <(awk '/^Commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}' "$OUT")
expect_true "dlaunch help lists run, submit and completion" \
  grep -qzE 'run.*submit.*completion' <<<"${commands[*]}"

# The longest long option in HELP: distinctive enough that a typo of it has
# one nearest option.
longest_option() {
  grep -oE '^  (-[A-Za-z], )?--[a-z][a-z0-9-]+' <<<"$1" | grep -oE -- '--[a-z0-9-]+' |
    awk '{ print length, $0 }' | sort -rn | head -n 1 | cut -d' ' -f2
}

# OPTION with its last two letters swapped: --nodes -> --nodse.
typo_of() {
  local option=$1
  local n=${#option}
  printf '%s%s%s\n' "${option:0:n-2}" "${option:n-1:1}" "${option:n-2:1}"
}

for command in "${commands[@]}"; do
  section "dlaunch $command --help"
  expect_exit 0 "$DLAUNCH" "$command" --help || continue
  help=$(cat "$OUT")
  expect_eq "it starts with its usage line" "Usage: " "$(head -c 7 <<<"$help")"
  expect_eq "no CLI11 placeholder (TEXT, INT)" "" "$(grep -wE 'TEXT|INT|UINT|FLOAT' <<<"$help")"
  headings=$(grep -cE '^[A-Z][A-Za-z ]*:$' <<<"$help")
  expect_true "its options are under headings (got $headings, with Examples:)" test "$headings" -ge 2
  expect_contains "a Help: heading" "$help" $'\nHelp:\n  -h, --help'
  examples=$(sed -n '/^Examples:$/,$p' <<<"$help")
  expect_true "it ends with an Examples: section" test -n "$examples"
  # Example commands are indented 2 spaces, their explanations 6.
  count=$(grep -E '^  [^ ]' <<<"$examples" | grep -cw dlaunch)
  starting=$(grep -cE '^  dlaunch ' <<<"$examples")
  expect_true "3 to 5 examples that run dlaunch (got $count)" test "$count" -ge 3 -a "$count" -le 5
  expect_true "one at least starts with dlaunch (got $starting)" test "$starting" -ge 1
  expect_eq "nothing but examples after Examples:" "" \
    "$(sed '1d' <<<"$examples" | grep -vE '^  [^ ]|^      [^ ]' || true)"

  expect_exit 0 "$DLAUNCH" help "$command"
  expect_eq "dlaunch help $command is dlaunch $command --help" "$help" "$(cat "$OUT")"

  option=$(longest_option "$help")
  typo=$(typo_of "$option")
  expect_exit 2 "$DLAUNCH" "$command" "$typo" || continue
  expect_contains "a typo ($typo) names the option meant" "$(cat "$ERR")" \
    "unknown option '$typo' for dlaunch $command. Did you mean '$option'?"
done

section "bash completion: source <(dlaunch completion bash)"
completes() {
  bash -c 'source <("$DLAUNCH" completion bash) || exit 1
    complete -p dlaunch >/dev/null || exit 1
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _dlaunch; echo "${COMPREPLY[*]}"' _ "$@"
}
expect_eq "complete -p dlaunch" "complete -o default -F _dlaunch dlaunch" \
  "$(bash -c 'source <("$DLAUNCH" completion bash); complete -p dlaunch')"
expect_eq "dlaunch su -> submit" "submit" "$(completes dlaunch su)"
expect_eq "dlaunch run --nproc-p -> --nproc-per-node" "--nproc-per-node" "$(completes dlaunch run --nproc-p)"
expect_eq "dlaunch submit --launch -> node task" "node task" "$(completes dlaunch submit --launch '')"
expect_eq "dlaunch completion -> the shells" "bash zsh fish" "$(completes dlaunch completion '')"
for command in "${commands[@]}"; do
  expect_contains "it knows $command" "$(completes dlaunch "${command:0:2}")" "$command"
done

section "zsh and fish read their scripts"
for shell in zsh fish; do
  if command -v "$shell" >/dev/null 2>&1; then
    "$DLAUNCH" completion "$shell" >"$TEST_DIR/completion.$shell"
    expect_true "$shell -n accepts dlaunch completion $shell" "$shell" -n "$TEST_DIR/completion.$shell"
  else
    say "  ($shell is not installed: its script is checked by the unit tests only)"
  fi
done

finish
