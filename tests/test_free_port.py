"""The port a test gives a child process to listen on is free and outside the kernel's ephemeral range, where
another process's outgoing connection could take it before the child binds it (a suite run beside another
once failed that way: "address already in use")."""

from __future__ import annotations

import socket

from fakediscord.process import _ephemeral_low, free_port


def test_free_port_is_bindable_and_below_the_ephemeral_range() -> None:
    low = _ephemeral_low()
    ports = {free_port() for _ in range(20)}
    assert all(10_000 <= p < low for p in ports)
    assert len(ports) > 1  # spread out: two runs side by side rarely pick the same one
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports.pop()))
