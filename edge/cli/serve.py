"""`labeler serve`: the built-in pipeline as an HTTP JSON API (see `labeler_edge.serve` for the requests)."""
from __future__ import annotations

import click

from labeler_edge.cli import cli, handle_errors
from labeler_edge.cli.options import config_from_options, retrieval_options
from labeler_edge.cli.params import depth_option


@cli.command("serve")
@click.argument("corpus", type=click.Path())
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on (0.0.0.0: every interface; there is no authentication).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@depth_option(10, "Documents per search when a request gives no k.")
@click.option("--batch-window", type=click.FloatRange(0, 1000), default=5.0, show_default=True, metavar="MS",
              help="While several clients are active, wait up to this many milliseconds for each to have a "
                   "query in the batch encoded together (a lone client never waits; 0: never wait).")
@click.option("--max-batch", type=click.IntRange(1, 1024), default=64, show_default=True,
              help="Most queries encoded in one batch (1: no batching).")
@click.option("--threads", type=click.IntRange(1, 256), default=None,
              help="Threads the model computes with [default: torch's, one per core]. 1 keeps a server on a "
                   "machine shared with other work from stalling in OpenMP barriers.")
@click.option("--read-timeout", type=click.FloatRange(0.1, 3600), default=10.0, show_default=True, metavar="SECONDS",
              help="Time a connection has to send each whole request (or the next one); slower ones are closed.")
@click.option("--max-connections", type=click.IntRange(1, 10_000), default=64, show_default=True,
              help="Connections served at once (a thread each); more are answered 503 with Retry-After.")
@click.option("--access-log", is_flag=True, help="Log every request on stderr.")
@retrieval_options
@handle_errors
def serve_command(corpus: str, host: str, port: int, depth: int, batch_window: float, max_batch: int,
                  threads: int | None, read_timeout: float, max_connections: int, access_log: bool,
                  **options) -> None:
    """Serve CORPUS as JSON over HTTP: POST /search {"query": ..., "k": ...}, GET /search?q=..., GET /health."""
    from labeler_edge.cli.retrieval import ProgressBar
    from labeler_edge.serve import make_server, open_service

    config = config_from_options(options, k=depth)
    server = make_server(None, host, port, default_k=depth, access_log=access_log, read_timeout=read_timeout,
                         max_connections=max_connections)  # a busy port fails before loading
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    bar = ProgressBar()
    try:
        service = open_service(corpus, config, progress=bar, batch_window=batch_window / 1000, max_batch=max_batch)
        server.service = service
    except BaseException:
        server.server_close()
        raise
    finally:
        bar.close()
    info = service.health()
    click.echo(f"serving {info['documents']} documents ({config.mode}, {info['model']}, config "
               f"{info['config_hash']}) at http://{host}:{server.server_port} — POST /search, "
               f"GET /search?q=..., GET /health; Ctrl-C stops", nl=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.server_close()
        service.close()
