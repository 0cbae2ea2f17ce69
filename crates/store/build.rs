//! Compiles the C number parsing and arithmetic that must match Redis's C library
//! exactly: INCRBYFLOAT's long double (`c/long_double.c`, see `src/types/long_double.rs`)
//! and SORT's strtod (`c/strtod.c`, see `src/types/strtod.rs`).

fn main() {
    println!("cargo:rerun-if-changed=c/long_double.c");
    println!("cargo:rerun-if-changed=c/strtod.c");
    cc::Build::new()
        .file("c/long_double.c")
        .file("c/strtod.c")
        .warnings(true)
        .compile("basalt_c_numbers");
}
