# bash completion for perfring(1).  `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/perfring, where bash-completion
# loads it on first use; or: source scripts/perfring-completion.bash
# Event names (-e) come from `perfring list` on this machine, as perf's
# completion asks perf list; each command's options from its --list-opts.

_perfring_events()
{
	perfring list 2>/dev/null | awk '{print $1}'
}

_perfring()
{
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-v) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "record top list demo ring-stat script report annotate diff dump stats export sched data decode inject push version help" -- "$cur"))
		return
	fi
	case $prev in
	-e | --event | --tracefs-event)
		# One -e may list several events: complete after the last comma.
		local head=${cur%,*} tail=${cur##*,} ev
		[ "$head" = "$cur" ] && head= || head=$head,
		COMPREPLY=($(for ev in $(_perfring_events); do [[ $ev == "$tail"* ]] && echo "$head$ev"; done))
		compopt -o nospace 2>/dev/null
		return ;;
	-i | --input | -o | --output | --tracefs-output | --trace-dat | --replay-cs | --snapshot | --symdir | --pprof | --to-json)
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return ;;
	--to-ctf)
		COMPREPLY=($(compgen -d -- "$cur"))
		compopt -o filenames 2>/dev/null
		return ;;
	-f)
		[ "$cmd" = export ] && COMPREPLY=($(compgen -W "chrome folded svg pprof" -- "$cur"))
		return ;;
	-F)
		[ "$cmd" = record ] && COMPREPLY=($(compgen -W "max" -- "$cur"))
		return ;;
	--sort)
		COMPREPLY=($(compgen -W "comm pid dso sym comm,dso,sym" -- "$cur"))
		return ;;
	--push | --from)
		COMPREPLY=($(compgen -W "clickhouse=http:// pyroscope=http:// parca=http://" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return ;;
	--spool)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	esac
	# A command's options are the ones its --list-opts lists (as perf's
	# completion asks perf CMD --list-opts), so they never fall behind.
	case $cmd in
	data)
		# perf data's one subcommand first
		if [ "$prev" = data ]; then
			COMPREPLY=($(compgen -W convert -- "$cur"))
			return
		fi ;;
	sched)
		# perf sched's subcommands first
		if [ "$prev" = sched ]; then
			COMPREPLY=($(compgen -W "record timehist latency" -- "$cur"))
			return
		fi ;;
	push)
		if [[ $cur != -* ]]; then
			COMPREPLY=($(compgen -W "clickhouse=http:// pyroscope=http:// parca=http://" -- "$cur"))
			compopt -o nospace 2>/dev/null
			return
		fi ;;
	ring-stat) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	version | help) return ;;
	esac
	local opts
	[ "$cmd" = data ] && cmd="data convert"
	[ "$cmd" = sched ] && cmd="sched ${COMP_WORDS[i + 1]}"
	opts=$(perfring $cmd --list-opts 2>/dev/null)
	[ "$cmd" = list ] && opts="hw sw cache pmu tracepoint $opts"
	if [[ $cmd == record || $cmd == "sched record" ]] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -c -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _perfring perfring
