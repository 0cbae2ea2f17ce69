//! basalt-bench: not built yet (issue 4). This stub keeps the workspace building.

fn main() {
    eprintln!("basalt-bench is not built yet (issue 4)");
    std::process::exit(1);
}
