// inject: threads that wake at a fixed rate and sleep again at once, to add context switches
// of a known number to a measurement (the switches step of guest.sh).
//
// One thread per CPU of INJECT_CPUS (default "0,1"), pinned there, wakes INJECT_HZ times a
// second (1 to 1,000,000). On a CPU that busy-polls, each wake takes the CPU from the poller and gives it
// back: one switch pair. Built as a shared object and loaded with LD_PRELOAD, the threads
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

static void *waker(void *arg)
{
	cpu_set_t set;
	struct timespec t;

	CPU_ZERO(&set);
	CPU_SET((int)(long)arg, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
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
	char list[256];
	sigset_t all, old;

	if (hz == NULL || atol(hz) <= 0 || atol(hz) > 1000000)
		return;
	period_ns = 1000000000L / atol(hz);
	snprintf(list, sizeof list, "%s", cpus ? cpus : "0,1");
	// The threads take no signal: the program's own (the Go runtime's) go to its threads.
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (char *s = strtok(list, ","); s != NULL; s = strtok(NULL, ",")) {
		pthread_t th;
		if (pthread_create(&th, NULL, waker, (void *)(long)atoi(s)) == 0)
			pthread_detach(th);
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
