/* The check table (attn/check.h) on the CPU backend: every op with a naive reference in double at
 * its full shapes; edge shapes through the same checks (empty reductions, single elements,
 * long reductions, threaded sizes, a random shape each run); and what the CPU backend
 * promises beyond the table: the same bits for every thread count, from its AVX2 and portable
 * kernels and without host memory for its scratch, erf GELU, and the softmax's own exp against
 * libm's. */
#include <sys/resource.h>

#include "attn/check.h"
#include "attn/cpu/cpu_ref.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"

static LbBackend *be;
static LbCheckPlan plan;
static LbCheckTable table;

/* One op at a shape of ours, through the table's check. */
static void op(const char *name, int64_t s0, int64_t s1, int64_t s2, int64_t s3, int64_t s4, int64_t s5, int64_t s6,
               int64_t s7)
{
    const int64_t shape[8] = {s0, s1, s2, s3, s4, s5, s6, s7};
    const size_t from = table.count;
    lb_check(lb_check_op(be, &plan, name, shape, &table) == LB_OK, "%s: %s", name, lb_error_where());
    lb_check_rows(&table, from);
}

static int64_t rnd(int64_t lo, int64_t hi) { return lb_test_randint(lo, hi); }

static void edge_shapes(void)
{
    for (int bias = 0; bias <= 1; bias++)
        for (int gelu = 0; gelu <= 1; gelu++)
            op("linear", 1, 1, 1, bias, gelu, 0, 0, 0);
    op("linear", 300, 128, 200, 1, 1, 0, 0, 0); /* several threads */
    op("linear", 5, 5000, 33, 1, 0, 0, 0, 0);   /* long reduction: smaller packed blocks */
    op("linear", 9, 0, 11, 1, 1, 0, 0, 0);      /* empty reduction: y = gelu(b) */
    op("linear", rnd(1, 40), rnd(1, 90), rnd(1, 70), 1, rnd(0, 1), 0, 0, 0);
    for (int ta = 0; ta <= 1; ta++)
        for (int tb = 0; tb <= 1; tb++) {
            op("bmm", ta, tb, 1, 1, 1, 2, 0, 0);
            op("bmm", ta, tb, 37, 29, 53, 3, 5, 2);     /* gaps, B broadcast */
            op("bmm", ta, tb, 130, 300, 70, 2, 3, 0);   /* threaded */
        }
    op("bmm", 0, 1, 20, 40, 5000, 2, 1, 2); /* long reduction, shared B */
    op("bmm", 1, 0, 9, 17, 0, 2, 1, 0);     /* kdim 0: C = 0 */
    op("bmm", rnd(0, 1), rnd(0, 1), rnd(1, 50), rnd(1, 50), rnd(1, 50), rnd(1, 4), rnd(0, 9), rnd(0, 2));
    op("softmax", 200, 1500, 0, 0, 0, 0, 0, 0); /* threaded */
    op("softmax", 9, 2, 0, 1024, 0, 0, 0, 0);
    op("softmax", 3, 1000, 0, 40960, 0, 0, 0, 0); /* scale 40: most probabilities underflow */
    /* scale -60: the row's max is scale times its smallest x; times its largest, e^(s - max)
     * reaches e^960 and overflows */
    op("softmax", 3, 1000, 0, -61440, 0, 0, 0, 0);
    op("softmax", rnd(1, 50), rnd(1, 3000), 0, rnd(1, 4096), 0, 0, 0, 0);
    op("layernorm", 13, 2, 1, 0, 0, 0, 0, 0);
    op("layernorm", 600, 256, 1, 0, 0, 0, 0, 0); /* threaded */
    op("layernorm", rnd(1, 40), rnd(2, 2000), rnd(0, 1), 0, 0, 0, 0, 0);
    /* an op whose reference on this backend is the op itself is refused, not passed */
    const int64_t shape[8] = {1, 1, 1, 1};
    lb_check(lb_check_op(be, &plan, "embed", shape, &table) == LB_ERR_INVALID, "embed on the CPU: no check of itself");
}

static void gelu_values(void)
{
    /* 0.5 v (1 + erf(v / sqrt 2)) in double (Python's math.erf); the float result within one
     * rounding */
    static const double known[][2] = {
        {1.0, 0.8413447460685429},    {0.0, 0.0},       {-1.0, -0.15865525393145707}, {2.0, 1.9544997361036416},
        {-3.0, -0.00404969409489031}, {0.5, 0.34573123063700656}, {3.0, 2.99595030590511}, {10.0, 10.0},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        double got = lb_gelu_cpu((float)known[i][0]);
        lb_check(fabs(got - known[i][1]) <= 1e-7 * fabs(known[i][1]), "gelu(%g) = %.17g, want %.17g", known[i][0], got,
                 known[i][1]);
    }
    /* the tanh approximation differs from erf by about 1e-4 near |v| = 2: must not be it */
    double t = 0.5 * 2.0 * (1.0 + tanh(sqrt(2.0 / M_PI) * (2.0 + 0.044715 * 8.0)));
    lb_check(fabs(lb_gelu_cpu(2.0f) - t) > 1e-5, "gelu(2) = %.9g is the tanh approximation", (double)lb_gelu_cpu(2.0f));
    lb_check(lb_gelu_cpu(-20.0f) == 0.0f, "gelu(-20) = %g, want 0", (double)lb_gelu_cpu(-20.0f));
}

/* The softmax's own exp against libm's, over the whole range it is used on, and at its edges. */
static void exp_values(void)
{
    int64_t bad = 0;
    double worst = 0.0;
    for (int64_t i = 0; i <= 700000; i++) {
        double x = -(double)i * 1e-3 - (double)lb_rng_uniform(lb_test_seed, (uint64_t)i) * 1e-3;
        if (x < -700.0)
            break;
        double got = lb_exp_nonpos_cpu(x), want = exp(x), rel = fabs(got - want) / want;
        if (!(rel <= 1e-15) && bad++ < 5)
            printf("  exp(%.17g): got %.17g, want %.17g\n", x, got, want);
        if (!(rel <= worst))
            worst = rel;
    }
    lb_check(bad == 0, "lb_exp_nonpos_cpu: %" PRId64 " of 700000 points off libm's exp by more than 1e-15 (worst %.3g)", bad, worst);
    lb_check(lb_exp_nonpos_cpu(0.0) == 1.0, "lb_exp_nonpos_cpu(0) = %.17g", lb_exp_nonpos_cpu(0.0));
    lb_check(lb_exp_nonpos_cpu(-700.5) == 0.0 && lb_exp_nonpos_cpu(-INFINITY) == 0.0, "lb_exp_nonpos_cpu below -700 is not 0");
    lb_check(isnan(lb_exp_nonpos_cpu(NAN)), "lb_exp_nonpos_cpu(NaN) is not NaN");
}

/* The same product with 1 thread and with 5, and from either kernel (AVX2 where the CPU has it,
 * and the portable one), and the softmax's rows likewise: identical bits (each element has one
 * owner and one summation order). */
static void same_bits(void)
{
    int64_t m = 203, n = 171, k = 97, batch = 3;
    float *a = lb_test_alloc(batch * m * k), *b = lb_test_alloc(batch * k * n);
    float *c1 = lb_test_alloc(batch * m * n), *c5 = lb_test_alloc(batch * m * n);
    lb_test_random(a, batch * m * k, -1.0f, 1.0f);
    lb_test_random(b, batch * k * n, -1.0f, 1.0f);
    LbBmm p = {.trans_a = 0, .trans_b = 1, .m = m, .n = n, .kdim = k, .alpha = 0.25f,
               .a = a, .lda = k, .stride_a = m * k, .b = b, .ldb = k, .stride_b = n * k,
               .c = c1, .ldc = n, .stride_c = m * n, .batch = batch};
    lb_cpu_set_threads(1);
    lb_bmm_cpu(&p);
    lb_cpu_set_threads(5);
    p.c = c5;
    lb_bmm_cpu(&p);
    lb_check_same("bmm 1 thread vs 5", c1, c5, batch * m * n);
    lb_linear_cpu(a, b, NULL, c5, m, k, n, 1);
    lb_cpu_set_threads(1);
    lb_linear_cpu(a, b, NULL, c1, m, k, n, 1);
    lb_check_same("linear 1 thread vs 5", c1, c5, m * n);
    lb_cpu_set_threads(0);
    lb_bmm_cpu(&p);
    setenv("LB_CPU_KERNEL", "generic", 1);
    p.c = c1;
    lb_bmm_cpu(&p);
    lb_check_same("bmm, fast kernel vs portable kernel", c1, c5, batch * m * n);
    lb_test_random(c1, 7 * 1029, -20.0f, 20.0f); /* 1029: not a multiple of 8, the tails too */
    memcpy(c5, c1, (size_t)(7 * 1029) * sizeof *c1);
    lb_softmax_cpu(c1, 7, 1029, 0.7f);
    unsetenv("LB_CPU_KERNEL");
    lb_softmax_cpu(c5, 7, 1029, 0.7f);
    lb_check_same("softmax, fast row vs portable row", c5, c1, 7 * 1029);
    free(a);
    free(b);
    free(c1);
    free(c5);
}

/* Bytes mapped by this process now (/proc/self/statm's first field, in pages); 0 when unknown. */
static size_t mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f && fscanf(f, "%llu", &pages) != 1)
        pages = 0;
    if (f)
        fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Out of host memory for their scratch (an address-space limit a little above what is mapped),
 * the product and the softmax fall back to plain loops: the same bits as with it. The scratch
 * asked for is past 32 MiB (panels of 4 rows and 8 columns of a 400000-long sum; a row of
 * exponentials of 4.5 million), which glibc's malloc always maps anew rather than take from
 * memory freed before; and this runs first, before threads give malloc other arenas whose
 * reserved space it could grow into. A request of 32 MiB must fail under the limit, or the
 * fallback did not run. One thread, so that no thread stack is needed either. AddressSanitizer's
 * allocator aborts on a failed map: skipped. */
#if defined(__SANITIZE_ADDRESS__)
#define LB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* Clang's spelling */
#define LB_TEST_ASAN 1
#endif
#endif

static void no_scratch(void)
{
#if defined(LB_TEST_ASAN)
    return;
#endif
    const int64_t m = 4, n = 8, k = 400000, cols = 4500000;
    float *a = lb_test_alloc(k * m), *b = lb_test_alloc(k * n), *c1 = lb_test_alloc(m * n), *c2 = lb_test_alloc(m * n);
    float *s1 = lb_test_alloc(cols), *s2 = lb_test_alloc(cols);
    lb_test_random(a, k * m, -1.0f, 1.0f);
    lb_test_random(b, k * n, -1.0f, 1.0f);
    lb_test_random(s1, cols, -8.0f, 8.0f);
    memcpy(s2, s1, (size_t)cols * sizeof *s1);
    /* A^T (k, m) stored: neither operand's rows contiguous along the sum */
    LbBmm p = {.trans_a = 1, .trans_b = 0, .m = m, .n = n, .kdim = k, .alpha = 0.25f, .a = a, .lda = m, .b = b,
               .ldb = n, .c = c1, .ldc = n, .batch = 1};
    lb_cpu_set_threads(1);
    lb_bmm_cpu(&p);
    lb_softmax_cpu(s1, 1, cols, 0.7f);
    struct rlimit old, lim;
    const size_t now = mapped_bytes();
    if (lb_check(now > 0 && getrlimit(RLIMIT_AS, &old) == 0, "the address space in use is known")) {
        lim = old;
        lim.rlim_cur = (rlim_t)(now + ((size_t)256 << 10));
        const int limited = setrlimit(RLIMIT_AS, &lim) == 0;
        void *probe = malloc((size_t)32 << 20);
        p.c = c2;
        lb_bmm_cpu(&p);
        lb_softmax_cpu(s2, 1, cols, 0.7f);
        if (limited)
            setrlimit(RLIMIT_AS, &old);
        lb_check(limited && !probe, "the address space limited: 32 MiB cannot be had");
        free(probe);
        lb_check_same("bmm without scratch", c1, c2, m * n);
        lb_check_same("softmax without scratch", s1, s2, cols);
    }
    lb_cpu_set_threads(0);
    free(a), free(b), free(c1), free(c2), free(s1), free(s2);
}

int main(void)
{
    lb_test_init("test_ops");
    no_scratch(); /* first, while the heap has no memory freed by the rest to hand back */
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) == LB_OK, "open: %s", lb_error_where()))
        return lb_test_finish("test_ops");
    plan.seed = lb_test_seed;
    lb_check(lb_check_backend(be, &plan, &table) == LB_OK, "the table ran: %s", lb_error_where());
    lb_check_rows(&table, 0);
    edge_shapes();
    gelu_values();
    exp_values();
    same_bits();
    lb_check_table_free(&table);
    be->ops->close(be);
    return lb_test_finish("test_ops");
}
