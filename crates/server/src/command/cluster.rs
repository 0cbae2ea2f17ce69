//! The cluster commands of a server that runs without cluster mode, as Redis 7.0 with
//! `cluster-enabled no` answers them: CLUSTER (every subcommand, HELP included),
//! READONLY, READWRITE and ASKING reply "This instance has cluster support disabled".
//! Basalt has no cluster mode; what it has is this answer, which cluster-aware clients
//! read to fall back to a single node (redis-py's and go-redis's cluster clients, Jedis,
//! redis_exporter's cluster probe). Unknown subcommands and wrong arities are refused
//! before the handler runs, from the table below, as Redis refuses them.
//!
//! RESTORE-ASKING, the other command of the cluster group, is RESTORE (`dump.rs`).

use super::flags::*;
use super::{arg, container, spec, Arg, ArgKind::*, CommandError, CommandSpec, Ctx};

/// Redis's reply to every cluster command when cluster mode is off.
fn disabled(_: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    Err(CommandError::msg("ERR This instance has cluster support disabled"))
}

const SLOTS: &[Arg] = &[arg("slot", Integer).multiple()];
const SLOT_RANGES: &[Arg] = &[arg("start-slot_end-slot", Block).multiple().args(&[arg("start-slot", Integer), arg("end-slot", Integer)])];
const NODE_ID: &[Arg] = &[arg("node-id", String)];
const ND: &[&str] = &["nondeterministic_output"];
/// The flags of the subcommands that change the cluster's configuration.
const CHANGES: u32 = ADMIN | STALE | NO_ASYNC_LOADING;

#[rustfmt::skip]
static SUBCOMMANDS: &[CommandSpec] = &[
    spec("addslots", -3, CHANGES, (0, 0, 0), &[], "cluster", "Assigns hash slots to this node.", disabled).since("3.0.0").args(SLOTS).complexity("O(N)"),
    spec("addslotsrange", -4, CHANGES, (0, 0, 0), &[], "cluster", "Assigns ranges of hash slots to this node.", disabled).since("7.0.0").args(SLOT_RANGES).complexity("O(N)"),
    spec("bumpepoch", 2, CHANGES, (0, 0, 0), &[], "cluster", "Advances this node's configuration epoch.", disabled).since("3.0.0").complexity("O(1)").tips(ND),
    spec("count-failure-reports", 3, ADMIN | STALE, (0, 0, 0), &[], "cluster", "Counts the failure reports about a node.", disabled).since("3.0.0").args(NODE_ID).complexity("O(N)").tips(ND),
    spec("countkeysinslot", 3, STALE, (0, 0, 0), &[], "cluster", "Counts the keys of a hash slot.", disabled).since("3.0.0").args(&[arg("slot", Integer)]).complexity("O(1)"),
    spec("delslots", -3, CHANGES, (0, 0, 0), &[], "cluster", "Takes hash slots away from this node.", disabled).since("3.0.0").args(SLOTS).complexity("O(N)"),
    spec("delslotsrange", -4, CHANGES, (0, 0, 0), &[], "cluster", "Takes ranges of hash slots away from this node.", disabled).since("7.0.0").args(SLOT_RANGES).complexity("O(N)"),
    spec("failover", -2, CHANGES, (0, 0, 0), &[], "cluster", "Makes this replica take its master's place.", disabled).since("3.0.0").args(&[arg("options", OneOf).optional().args(&[arg("force", PureToken).token("FORCE"), arg("takeover", PureToken).token("TAKEOVER")])]).complexity("O(1)"),
    spec("flushslots", 2, CHANGES, (0, 0, 0), &[], "cluster", "Takes every hash slot away from this node.", disabled).since("3.0.0").complexity("O(1)"),
    spec("forget", 3, CHANGES, (0, 0, 0), &[], "cluster", "Removes a node from this node's view of the cluster.", disabled).since("3.0.0").args(NODE_ID).complexity("O(1)"),
    spec("getkeysinslot", 4, STALE, (0, 0, 0), &[], "cluster", "Lists keys of a hash slot.", disabled).since("3.0.0").args(&[arg("slot", Integer), arg("count", Integer)]).complexity("O(log(N))").tips(ND),
    spec("help", 2, LOADING | STALE, (0, 0, 0), &[], "cluster", "Lists the CLUSTER subcommands.", disabled).since("5.0.0").complexity("O(1)"),
    spec("info", 2, STALE, (0, 0, 0), &[], "cluster", "Reports the state of the cluster.", disabled).since("3.0.0").complexity("O(1)").tips(ND),
    spec("keyslot", 3, STALE, (0, 0, 0), &[], "cluster", "Tells the hash slot of a key.", disabled).since("3.0.0").args(&[arg("key", String)]).complexity("O(N)"),
    spec("links", 2, STALE, (0, 0, 0), &[], "cluster", "Lists the links of the cluster bus.", disabled).since("7.0.0").complexity("O(N)").tips(ND),
    spec("meet", -4, CHANGES, (0, 0, 0), &[], "cluster", "Connects this node to another one.", disabled).since("3.0.0").args(&[arg("ip", String), arg("port", Integer), arg("cluster_bus_port", Integer).since("4.0.0").optional()]).complexity("O(1)"),
    spec("myid", 2, STALE, (0, 0, 0), &[], "cluster", "Tells this node's ID.", disabled).since("3.0.0").complexity("O(1)"),
    spec("nodes", 2, STALE, (0, 0, 0), &[], "cluster", "Describes the cluster's nodes.", disabled).since("3.0.0").complexity("O(N)").tips(ND),
    spec("replicas", 3, ADMIN | STALE, (0, 0, 0), &[], "cluster", "Lists the replicas of a master node.", disabled).since("5.0.0").args(NODE_ID).complexity("O(1)").tips(ND),
    spec("replicate", 3, CHANGES, (0, 0, 0), &[], "cluster", "Makes this node a replica of a master node.", disabled).since("3.0.0").args(NODE_ID).complexity("O(1)"),
    spec("reset", -2, ADMIN | NOSCRIPT | STALE, (0, 0, 0), &[], "cluster", "Resets this node's view of the cluster.", disabled).since("3.0.0").args(&[arg("hard_soft", OneOf).optional().args(&[arg("hard", PureToken).token("HARD"), arg("soft", PureToken).token("SOFT")])]).complexity("O(N)"),
    spec("saveconfig", 2, CHANGES, (0, 0, 0), &[], "cluster", "Saves the cluster's configuration to disk.", disabled).since("3.0.0").complexity("O(1)"),
    spec("set-config-epoch", 3, CHANGES, (0, 0, 0), &[], "cluster", "Sets a new node's configuration epoch.", disabled).since("3.0.0").args(&[arg("config-epoch", Integer)]).complexity("O(1)"),
    spec("setslot", -4, CHANGES, (0, 0, 0), &[], "cluster", "Changes the state of a hash slot.", disabled).since("3.0.0").args(&[arg("slot", Integer), arg("subcommand", OneOf).args(&[arg("node-id", String).token("IMPORTING"), arg("node-id", String).token("MIGRATING"), arg("node-id", String).token("NODE"), arg("stable", PureToken).token("STABLE")])]).complexity("O(1)"),
    spec("shards", 2, STALE, (0, 0, 0), &[], "cluster", "Describes the cluster's shards.", disabled).since("7.0.0").complexity("O(N)").tips(ND),
    spec("slaves", 3, ADMIN | STALE, (0, 0, 0), &[], "cluster", "Lists the replicas of a master node.", disabled).since("3.0.0").args(NODE_ID).complexity("O(1)").tips(ND).deprecated("5.0.0"),
    spec("slots", 2, STALE, (0, 0, 0), &[], "cluster", "Maps hash slots to nodes.", disabled).since("3.0.0").complexity("O(N)").tips(ND).deprecated("7.0.0"),
];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    container("cluster", "cluster", "A container for the cluster commands.", SUBCOMMANDS).since("3.0.0").complexity("Depends on the subcommand."),
    spec("readonly", 1, LOADING | STALE | FAST, (0, 0, 0), &["connection"], "cluster", "Lets a cluster replica serve reads of its master's slots.", disabled).since("3.0.0").complexity("O(1)"),
    spec("readwrite", 1, LOADING | STALE | FAST, (0, 0, 0), &["connection"], "cluster", "Ends READONLY.", disabled).since("3.0.0").complexity("O(1)"),
    spec("asking", 1, FAST, (0, 0, 0), &["connection"], "cluster", "Marks the next command as sent after an ASK redirection.", disabled).since("3.0.0").complexity("O(1)"),
];

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn every_cluster_command_is_refused_as_redis_without_cluster_mode() {
        let mut h = Harness::new();
        for cmd in ["CLUSTER INFO", "CLUSTER HELP", "CLUSTER KEYSLOT k", "CLUSTER SLOTS", "READONLY", "READWRITE", "ASKING"] {
            assert_eq!(h.text(cmd), "ERR This instance has cluster support disabled", "{cmd}");
        }
        assert_eq!(h.text("CLUSTER NOSUCH"), "ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP.");
        assert_eq!(h.text("CLUSTER KEYSLOT"), "ERR wrong number of arguments for 'cluster|keyslot' command");
    }
}
