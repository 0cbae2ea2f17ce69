//! The basalt-server binary: `basalt-server [config-file] [--name value ...]`.

use basalt_server::config::{self, Startup};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const USAGE: &str = "Usage: basalt-server [/path/to/basalt.conf] [options]
       basalt-server - (read config from stdin)
       basalt-server -v or --version
       basalt-server -h or --help

Options are redis.conf directives written as --name value, for example:
       basalt-server --port 6380 --dir ./data --threads 2
       basalt-server /etc/basalt.conf --loglevel verbose";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match config::from_args(&args) {
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
        Ok(Startup::Version) => {
            println!(
                "Basalt server v={} (Redis {} compatible)",
                basalt_server::VERSION,
                basalt_server::version::REDIS_VERSION
            );
        }
        Ok(Startup::Help) => println!("{USAGE}"),
        Ok(Startup::Run(config)) => {
            // rename-command, before anything looks a command up.
            let pairs: Vec<(String, String)> = config.rename_commands.iter().map(|r| (r.from.clone(), r.to.clone())).collect();
            if let Err((n, reason)) = basalt_server::command::table::install_renames(basalt_server::command::registry::table(), &pairs) {
                let directive = config.rename_commands.get(n).cloned().unwrap_or_default();
                eprintln!("{}", directive.error(reason));
                std::process::exit(1);
            }
            match basalt_server::startup::run(*config) {
                Ok(basalt_server::startup::Exit::Clean) => {}
                Ok(basalt_server::startup::Exit::Insisted) => std::process::exit(1),
                Err(e) => {
                    eprintln!("{e:#}");
                    std::process::exit(1);
                }
            }
        }
    }
}
