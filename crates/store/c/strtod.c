/*
 * SORT's numeric weights, parsed as Redis parses them: the C library's strtod over the
 * value up to its first NUL. That accepts what Rust's float parser does not (leading
 * white space, hexadecimal "0x10", the empty string as 0) and rejects what it accepts
 * (values out of double's range, including those that underflow, with ERANGE), so the
 * parse is done here with the C library Redis uses. See src/types/strtod.rs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* `s` is NUL-terminated. Returns 1 and sets *out when strtod read up to a NUL, did not
 * set ERANGE and the value is not NaN; 0 otherwise. */
int basalt_sort_strtod(const char *s, double *out) {
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (end[0] != '\0' || errno == ERANGE || isnan(v)) return 0;
    *out = v;
    return 1;
}
