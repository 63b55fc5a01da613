#!/usr/bin/env bash
# Every command's option table, seen from outside: each option that
# `perfring CMD --list-opts` lists is named by `perfring CMD --help` (and
# nothing else is), and the command takes it: given before --help, with an
# argument when --help shows one (separate, attached, or none and attached
# for an optional one), getopt never refuses it (a bad value may be
# refused, by the command's own message, exit 2).  And the spellings perf
# users type: -z3, --switch-output=1s, -F max, --call-graph dwarf,8192,
# --user-regs[=REGS], repeated -e, unique long prefixes.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
fail() { echo "FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cli=$(realpath "$cli")
cd "$tmp" || fail "cd $tmp" # nothing an option might write lands elsewhere

# getopt's own refusals: the option is not in the table (or its argument
# is not as the table says).
getopt_refused='unrecognized option|invalid option|requires an argument|allow an argument|is ambiguous'

# options_in_help HELP_FILE: "NAME ARGKIND" per option of --help's rows,
# ARGKIND none, required or optional.
options_in_help() {
	sed -n 's/^  \{1,6\}\(-.*\)$/\1/p' "$1" | sed 's/  .*//' |
		awk '{
			n = split($0, w, " "); arg = "none"
			# --name[=ARG], -x[ARG]: optional; a last word that is no
			# option: the argument
			for (i = 1; i <= n; i++)
				if (w[i] ~ /^-/ && index(w[i], "[")) {
					arg = "optional"; w[i] = substr(w[i], 1, index(w[i], "[") - 1)
				}
			if (arg == "none" && w[n] !~ /^-/) { arg = "required"; n-- }
			for (i = 1; i <= n; i++) { sub(/,$/, "", w[i]); if (w[i] ~ /^-/) print w[i], arg }
		}'
}

total=0
check_command() {
	local name=$1 words out rc o kind
	read -ra words <<<"$1"
	"$cli" "${words[@]}" --help >"$tmp/help" 2>"$tmp/err" || fail "$name --help: exit $?: $(cat "$tmp/err")"
	grep -q "^usage: perfring ${words[0]}" "$tmp/help" || fail "$name --help: no usage line: $(head -1 "$tmp/help")"
	"$cli" "${words[@]}" --list-opts >"$tmp/list" 2>"$tmp/err" || fail "$name --list-opts: exit $?: $(cat "$tmp/err")"
	grep -vqE '^--?[a-zA-Z0-9][a-zA-Z0-9_-]*$' "$tmp/list" && fail "$name --list-opts: not one name a line: $(grep -vE '^--?[a-zA-Z0-9][a-zA-Z0-9_-]*$' "$tmp/list" | head -3)"
	options_in_help "$tmp/help" | sort -u >"$tmp/inhelp"
	[ -s "$tmp/inhelp" ] || fail "$name --help names no option"
	cut -d' ' -f1 "$tmp/inhelp" | sort -u >"$tmp/helpnames"
	sort -u "$tmp/list" >"$tmp/listnames"
	if ! cmp -s "$tmp/helpnames" "$tmp/listnames"; then
		diff "$tmp/helpnames" "$tmp/listnames" >&2
		fail "$name: --help and --list-opts name different options (< --help, > --list-opts)"
	fi
	while read -r o kind; do
		[ "$o" = -h ] || [ "$o" = --help ] && continue
		case $kind in
		none) set -- "$o" ;;
		required) set -- "$o" 1 ;;
		optional) if [[ $o == --* ]]; then set -- "$o=1"; else set -- "${o}1"; fi ;;
		esac
		out=$(timeout 60 "$cli" "${words[@]}" "$@" --help 2>&1 >/dev/null)
		rc=$?
		grep -qE "$getopt_refused" <<<"$out" && fail "$name $*: refused by getopt: $out"
		[ $rc = 0 ] || [ $rc = 2 ] || fail "$name $* --help: exit $rc: $out"
		if [ "$kind" = optional ]; then
			out=$(timeout 60 "$cli" "${words[@]}" "$o" --help 2>&1 >/dev/null)
			rc=$?
			grep -qE "$getopt_refused" <<<"$out" && fail "$name $o (no argument): refused by getopt: $out"
			[ $rc = 0 ] || [ $rc = 2 ] || fail "$name $o --help: exit $rc: $out"
		fi
		total=$((total + 1))
	done <"$tmp/inhelp"
	echo "$name: $(wc -l <"$tmp/list") option names in --help and --list-opts, each taken"
}

for c in record top list demo ring-stat script report annotate diff export dump stats push "data convert" \
	decode inject "dump --aux" "script --itrace" "report --itrace" "sched timehist" "sched latency"; do
	check_command "$c"
done
[ "$total" -gt 200 ] || fail "only $total options checked"

# A table row is taken in each of getopt's forms (parsing only: --help
# ends each line before anything runs).
takes() {
	out=$("$cli" "$@" --help 2>&1 >/dev/null) || fail "$*: exit $?: $out"
}
takes record -z3 --switch-output=1s -F max --call-graph dwarf,8192 --user-regs -e cpu-clock -e task-clock
takes record -z --switch-output --call-graph=fp,32 --user-regs=AX,BX -ecpu-clock --event=task-clock
takes record --comp=5 --dur 1 -m 8 -c 1000 -g -a
takes script -F comm,tid -F trace:comm --show-m --max-stack=3 -C0
takes report --sort=dso -g none -n --percent-limit 1 -t, -G
# values refused by the command's own words, exit 2
out=$("$cli" record -z0 -- true 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- '-z/--compression-level takes 1..22: 0' <<<"$out" || fail "-z0: exit $rc: $out"
out=$("$cli" record --switch-output=1x -- true 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- '--switch-output takes signal, a size (10M) or a time (30s): 1x' <<<"$out" || fail "--switch-output=1x: exit $rc: $out"
out=$("$cli" record --bogus 2>&1); rc=$?
[ $rc = 2 ] && grep -q "unrecognized option '--bogus'" <<<"$out" || fail "--bogus: exit $rc: $out"
out=$("$cli" script -F 2>&1); rc=$?
[ $rc = 2 ] && grep -q "requires an argument" <<<"$out" || fail "script -F without its argument: exit $rc: $out"
out=$("$cli" record --tracefs -p 1 -e sched:sched_switch 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- '--pid does not apply to record --tracefs' <<<"$out" || fail "record --tracefs -p: exit $rc: $out"
out=$("$cli" record --user-regs=? 2>&1) && grep -q '^available registers: AX ' <<<"$out" || fail "--user-regs=?: $out"
echo "ok: $total options of 17 commands listed, documented and taken; perf's spellings; refusals"
