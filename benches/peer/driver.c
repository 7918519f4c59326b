/*
 * Times CasADi's generated steps (benches/peer/casadi_models.py) with the protocol of our
 * timing binary (benches/peer/ours.rs): restart from the initial state every 1000 steps (the
 * carried acceleration recomputed by `<case>_init`, as ours recomputes it), time whole runs
 * with clock_gettime(CLOCK_MONOTONIC), and print the states after 1 and 1000 steps.
 *
 *   driver <case> <steps> <repetitions>
 *
 * prints, in the format benches/peer/compare.py reads:
 *
 *   case zss_dp
 *   ns_per_step 39.1 38.7 ...   (one time per repetition)
 *   state1 q... v...
 *   state1000 q... v...
 */
#define _POSIX_C_SOURCE 199309L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer_models.h"

typedef int (*casadi_function)(const casadi_real **, casadi_real **, casadi_int *, casadi_real *,
                               int);
typedef int (*casadi_work)(casadi_int *, casadi_int *, casadi_int *, casadi_int *);

/* One case: its name, the sizes of (q, v) and of the state, its functions and start. */
struct peer_case {
    const char *name;
    int qv;
    int size;
    casadi_function init;
    casadi_work init_work;
    casadi_function step;
    casadi_work step_work;
    const double *start;
};

#include "peer_cases.inc"

enum { RESTART = 1000 };

/* The work arrays of one generated function. */
struct work {
    const casadi_real **arg;
    casadi_real **res;
    casadi_int *iw;
    casadi_real *w;
};

static int allocate(casadi_work sizes, struct work *work) {
    casadi_int n_arg, n_res, n_iw, n_w;
    if (sizes(&n_arg, &n_res, &n_iw, &n_w)) return 1;
    work->arg = calloc((size_t)n_arg + 1, sizeof *work->arg);
    work->res = calloc((size_t)n_res + 1, sizeof *work->res);
    work->iw = calloc((size_t)n_iw + 1, sizeof *work->iw);
    work->w = calloc((size_t)n_w + 1, sizeof *work->w);
    return !(work->arg && work->res && work->iw && work->w);
}

/* Calls `f` with work `work` on `in`, writing `out`. */
static int call(casadi_function f, struct work *work, const double *in, double *out) {
    work->arg[0] = in;
    work->res[0] = out;
    return f(work->arg, work->res, work->iw, work->w, 0);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void print_state(const char *label, const double *state, int qv) {
    printf("%s", label);
    for (int i = 0; i < qv; i++) printf(" %.17g", state[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: driver <case> <steps> <repetitions>\n");
        return 2;
    }
    const struct peer_case *c = NULL;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        if (strcmp(CASES[i].name, argv[1]) == 0) c = &CASES[i];
    long steps = atol(argv[2]), repetitions = atol(argv[3]);
    if (!c || steps <= 0 || steps % RESTART != 0 || repetitions <= 0) {
        fprintf(stderr, "unknown case, or steps not a positive multiple of %d\n", RESTART);
        return 2;
    }
    struct work init_work, step_work;
    double *start = calloc((size_t)c->size, sizeof(double));
    double *state = calloc((size_t)c->size, sizeof(double));
    double *next = calloc((size_t)c->size, sizeof(double));
    if (!start || !state || !next || allocate(c->init_work, &init_work) ||
        allocate(c->step_work, &step_work)) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    int failed = call(c->init, &init_work, c->start, start);
    memcpy(state, start, (size_t)c->size * sizeof(double));
    double state1[c->size], state1000[c->size];
    for (int k = 0; k < RESTART && !failed; k++) {
        failed |= call(c->step, &step_work, state, next);
        double *swap = state;
        state = next;
        next = swap;
        if (k == 0) memcpy(state1, state, (size_t)c->size * sizeof(double));
    }
    memcpy(state1000, state, (size_t)c->size * sizeof(double));
    printf("case %s\nns_per_step", c->name);
    for (long r = 0; r < repetitions && !failed; r++) {
        double begin = now_ns();
        long since_restart = RESTART;
        for (long k = 0; k < steps; k++) {
            if (since_restart == RESTART) {
                failed |= call(c->init, &init_work, c->start, state);
                since_restart = 0;
            }
            failed |= call(c->step, &step_work, state, next);
            double *swap = state;
            state = next;
            next = swap;
            since_restart++;
        }
        printf(" %.4g", (now_ns() - begin) / (double)steps);
    }
    printf("\n");
    if (failed) {
        fprintf(stderr, "a generated function failed\n");
        return 1;
    }
    print_state("state1", state1, c->qv);
    print_state("state1000", state1000, c->qv);
    return 0;
}
