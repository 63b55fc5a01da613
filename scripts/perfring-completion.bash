# bash completion for perfring(1).  `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/perfring, where bash-completion
# loads it on first use; or: source scripts/perfring-completion.bash
# Event names (-e) come from `perfring list` on this machine, as perf's
# completion asks perf list.

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
		COMPREPLY=($(compgen -W "record list demo ring-stat script report dump stats export data decode inject push version help" -- "$cur"))
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
	local opts=
	case $cmd in
	record) opts="-e --event --filter -a --all-cpus -C --cpu -p --pid -t --tid --per-thread
		-m --mmap-pages -F --freq -c --count -g --call-graph -o --output --overwrite -S --snapshot
		-q --quiet -D --duration --no-app --app-max-rings --tracefs --tracefs-event
		--tracefs-output --buffer-size --subbuf-size --buffer-percent --no-mmap --replay-cs
		--rate --loops --chunk --replay-cpu --pprof --push --push-every --label --spool
		--spool-size --help" ;;
	push) opts="--spool --timeout clickhouse=http:// pyroscope=http:// parca=http:// --help" ;;
	list) opts="hw sw cache pmu tracepoint --help" ;;
	script) opts="-i -F -G --ns --trace-dat --no-trace-dat --pid --tid --comm --cpu -C --time -S --symbols --reltime --deltatime --show-task-events --show-mmap-events --itrace --symdir --no-disasm --snapshot --help" ;;
	report) opts="-i --sort --children --no-children -g -n --percent-limit --stdio --group --no-group --comm --dsos -d -S --symbols --itrace --symdir --snapshot --from --where --help" ;;
	dump) opts="-i --hex -D --aux --decode --elements --symdir --help" ;;
	stats) opts="-i --help" ;;
	export) opts="-i -f -o --title --width --from --where --help" ;;
	data)
		# perf data's one subcommand first, then its options
		[ "$prev" = data ] && opts=convert ||
			opts="-i --input --to-ctf --to-json --all --tod -f --force -v --verbose --help" ;;
	demo) opts="-n -s -m --drop --help" ;;
	decode) opts="--snapshot --pkts --decode --elements --buffer -i --help" ;;
	inject) opts="-i -o --symdir --help" ;;
	ring-stat) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	if [ "$cmd" = record ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -c -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _perfring perfring
