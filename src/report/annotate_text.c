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

static bool has_gpr64(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG &&
		    x->operands[i].size == 8 &&
		    x->operands[i].reg >= X86_REG_RAX &&
		    x->operands[i].reg <= X86_REG_R15W)
			return true;
	return false;
}

static bool starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The string instructions, whose memory operands objdump prints with
 * their segments ("%es:(%rdi)"). */
static bool string_op(const char *m)
{
	static const char *const ops[] = { "stos", "scas", "lods", "movs",
					   "cmps", "ins",  "outs" };
	size_t n = strlen(m);

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t l = strlen(ops[i]);

		if ((n == l || (n == l + 1 && strchr("bwlq", m[l]))) &&
		    !strncmp(m, ops[i], l))
			return true;
	}
	return false;
}

/*
 * objdump's mnemonic for capstone's: its prefixes ("rep ", "lock ") kept,
 * the size suffix dropped where objdump drops it (a register operand
 * gives the size; call/ret/push/pop/jmp never have one), movd of a
 * 64-bit register named movq, a cs-prefixed nop "cs nopw" (with a
 * "data16 " per extra 0x66 prefix).
 */
static void mnemonic(const cs_insn *insn, const char *name, char *out,
		     size_t len, bool *cs_nop, bool *strop)
{
	static const char *const prefixes[] = { "rep ",	 "repe ",    "repne ",
						"lock ", "notrack ", "bnd " };
	static const char *const no_q[] = { "callq", "retq", "pushq",
					    "popq",  "jmpq", "leaveq" };
	const char *m = insn->mnemonic;
	char base[32];
	size_t o = 0, n, nl = name ? strlen(name) : 0;

	*cs_nop = false;
	out[0] = 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (starts(m, prefixes[i])) {
			o += (size_t)snprintf(out + o, len - o, "%s",
					      prefixes[i]);
			m += strlen(prefixes[i]);
			i = (size_t)-1;
		}
	}
	snprintf(base, sizeof(base), "%s", m);
	n = strlen(base);
	for (size_t i = 0; i < sizeof(no_q) / sizeof(no_q[0]); i++)
		if (!strcmp(base, no_q[i]))
			base[n - 1] = 0;
	*strop = string_op(base);
	if (name && n == nl + 1 && !strncmp(base, name, nl) &&
	    strchr("bwlq", base[nl]) && has_reg_operand(insn))
		base[nl] = 0;
	else if (*strop && has_reg_operand(insn) && strchr("bwlq", base[n - 1]))
		base[n - 1] = 0;
	if (!strcmp(base, "movd") && has_gpr64(insn))
		strcpy(base, "movq");
	if (starts(base, "nop") && insn->detail->x86.prefix[1] == 0x2e) {
		unsigned n66 = 0;

		for (unsigned i = 0; i < insn->size && insn->bytes[i] == 0x66;
		     i++)
			n66++;
		for (unsigned i = 1; i < n66; i++)
			o += (size_t)snprintf(out + o, len - o, "data16 ");
		o += (size_t)snprintf(out + o, len - o, "cs ");
		*cs_nop = true;
	}
	snprintf(out + o, len - o, "%s", base);
}

/* @ops with every @from replaced by @to (in place, @len bytes). */
static void replace_all(char *ops, size_t len, const char *from, const char *to)
{
	char tmp[256];
	size_t o = 0, fl = strlen(from), tl = strlen(to);

	for (const char *p = ops; *p && o + tl + 1 < sizeof(tmp);) {
		if (!strncmp(p, from, fl)) {
			memcpy(tmp + o, to, tl);
			o += tl;
			p += fl;
		} else {
			tmp[o++] = *p++;
		}
	}
	if (o >= len)
		o = len - 1;
	memcpy(ops, tmp, o);
	ops[o] = 0;
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
 * objdump's memory operands: an index always with its scale
 * ("(%rdi,%rdx,1)"), an encoded zero displacement printed ("0x0(%rax)").
 */
static void objdump_memory(const cs_insn *insn, char *out, size_t len)
{
	const cs_x86 *x = &insn->detail->x86;
	unsigned mod = (unsigned)x->modrm >> 6;
	bool zero_disp = false;
	char tmp[512];
	size_t o = 0;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base != X86_REG_RIP &&
		    x->operands[i].mem.base != X86_REG_INVALID &&
		    !x->operands[i].mem.disp && (mod == 1 || mod == 2))
			zero_disp = true;
	for (const char *p = out; *p && o + 8 < sizeof(tmp); p++) {
		if (*p == '(' && zero_disp &&
		    (p == out || p[-1] == ',' || p[-1] == ' ' || p[-1] == ':' ||
		     p[-1] == '*')) {
			memcpy(tmp + o, "0x0", 3);
			o += 3;
			zero_disp = false;
		}
		if (*p == ')') {
			/* "(b,i)": one comma inside means a scale of 1 */
			const char *open = p;
			int commas = 0;

			while (open > out && *open != '(')
				open--;
			for (const char *q = open; q < p; q++)
				commas += *q == ',';
			if (commas == 1 && *open == '(') {
				memcpy(tmp + o, ",1", 2);
				o += 2;
			}
		}
		tmp[o++] = *p;
	}
	if (o >= len)
		o = len - 1;
	memcpy(out, tmp, o);
	out[o] = 0;
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
		if (p[0] == ' ' && p[1] == '{') {
			p++; /* "(%rax){%k1}" */
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
	objdump_memory(insn, out, len);
}

void annotate_insn_text(csh cs, const cs_insn *insn, struct dso *dso, char *buf,
			size_t len)
{
	const cs_x86 *x = &insn->detail->x86;
	char mn[32], ops[200], addr[24];
	const char *name = NULL;
	bool branch = false;
	uint64_t rip = 0;
	bool has_rip = false, cs_nop, strop;

	for (int i = 0; i < insn->detail->groups_count; i++) {
		uint8_t g = insn->detail->groups[i];

		branch |= g == CS_GRP_JUMP || g == CS_GRP_CALL;
	}
	/* capstone 4 names instructions in Intel's style ("mov", "shl") */
	name = insn->id ? cs_insn_name(cs, insn->id) : NULL;
	mnemonic(insn, name, mn, sizeof(mn), &cs_nop, &strop);
	reshape_operands(insn, ops, sizeof(ops));
	if (cs_nop)
		replace_all(ops, sizeof(ops), "%cs:", "");
	/* the shift-by-one opcodes (D0, D1): objdump names no count */
	if ((x->opcode[0] == 0xd0 || x->opcode[0] == 0xd1) &&
	    starts(ops, "$0x1,"))
		memmove(ops, ops + 5, strlen(ops + 5) + 1);
	if (strop && !strstr(ops, "%es:")) {
		replace_all(ops, sizeof(ops), "(%rdi)", "%es:(%rdi)");
		replace_all(ops, sizeof(ops), "(%rsi)", "%ds:(%rsi)");
	}
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
	if (insn->size == 2 && insn->bytes[0] == 0x66 &&
	    insn->bytes[1] == 0x90) {
		/* objdump's name of the two-byte nop */
		snprintf(buf, len, "%-7s xchg   %%ax,%%ax", addr);
		return;
	}
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

size_t annotate_unknown_len(const unsigned char *p, size_t len)
{
	size_t n, mod, rm;

	if (len < 4 || (p[0] != 0xc4 && p[0] != 0xc5 && p[0] != 0x62))
		return 1;
	/* prefix and opcode: VEX 2 or 3 bytes, EVEX 4 */
	n = p[0] == 0xc5 ? 3 : p[0] == 0xc4 ? 4 : 5;
	if (n >= len)
		return 1;
	mod = p[n] >> 6;
	rm = p[n] & 7;
	n++; /* ModRM */
	if (mod != 3 && rm == 4)
		n++; /* SIB */
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		n += 4;
	/* opcode map 0F3A takes an immediate byte */
	if ((p[0] == 0xc4 && (p[1] & 0x1f) == 3) ||
	    (p[0] == 0x62 && (p[1] & 3) == 3))
		n++;
	return n <= len ? n : 1;
}

void annotate_bytes_text(uint64_t addr, const unsigned char *p, size_t n,
			 char *buf, size_t len)
{
	char a[24];
	int o;

	snprintf(a, sizeof(a), "%" PRIx64 ":", addr);
	o = snprintf(buf, len, "%-7s .byte  ", a);
	for (size_t i = 0; i < n && o > 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - (size_t)o, "%s0x%02x",
			      i ? "," : "", p[i]);
}
