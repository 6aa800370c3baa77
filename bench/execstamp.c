/* SPDX-License-Identifier: MIT */
/*
 * bench/execstamp.c - the command of bench/startup.sh's time-to-exec lines:
 * prints CLOCK_REALTIME in nanoseconds as its first work and exits.  Built
 * static (no loader, no libraries to map), so what the bench measures up to
 * this line is the runner's own start-up; the realtime clock is not
 * namespaced, so a jail's reading compares with the host's.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	printf("%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
	return 0;
}
