"""A TCP proxy a test can cut: a service outage without stopping the shared service itself."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target``.

    ``cut()`` drops every open connection and refuses new ones, as a stopped server would;
    ``blackhole()`` keeps every connection open and accepts new ones but forwards nothing, as
    a host that drops packets would; ``restore()`` forwards again (after a black hole, the
    connections that lost data are closed, as a peer would reset them).
    """

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._black = threading.Event()
        self._thread: threading.Thread | None = None
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]

    def __enter__(self) -> TcpProxy:
        self.restore()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.cut()

    def blackhole(self) -> None:
        """Swallow everything from now on: connections open, nothing forwarded either way."""
        self._black.set()

    def restore(self) -> None:
        """Accept and forward connections again."""
        if self._black.is_set():
            self._black.clear()
            self._close_all()
        if self._listener is not None:
            return
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        self._stop.clear()
        self._thread = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._thread.start()

    def cut(self) -> None:
        """Close the listening socket and every forwarded connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self._close_all()

    def _close_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _close(sock)

    def _accept(self, listener: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._black.is_set():
                with self._lock:
                    self._sockets.add(client)  # held open, never answered
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                self._sockets.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if not self._black.is_set():
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
