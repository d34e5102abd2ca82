"""``kgb``: upload kernels, follow their runs, download results and prompts, and move offline job bundles.

    kgb login [--url URL] [--token KEY | --username NAME]
    kgb submit DIR_OR_ARCHIVE --method SCAFFOLD [--model MODEL] [--chip SLUG ...] [--no-wait]
    kgb status SUBMISSION_ID [--json]
    kgb results --set kgb-mc [--chip SLUG] [--format table|csv|json] [--operators]
    kgb prompts --set kgb-mc --chip SLUG [--out DIR]
    kgb bundle export --chip SLUG --out BUNDLE | judge BUNDLE --out RESULTS | import RESULTS --chip SLUG

Exit status: 0 done (for submit: every run finished), 1 refused or failed, 2 bad usage, 3 timed out waiting.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from pathlib import Path
from typing import Any

from kgbweb.cli.client import KgbClient, KgbError
from kgbweb.cli.config import Config, load_config, save_config
from kgbweb.cli.packing import is_archive, pack_run
from kgbweb.cli.progress import ProgressBar

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_TIMEOUT = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgb", description="KernelGenBench Web client")
    parser.add_argument("--url", help="Server URL (default: KGB_URL or the config file)")
    parser.add_argument("--token", help="API token (default: KGB_TOKEN or the config file)")
    commands = parser.add_subparsers(dest="command", required=True)

    login = commands.add_parser("login", help="store the server URL and your API token")
    login.add_argument("--username", help="exchange a username and password for your token")
    # Also accepted after "login" (kgb login --url ... --token ...); SUPPRESS keeps the global values otherwise.
    login.add_argument("--url", default=argparse.SUPPRESS, help="the server URL to store")
    login.add_argument("--token", default=argparse.SUPPRESS, help="the API token to store")

    submit = commands.add_parser("submit", help="upload a run directory or archive and follow its runs")
    submit.add_argument(
        "path",
        type=Path,
        help="run directory (kernels/<ns>__<op>.py, progress.json), folder of "
        "kernel files, archive (.zip/.tar.gz) or one .py file",
    )
    submit.add_argument("--method", required=True, help='the scaffold or agent, e.g. "Claude Code"')
    submit.add_argument("--model", default="", help='the model, e.g. "Opus-4.6"')
    submit.add_argument("--kind", default="agent", choices=["agent", "single_shot", "pass_at_k", "human", "library"])
    submit.add_argument(
        "--chip",
        action="append",
        default=[],
        help="judge on this chip (repeatable); default: every chip with a live worker",
    )
    submit.add_argument("--target-chip", help="the chip the kernels were written for")
    submit.add_argument("--private", action="store_true", help="code visible to you and staff only, not ranked")
    submit.add_argument("--notes", default="")
    submit.add_argument("--no-wait", action="store_true", help="print the submission id and return")
    submit.add_argument("--poll", type=float, default=2.0, help="seconds between progress checks")
    submit.add_argument("--timeout", type=float, default=6 * 3600, help="give up waiting after this many seconds")

    status = commands.add_parser("status", help="progress and verdicts of a submission")
    status.add_argument("submission", type=int)
    status.add_argument("--json", action="store_true")

    results = commands.add_parser("results", help="a leaderboard, as the page shows it")
    results.add_argument("--set", default=None, help="operator set slug, e.g. kgb-mc")
    results.add_argument("--chip", default=None, help="chip slug (default: the reference chip)")
    results.add_argument("--format", choices=["table", "csv", "json"], default="table")
    results.add_argument("--operators", action="store_true", help="JSON only: per-operator outcomes too")

    prompts = commands.add_parser("prompts", help="the generation prompts of a set for a chip")
    prompts.add_argument("--set", required=True)
    prompts.add_argument("--chip", required=True)
    prompts.add_argument("--out", type=Path, help="write <ns>__<op>.md files here instead of JSONL to stdout")

    bundle = commands.add_parser("bundle", help="offline judging: export jobs, judge them, import results")
    bundle_commands = bundle.add_subparsers(dest="bundle_command", required=True)
    export = bundle_commands.add_parser("export", help="claim a chip's queued runs as a job bundle (staff)")
    export.add_argument("--chip", required=True)
    export.add_argument("--limit", type=int, default=100)
    export.add_argument("--out", type=Path, required=True)
    judge = bundle_commands.add_parser("judge", help="judge a bundle on this host (no server needed)")
    judge.add_argument("bundle", type=Path)
    judge.add_argument("--out", type=Path, required=True)
    judge.add_argument("--chip", default=None, help="this host's chip (default: detected, or KGB_CHIP)")
    imported = bundle_commands.add_parser("import", help="upload a results bundle (staff)")
    imported.add_argument("results", type=Path)
    imported.add_argument("--chip", required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = load_config(url=args.url, token=args.token)
    try:
        return COMMANDS[args.command](args, config)
    except KgbError as error:
        print(f"kgb: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("\nkgb: interrupted (the server keeps judging; `kgb status` shows progress)", file=sys.stderr)
        return EXIT_FAILED


# --- Commands -------------------------------------------------------------------------------------------


def cmd_login(args: argparse.Namespace, config: Config) -> int:
    if args.token:
        token = args.token
    elif args.username:
        password = getpass.getpass(f"password for {args.username} at {config.url}: ")
        body = {"username": args.username, "password": password}
        token = KgbClient(Config(url=config.url)).post_json("/api/token/obtain/", body)["token"]
    else:
        print(f"Create a token on {config.url}/api/token/ and paste it here.", file=sys.stderr)
        token = getpass.getpass("token: ").strip()
    me = KgbClient(Config(url=config.url, token=token)).get_json("/api/me/")
    path = save_config(Config(url=config.url, token=token))
    print(f"logged in to {config.url} as {me['username']}{' (staff)' if me['is_staff'] else ''}; saved to {path}")
    return EXIT_OK


def cmd_submit(args: argparse.Namespace, config: Config) -> int:
    path: Path = args.path
    if not path.exists():
        print(f"kgb: {path} does not exist", file=sys.stderr)
        return EXIT_USAGE
    if is_archive(path):
        data, filename = path.read_bytes(), path.name
        print(f"uploading {filename} ({len(data)} bytes)", file=sys.stderr)
    else:
        data, filename, count = pack_run(path)
        if not count:
            print(f"kgb: no kernel files in {path} (expected kernels/<ns>__<op>.py)", file=sys.stderr)
            return EXIT_USAGE
        print(f"uploading {count} kernel files from {path}", file=sys.stderr)
    form: dict[str, Any] = {
        "scaffold": args.method,
        "model": args.model,
        "kind": args.kind,
        "visibility": "private" if args.private else "public",
        "notes": args.notes,
    }
    if args.chip:
        form["chips"] = ",".join(args.chip)
    if args.target_chip:
        form["target_chip"] = args.target_chip
    client = KgbClient(config)
    submission = client.request(
        "POST", "/api/submissions/import/", data=form, files={"archive": (filename, data, "application/octet-stream")}
    ).json()
    progress = submission["progress"]
    chips = sorted({run["chip"] for run in progress["runs"]})
    print(
        f"submission {submission['id']}: {submission['kernel_count']} kernels, {progress['total']} runs on "
        f"{', '.join(chips)}; {config.url}/submissions/{submission['id']}/",
        file=sys.stderr,
    )
    if progress["chips_without_worker"]:
        print(
            f"note: no worker is serving {', '.join(progress['chips_without_worker'])} now; its runs wait in the queue",
            file=sys.stderr,
        )
    if args.no_wait:
        print(submission["id"])
        return EXIT_OK
    return wait_for(client, submission["id"], poll=args.poll, timeout=args.timeout)


def wait_for(client: KgbClient, submission_id: int, *, poll: float, timeout: float) -> int:
    bar = ProgressBar()
    deadline = time.monotonic() + timeout
    try:
        while True:
            # A long wait outlives server restarts and network hiccups: retry reads before giving up.
            progress = client.get_json(f"/api/submissions/{submission_id}/progress/", retries=6)
            bar.update(progress["finished"], progress["total"], progress["passed"])
            if progress["done"]:
                break
            if time.monotonic() > deadline:
                bar.close()
                print(
                    f"kgb: still running after {timeout:.0f} s; `kgb status {submission_id}` shows progress",
                    file=sys.stderr,
                )
                return EXIT_TIMEOUT
            time.sleep(poll)
    finally:
        bar.close()
    print_runs(progress)
    return EXIT_OK


def _times(value: Any) -> str:
    """A speedup as "1.23x", "-" when unknown (a server from before the protocol speedup sends none)."""
    return f"{value:.2f}x" if isinstance(value, int | float) and value else "-"


def print_runs(progress: dict[str, Any]) -> None:
    """One line per run; both speedups labelled (PROTOCOL 6): the protocol's (the paper's), then device time."""
    width = max([len(run["operator_id"]) for run in progress["runs"]] + [8])
    for run in progress["runs"]:
        print(
            f"{run['operator_id']:<{width}}  {run['chip']:<16} {run['status']:<20} "
            f"{run['cases_passed']}/{run['cases_total']} cases  "
            f"protocol {_times(run.get('protocol_speedup'))}  device-time {_times(run.get('speedup'))}"
        )
    print(f"{progress['passed']}/{progress['total']} runs passed ({progress['finished']} finished)")


def cmd_status(args: argparse.Namespace, config: Config) -> int:
    progress = KgbClient(config).get_json(f"/api/submissions/{args.submission}/progress/")
    if args.json:
        print(json.dumps(progress, indent=2))
    else:
        print_runs(progress)
    return EXIT_OK


def cmd_results(args: argparse.Namespace, config: Config) -> int:
    client = KgbClient(config)
    params = {"set": args.set, "chip": args.chip}
    if args.format == "csv":
        sys.stdout.write(client.request("GET", "/api/leaderboards/", params={**params, "format": "csv"}).text)
        return EXIT_OK
    board = client.get_json("/api/leaderboards/", **params, operators="1" if args.operators else None)
    if args.format == "json":
        print(json.dumps(board, indent=2))
        return EXIT_OK
    print(f"{board['set']} on {board['chip']}")
    # Two speedups per view, never mixed: the protocol's (the paper's) and the device-time one.
    print(
        f"{'#':>3}  {'method':<40}"
        + "".join(f" {view[:8]:>8} acc {'protocol':>9} {'device':>8}" for view in board["views"])
    )
    for row in board["rows"]:
        line = f"{row['rank']:>3}  {row['method']['label'][:40]:<40}"
        for view in board["views"]:
            summary = row["summaries"].get(view)
            if summary is None:
                line += f" {'-':>12} {'-':>9} {'-':>8}"
                continue
            protocol = _times(summary.get("protocol_speedup_geomean"))
            line += f" {summary['accuracy_pct']:>11.1f}% {protocol:>9} {_times(summary['speedup_geomean']):>8}"
        print(line)
    return EXIT_OK


def cmd_prompts(args: argparse.Namespace, config: Config) -> int:
    pack = KgbClient(config).get_json(f"/api/operator-sets/{args.set}/prompts/", chip=args.chip)
    missing = [item["operator_id"] for item in pack if item["prompt"] is None]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for item in pack:
            if item["prompt"] is not None:
                (args.out / item["file_name"].replace(".py", ".md")).write_text(item["prompt"])
        print(f"{len(pack) - len(missing)} prompts written to {args.out}", file=sys.stderr)
    else:
        for item in pack:
            print(json.dumps(item))
    if missing:
        print(
            f"kgb: no prompt for {len(missing)} operators (no catalog record): {', '.join(missing[:10])}",
            file=sys.stderr,
        )
    return EXIT_OK


def cmd_bundle(args: argparse.Namespace, config: Config) -> int:
    if args.bundle_command == "judge":
        from evaluation.judge.bundle import run_judge_command  # the judging side: no Django, no server

        return run_judge_command(args.bundle, args.out, args.chip)
    client = KgbClient(config, timeout=600.0)
    if args.bundle_command == "export":
        bundle = client.post_json("/api/bundles/export/", {"chip": args.chip, "limit": args.limit})
        args.out.write_text(json.dumps(bundle))
        print(f"bundle {bundle['bundle_id']}: {len(bundle['jobs'])} runs of {bundle['chip']} -> {args.out}")
        return EXIT_OK
    report = client.post_json("/api/bundles/import/", json.loads(args.results.read_text()), chip=args.chip)
    print(json.dumps(report))
    return EXIT_OK


COMMANDS = {
    "login": cmd_login,
    "submit": cmd_submit,
    "status": cmd_status,
    "results": cmd_results,
    "prompts": cmd_prompts,
    "bundle": cmd_bundle,
}


if __name__ == "__main__":
    raise SystemExit(main())
