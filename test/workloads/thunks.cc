// SPDX-License-Identifier: MIT
/*
 * C++ special names (test/inline.sh): a call through the second base of a
 * class with two bases runs the "non-virtual thunk to Pair::second()"
 * that adjusts `this`; a call through a virtual base, the "virtual thunk
 * to Diamond::value()".  perf 6.1 prints those with their parameter lists
 * (libiberty leaves out only the top-level name's).  The loop keeps the
 * thunks hot: `thunks SECS`.
 */
#include <cstdlib>
#include <ctime>

struct First {
	virtual ~First() = default;
	virtual unsigned long first(unsigned long x) const = 0;
	unsigned long a = 1;
};
struct Second {
	virtual ~Second() = default;
	virtual unsigned long second(unsigned long x) const = 0;
	unsigned long b = 2;
};
struct Pair : First, Second {
	__attribute__((noinline)) unsigned long
	first(unsigned long x) const override
	{
		return x + a;
	}
	__attribute__((noinline)) unsigned long
	second(unsigned long x) const override
	{
		return x ^ b;
	}
};

struct Base {
	virtual ~Base() = default;
	virtual unsigned long value(unsigned long x) const = 0;
};
struct Left : virtual Base {};
struct Diamond : Left {
	__attribute__((noinline)) unsigned long
	value(unsigned long x) const override
	{
		return x * 3;
	}
};

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	Pair pair;
	Diamond diamond;
	/* through pointers the compiler cannot see through */
	const Second *volatile s = &pair;
	const Base *volatile b = &diamond;
	unsigned long x = 1;
	timespec t0, t1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0); // CPU time, as load may starve it
	do {
		const Second *sp = s;
		const Base *bp = b;

		for (int i = 0; i < 100000; i++) {
			x = sp->second(x);
			x = bp->value(x);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	} while ((double)(t1.tv_sec - t0.tv_sec) +
			 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 <
		 secs);
	sink = x;
	return 0;
}
