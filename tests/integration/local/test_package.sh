#!/bin/bash
# The .deb: `cpack -G DEB` in the build folder the tests run from
# ($DLAUNCH_BUILD_DIR, set by ctest; a clean Release build just for this
# test would take too long), installed with `dpkg -i` into a scratch root
# (`dpkg --root`: its own database, so nothing of this machine's changes).
# Then, from that root: dlaunch --version, man -w finds dlaunch(1) and a
# subcommand's page, the bash completion completes `dlaunch su` to submit,
# zsh's and fish's files and the docs are where those look; `dpkg -I` lists
# the Depends dpkg-shlibdeps found.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

for tool in cpack dpkg dpkg-deb dpkg-shlibdeps help2man man; do
  require_command "$tool"  # scripts/setup installs them (cmake, dpkg-dev, help2man, man-db)
done
build=${DLAUNCH_BUILD_DIR:-$(cd "$(dirname "$DLAUNCH")/.." && pwd)}
[ -f "$build/CPackConfig.cmake" ] || { say "no $build/CPackConfig.cmake: configure $build first"; exit 1; }

section "cpack -G DEB in $build"
# The package folder is the test's own; cpack installs into it from $build.
expect_exit 0 cpack -G DEB --config "$build/CPackConfig.cmake" -B "$TEST_DIR/package"
deb=$(find "$TEST_DIR/package" -maxdepth 1 -name 'dlaunch_*.deb' | head -n 1)
expect_true "a dlaunch_VERSION_ARCH.deb" test -f "$deb"
[ -f "$deb" ] || finish

section "dpkg -I: its Debian dependencies are declared"
info=$(dpkg -I "$deb")
depends=$(grep '^ Depends:' <<<"$info")
expect_contains "Package: dlaunch" "$info" " Package: dlaunch"
for library in libc6 libstdc++6 libfmt9 libssl3 libelf1 libgloo0; do
  expect_contains "Depends names $library" "$depends" "$library"
done
expect_contains "Recommends the tools it runs" "$info" " Recommends: python3, openssh-client, slurm-client"

section "dpkg -i into a scratch root"
root=$TEST_DIR/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# The scratch database knows none of the dependencies, which this machine
# has: --force-depends. --force-not-root lets a non-root user install there.
expect_exit 0 dpkg --root="$root" --log=/dev/null --force-depends --force-not-root -i "$deb"
expect_contains "dpkg lists it installed" "$(dpkg --root="$root" -l dlaunch 2>&1)" "ii  dlaunch"

section "from the scratch root"
expect_exit 0 "$root/usr/bin/dlaunch" --version
expect_contains "dlaunch --version" "$(cat "$OUT")" "dlaunch "
expect_exit 0 "$root/usr/bin/dlaunch" check --help
expect_contains "dlaunch check finds dlaunch-check beside it" "$(cat "$OUT")" "Usage: dlaunch run"
man_page() { MANPATH="$root/usr/share/man" man -w "$1" 2>&1; }
expect_contains "man -w dlaunch" "$(man_page dlaunch)" "$root/usr/share/man/man1/dlaunch.1"
expect_contains "man -w dlaunch-submit" "$(man_page dlaunch-submit)" "$root/usr/share/man/man1/dlaunch-submit.1"
completion=$root/usr/share/bash-completion/completions/dlaunch
expect_eq "its bash completion completes dlaunch su to submit" "submit" \
  "$(bash -c 'source "$1"; COMP_WORDS=(dlaunch su); COMP_CWORD=1; _dlaunch; echo "${COMPREPLY[*]}"' _ "$completion")"
expect_file "zsh's completion" "$root/usr/share/zsh/vendor-completions/_dlaunch"
expect_file "fish's completion" "$root/usr/share/fish/vendor_completions.d/dlaunch.fish"
expect_file "the README" "$root/usr/share/doc/dlaunch/README.md"
expect_file "docs/ARCHITECTURE.md" "$root/usr/share/doc/dlaunch/ARCHITECTURE.md"

finish
