"""The broker a box or a desk logs in to (`mqtt://[user:password@]host[:port]`), and
the one way either makes its MQTT client (paho-mqtt 2.x)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class Broker:
    host: str
    port: int = 1883
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> Broker:
        """`mqtt://[user:password@]host[:port]`."""
        parts = urlsplit(url if "://" in url else f"mqtt://{url}")
        if parts.scheme != "mqtt" or not parts.hostname:
            raise ValueError(f"a broker is mqtt://HOST[:PORT] (got {url!r})")
        try:
            port = parts.port or 1883
        except ValueError:
            raise ValueError(f"bad port in {url!r}") from None
        return cls(
            parts.hostname,
            port,
            unquote(parts.username) if parts.username else None,
            unquote(parts.password) if parts.password else None,
        )


def make_client(client_id: str, broker: Broker) -> Any:
    import paho.mqtt.client as mqtt

    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True
    )  # nothing queued for us while we are away
    if broker.user:
        client.username_pw_set(broker.user, broker.password)
    client.reconnect_delay_set(min_delay=1, max_delay=8)
    client.max_queued_messages_set(100)  # a broker outage never grows memory without end
    return client
