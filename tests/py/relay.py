"""A TCP relay on a free loopback port to a server's port, for tests that need the
network between two processes to misbehave:

- cut() closes every relayed connection and refuses new ones until heal(): a partition
  of whatever is behind it, for everyone who reaches it through here;
- hold() keeps the server's bytes back (the other direction still flows) until
  release(): a link that lags, such as a master's stream behind its replica's clock.

Bounded: stops with stop(), and after `max_s` seconds in any case.
"""

import socket
import threading
import time


class Relay(threading.Thread):
    def __init__(self, port, max_s=600.0):
        super().__init__(daemon=True)
        self.target = port
        self.deadline = time.monotonic() + max_s
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.conns, self.lock = [], threading.Lock()
        self.cut_off, self.held, self.stopped = threading.Event(), threading.Event(), threading.Event()
        self.start()

    def running(self):
        return not self.stopped.is_set() and time.monotonic() < self.deadline

    def run(self):
        while self.running():
            try:
                a, _ = self.listener.accept()
            except OSError:
                continue
            if self.cut_off.is_set():
                a.close()
                continue
            try:
                b = socket.create_connection(("127.0.0.1", self.target), timeout=2)
            except OSError:
                a.close()
                continue
            with self.lock:
                self.conns += [a, b]
            # The server's side (b -> a) is the one hold() stops.
            for src, dst, holdable in ((a, b, False), (b, a, True)):
                threading.Thread(target=self.pump, args=(src, dst, holdable), daemon=True).start()
        self.listener.close()

    def pump(self, src, dst, holdable):
        src.settimeout(0.05)
        while self.running():
            if holdable and self.held.is_set():
                time.sleep(0.01)
                continue
            try:
                data = src.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            # Bytes read just as a hold began wait for its end too.
            while holdable and self.held.is_set() and self.running():
                time.sleep(0.01)
            try:
                dst.sendall(data)
            except OSError:
                break
        shut((src, dst))

    def cut(self):
        self.cut_off.set()
        with self.lock:
            conns, self.conns = self.conns, []
        shut(conns)

    def heal(self):
        self.cut_off.clear()

    def hold(self):
        self.held.set()

    def release(self):
        self.held.clear()

    def stop(self):
        self.release()
        self.cut()
        self.stopped.set()
        self.join(timeout=5)


def shut(socks):
    """Shuts each socket down both ways (one already gone is passed over)."""
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
