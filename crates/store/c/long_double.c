/*
 * INCRBYFLOAT and HINCRBYFLOAT arithmetic in C `long double`, as Redis does it: the
 * operands are parsed with strtold, added in long double (80-bit on x86-64), and the
 * sum printed with "%.17Lf" and its trailing zeros removed. Rust has no long double,
 * and exact decimal arithmetic differs from it wherever a value has no exact binary
 * form (Redis prints 869.1 - 0.1 as "869.09999999999999998"), so this file does the
 * three steps with the same C library Redis uses. See src/types/long_double.rs.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Redis's MAX_LONG_DOUBLE_CHARS: operands this long or longer are not valid, and the
 * printed sum fits in this many bytes (long double's largest finite value prints as
 * about 4,950 characters with 17 fractional digits). */
#define LD_CHARS (5 * 1024)

/* Parses `len` bytes at `s` as Redis does for a long double operand: all of them must
 * be exactly one strtold number (no leading space, nothing after it, no NUL inside),
 * neither NaN nor out of range. Returns 1 and sets *out, or 0. */
static int parse_ld(const char *s, size_t len, long double *out) {
    char buf[LD_CHARS];
    char *end;
    long double v;
    if (len == 0 || len >= sizeof(buf)) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || (size_t)(end - buf) != len || isnan(v)) return 0;
    if (errno == ERANGE && (isinf(v) || v == 0.0L)) return 0;
    *out = v;
    return 1;
}

/* 1 when `s` is a valid operand, with *finite set; 0 when it is not. */
int basalt_ld_check(const char *s, size_t len, int *finite) {
    long double v;
    if (!parse_ld(s, len, &v)) return 0;
    *finite = isfinite(v) ? 1 : 0;
    return 1;
}

/* current + increment, printed into out (at least LD_CHARS bytes). Returns the length,
 * or -1 when `current` is not a valid operand, -2 when `increment` is not, -3 when the
 * sum is NaN or infinite. */
int basalt_ld_add(const char *cur, size_t cur_len, const char *inc, size_t inc_len,
                  char *out, size_t out_len) {
    long double a, b, sum;
    int n;
    if (!parse_ld(cur, cur_len, &a)) return -1;
    if (!parse_ld(inc, inc_len, &b)) return -2;
    sum = a + b;
    if (isnan(sum) || isinf(sum)) return -3;
    n = snprintf(out, out_len, "%.17Lf", sum);
    if (n < 0 || (size_t)n + 1 > out_len) return -3;
    if (memchr(out, '.', (size_t)n) != NULL) {
        while (out[n - 1] == '0') n--;
        if (out[n - 1] == '.') n--;
    }
    if (n == 2 && out[0] == '-' && out[1] == '0') {
        out[0] = '0';
        n = 1;
    }
    return n;
}
