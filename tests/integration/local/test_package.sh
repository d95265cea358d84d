#!/bin/bash
# The .deb: `cpack -G DEB` in the build folder the tests run from
# ($DLAUNCH_BUILD_DIR, set by ctest; a clean Release build just for this
# test would take too long), installed with `dpkg -i` into a scratch root
# (`dpkg --root`: its own database, so nothing of this machine's changes).
# Then, from that root: dlaunch --version, man -w finds dlaunch(1) and a
# subcommand's page, the bash completion completes `dlaunch su` to submit,
# zsh's and fish's files and the docs are where those look; `dpkg -I` lists
# the Depends dpkg-shlibdeps found. What Debian's policy asks of every
# package: man pages gzipped, a machine-readable copyright file and a
# gzipped changelog; and lintian (when installed) finds no error or warning.
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
for library in libc6 libstdc++6 libfmt9 libsodium23 libelf1 libgloo0; do
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
expect_eq "man -w dlaunch" "$root/usr/share/man/man1/dlaunch.1.gz" "$(man_page dlaunch)"
expect_eq "man -w dlaunch-submit" "$root/usr/share/man/man1/dlaunch-submit.1.gz" "$(man_page dlaunch-submit)"
expect_contains "man shows dlaunch-submit(1)" \
  "$(MANPATH="$root/usr/share/man" MANWIDTH=80 man -P cat dlaunch-submit 2>&1)" "dlaunch submit [options]"
completion=$root/usr/share/bash-completion/completions/dlaunch
expect_eq "its bash completion completes dlaunch su to submit" "submit" \
  "$(bash -c 'source "$1"; COMP_WORDS=(dlaunch su); COMP_CWORD=1; _dlaunch; echo "${COMPREPLY[*]}"' _ "$completion")"
expect_file "zsh's completion" "$root/usr/share/zsh/vendor-completions/_dlaunch"
expect_file "fish's completion" "$root/usr/share/fish/vendor_completions.d/dlaunch.fish"
expect_file "the README" "$root/usr/share/doc/dlaunch/README.md"
expect_file "docs/ARCHITECTURE.md" "$root/usr/share/doc/dlaunch/ARCHITECTURE.md"

section "Debian's policy: gzipped man pages, copyright, changelog"
man1=$root/usr/share/man/man1
expect_eq "no man page is left uncompressed" "" "$(find "$man1" -name '*.1' -printf '%f ')"
for page in "$man1"/*.1.gz; do
  # gzip -9n: no file name in the header (FLG.FNAME, bit 3, clear), so a
  # rebuild gives the same bytes.
  expect_true "$(basename "$page") is whole gzip" gzip -t "$page"
  expect_eq "$(basename "$page") carries no name (gzip -n)" 0 $(($(od -An -tu1 -j3 -N1 "$page") & 8))
done
doc=$root/usr/share/doc/dlaunch
expect_file "the copyright file" "$doc/copyright"
copyright=$(cat "$doc/copyright" 2>&1)
expect_contains "copyright is machine-readable (format 1.0)" "$copyright" \
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
for field in "Upstream-Name: dlaunch" "Files: *" "Copyright: " "License: "; do
  expect_contains "copyright has $field" "$copyright" "$field"
done
version=$("$root/usr/bin/dlaunch" --version)
expect_eq "changelog.gz names this version" "dlaunch (${version#dlaunch }) unstable; urgency=medium" \
  "$(zcat "$doc/changelog.gz" 2>&1 | head -n 1)"

if command -v lintian >/dev/null; then
  section "lintian"
  # Root is fine for a read-only check; lintian only says it would rather not.
  lintian_tags=$(lintian "$deb" 2>&1 | grep -v 'running with root privileges')
  expect_eq "lintian finds no error or warning" "" "$(grep -E '^[EW]: ' <<<"$lintian_tags")"
else
  say "lintian is not installed: its check is left out (scripts/setup installs it)"
fi

finish
