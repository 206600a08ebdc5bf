"""How PegBoard names what a server offers (PASSTHROUGH.md §3, §4), so one client run can expect it.

With no namespace everything is verbatim (a direct connection). With namespace `ns`:
tools and prompts are `ns-name`; a URI `u` is `ns+u`, except `ui://rest`, which is `ui://ns+rest`;
log messages carry a logger starting with `ns`.
`decode_*` undo that and raise `NamingError` when a name or URI is not in the expected form, so a
feature that received a wrongly named item fails instead of comparing equal by accident.
"""

from __future__ import annotations


class NamingError(Exception):
    """A name or URI the server sent is not namespaced as expected."""


class Naming:
    def __init__(self, namespace: str | None) -> None:
        self.namespace = namespace or None

    def name(self, original: str) -> str:
        return f"{self.namespace}-{original}" if self.namespace else original

    def decode_name(self, shown: str) -> str:
        if not self.namespace:
            return shown
        prefix = f"{self.namespace}-"
        if not shown.startswith(prefix):
            raise NamingError(f"{shown!r} lacks the namespace prefix {prefix!r}")
        return shown[len(prefix) :]

    def uri(self, original: str) -> str:
        if not self.namespace:
            return original
        if original.startswith("ui://"):
            return f"ui://{self.namespace}+{original[len('ui://') :]}"
        return f"{self.namespace}+{original}"

    def decode_uri(self, shown: str) -> str:
        if not self.namespace:
            return shown
        if shown.startswith("ui://"):
            prefix, rest = f"{self.namespace}+", shown[len("ui://") :]
            if not rest.startswith(prefix):
                raise NamingError(f"{shown!r} lacks the namespace in its ui:// authority ({prefix!r})")
            return "ui://" + rest[len(prefix) :]
        prefix = f"{self.namespace}+"
        if not shown.startswith(prefix):
            raise NamingError(f"{shown!r} lacks the namespace scheme prefix {prefix!r}")
        return shown[len(prefix) :]

    def check_logger(self, logger: str | None) -> None:
        if self.namespace and not (logger or "").startswith(self.namespace):
            raise NamingError(f"log message logger {logger!r} does not start with {self.namespace!r}")
