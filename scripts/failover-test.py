#!/usr/bin/env python3
"""Many Sentinel failovers under WAIT-acknowledged writers (issue 24's acceptance):

    scripts/failover-test.py --cycles 100 [--server-bin target/release/basalt-server]
        [--how kill,stop[,term]]

A master and two replicas of the server, three sentinels (redis-server --sentinel).
Each cycle: a writer does SET then WAIT 1 through redis-py's Sentinel client; the
current master is SIGKILLed or SIGSTOPped (`--how`, in turn: odd cycles killed, even
ones stopped by default); once Sentinel has promoted a replica, every write WAIT
acknowledged so far (over all cycles) must be on the new master; the old master is
brought back (restarted on its port, or SIGCONT) and must rejoin as a replica. A
`term` cycle stops the master with SIGTERM, as for a planned restart: its writer does
no WAIT, and every write the master acknowledged must be on the new master (it waits
for its replicas before it exits, `shutdown-timeout`). Prints one line per cycle and the totals; exits 1 on any loss.
Bounded: each wait stops after 40 s, the whole run after --max-minutes.

CI runs the short form (tests/py/test_sentinel.py); this is the long one. It uses the
test suite's helpers (tests/py), so it needs the test virtualenv (.venv).
"""

import argparse
import os
import shutil
import signal
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--server-bin", default=os.path.join(REPO, "target", "release", "basalt-server"))
    ap.add_argument("--max-minutes", type=float, default=60)
    ap.add_argument("--how", default="kill,stop",
                    help="how each cycle's master goes, in turn: kill (SIGKILL), stop (SIGSTOP), term (SIGTERM, "
                         "a planned restart: its writer does no WAIT, and every write the master acknowledged "
                         "must survive)")
    ap.add_argument("--keep", metavar="DIR",
                    help="on the first loss, stop and leave there every server's and sentinel's log, "
                         "INFO replication of each server and the keys lost")
    a = ap.parse_args()
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    os.environ["BASALT_SERVER_BIN"] = os.path.abspath(a.server_bin)
    sys.path.insert(0, os.path.join(REPO, "tests", "py"))
    import redis
    from conftest import Server
    from test_sentinel import Group, fail_over, linked_to, wait_until

    group = Group()
    acked_total, lost_total = [], 0
    ended = time.monotonic() + a.max_minutes * 60
    try:
        for cycle in range(1, a.cycles + 1):
            if time.monotonic() > ended:
                print(f"stopped after {cycle - 1} cycles: --max-minutes reached")
                break
            hows = a.how.split(",")
            how = hows[(cycle - 1) % len(hows)]
            old = group.sentinels.master_addr()
            old_srv = group.servers[old]
            # Keys of its own per cycle: a key lost here must not be found from an
            # earlier cycle's write of the same name.
            new, writer, took = fail_over(group, how, old_srv, prefix=f"c{cycle}")
            acked_total += writer.acked
            m = redis.Redis(port=new, socket_timeout=5)
            lost = [k for k in acked_total if m.get(k) is None]
            lost_total += len(lost)
            if lost and a.keep:
                keep(a.keep, group, cycle, lost, acked_total)
                print(f"cycle {cycle} ({how}): {old} -> {new}: lost {len(lost)}; logs in {a.keep}", flush=True)
                break
            if how in ("kill", "term"):
                if a.keep:
                    shutil.copy(os.path.join(old_srv.dir.name, "server.log"),
                                os.path.join(a.keep, f"cycle-{cycle}-killed-{old}.log"))
                old_srv.stop()
                group.servers[old] = Server(port=old, extra=group.extra)
            else:
                os.kill(old_srv.proc.pid, signal.SIGCONT)
            wait_until("the old master to rejoin", lambda: linked_to(old, new), 40)
            others = [p for p in group.servers if p != new]
            wait_until("both replicas linked", lambda: all(linked_to(p, new) for p in others), 40)
            print(f"cycle {cycle} ({how}): {old} -> {new} in {took:.1f} s, {len(writer.acked)} acked "
                  f"({len(acked_total)} in all), {writer.errors} errors seen by the writer, lost {len(lost)}",
                  flush=True)
    finally:
        group.stop()
    print(f"failover-test: {len(acked_total)} acknowledged writes, {lost_total} lost")
    return 1 if lost_total else 0


def keep(folder, group, cycle, lost, acked):
    """What a loss leaves for its diagnosis (the servers' folders go with the group)."""
    import redis
    os.makedirs(folder, exist_ok=True)
    for port, srv in group.servers.items():
        shutil.copy(os.path.join(srv.dir.name, "server.log"), os.path.join(folder, f"server-{port}.log"))
        with open(os.path.join(folder, f"info-{port}.txt"), "w") as f:
            try:
                f.write(redis.Redis(port=port, socket_timeout=5).execute_command("INFO", "replication").decode())
            except redis.RedisError as e:
                f.write(f"INFO failed: {e}\n")
    for i in range(3):
        shutil.copy(os.path.join(group.sentinels.dir.name, f"sentinel-{i}.log"), os.path.join(folder, f"sentinel-{i}.log"))
    with open(os.path.join(folder, "lost.txt"), "w") as f:
        f.write(f"cycle {cycle}: {len(lost)} of {len(acked)} acknowledged writes lost\n" + "\n".join(lost) + "\n")


if __name__ == "__main__":
    sys.exit(main())
