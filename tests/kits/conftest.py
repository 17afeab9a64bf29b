"""The sandbox fixtures (``bwrap_sandbox``, ``docker_sandbox``) for the kit tests."""

from tests.sandbox.conftest import bwrap_sandbox, docker_sandbox

__all__ = ["bwrap_sandbox", "docker_sandbox"]
