"""The network: nothing reaches out, neither the host's loopback nor its other addresses nor DNS."""

from __future__ import annotations

import socket
import subprocess
import threading

from hostile import python


def host_addresses() -> list[str]:
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return [a for a in out if ":" not in a][:2]


def test_no_connection_reaches_the_host_and_no_name_resolves(open_env) -> None:
    env = open_env()
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    targets = ["127.0.0.1", "172.17.0.1", *host_addresses()]
    code = (
        "import socket\n"
        "out = []\n"
        f"for host in {targets!r}:\n"
        "    s = socket.socket(); s.settimeout(3)\n"
        "    try:\n"
        f"        s.connect((host, {port})); out.append('connected')\n"
        "    except OSError as e:\n"
        "        out.append(type(e).__name__)\n"
        "try:\n"
        "    socket.getaddrinfo('pypi.org', 443); out.append('resolved')\n"
        "except OSError:\n"
        "    out.append('no dns')\n"
        "print(out)"
    )
    try:
        obs = python(env, code)
    finally:
        stop.set()
        thread.join(5)
        server.close()
    assert "connected" not in obs["stdout"] and "'no dns'" in obs["stdout"], obs["stdout"]
    assert accepted == []
