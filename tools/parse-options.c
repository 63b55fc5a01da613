// SPDX-License-Identifier: MIT
/* The option tables' parser, --help and --list-opts (see parse-options.h). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "parse-options.h"

/* More rows than any command has; a longer table is refused when it is
 * parsed (test/options.sh parses every table). */
#define CLI_MAX_ROWS 128
/* getopt values: a row's short name, or VAL_ROW + its index. */
#define VAL_ROW 256
#define VAL_LIST_OPTS (VAL_ROW + CLI_MAX_ROWS)
#define VAL_HELP (VAL_LIST_OPTS + 1)
/* Where --help's text starts beside the options. */
#define HELP_COLUMN 28

/* --help and its short -h, unless the table has its own. */
static const struct cli_option help_row = {
	.kind = CLI_OPT_NOOP,
	.short_name = 'h',
	.long_name = "help",
	.help = "this text",
};

static size_t nr_options(const struct cli_command *cmd)
{
	size_t n = 0;

	while (cmd->options[n].kind != CLI_OPT_END)
		n++;
	return n;
}

const char *cli_option_name(const struct cli_option *opt)
{
	static char s[2];

	if (opt->long_name)
		return opt->long_name;
	s[0] = (char)opt->short_name;
	return s;
}

static bool has_own_help(const struct cli_command *cmd)
{
	for (const struct cli_option *o = cmd->options; o->kind; o++)
		if (o->long_name && !strcmp(o->long_name, "help"))
			return true;
	return false;
}

static bool is_option(const struct cli_option *o)
{
	return o->kind != CLI_OPT_GROUP && o->kind != CLI_OPT_END;
}

/* Whether --help and --list-opts show @o. */
static bool shown(const struct cli_command *cmd, const struct cli_option *o)
{
	return !o->hidden && (!cmd->help_flags || o == &help_row ||
			      (o->flags & cmd->help_flags));
}

/* "-e, --event EVENT", "--user-regs[=REGS]", "-S[SIZE]" into @buf. */
static int option_left(const struct cli_option *o, char *buf, size_t size)
{
	const char *a = o->argh ? o->argh : "ARG";
	int n;

	if (o->short_name && o->long_name)
		n = snprintf(buf, size, "  -%c, --%s", o->short_name,
			     o->long_name);
	else if (o->short_name)
		n = snprintf(buf, size, "  -%c", o->short_name);
	else
		n = snprintf(buf, size, "      --%s", o->long_name);
	if (n < 0 || (size_t)n >= size || o->arg == CLI_ARG_NONE)
		return n;
	if (o->arg == CLI_ARG_REQUIRED)
		return n + snprintf(buf + n, size - (size_t)n, " %s", a);
	return n + snprintf(buf + n, size - (size_t)n,
			    o->long_name ? "[=%s]" : "[%s]", a);
}

static void print_option(const struct cli_option *o)
{
	char left[256];
	int n = option_left(o, left, sizeof(left));
	const char *h = o->help ? o->help : "", *nl;

	fputs(left, stdout);
	/* the help beside, or (too long a left side) two spaces after it */
	printf("%*s", n + 2 <= HELP_COLUMN ? HELP_COLUMN - n : 2, "");
	while ((nl = strchr(h, '\n'))) {
		printf("%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
		h = nl + 1;
	}
	printf("%s\n", h);
}

void cli_help(const struct cli_command *cmd)
{
	const char *heading = NULL;
	bool headed = false;

	for (size_t i = 0; cmd->usage[i]; i++)
		printf("%s %s %s %s\n", i ? "      " : "usage:", prog,
		       cmd->name, cmd->usage[i]);
	for (const struct cli_option *o = cmd->options; o->kind; o++) {
		if (o->kind == CLI_OPT_GROUP) {
			heading = o->help; /* printed above its first row */
			continue;
		}
		if (!shown(cmd, o))
			continue;
		if (heading || !headed)
			printf("\n%s%s", heading ? heading : "",
			       heading ? "\n" : "");
		heading = NULL;
		headed = true;
		print_option(o);
	}
	if (!has_own_help(cmd))
		print_option(&help_row);
	if (cmd->notes)
		printf("\n%s", cmd->notes);
}

static void list_opts(const struct cli_command *cmd)
{
	const struct cli_option *o = cmd->options;

	for (bool own = has_own_help(cmd);; o++) {
		if (o->kind == CLI_OPT_END) {
			if (own)
				break;
			o = &help_row;
			own = true;
		}
		if (!is_option(o) || !shown(cmd, o))
			continue;
		if (o->short_name)
			printf("-%c\n", o->short_name);
		if (o->long_name)
			printf("--%s\n", o->long_name);
	}
}

/* getopt_long's short and long options of @cmd's table. */
static void getopt_tables(const struct cli_command *cmd, char *shorts,
			  struct option *longs)
{
	static const int has_arg[] = { no_argument, required_argument,
				       optional_argument };
	const struct cli_option *rows = cmd->options;
	size_t s = 0, l = 0;

	if (cmd->in_order)
		shorts[s++] = '+';
	for (size_t i = 0; rows[i].kind; i++) {
		if (!is_option(&rows[i]))
			continue;
		if (rows[i].short_name) {
			shorts[s++] = (char)rows[i].short_name;
			for (int k = 0; k < (int)rows[i].arg; k++)
				shorts[s++] = ':';
		}
		if (rows[i].long_name)
			longs[l++] = (struct option){
				rows[i].long_name, has_arg[rows[i].arg], NULL,
				rows[i].short_name ? rows[i].short_name :
						     VAL_ROW + (int)i
			};
	}
	if (!has_own_help(cmd)) {
		shorts[s++] = 'h';
		longs[l++] =
			(struct option){ "help", no_argument, NULL, VAL_HELP };
	}
	longs[l++] = (struct option){ "list-opts", no_argument, NULL,
				      VAL_LIST_OPTS };
	shorts[s] = 0;
	longs[l] = (struct option){ 0 };
}

/* The row getopt returned @c for, or NULL. */
static const struct cli_option *row_of(const struct cli_command *cmd, int c,
				       size_t nr)
{
	if (c >= VAL_ROW)
		return c - VAL_ROW < (int)nr ? &cmd->options[c - VAL_ROW] :
					       NULL;
	for (size_t i = 0; i < nr; i++)
		if (is_option(&cmd->options[i]) &&
		    cmd->options[i].short_name == c)
			return &cmd->options[i];
	return NULL;
}

static void apply(const struct cli_option *o, void *args, char *arg)
{
	char *field = (char *)args + o->offset, name[64];

	switch (o->kind) {
	case CLI_OPT_BOOL:
		*(bool *)field = o->value;
		break;
	case CLI_OPT_INT:
		*(int *)field = o->value;
		break;
	case CLI_OPT_BIT:
		*(uint64_t *)field |= (unsigned int)o->value;
		break;
	case CLI_OPT_STRING:
		*(const char **)field = arg;
		break;
	case CLI_OPT_SIZE:
		snprintf(name, sizeof(name), "--%s", cli_option_name(o));
		*(uint64_t *)field = parse_size(arg, name);
		break;
	case CLI_OPT_SECONDS:
		*(double *)field = parse_seconds(arg);
		break;
	case CLI_OPT_CALLBACK:
		o->fn(args, arg);
		break;
	default:
		break;
	}
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *args,
	      bool *seen)
{
	size_t nr = nr_options(cmd);
	char shorts[3 * CLI_MAX_ROWS + 4];
	struct option longs[CLI_MAX_ROWS + 3];
	int c;

	if (nr > CLI_MAX_ROWS) {
		fprintf(stderr, "%s %s: %zu options, more than %d\n", prog,
			cmd->name, nr, CLI_MAX_ROWS);
		exit(1);
	}
	getopt_tables(cmd, shorts, longs);
	optind = 0; /* from argv[1], with this table's ordering */
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct cli_option *o;

		if (c == VAL_LIST_OPTS || c == VAL_HELP ||
		    (c == 'h' && !has_own_help(cmd))) {
			if (c == VAL_LIST_OPTS)
				list_opts(cmd);
			else
				cli_help(cmd);
			exit(0);
		}
		o = row_of(cmd, c, nr);
		if (!o)
			exit(2); /* getopt said what was wrong */
		if (seen)
			seen[o - cmd->options] = true;
		apply(o, args, optarg);
	}
	return optind;
}
