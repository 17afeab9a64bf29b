"""The protocol self-test lives in ``arena.selftest``, shared with ``arena check``."""

from __future__ import annotations

from arena.selftest import SelfTestReport, run_selftest

__all__ = ["SelfTestReport", "run_selftest"]
