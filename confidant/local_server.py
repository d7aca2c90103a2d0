"""`confidant-local`: the chat function on 127.0.0.1:$PORT (8080), on embedded defaults.

It serves the same functions-framework ASGI target as Cloud Run, and refuses to start when the
settings describe a cloud deployment with header identity (see Settings).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import uvicorn
from functions_framework.aio import create_asgi_app

from confidant.observability import configure_logging, flush_tracing
from confidant.settings import ConfigurationError, Settings

FUNCTIONS_SOURCE = Path(__file__).resolve().parent.parent / "functions" / "main.py"


def main() -> None:
    try:
        settings = Settings()
    except (ConfigurationError, ValueError) as error:
        raise SystemExit(f"confidant-local: refusing to start: {error}") from None
    configure_logging(settings)
    port = int(os.environ.get("PORT", "8080"))
    app = create_asgi_app(target="chat", source=str(FUNCTIONS_SOURCE))
    logging.getLogger(__name__).info(
        "Confidant on http://127.0.0.1:%d (store=%s, model=%s, auth=%s)",
        port,
        settings.store,
        settings.model,
        settings.auth,
    )
    # log_config=None: uvicorn's lines go through our handler (JSON when asked).
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None)
    _FlushingServer(config).run()


class _FlushingServer(uvicorn.Server):
    """Exports the batched spans at shutdown, before uvicorn re-raises the stop signal."""

    async def shutdown(self, sockets=None) -> None:  # type: ignore[no-untyped-def]
        await super().shutdown(sockets)
        flush_tracing()


if __name__ == "__main__":
    main()
