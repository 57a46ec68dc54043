// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-testprog-cxx (g++ -O2): C++ names for the demangling tests, one call
 * chain through a function template, a class method and a lambda:
 *
 *   main -> int ns::twice<int>(int) -> ns::K::spin(int)
 *        -> ns::K::spin(int)::{lambda(int)#1}::operator()(int) const
 *        -> getppid()
 *
 * Each called function is kept whole (no inlining, and with gcc no
 * interprocedural clones: "[clone .isra.0]" names) so that its frame and
 * its mangled symbol stay whatever the optimizer does.
 */
#include <cstdlib>
#include <unistd.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

namespace ns {

volatile int sink;

class K {
public:
	KEEP int spin(int n);
};

int K::spin(int n)
{
	auto step = [](int k) KEEP {
		int r = 0;

		for (int i = 0; i < k; i++)
			r += (int)getppid();
		sink = r;
		return r + 1;
	};
	int r = step(n);

	sink = r + 1;
	return r;
}

template <typename T> KEEP T twice(T n)
{
	K k;
	T r = (T)k.spin((int)n);

	sink = (int)r + 2;
	return r;
}

} // namespace ns

int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < loops; i++)
		ns::twice<int>(1);
	return 0;
}
