//! Compiles the C long double arithmetic of INCRBYFLOAT (`c/long_double.c`, see
//! `src/types/long_double.rs`).

fn main() {
    println!("cargo:rerun-if-changed=c/long_double.c");
    cc::Build::new()
        .file("c/long_double.c")
        .warnings(true)
        .compile("basalt_long_double");
}
