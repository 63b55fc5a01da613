// SPDX-License-Identifier: MIT
/*
 * capstone's AT&T syntax reshaped into objdump's, which perf annotate
 * prints: no space after commas, no operand-size suffix where a register
 * operand gives the size, call/ret/push/pop/jmp without their "q",
 * mnemonics padded to six columns, branch targets as "ADDR <sym+0xOFF>"
 * and RIP-relative operands followed by "# ADDR <sym>".
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "annotate_text.h"

static bool has_reg_operand(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG)
			return true;
	return false;
}

/* objdump's mnemonic for capstone's: the size suffix dropped where objdump
 * drops it. */
static void mnemonic(const cs_insn *insn, const char *name, char *out,
		     size_t len)
{
	static const char *const no_q[] = { "callq", "retq", "pushq",
					    "popq",  "jmpq", "leaveq" };
	size_t n = strlen(insn->mnemonic), nl = name ? strlen(name) : 0;

	snprintf(out, len, "%s", insn->mnemonic);
	for (size_t i = 0; i < sizeof(no_q) / sizeof(no_q[0]); i++) {
		if (!strcmp(insn->mnemonic, no_q[i])) {
			out[n - 1 < len ? n - 1 : len - 1] = 0;
			return;
		}
	}
	if (name && n == nl + 1 && !strncmp(insn->mnemonic, name, nl) &&
	    strchr("bwlq", insn->mnemonic[nl]) && has_reg_operand(insn) &&
	    nl < len)
		out[nl] = 0;
}

/* @sym's name and offset of @addr: "hot_loop+0x5", "sink". */
static int target_name(struct dso *dso, uint64_t addr, char *buf, size_t len)
{
	const struct symbol *s = dso ? dso_find_symbol(dso, addr) : NULL;

	if (!s)
		return snprintf(buf, len, "%" PRIx64, addr);
	if (addr == s->start)
		return snprintf(buf, len, "%" PRIx64 " <%s>", addr, s->name);
	return snprintf(buf, len, "%" PRIx64 " <%s+0x%" PRIx64 ">", addr,
			s->name, addr - s->start);
}

/* The immediate operand's value as objdump prints it: hex, a negative one
 * as the unsigned number of the operand's size. */
static uint64_t imm_value(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_IMM)
			continue;
		if (op->size && op->size < 8)
			return (uint64_t)op->imm &
			       ((1ull << (8 * op->size)) - 1);
		return (uint64_t)op->imm;
	}
	return 0;
}

/*
 * capstone's operand text into objdump's: no space after commas, every
 * immediate and displacement in hex (capstone 4 prints those under 10 in
 * decimal), "$-1" as the operand size's unsigned value.
 */
static void reshape_operands(const cs_insn *insn, char *out, size_t len)
{
	const char *p = insn->op_str;
	size_t o = 0;
	int depth = 0;

	while (*p && o + 24 < len) {
		bool start = p == insn->op_str || p[-1] == ' ' ||
			     p[-1] == ',' || p[-1] == '$' || p[-1] == '-' ||
			     p[-1] == '*';

		if (p[0] == ',' && p[1] == ' ') {
			out[o++] = ',';
			p += 2;
			continue;
		}
		depth += *p == '(';
		depth -= *p == ')';
		if (depth == 0 && start && *p == '-' && p > insn->op_str &&
		    p[-1] == '$') {
			/* "$-N": the immediate's unsigned value */
			char *end;

			strtoull(p + 1, &end, 0);
			o += (size_t)snprintf(out + o, len - o, "0x%" PRIx64,
					      imm_value(insn));
			p = end;
			continue;
		}
		if (depth == 0 && start && *p >= '0' && *p <= '9' &&
		    !(p[0] == '0' && p[1] == 'x')) {
			char *end;
			unsigned long long v = strtoull(p, &end, 10);

			o += (size_t)snprintf(out + o, len - o, "0x%llx", v);
			p = end;
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = 0;
}

void annotate_insn_text(csh cs, const cs_insn *insn, struct dso *dso, char *buf,
			size_t len)
{
	const cs_x86 *x = &insn->detail->x86;
	char mn[32], ops[200], addr[24];
	const char *name = NULL;
	bool branch = false;
	uint64_t rip = 0;
	bool has_rip = false;

	for (int i = 0; i < insn->detail->groups_count; i++) {
		uint8_t g = insn->detail->groups[i];

		branch |= g == CS_GRP_JUMP || g == CS_GRP_CALL;
	}
	/* capstone 4 names instructions in Intel's style ("mov", "shl") */
	name = insn->id ? cs_insn_name(cs, insn->id) : NULL;
	mnemonic(insn, name, mn, sizeof(mn));
	reshape_operands(insn, ops, sizeof(ops));
	if (branch && x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		target_name(dso, (uint64_t)x->operands[0].imm, ops,
			    sizeof(ops));
	for (int i = 0; i < x->op_count; i++) {
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base == X86_REG_RIP) {
			rip = insn->address + insn->size +
			      (uint64_t)x->operands[i].mem.disp;
			has_rip = true;
		}
	}
	snprintf(addr, sizeof(addr), "%" PRIx64 ":", insn->address);
	if (!*ops) {
		snprintf(buf, len, "%-7s %s", addr, mn);
	} else if (has_rip && !branch) {
		char t[128];

		target_name(dso, rip, t, sizeof(t));
		snprintf(buf, len, "%-7s %-6s %s        # %s", addr, mn, ops,
			 t);
	} else {
		snprintf(buf, len, "%-7s %-6s %s", addr, mn, ops);
	}
}
