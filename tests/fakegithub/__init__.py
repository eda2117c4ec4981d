"""A local, contract-checked GitHub REST stand-in for end-to-end tests (see server.py)."""
from .server import (DEFAULT_BOT, DEFAULT_TOKEN, ROLES, FakeGitHub, LimitEvent, LoggedRequest, RateLimits,
                     VirtualClock)

__all__ = ["DEFAULT_BOT", "DEFAULT_TOKEN", "ROLES", "FakeGitHub", "LimitEvent", "LoggedRequest", "RateLimits",
           "VirtualClock"]
