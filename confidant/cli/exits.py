"""Exit codes of the `confidant` command (scripts may branch on them)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    SERVER_ERROR = 1  # the server failed (5xx, or an `error` part in a reply)
    USAGE = 2  # bad command line (argparse's own code)
    NOT_FOUND = 3  # no such session (404)
    BUSY = 4  # the session is still answering another message (409)
    UNAUTHENTICATED = 5  # no verified identity (401/403)
    UNREACHABLE = 6  # no server at --url
    BAD_INPUT = 7  # the server refused the input (400/413)
    PARTIAL = 8  # an operator command finished with failures (jobs not republished, conflicts)
