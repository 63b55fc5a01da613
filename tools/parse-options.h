/* SPDX-License-Identifier: MIT */
/*
 * The commands' options as tables, one row per option as perf's
 * parse-options has them: short and long name, the argument, the help text
 * and what the option sets, side by side.  cli_parse() reads argv with
 * getopt_long built from the table, so spellings, unambiguous long
 * prefixes, attached and separate arguments (-z3, -F max,
 * --switch-output=1s) and getopt's messages stay the GNU ones; --help is
 * printed from the table (with its group headings) and --list-opts names
 * every option, one a line, for bash completion (as perf CMD --list-opts).
 *
 * A table is written for one arguments struct: define CLI_ARGS as that
 * type before the table, and a row names the field it sets; the field's
 * type is checked at compile time.
 */
#ifndef PERFRING_TOOLS_PARSE_OPTIONS_H
#define PERFRING_TOOLS_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cli_opt_kind {
	CLI_OPT_END,
	CLI_OPT_GROUP, /* a heading in --help */
	CLI_OPT_BOOL, /* a bool field = .value */
	CLI_OPT_INT, /* an int field = .value */
	CLI_OPT_BIT, /* a uint64_t field |= .value */
	CLI_OPT_STRING, /* a const char * field = the argument */
	CLI_OPT_SIZE, /* a uint64_t field = parse_size(the argument) */
	CLI_OPT_SECONDS, /* a double field = parse_seconds(the argument) */
	CLI_OPT_CALLBACK, /* .fn(args, the argument or NULL) */
	CLI_OPT_NOOP, /* accepted for perf's sake, nothing to do */
};

enum cli_arg { CLI_ARG_NONE, CLI_ARG_REQUIRED, CLI_ARG_OPTIONAL };

struct cli_option {
	enum cli_opt_kind kind;
	int short_name; /* 0: none */
	const char *long_name; /* NULL: none */
	enum cli_arg arg;
	const char *argh; /* the argument's name in --help */
	const char *help; /* '\n' starts a further line, aligned */
	size_t offset; /* of the field in the arguments struct */
	int value; /* what BOOL and INT store, the bits BIT sets */
	void (*fn)(void *args, const char *arg);
	unsigned flags; /* the command's own (record: the modes) */
	bool hidden; /* internal: neither in --help nor in --list-opts */
};

struct cli_command {
	const char *name; /* "record", "data convert" */
	/* "usage: perfring NAME " precedes each line (NULL-terminated) */
	const char *const *usage;
	const struct cli_option *options;
	const char *notes; /* printed after the options */
	/* Not 0: --help and --list-opts show only the rows with one of
	 * these flags (the others are still taken). */
	unsigned help_flags;
	/* Options stop at the first other argument (a COMMAND follows, as
	 * record's); otherwise they may come anywhere, as getopt permutes. */
	bool in_order;
};

/* The field's offset if it has @type (a compile error otherwise). */
#define CLI_FIELD(type, field) \
	_Generic(((CLI_ARGS *)0)->field, type : offsetof(CLI_ARGS, field))

/* The rows: s a character or 0, l a string or NULL, field a member of
 * CLI_ARGS, a the argument's name, h the help text; more designated
 * initializers may follow (.flags = ..., .hidden = true). */
#define OPT_GROUP(h)                               \
	{                                          \
		.kind = CLI_OPT_GROUP, .help = (h) \
	}
#define OPT_END()                   \
	{                           \
		.kind = CLI_OPT_END \
	}
#define OPT_BOOLEAN(s, l, field, h, ...)                                   \
	{                                                                  \
		.kind = CLI_OPT_BOOL, .short_name = (s), .long_name = (l), \
		.offset = CLI_FIELD(bool, field), .value = 1, .help = (h), \
		__VA_ARGS__                                                \
	}
#define OPT_SET_BOOL(s, l, field, v, h, ...)                                 \
	{                                                                    \
		.kind = CLI_OPT_BOOL, .short_name = (s), .long_name = (l),   \
		.offset = CLI_FIELD(bool, field), .value = (v), .help = (h), \
		__VA_ARGS__                                                  \
	}
#define OPT_SET_INT(s, l, field, v, h, ...)                                 \
	{                                                                   \
		.kind = CLI_OPT_INT, .short_name = (s), .long_name = (l),   \
		.offset = CLI_FIELD(int, field), .value = (v), .help = (h), \
		__VA_ARGS__                                                 \
	}
#define OPT_BIT(s, l, field, v, h, ...)                                   \
	{                                                                 \
		.kind = CLI_OPT_BIT, .short_name = (s), .long_name = (l), \
		.offset = CLI_FIELD(uint64_t, field), .value = (int)(v),  \
		.help = (h), __VA_ARGS__                                  \
	}
#define OPT_STRING(s, l, field, a, h, ...)                                   \
	{                                                                    \
		.kind = CLI_OPT_STRING, .short_name = (s), .long_name = (l), \
		.arg = CLI_ARG_REQUIRED,                                     \
		.offset = CLI_FIELD(const char *, field), .argh = (a),       \
		.help = (h), __VA_ARGS__                                     \
	}
/* A size with an optional B/K/M/G suffix ("bad size for --LONG"). */
#define OPT_SIZE(s, l, field, a, h, ...)                                       \
	{                                                                      \
		.kind = CLI_OPT_SIZE, .short_name = (s), .long_name = (l),     \
		.arg = CLI_ARG_REQUIRED, .offset = CLI_FIELD(uint64_t, field), \
		.argh = (a), .help = (h), __VA_ARGS__                          \
	}
/* Seconds, more than 0. */
#define OPT_SECONDS(s, l, field, a, h, ...)                                   \
	{                                                                     \
		.kind = CLI_OPT_SECONDS, .short_name = (s), .long_name = (l), \
		.arg = CLI_ARG_REQUIRED, .offset = CLI_FIELD(double, field),  \
		.argh = (a), .help = (h), __VA_ARGS__                         \
	}
#define OPT_CALLBACK(s, l, a, f, h, ...)                                       \
	{                                                                      \
		.kind = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), \
		.arg = CLI_ARG_REQUIRED, .argh = (a), .fn = (f), .help = (h),  \
		__VA_ARGS__                                                    \
	}
/* The argument is optional (--opt=ARG or -oARG); fn gets NULL without. */
#define OPT_CALLBACK_OPTARG(s, l, a, f, h, ...)                                \
	{                                                                      \
		.kind = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), \
		.arg = CLI_ARG_OPTIONAL, .argh = (a), .fn = (f), .help = (h),  \
		__VA_ARGS__                                                    \
	}
#define OPT_CALLBACK_NOARG(s, l, f, h, ...)                                    \
	{                                                                      \
		.kind = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), \
		.fn = (f), .help = (h), __VA_ARGS__                            \
	}
#define OPT_NOOP(s, l, h, ...)                                             \
	{                                                                  \
		.kind = CLI_OPT_NOOP, .short_name = (s), .long_name = (l), \
		.help = (h), __VA_ARGS__                                   \
	}

/*
 * Parses argv (argv[0] the command's name) into @args by @cmd's table;
 * @seen, if not NULL, gets true at each row given (as many as the table
 * has rows).  -h/--help (unless the table has its own) prints the help
 * and --list-opts the option names, then exit 0; an unknown option or a
 * missing argument (getopt says which) exits 2, as does a row's bad value
 * (die_usage).  Returns the index of the first argument that is no
 * option.
 */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *args,
	      bool *seen);

/* The help of @cmd: its usage lines, then the rows under their headings,
 * then the notes. */
void cli_help(const struct cli_command *cmd);

/* A row's name in messages: its long name, or its short one. */
const char *cli_option_name(const struct cli_option *opt);

#endif
