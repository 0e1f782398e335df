// inject: threads that wake at a fixed rate and sleep again at once, to add context switches
// of a known number to a measurement (the switches step of guest.sh).
//
// One thread per CPU of INJECT_CPUS (default "0,1"), pinned there, wakes INJECT_HZ times a
// second (1 to 1,000,000). On a CPU that busy-polls, each wake takes the CPU from the poller
// and gives it back: one switch pair. A bad setting ends the program at its start, so that a
// measurement never runs without the switches it was meant to have. Built as a shared object and loaded with LD_PRELOAD, the threads
// start inside the program being measured, so that their switches stay in its address
// space; built with -DINJECT_MAIN, they run in a process of their own. Without INJECT_HZ it
// does nothing.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long period_ns;

static void fail(const char *what, const char *value)
{
	fprintf(stderr, "inject: %s: %s\n", what, value);
	exit(2);
}

static void *waker(void *arg)
{
	struct timespec t;

	(void)arg;
	// Absolute deadlines: the rate holds however late a wake is served.
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (;;) {
		t.tv_nsec += period_ns;
		while (t.tv_nsec >= 1000000000L) {
			t.tv_nsec -= 1000000000L;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	return NULL;
}

__attribute__((constructor)) static void inject_start(void)
{
	const char *hz = getenv("INJECT_HZ"), *cpus = getenv("INJECT_CPUS");
	const char *cpulist = cpus != NULL ? cpus : "0,1";
	char list[256], *end;
	long rate;
	sigset_t all, old;

	if (hz == NULL)
		return;
	rate = strtol(hz, &end, 10);
	if (end == hz || *end != '\0' || rate <= 0 || rate > 1000000)
		fail("INJECT_HZ must be 1 to 1000000", hz);
	period_ns = 1000000000L / rate;
	if (snprintf(list, sizeof list, "%s", cpulist) >= (int)sizeof list)
		fail("INJECT_CPUS too long", cpulist);
	// The threads take no signal: the program's own (the Go runtime's) go to its threads.
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (char *s = strtok(list, ","); s != NULL; s = strtok(NULL, ",")) {
		long cpu = strtol(s, &end, 10);
		pthread_attr_t attr;
		cpu_set_t set;
		pthread_t th;

		if (end == s || *end != '\0' || cpu < 0 || cpu >= CPU_SETSIZE)
			fail("INJECT_CPUS is not a list of CPU numbers", cpulist);
		// Pinned from birth: a CPU the program may not use fails here, not later.
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setaffinity_np(&attr, sizeof set, &set);
		if (pthread_create(&th, &attr, waker, NULL) != 0)
			fail("cannot start a thread on CPU", s);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	// Not into the program's children.
	unsetenv("INJECT_HZ");
}

#ifdef INJECT_MAIN
int main(void)
{
	for (;;)
		pause();
}
#endif
