"""A network guard for the test suite that also reaches child processes.

What it blocks, for internet (AF_INET/AF_INET6) sockets: `connect`, `connect_ex`,
`sendto`, `sendmsg`, `bind` to anything but loopback (binding
loopback reaches nothing), and the name lookups
(`getaddrinfo`, `gethostbyname[_ex]`, `gethostbyaddr`, `getnameinfo`). Unix sockets stay
allowed (event loops use them as self-pipes). A test may declare loopback use; then
loopback addresses pass and everything else is still refused.

Why more than the first guard: a test that runs `scim-edge` in a subprocess escaped it,
and a library that catches OSError and carries on would hide the attempt. So every
attempt is also appended to a log file, and `child_env()` gives subprocesses a
`sitecustomize` that installs the same guard in every Python child, logging to the same
file. `check_log()` fails the test if the log has anything, swallowed or not.

Not covered: native code that calls the C socket API directly (none of our run-time
libraries does); `.ci/offline-ask.sh` runs `ask` inside a network namespace for that.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOG_ENV = "SCIM_EDGE_NETGUARD_LOG"
LOOPBACK_ENV = "SCIM_EDGE_NETGUARD_LOOPBACK"


class NetworkUsed(AssertionError):
    """Raised where a test (or a child process) touched the network."""


_REAL: dict[str, Any] = {
    "connect": socket.socket.connect,
    "connect_ex": socket.socket.connect_ex,
    "sendto": socket.socket.sendto,
    "sendmsg": socket.socket.sendmsg,
    "bind": socket.socket.bind,
    "getaddrinfo": socket.getaddrinfo,
    "gethostbyname": socket.gethostbyname,
    "gethostbyname_ex": socket.gethostbyname_ex,
    "gethostbyaddr": socket.gethostbyaddr,
    "getnameinfo": socket.getnameinfo,
}
SOCKET_METHODS = ("connect", "connect_ex", "sendto", "sendmsg", "bind")
LOOKUPS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo")


def is_loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def replacements(allow_loopback: bool, log: Path | None) -> dict[str, Callable[..., Any]]:
    """The guarded versions of every socket entry point, by attribute name."""
    refuse = _refuser(log)
    out = _socket_methods(allow_loopback, refuse)
    out.update({name: _lookup(name, allow_loopback, refuse) for name in LOOKUPS})
    return out


def _refuser(log: Path | None) -> Callable[[str], NetworkUsed]:
    """The error for a blocked attempt, also appended to `log` (a library that swallows
    the error must not hide the attempt)."""

    def refuse(what: str) -> NetworkUsed:
        msg = f"network use blocked (pid {os.getpid()}): {what}"
        if log is not None:
            try:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(msg + "\n")
            except OSError:
                pass
        return NetworkUsed(msg)

    return refuse


def _is_inet(sock: socket.socket) -> bool:
    """Whether `sock` is an internet socket (Unix sockets are never blocked)."""
    return sock.family in (socket.AF_INET, socket.AF_INET6)


def _socket_methods(
    allow_loopback: bool, refuse: Callable[[str], NetworkUsed]
) -> dict[str, Callable[..., Any]]:
    """Guarded `socket.socket` methods (connect, connect_ex, sendto, sendmsg, bind)."""

    def check(sock: socket.socket, op: str, address: Any) -> None:
        if not _is_inet(sock):
            return
        if allow_loopback and is_loopback(address):
            return
        raise refuse(f"{op} {address!r}")

    def connect(self: socket.socket, address: Any) -> Any:
        check(self, "connect", address)
        return _REAL["connect"](self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        check(self, "connect", address)
        return _REAL["connect_ex"](self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> Any:
        check(self, "sendto", args[-1])
        return _REAL["sendto"](self, data, *args)

    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> Any:
        if len(args) >= 3 and args[2] is not None:
            check(self, "sendmsg", args[2])
        elif _is_inet(self) and not allow_loopback:
            raise refuse("sendmsg on an internet socket")
        return _REAL["sendmsg"](self, buffers, *args)

    def bind(self: socket.socket, address: Any) -> Any:
        # Binding loopback reaches nothing (urllib3 probes IPv6 support this way at import);
        # binding a routable or wildcard address would open a port to the network.
        if _is_inet(self) and not is_loopback(address):
            raise refuse(f"bind {address!r}")
        return _REAL["bind"](self, address)

    return {
        "connect": connect,
        "connect_ex": connect_ex,
        "sendto": sendto,
        "sendmsg": sendmsg,
        "bind": bind,
    }


def _lookup(
    name: str, allow_loopback: bool, refuse: Callable[[str], NetworkUsed]
) -> Callable[..., Any]:
    """The guarded name lookup `socket.<name>`; loopback names pass when allowed."""

    def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
        target = host[0] if name == "getnameinfo" and isinstance(host, tuple) else host
        if allow_loopback and is_loopback(target):
            return _REAL[name](host, *args, **kwargs)
        raise refuse(f"{name} {target!r}")

    return guarded


def install(monkeypatch: Any, *, allow_loopback: bool = False, log: Path | None = None) -> None:
    """Guard this process for one test (undone by monkeypatch)."""
    for name, fn in replacements(allow_loopback, log).items():
        target = socket.socket if name in SOCKET_METHODS else socket
        monkeypatch.setattr(target, name, fn)


def install_process() -> None:
    """Guard this whole process for good; called by the child `sitecustomize`."""
    log = os.environ.get(LOG_ENV)
    allow = os.environ.get(LOOPBACK_ENV) == "1"
    for name, fn in replacements(allow, Path(log) if log else None).items():
        setattr(socket.socket if name in SOCKET_METHODS else socket, name, fn)


SITECUSTOMIZE = """\
# Installed by the test suite's network guard: refuse network use in every Python child.
import importlib.util as _u
_spec = _u.spec_from_file_location("_scim_edge_netguard", {path!r})
_mod = _u.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
_mod.install_process()
del _u, _spec, _mod
"""


def child_env(monkeypatch: Any, site_dir: Path, log: Path, *, allow_loopback: bool) -> None:
    """Make every Python subprocess of this test install the guard (via PYTHONPATH)."""
    site_dir.mkdir(parents=True, exist_ok=True)
    (site_dir / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(path=str(Path(__file__).resolve())), encoding="utf-8"
    )
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(site_dir) + (os.pathsep + old if old else ""))
    monkeypatch.setenv(LOG_ENV, str(log))
    monkeypatch.setenv(LOOPBACK_ENV, "1" if allow_loopback else "0")


def check_log(log: Path) -> None:
    """Fail if this process or any child recorded a network attempt."""
    if log.exists():
        text = log.read_text(encoding="utf-8").strip()
        if text:
            raise NetworkUsed(text.splitlines()[0] + f" ({len(text.splitlines())} attempts)")
