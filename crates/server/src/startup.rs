//! Start-up and shutdown: logging, working directory, keyspace, listeners, event loop
//! threads, signal handling, the 100 ms sampler, and the orderly exit.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, IoEngine};
use crate::net::{listen, Engine};
use crate::waker::LoopWaker;
use crate::shared::Shared;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("Can't chdir to '{0}': {1}")]
    Chdir(String, std::io::Error),
    #[error("Could not create server TCP listening socket {0}: {1}")]
    Listen(String, std::io::Error),
    #[error("Can't open the log file: {0}")]
    Log(std::io::Error),
    #[error("Invalid bind address '{0}'")]
    BadBind(String),
    #[error("Failed to start event loop: {0}")]
    Loop(std::io::Error),
    #[error("{0}")]
    Aof(#[from] crate::aof::load::LoadError),
    #[error("{0}")]
    Snapshot(String),
    #[error("{0}")]
    Acl(String),
    #[error("Failed to configure TLS: {0}")]
    Tls(String),
}

/// The ACL users of the config file's `user` lines, or of the ACL file (`aclfile`),
/// never both (Redis refuses that too).
fn load_users(shared: &Shared) -> Result<(), StartError> {
    let (lines, aclfile, all_channels) = {
        let c = shared.config.read();
        let file = c.recorded.get("aclfile").filter(|f| !f.is_empty()).cloned();
        (c.users.clone(), file, c.recorded.get("acl-pubsub-default").is_some_and(|v| v == "allchannels"))
    };
    if !lines.is_empty() && aclfile.is_some() {
        return Err(StartError::Acl("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into()));
    }
    for words in &lines {
        // (The config parser refuses a `user` line without a name.)
        let Some((name, rules)) = words.split_first() else { continue };
        // The default user exists already: its line starts from nothing (Redis's reset).
        let mut all: Vec<&[u8]> = if shared.acl.get(name).is_some() { vec![b"reset"] } else { Vec::new() };
        all.extend(rules.iter().map(|r| r.as_bytes()));
        if let Err((rule, e)) = shared.acl.set_user(name, &all, all_channels) {
            return Err(StartError::Acl(format!(
                "Error loading ACL rule '{}' for the user named '{name}': {}",
                String::from_utf8_lossy(&rule),
                crate::acl::user::rule_error_text(e)
            )));
        }
    }
    if let Some(file) = aclfile {
        crate::command::acl::load_file(&shared.acl, std::path::Path::new(&file), all_channels)
            .map_err(|e| StartError::Acl(format!("Aborting Redis startup because of ACL errors: {e}")))?;
    }
    shared.acl_changed();
    Ok(())
}

fn bind_addrs(config: &Config) -> Result<Vec<(IpAddr, bool)>, StartError> {
    let mut out = Vec::new();
    for b in &config.bind {
        let (optional, name) = match b.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, b.as_str()),
        };
        let ip: IpAddr = match name {
            "*" => IpAddr::from([0, 0, 0, 0]),
            "::*" => "::".parse().map_err(|_| StartError::BadBind(b.clone()))?,
            other => other.parse().map_err(|_| StartError::BadBind(b.clone()))?,
        };
        out.push((ip, optional));
    }
    Ok(out)
}

/// The engine `io-engine auto` picks: the one that measured better on this machine's
/// benchmark (docs/benchmarks.md), when the kernel supports it.
const DEFAULT_ENGINE: Engine = Engine::Uring;

/// Starts one thread per event loop and waits until each is running (a uring loop
/// builds its ring on its own thread, as SINGLE_ISSUER requires).
fn start_loops(
    engine: Engine,
    shared: &Arc<Shared>,
    per_loop: Vec<Vec<std::net::TcpListener>>,
) -> Result<Vec<std::thread::JoinHandle<()>>, StartError> {
    let mut wakers = Vec::new();
    let mut handles = Vec::new();
    let arrivals = Arc::new(crate::net::balance::Arrivals::new(per_loop.len()));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), std::io::Error>>();
    for (i, lists) in per_loop.into_iter().enumerate() {
        let shared = shared.clone();
        let arrivals = arrivals.clone();
        let ready = ready_tx.clone();
        let spawn = std::thread::Builder::new().name(format!("loop-{i}")).stack_size(LOOP_STACK_BYTES);
        let handle = match engine {
            Engine::Epoll => {
                let (ev, waker) =
                    crate::net::epoll::EventLoop::new(i, shared, arrivals, lists).map_err(StartError::Loop)?;
                wakers.push(waker);
                let _ = ready.send(Ok(()));
                spawn.spawn(move || ev.run())
            }
            Engine::Uring => {
                let fd = crate::net::uring::new_waker_fd().map_err(StartError::Loop)?;
                let loop_fd = fd.try_clone().map_err(StartError::Loop)?;
                wakers.push(Arc::new(LoopWaker::EventFd(fd)));
                spawn.spawn(move || match crate::net::uring::EventLoop::new(i, shared, arrivals, lists, loop_fd) {
                    Ok(ev) => {
                        let _ = ready.send(Ok(()));
                        ev.run();
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                    }
                })
            }
        }
        .map_err(StartError::Loop)?;
        handles.push(handle);
    }
    shared.wakers.install(wakers);
    drop(ready_tx);
    for _ in 0..handles.len() {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                shared.request_shutdown();
                return Err(StartError::Loop(e));
            }
            Err(_) => break,
        }
    }
    Ok(handles)
}

/// Loads the data: the append-only log when it is on (Redis ignores dump.rdb then),
/// else dump.rdb if there is one. Returns the log's writer, started on the file new
/// records go to.
fn load_data(shared: &Arc<Shared>, dir: &std::path::Path) -> Result<Option<std::thread::JoinHandle<()>>, StartError> {
    match shared.aof.as_ref().cloned() {
        Some(aof) => {
            let mut replayer = crate::command::replay::Replayer::new(shared, crate::command::registry::table(), "aof-loader");
            let target = crate::aof::load::open_and_replay(shared, dir, &mut replayer)?;
            Ok(Some(crate::aof::writer::spawn(aof, target).map_err(StartError::Loop)?))
        }
        None => {
            crate::snapshot::load_at_start(shared).map_err(StartError::Snapshot)?;
            Ok(None)
        }
    }
}

/// How the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// SHUTDOWN, a signal's shutdown, or one that stopped the load at start.
    Clean,
    /// A second SIGINT during the shutdown's wait: as Redis, exit status 1.
    Insisted,
}

/// Runs the server until SIGTERM, SIGINT or SHUTDOWN.
/// Each event loop's stack: scripts recurse as deep as the data they convert (cjson's
/// 1000 levels, a reply's 512), which Rust's 2 MiB default for threads does not hold in
/// a debug build. Only the pages touched are memory.
const LOOP_STACK_BYTES: usize = 16 << 20;

pub fn run(mut config: Config) -> Result<Exit, StartError> {
    crate::log::init(config.loglevel, &config.logfile).map_err(StartError::Log)?;
    std::env::set_current_dir(&config.dir)
        .map_err(|e| StartError::Chdir(config.dir.display().to_string(), e))?;
    config.dir = std::env::current_dir().unwrap_or_else(|_| config.dir.clone());
    crate::log::notice(&format!(
        "Basalt {} starting, pid={}, Redis {} compatible",
        crate::VERSION,
        std::process::id(),
        crate::version::REDIS_VERSION
    ));
    let engine = match config.io_engine {
        IoEngine::Epoll => Engine::Epoll,
        IoEngine::Uring if crate::net::uring::available() => Engine::Uring,
        IoEngine::Uring => {
            crate::log::warning("io_uring is not available on this kernel: using the epoll engine");
            Engine::Epoll
        }
        IoEngine::Auto if DEFAULT_ENGINE == Engine::Uring && !crate::net::uring::available() => Engine::Epoll,
        IoEngine::Auto => DEFAULT_ENGINE,
    };
    let threads = config.threads.max(1);

    // Listeners: one per event loop per address (SO_REUSEPORT). With port 0 the first
    // bind picks the port and the others reuse it.
    let addrs = bind_addrs(&config)?;
    let mut per_loop: Vec<Vec<std::net::TcpListener>> = (0..threads).map(|_| Vec::new()).collect();
    for (ip, optional) in addrs {
        // SO_REUSEPORT would let this server join the listeners of another process on
        // the same port (both then serve half the connections, each with its own data).
        // A plain bind first fails as Redis's does when the port is taken.
        if config.port != 0 {
            let addr = SocketAddr::new(ip, config.port);
            match crate::net::wait_port_free(addr) {
                Ok(()) => {}
                Err(_) if optional => continue,
                Err(e) => return Err(StartError::Listen(addr.to_string(), e)),
            }
        }
        for (i, lists) in per_loop.iter_mut().enumerate() {
            let addr = SocketAddr::new(ip, config.port);
            match listen(addr, config.tcp_backlog) {
                Ok(l) => {
                    if i == 0 && config.port == 0 {
                        config.port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                    }
                    lists.push(l);
                }
                Err(_) if optional => break,
                Err(e) => return Err(StartError::Listen(addr.to_string(), e)),
            }
        }
    }

    // TLS listeners (`tls-port`), beside the plain ones: the settings are checked now,
    // so that a bad certificate stops the start as in Redis; with `tls-replication yes`
    // the replica's side too (its link builds them again at each connection).
    if config.recorded.get("tls-replication").is_some_and(|v| v == "yes") {
        crate::tls::build_client(&config.tls_settings()).map_err(StartError::Tls)?;
    }
    let tls_port = config.tls_port();
    let tls_config = if tls_port != 0 {
        if tls_port == config.port {
            return Err(StartError::Tls("tls-port must differ from port".into()));
        }
        let c = crate::tls::build(&config.tls_settings()).map_err(StartError::Tls)?;
        for (ip, optional) in bind_addrs(&config)? {
            let addr = SocketAddr::new(ip, tls_port);
            if let Err(e) = crate::net::wait_port_free(addr) {
                if optional {
                    continue;
                }
                return Err(StartError::Listen(addr.to_string(), e));
            }
            for lists in per_loop.iter_mut() {
                match listen(addr, config.tcp_backlog) {
                    Ok(l) => lists.push(l),
                    Err(_) if optional => break,
                    Err(e) => return Err(StartError::Listen(addr.to_string(), e)),
                }
            }
        }
        Some(c)
    } else {
        None
    };

    // Several shards per loop keep lock contention low; at least 256, so that a
    // background save's first touch of a shard (which encodes it, see store::db) stays
    // short; at most MAX_SHARDS because a SCAN cursor carries the shard index in 12 bits.
    let shards = (threads * 16).next_power_of_two().clamp(256, crate::command::keys::MAX_SHARDS);
    let keyspace = store::Keyspace::new(config.databases, shards, store::Clock::System);
    let commands = crate::command::registry::table().entries.len();
    let port = config.port;
    let dir = config.dir.clone();
    let shared = Arc::new(Shared::new(config, keyspace, threads, commands));
    let _ = shared.io_engine.set(engine.name());
    if let Some(c) = tls_config {
        shared.tls.set(c);
    }
    let _ = shared.me.set(Arc::downgrade(&shared));
    // A replica's link applies its master's stream through the dispatcher, as the log's
    // replay does.
    crate::replication::replica::install(Box::new(|s| Box::new(crate::command::replay::Replayer::for_master(s, crate::command::registry::table()))));
    load_users(&shared)?;
    // io_uring loops make the log durable themselves under `always` (aof/commit.rs),
    // whether the log is on from the start or turned on later.
    shared
        .aof
        .object()
        .inline_commits
        .store(engine == crate::net::Engine::Uring, std::sync::atomic::Ordering::Release);

    // A write past RLIMIT_FSIZE must fail with EFBIG (reported, retried, -MISCONF for
    // writes) instead of killing the process with SIGXFSZ.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };

    shared.memory.set_startup_allocated(crate::allocator::allocated_bytes());
    // Temp files of saves and rewrites that a crash cut short: each can be a whole copy
    // of the data set, and nothing else would ever remove them.
    let aof_dir = dir.join(&shared.config.read().appenddirname);
    for folder in [dir.as_path(), aof_dir.as_path()] {
        for name in crate::fsutil::remove_stale_temp_files(folder) {
            crate::log::notice(&format!("Removed {name}, left by an interrupted save or rewrite"));
        }
    }
    // The loops serve while the data loads, as Redis does: every command not flagged
    // `loading` (INFO, CONFIG, CLIENT, SHUTDOWN run) is answered `-LOADING`, so that a
    // client, Sentinel or a monitor sees a server loading, not one that does not answer.
    // Set before the signals are caught: a stop asked for before the load must not save
    // the empty keyspace over the data about to be loaded.
    let loading = shared.begin_loading(0, true);
    // SIGTERM and SIGINT from here on ask for a clean stop (during the load below too).
    let signal_shared = shared.clone();
    let mut signals =
        signal_hook::iterator::Signals::new([signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT])
            .map_err(StartError::Loop)?;
    let signal_handle = signals.handle();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let sigint = sig == signal_hook::consts::SIGINT;
                if signal_shared.shutdown.load(Ordering::SeqCst) {
                    continue;
                }
                if signal_shared.shutdown_wait.waiting() || signal_shared.exiting.load(Ordering::SeqCst) {
                    // A SIGINT while the shutdown waits for its replicas, or saves: now,
                    // as Redis ("You insist"; a save already running ends first).
                    if sigint {
                        crate::log::warning("You insist... exiting now.");
                        signal_shared.insisted.store(true, Ordering::SeqCst);
                        signal_shared.request_shutdown();
                    }
                    continue;
                }
                let name = if sigint { "SIGINT" } else { "SIGTERM" };
                crate::log::warning(&format!("Received {name} scheduling shutdown..."));
                // A master whose replicas lag waits for them first (`crate::shutdown`);
                // `shutdown-on-sigterm` / `-sigint` say how.
                let ask = crate::shutdown::on_signal(&signal_shared, sigint);
                // The save rules decide now, as for SHUTDOWN: a save that fails keeps
                // the server up (Redis's "errors trying to shut down").
                let (save, force) = (crate::shutdown::command_save(&signal_shared, ask.save), ask.force);
                let now_ms = store::Clock::System.now_ms();
                if crate::shutdown::begin(&signal_shared, ask, false, now_ms) == crate::shutdown::Begun::Now
                    && !crate::shutdown::exit(&signal_shared, save, force)
                {
                    // As Redis: the save failed (or the log's first rewrite after a
                    // full sync runs), the server goes on.
                    crate::log::warning("Errors trying to shut down the server. Check the logs for more information.");
                }
            }
        })
        .map_err(StartError::Loop)?;

    // The load holds the gates for reading, as a replica's load: nothing that needs the
    // keyspace alone (EXEC, a capture) starts meanwhile.
    let handles = start_loops(engine, &shared, per_loop)?;
    let loaded = {
        let _gates = shared.all_gates_shared();
        load_data(&shared, &dir)
    };
    match loaded {
        Ok(writer) => *shared.aof.writer.lock() = writer,
        Err(e) => {
            // A shutdown asked for during the load stops it: exit without saving half a
            // data set (as Redis), and without changing the log.
            let stopped = shared.shutdown.load(Ordering::SeqCst);
            shared.request_shutdown();
            for h in handles {
                let _ = h.join();
            }
            signal_handle.close();
            if stopped {
                crate::log::warning("The shutdown stopped the load: exiting without saving.");
                crate::log::notice("Basalt is now ready to exit, bye bye...");
                return Ok(Exit::Clean);
            }
            return Err(e);
        }
    };
    // From now on an expired key's removal is propagated, as Redis's DEL, to the log and
    // the replicas (after the load, which must not log what it replays).
    let weak = Arc::downgrade(&shared);
    shared.keyspace.events().set_expire_hook(Box::new(move |db, key, now_ms, why| {
        let Some(shared) = weak.upgrade() else { return true };
        crate::propagate::removal(&shared, db, key, now_ms, why)
    }));

    let saver = {
        let s = shared.clone();
        std::thread::Builder::new()
            .name("snapshot".into())
            .spawn(move || crate::snapshot::run_saver(s))
            .map_err(StartError::Loop)?
    };
    // Clients' commands run from here on (after the hook: a key a client finds past
    // its time is removed with its DEL logged).
    drop(loading);
    let replicaof = shared.config.read().replicaof.clone();
    if let Some((host, port)) = replicaof {
        crate::replication::replica::follow(&shared, &host, port);
    }

    crate::log::notice(&format!(
        "Server initialized: {threads} event loop(s) on {}, {shards} shards per database, port {port}",
        engine.name()
    ));
    crate::log::notice("Ready to accept connections tcp");
    let supervisor = {
        let c = shared.config.read();
        let get = |name: &str| c.recorded.get(name).cloned().unwrap_or_default();
        if !get("unixsocket").is_empty() {
            crate::log::warning("unixsocket is set, but Basalt listens on TCP only: no Unix socket was made (clients must connect by TCP)");
        }
        crate::supervise::from_setting(&get("supervised"))
    };
    crate::supervise::ready(supervisor);

    while !shared.shutdown.load(Ordering::SeqCst) {
        crate::info::sample(&shared);
        std::thread::sleep(Duration::from_millis(100));
    }
    for h in handles {
        let _ = h.join();
    }
    crate::snapshot::stop_saver(&shared);
    let _ = saver.join();
    // (SHUTDOWN and a signal's shutdown made their final save, or chose not to, in
    // `shutdown::exit`; a second SIGINT makes none.)
    // (The writer exists once the log was on, from the start or by CONFIG SET.)
    let writer = shared.aof.writer.lock().take();
    if let Some(writer) = writer {
        // Everything the loops appended is written and synced before the exit (also
        // after a second SIGINT: Redis drops its log's buffer then, Basalt loses no
        // acknowledged write).
        shared.aof.object().stop();
        let _ = writer.join();
    }
    signal_handle.close();
    if shared.insisted.load(Ordering::SeqCst) {
        return Ok(Exit::Insisted);
    }
    crate::supervise::stopping(supervisor);
    crate::log::notice("Basalt is now ready to exit, bye bye...");
    Ok(Exit::Clean)
}
