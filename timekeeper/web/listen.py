"""Where the web server listens: `[HOST:]PORT` (`--web 8080`, `web.listen: 0.0.0.0:8080`)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket

LOCAL = "127.0.0.1"  # a bare port listens on this box only; a host opens it to the LAN


def parse_listen(text: str) -> tuple[str, int]:
    """(host, port) from `8080`, `0.0.0.0:8080`, `[::]:8080` or `box.local:8080`; ValueError
    says what is wrong."""
    text = str(text).strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = LOCAL, text
    host = host.strip("[]") or LOCAL
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(
            f"must be [HOST:]PORT with a port 1-65535, e.g. 8080 or 0.0.0.0:8080, not {text!r}"
        )
    if any(c.isspace() or c in "/?#@" for c in host):
        raise ValueError(f"the host {host!r} is not an address or a name")
    return host, int(port_text)


def is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "*")


def lan_address() -> str:
    """This box's address on its LAN (the one its default route leaves by), for the link;
    nothing is sent (a UDP socket is only connected). Its name if there is no route."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere for real
        address = s.getsockname()[0]
        if not ipaddress.ip_address(address).is_unspecified:
            return address
    return socket.gethostname()


def url_host(host: str) -> str:
    """The host part of a URL that reaches a server listening on `host`."""
    if is_wildcard(host):
        host = lan_address()
    return f"[{host}]" if ":" in host else host
