"""The ``balance`` command: one sub-app per registered game (the commands
every game has, plus the game's own from its home's commands module),
``study``, ``report`` and ``bench``; and :func:`main`, which turns a user
mistake into one line and exit code 2.

Commands are thin: they parse options, call library functions and print.
Heavy imports (numba, polars, matplotlib) happen inside command bodies so
that ``balance --help`` answers at once.
"""

from __future__ import annotations

import sys

import typer
from typer.core import TyperGroup

from balance.cli import bench as bench_cli
from balance.cli import study as study_cli
from balance.cli.game import add_game_commands, cli_defaults
from balance.errors import UserError
from balance.registry import GAMES


class LiteralHelp(TyperGroup):
    """The root command: every help text under it is shown as written. Typer
    reads help as Rich markup, which drops a bracketed word ("a variant
    file's [rules] table" showed as "a variant file's  table"); the texts are
    escaped here, once, for every command and option of the tree (Typer
    builds the subcommands first, so they are all there)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from rich.markup import escape

        todo: list = [self]
        while todo:
            cmd = todo.pop()
            todo.extend(getattr(cmd, "commands", {}).values())
            for obj in (cmd, *cmd.params):
                for attr in ("help", "short_help", "epilog"):
                    text = getattr(obj, attr, None)
                    if isinstance(text, str) and text:
                        setattr(obj, attr, escape(text))


def _print_version(value: bool) -> None:
    if value:
        from balance import __version__

        typer.echo(f"balance {__version__}")
        raise typer.Exit()


def make_app() -> typer.Typer:
    """The command line of every game registered now: a sub-app per game,
    then ``report``, ``study`` and ``bench``."""
    app = typer.Typer(
        cls=LiteralHelp,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        help="Monte Carlo balance analysis for tabletop card games.",
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False,
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print the toolkit's version and exit.",
        ),
    ) -> None:
        """Monte Carlo balance analysis for tabletop card games."""

    bench_app = typer.Typer(
        help="Speed and memory benchmarks. Without a command: every engine's games/s and "
        "rounds/s at 1 and 2 threads (--against REV: as ratios to an older revision timed "
        "in the same run), where each game's time goes, the cold and cached start, and the "
        "first command with cached kernels."
    )
    bench_app.callback(invoke_without_command=True)(bench_cli.bench_summary_cmd)
    for game in GAMES.values():
        sub = typer.Typer(no_args_is_help=True, help=f"{game.title}: {game.summary}".rstrip(": "))
        app.add_typer(sub, name=game.name)
        defaults = cli_defaults(game)
        add_game_commands(sub, game, defaults)
        extra = game.commands_module()
        if extra is not None and hasattr(extra, "register"):
            extra.register(sub)
        if extra is not None and hasattr(extra, "register_bench"):
            extra.register_bench(bench_app)
        else:
            bench_cli.add_bench(bench_app, game, defaults)
    study_cli.register(app)
    app.add_typer(bench_app, name="bench")
    bench_app.command("report")(bench_cli.bench_report_cmd)
    bench_app.command("study")(bench_cli.bench_study_cmd)
    bench_app.command("scaling")(bench_cli.bench_scaling_cmd)
    bench_app.command("oracle")(bench_cli.bench_oracle_cmd)
    return app


app = make_app()


def _click_exceptions():
    """Typer's usage-error classes (vendored click in recent Typer)."""
    try:
        from typer._click import exceptions as cx
    except ImportError:  # older Typer runs on click itself
        from click import exceptions as cx
    return cx


def _one_line(exc: Exception) -> str:
    """An error's message on one line (a message quoting a file may hold newlines)."""
    return " ".join(str(exc).split())


def _refuse_empty(param):
    """Wrap ``param``'s processing so that an empty value typed on the command
    line (``--name ''``, ``--vs-card=``) is refused in one line: it used to read
    as the option left out (a whole power test ran for ``--vs-card ''``)."""
    process = param.process_value

    def process_value(ctx, value):
        source = ctx.get_parameter_source(param.name)
        typed = getattr(source, "name", None) == "COMMANDLINE"  # not a default or $VAR
        values = value if isinstance(value, (list, tuple)) else (value,)
        if typed and any(isinstance(v, str) and not v.strip() for v in values):
            name = max(param.opts, key=len) if param.opts else param.name
            raise UserError(f"{name}: the value is empty; give a value or leave {name} out")
        return process(ctx, value)

    param.process_value = process_value


def command():
    """The click command of :data:`app`, every option that takes a value
    refusing an empty one (:func:`_refuse_empty`)."""
    import typer.main

    root = typer.main.get_command(app)
    todo = [root]
    while todo:
        cmd = todo.pop()
        todo.extend(getattr(cmd, "commands", {}).values())
        for param in cmd.params:
            if param.param_type_name == "option" and not getattr(param, "is_flag", False):
                _refuse_empty(param)
    return root


def main() -> None:
    """Entry point: user errors become one line on stderr and exit code 2."""
    cx = _click_exceptions()
    try:
        rc = command()(standalone_mode=False)
    except UserError as exc:
        typer.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # the machine refused (a file system, a device): exit 1
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        typer.echo(f"error: {exc.strerror or exc}{where}", err=True)
        sys.exit(1)
    except MemoryError:
        typer.echo(
            "error: out of memory; ask for fewer games per run (-n) or a smaller --batch-size",
            err=True,
        )
        sys.exit(1)
    except cx.NoArgsIsHelpError as exc:
        exc.show()
        sys.exit(0)
    except cx.UsageError as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        rc = 130
    except typer.Exit as exc:
        rc = exc.exit_code
    # Typer turns Ctrl-C into exit code 130, which it returns rather than raises
    # in this mode: a caller (`balance study && publish`) must see it
    if rc == 130:
        typer.echo(
            "interrupted: nothing partial was stored (finished runs are kept and "
            "a rerun resumes from them)",
            err=True,
        )
        sys.exit(130)
    if isinstance(rc, int) and not isinstance(rc, bool) and rc:
        sys.exit(rc)
