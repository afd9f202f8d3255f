/* The prof layer's choice of timer and of its frequency
 * (weft__prof_pick_clock, weft__prof_pick_freq) on made-up CPUID results
 * and kernel figures, for Intel, AMD, other x86 vendors, aarch64 and the
 * rest: it holds whatever CPU runs it.  Then the timer this CPU got reads
 * a clock that moves forward. */
#include "prof/prof.h"
#include <weft.h>
#include "../check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_pick_clock(void)
{
    CHECK(weft__prof_pick_clock("GenuineIntel", 1, 0, 0) == WEFT__PROF_TSC_LFENCE);
    /* AMD: LFENCE orders RDTSC only where CPUID says it is serialising */
    CHECK(weft__prof_pick_clock("AuthenticAMD", 1, 1, 0) == WEFT__PROF_TSC_LFENCE);
    CHECK(weft__prof_pick_clock("AuthenticAMD", 1, 0, 0) == WEFT__PROF_TSC_MFENCE);
    CHECK(weft__prof_pick_clock("HygonGenuine", 1, 0, 0) == WEFT__PROF_TSC_MFENCE);
    CHECK(weft__prof_pick_clock("CentaurHauls", 1, 1, 0) == WEFT__PROF_TSC_MFENCE);
    /* a TSC without a constant rate: the kernel's clock */
    CHECK(weft__prof_pick_clock("GenuineIntel", 0, 0, 0) == WEFT__PROF_CLOCK_GETTIME);
    CHECK(weft__prof_pick_clock("AuthenticAMD", 0, 1, 0) == WEFT__PROF_CLOCK_GETTIME);
    /* aarch64: the virtual counter when its frequency is known */
    CHECK(weft__prof_pick_clock(NULL, 0, 0, 25000000) == WEFT__PROF_CNTVCT);
    CHECK(weft__prof_pick_clock(NULL, 0, 0, 0) == WEFT__PROF_CLOCK_GETTIME);
    CHECK(strcmp(weft__prof_clock_names[WEFT__PROF_TSC_MFENCE], "tsc-mfence") == 0);
}

static void test_pick_freq(void)
{
    struct weft__prof_freq_in in;
    int src = -1;

    /* the kernel's figure first, checked against the measured one */
    memset(&in, 0, sizeof(in));
    in.sysfs_khz = 2445431, in.cpuid15_eax = 2, in.cpuid15_ebx = 200, in.cpuid15_ecx = 24000000;
    in.measured_ghz = 2.44;
    CHECK(fabs(weft__prof_pick_freq(WEFT__PROF_TSC_LFENCE, &in, &src) - 2.445431) < 1e-9);
    CHECK(src == WEFT__PROF_FREQ_SYSFS);
    /* CPUID 0x15: 24 MHz crystal x 200 / 2 = 2.4 GHz */
    in.sysfs_khz = 0;
    CHECK(fabs(weft__prof_pick_freq(WEFT__PROF_TSC_MFENCE, &in, &src) - 2.4) < 1e-9);
    CHECK(src == WEFT__PROF_FREQ_CPUID_15);
    /* no crystal frequency (ECX 0): the hypervisor's leaf */
    in.cpuid15_ecx = 0, in.hypervisor_khz = 2450000;
    CHECK(fabs(weft__prof_pick_freq(WEFT__PROF_TSC_LFENCE, &in, &src) - 2.45) < 1e-9);
    CHECK(src == WEFT__PROF_FREQ_HYPERVISOR);
    /* a stated figure more than 10 % from the measured one: measured */
    in.hypervisor_khz = 3000000;
    CHECK(weft__prof_pick_freq(WEFT__PROF_TSC_LFENCE, &in, &src) == 2.44);
    CHECK(src == WEFT__PROF_FREQ_MEASURED);
    /* nothing stated */
    memset(&in, 0, sizeof(in));
    in.measured_ghz = 3.1;
    CHECK(weft__prof_pick_freq(WEFT__PROF_TSC_LFENCE, &in, &src) == 3.1 && src == WEFT__PROF_FREQ_MEASURED);
    /* aarch64: CNTFRQ_EL0, 25 MHz; the x86 figures do not apply */
    in.cntfrq_hz = 25e6, in.sysfs_khz = 2000000, in.measured_ghz = 0.025;
    CHECK(fabs(weft__prof_pick_freq(WEFT__PROF_CNTVCT, &in, &src) - 0.025) < 1e-12);
    CHECK(src == WEFT__PROF_FREQ_CNTFRQ);
    /* clock_gettime counts ns: 1 GHz by definition */
    CHECK(weft__prof_pick_freq(WEFT__PROF_CLOCK_GETTIME, &in, &src) == 1.0 && src == WEFT__PROF_FREQ_NONE);
}

int main(void)
{
    double ghz, ovh;
    uint64_t a, b;

    test_pick_clock();
    test_pick_freq();
    /* this CPU's choice: a calibrated timer that moves forward */
    CHECK(weft_prof_select("HLP_post") == WEFT_OK);
    CHECK(weft_prof_timer(&ghz, &ovh) == WEFT_OK && ghz > 0 && ovh >= 0);
    a = weft__prof_start();
    b = weft__prof_stop();
    CHECK(b >= a);
    printf("clock pick: ok (this CPU: %s, %.4f GHz)\n", weft__prof_clock_names[weft__prof_clock], ghz);
    return 0;
}
