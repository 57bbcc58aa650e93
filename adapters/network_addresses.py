"""Whether a host is one of this network's own: loopback, link-local (cloud metadata among
them), private, shared, reserved or unspecified, i.e. anything but a public address. A signed
body pushed to such a host would reach services behind the deployment's firewall, so outbound
calls to operator-given URLs refuse them unless the operator allows them explicitly."""

from __future__ import annotations

import ipaddress
import socket

LOCAL_NAMES = ("localhost", "localhost.localdomain")


def is_internal_ip(text: str) -> bool:
    """True for an address that is not public (an IPv4-mapped IPv6 address by its IPv4)."""
    address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone names a local link
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def names_internal_host(host: str) -> bool:
    """True when `host`, as written (no lookup), is an internal address or a local name."""
    bare = host.strip("[]").rstrip(".").lower()
    if bare in LOCAL_NAMES or bare.endswith(".localhost"):
        return True
    try:
        return is_internal_ip(bare)
    except ValueError:
        return False  # a name: only a lookup can tell


def resolves_internal(host: str, port: int) -> bool:
    """True when `host` is internal as written or any address it resolves to is (a public
    name pointing inward); a name that does not resolve is left to the connection to fail."""
    if names_internal_host(host):
        return True
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return any(is_internal_ip(str(info[4][0])) for info in found)
