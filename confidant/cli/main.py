"""`confidant`: talk to a Confidant server from a terminal or a script.

    confidant chat [--session ID] [--message TEXT]   interactive (or one-shot) streaming chat
    confidant sessions list | show ID | delete ID…   the caller's sessions of an app
    confidant apps                                   the served apps and skills
    confidant bench turn-overhead [ARGS…]            a benchmark of the source checkout

`--json` prints machine-readable output (chat: one UI stream part per line). Exit codes are in
`confidant.cli.exits.ExitCode`. Commands of other parts of the product plug in through
`EXTENSION_MODULES`.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from confidant.cli.client import CliError, ConfidantClient
from confidant.cli.exits import ExitCode
from confidant.cli.progress import Progress
from confidant.cli.render import HumanRequest, PartPrinter, stage_name, transcript

# Modules that add subcommands: each defines `register(subparsers)`, adding a parser whose
# defaults set `run=fn` with `fn(args, out, err) -> int` (an ExitCode).
EXTENSION_MODULES: tuple[str, ...] = ("confidant.cli.operations",)

Runner = Callable[[argparse.Namespace, TextIO, TextIO], int]


def _client(args: argparse.Namespace) -> ConfidantClient:
    return ConfidantClient(args.url, user=args.user, token=args.token)


def _emit_json(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, ensure_ascii=False) + "\n")
    out.flush()


# --- chat ---


def _messages(args: argparse.Namespace, err: TextIO, session_id: str):  # type: ignore[no-untyped-def]
    """The messages to send: --message once, or lines from the terminal or a pipe."""
    if args.message is not None:
        yield args.message
        return
    interactive = sys.stdin.isatty()
    if interactive:
        err.write(f"session {session_id} ({args.app}); an empty line or Ctrl-D ends\n")
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and line == "":
            return  # end of the pipe
        line = line.strip()
        if not line:
            if interactive:
                return
            continue
        yield line


def run_chat(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    session_id = args.session or uuid.uuid4().hex
    client = _client(args)
    status = ExitCode.OK
    human: HumanRequest | None = None
    try:
        for message in _messages(args, err, session_id):
            body: dict[str, Any] = {"app": args.app, "session_id": session_id, "message": message}
            if args.skill:
                body["skill"] = args.skill
            if human is not None:
                body["human_response"] = human.response(message)
            # With --json the parts go out as they are; the printer only keeps track, silently.
            sink = (io.StringIO(), io.StringIO()) if args.json else (out, err)
            printer = PartPrinter(*sink)
            try:
                for part in client.chat(body):
                    if args.json:
                        _emit_json(out, part)
                    printer.show(part)
            except CliError as error:
                err.write(f"error: {error}\n")
                if error.exit_code == ExitCode.UNREACHABLE or args.message is not None:
                    return error.exit_code
                status = error.exit_code
                continue
            human = printer.human
            if printer.error:
                status = ExitCode.SERVER_ERROR
        if not args.json and sys.stdin.isatty() and args.message is None:
            err.write(f"resume with: confidant chat --app {args.app} --session {session_id}\n")
        return status
    finally:
        client.close()


# --- sessions ---


def _when(value: Any) -> str:
    try:
        return datetime.fromtimestamp(float(value), UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(value)


def run_sessions_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    client = _client(args)
    try:
        sessions = client.sessions(args.app)
    finally:
        client.close()
    if args.json:
        _emit_json(out, sessions)
        return ExitCode.OK
    if not sessions:
        err.write(f"no sessions of {args.app} for this user\n")
        return ExitCode.OK
    out.write(f"{'SESSION':<34} {'UPDATED (UTC)':<19} {'EVENTS':>6}  STAGE\n")
    for s in sessions:
        progress = s.get("progress") or {}
        stage = progress.get("step_name") or stage_name(str(progress.get("phase", ""))) or "-"
        busy = " (answering)" if s.get("busy") else ""
        updated = _when(s["updated_at"])
        out.write(f"{s['id']:<34} {updated:<19} {s['event_count']:>6}  {stage}{busy}\n")
    return ExitCode.OK


def run_sessions_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    client = _client(args)
    try:
        session, events = client.session(args.app, args.session_id)
    finally:
        client.close()
    if args.json:
        _emit_json(out, {"session": session, "events": events})
        return ExitCode.OK
    out.write(f"# {session['id']} ({session['app']}), {len(events)} events\n")
    for line in transcript(events):
        out.write(line + "\n")
    return ExitCode.OK


def run_sessions_delete(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    client = _client(args)
    deleted: list[str] = []
    missing: list[str] = []
    progress = Progress(len(args.session_ids), "deleting")
    try:
        for session_id in args.session_ids:
            try:
                client.delete_session(args.app, session_id)
                deleted.append(session_id)
            except CliError as error:
                if error.exit_code != ExitCode.NOT_FOUND:
                    raise
                missing.append(session_id)
            progress.advance()
    finally:
        progress.close()
        client.close()
    if args.json:
        _emit_json(out, {"deleted": deleted, "missing": missing})
    else:
        for session_id in deleted:
            out.write(f"deleted {session_id}\n")
        for session_id in missing:
            err.write(f"not found: {session_id}\n")
    return ExitCode.NOT_FOUND if missing else ExitCode.OK


def run_apps(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    client = _client(args)
    try:
        apps = client.apps()
    finally:
        client.close()
    if args.json:
        _emit_json(out, apps)
        return ExitCode.OK
    for app in apps:
        out.write(f"{app['name']}: {app['title']}\n")
        for skill in app.get("skills", []):
            out.write(f"  skill {skill['id']}: {skill['title']}\n")
    return ExitCode.OK


# --- bench ---

SOURCE_ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = {"turn-overhead": "bench.turn_overhead"}


def run_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The benchmarks live in the source checkout (they use its test fixtures): run one there."""
    module = BENCHMARKS[args.benchmark]
    if not (SOURCE_ROOT / Path(*module.split("."))).with_suffix(".py").is_file():
        err.write("error: the benchmarks need the source checkout (run it from the repository)\n")
        return ExitCode.USAGE
    command = [sys.executable, "-m", module, *args.bench_args]
    return subprocess.run(command, cwd=SOURCE_ROOT, check=False).returncode


# --- the parser ---


def build_parser() -> argparse.ArgumentParser:
    port = os.environ.get("PORT", "8080")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url",
        default=os.environ.get("CONFIDANT_URL", f"http://127.0.0.1:{port}"),
        help="the server (default $CONFIDANT_URL or the local server)",
    )
    common.add_argument(
        "--user",
        default=os.environ.get("CONFIDANT_USER", "local"),
        help="X-User-Id in local mode (default $CONFIDANT_USER or 'local')",
    )
    common.add_argument(
        "--token",
        default=os.environ.get("CONFIDANT_TOKEN"),
        help="a Firebase ID token for a cloud server (default $CONFIDANT_TOKEN)",
    )
    common.add_argument("--app", default=os.environ.get("CONFIDANT_APP", "onemind"))
    common.add_argument("--json", action="store_true", help="machine-readable output")

    parser = argparse.ArgumentParser(prog="confidant", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    chat = commands.add_parser("chat", parents=[common], help="chat in the terminal")
    chat.add_argument("--session", help="continue this session (default: a new one)")
    chat.add_argument("--message", "-m", help="send one message and exit")
    chat.add_argument("--skill", help="the app's skill to use")
    chat.set_defaults(run=run_chat)

    sessions = commands.add_parser("sessions", help="list, show or delete sessions")
    actions = sessions.add_subparsers(dest="action", required=True)
    actions.add_parser("list", parents=[common]).set_defaults(run=run_sessions_list)
    show = actions.add_parser("show", parents=[common])
    show.add_argument("session_id")
    show.set_defaults(run=run_sessions_show)
    delete = actions.add_parser("delete", parents=[common])
    delete.add_argument("session_ids", nargs="+", metavar="session_id")
    delete.set_defaults(run=run_sessions_delete)

    commands.add_parser("apps", parents=[common], help="the served apps").set_defaults(run=run_apps)
    bench = commands.add_parser(
        "bench", help="run a benchmark of the source checkout (`make bench` runs turn-overhead)"
    )
    bench.add_argument("benchmark", choices=sorted(BENCHMARKS))
    bench.add_argument("bench_args", nargs=argparse.REMAINDER, help="passed to the benchmark")
    bench.set_defaults(run=run_bench)

    for module in EXTENSION_MODULES:
        importlib.import_module(module).register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Runner = args.run
    try:
        return int(run(args, sys.stdout, sys.stderr))
    except CliError as error:
        sys.stderr.write(f"error: {error}\n")
        return int(error.exit_code)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
