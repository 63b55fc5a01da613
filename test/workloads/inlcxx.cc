// SPDX-License-Identifier: MIT
/*
 * Inlined C++ frames (test/inline.sh): built -O2 -g (see the Makefile).
 * ns::K<unsigned long>::step() is inlined into run(), whose DWARF names it
 * by its mangled linkage name (shown demangled, without parameters); the
 * static helper() inlined into main() has no linkage name, so addr2line
 * names that frame by its ELF symbol (main), as perf prints it.
 * `inlcxx SECS`.
 */
#include <cstdlib>
#include <ctime>

namespace ns
{
template <typename T> struct K {
	T v;
	inline T step(T x) const
	{
		return (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + v;
	}
	__attribute__((noinline)) T run(T x, int n) const
	{
		for (int i = 0; i < n; i++)
			x = step(x);
		return x;
	}
};
} // namespace ns

static inline unsigned long helper(const ns::K<unsigned long> &k,
				   unsigned long x)
{
	return k.run(x, 20000);
}

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	ns::K<unsigned long> k{ 3 };
	unsigned long a = 1;
	timespec s, e;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s); // CPU time, as load may starve it
	do {
		a += helper(k, a);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &e);
	} while ((double)(e.tv_sec - s.tv_sec) +
			 (double)(e.tv_nsec - s.tv_nsec) / 1e9 <
		 secs);
	sink = a;
	return 0;
}
