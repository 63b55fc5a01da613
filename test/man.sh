#!/usr/bin/env bash
# test-parallel: yes
# The manual pages: every page in docs/ renders without a groff warning;
# every command `perfring --help` lists has its page perfring-COMMAND(1),
# and the index pages name every page there is (perfring(1) each
# perfring-*.1, libperfring(3) each perfring_*.3), so that a new command
# is a new file plus a line in the index.  (That `man` finds them after
# `make install`: test/install.sh.)
set -u
. "$(dirname "$0")/lib.sh"
top=$(realpath "$(dirname "$0")/..")
cli=$(realpath "${PERFRING_CLI:-$top/build/perfring}")
make_tmp
need_cmd groff groff-base
[ -x "$cli" ] || fail "no $cli: make first"
cd "$top/docs" || fail "no docs/"

pages=(*.1 *.3)
[ "${#pages[@]}" -gt 2 ] || fail "no manual pages in docs/"
for p in "${pages[@]}"; do
	groff -man -ww -z "$p" 2>"$tmp/warn" || fail "$p: groff failed: $(cat "$tmp/warn")"
	[ -s "$tmp/warn" ] && fail "$p renders with warnings: $(head -5 "$tmp/warn")"
	grep -q '^\.SH NAME' "$p" || fail "$p has no NAME section"
done
echo "${#pages[@]} pages render without warnings (groff -man -ww)"

# The commands of perfring --help: the first word of each line between
# "commands:" and the blank line after it ("help" is the help itself).
"$cli" --help >"$tmp/help" 2>&1 || fail "perfring --help: exit $?"
awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' "$tmp/help" |
	sort -u | grep -vx help >"$tmp/commands"
[ "$(wc -l <"$tmp/commands")" -ge 10 ] || fail "perfring --help lists only: $(tr '\n' ' ' <"$tmp/commands")"
while read -r c; do
	[ -f "perfring-$c.1" ] || fail "perfring $c (in perfring --help) has no page docs/perfring-$c.1"
done <"$tmp/commands"
echo "$(wc -l <"$tmp/commands") commands of perfring --help, each with its page"

# The indexes name every page.
for p in perfring-*.1; do
	name=${p%.1}
	grep -q "^\.BR ${name//-/\\\\-} (1)" perfring.1 || fail "perfring(1) does not name $name(1)"
done
for p in perfring_*.3; do
	name=${p%.3}
	grep -q "^\.BR $name (3)" libperfring.3 || fail "libperfring(3) does not name $name(3)"
done
# man 3 FUNCTION links each name of a NAME line to its page (make
# install): a name on two pages would lead to one of them only.
for p in *.3; do sed -n '/^\.SH NAME/{n;s/ \\-.*//;s/,//g;p;}' "$p"; done | tr ' ' '\n' | grep . | sort | uniq -d >"$tmp/dup"
[ -s "$tmp/dup" ] && fail "named on two library pages: $(tr '\n' ' ' <"$tmp/dup")"
echo "perfring(1) names the $(ls perfring-*.1 | wc -l) command pages, libperfring(3) the $(ls perfring_*.3 | wc -l) object pages"
echo "man: ok"
