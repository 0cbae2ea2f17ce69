//! In-process command harness for unit tests and the fuzz targets: a keyspace on a
//! manual clock, one client, and `run` that executes a command and returns the decoded
//! reply. No sockets.

use std::sync::Arc;

use resp::Frame;

use super::dispatch::execute;
use super::registry::table;
use super::{Client, Ctx};
use crate::config::Config;
use crate::shared::{ClientInfo, Shared};

pub struct Harness {
    pub shared: Arc<Shared>,
    pub client: Client,
    pub clock: store::Clock,
    rng: fastrand::Rng,
}

impl Default for Harness {
    fn default() -> Harness {
        Harness::new()
    }
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_config(Config::default())
    }

    /// A harness whose server runs with `config` (e.g. `appendonly` on).
    pub fn with_config(config: Config) -> Harness {
        let clock = store::Clock::manual(1_700_000_000_000);
        let keyspace = store::Keyspace::new(16, 4, clock.clone());
        let shared = Arc::new(Shared::new(config, keyspace, 1, table().entries.len()));
        let info = Arc::new(ClientInfo::new(1, "127.0.0.1:1".into(), "127.0.0.1:6379".into(), -1, 0, 0));
        shared.clients.lock().insert(1, info.clone());
        let client = Client::new(info, true);
        Harness { shared, client, clock, rng: fastrand::Rng::with_seed(7) }
    }

    /// Runs one command (words split on spaces) and returns the raw reply bytes.
    pub fn raw(&mut self, line: &str) -> Vec<u8> {
        let words: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        self.raw_args(&words)
    }

    pub fn raw_args(&mut self, args: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        let stats = self.shared.thread_stats[0].clone();
        let mut ctx = Ctx {
            shared: &self.shared,
            table: table(),
            client: &mut self.client,
            out: &mut out,
            now_ms: self.clock.now_ms(),
            stats: &stats,
            rng: &mut self.rng,
            request: None,
        };
        execute(&mut ctx, args);
        out
    }

    /// Runs a command given as arguments and decodes its reply.
    pub fn run_args(&mut self, args: &[&[u8]]) -> Frame {
        let out = self.raw_args(args);
        match resp::decode_frame(&out, u64::MAX) {
            Ok(Some((f, n))) if n == out.len() => f,
            other => panic!("bad reply to {args:?}: {other:?} from {:?}", String::from_utf8_lossy(&out)),
        }
    }

    /// Runs a command and decodes its reply.
    pub fn run(&mut self, line: &str) -> Frame {
        let out = self.raw(line);
        match resp::decode_frame(&out, u64::MAX) {
            Ok(Some((f, n))) if n == out.len() => f,
            other => panic!("bad reply to {line:?}: {other:?} from {:?}", String::from_utf8_lossy(&out)),
        }
    }

    /// Runs a command and returns its reply rendered compactly for assertions:
    /// +OK -> "OK", :1 -> "1", bulk -> the text, nil -> "(nil)", -ERR x -> "ERR x",
    /// arrays -> "[a,b]".
    pub fn text(&mut self, line: &str) -> String {
        render(&self.run(line))
    }

    pub fn advance_ms(&self, ms: i64) {
        self.clock.advance_ms(ms);
    }
}

pub fn render(f: &Frame) -> String {
    match f {
        Frame::Simple(s) | Frame::Error(s) | Frame::Bulk(s) => String::from_utf8_lossy(s).into_owned(),
        Frame::Integer(n) => n.to_string(),
        Frame::Null => "(nil)".into(),
        Frame::Array(v) | Frame::Set(v) | Frame::Push(v) => {
            format!("[{}]", v.iter().map(render).collect::<Vec<_>>().join(","))
        }
        Frame::Map(kv) => format!(
            "{{{}}}",
            kv.iter().map(|(k, v)| format!("{}:{}", render(k), render(v))).collect::<Vec<_>>().join(",")
        ),
        Frame::Double(d) => d.to_string(),
        Frame::Boolean(b) => b.to_string(),
        Frame::BigNumber(s) => String::from_utf8_lossy(s).into_owned(),
        Frame::Verbatim { text, .. } => String::from_utf8_lossy(text).into_owned(),
        other => format!("{other:?}"),
    }
}
