# One image for every Confidant service: functions-framework serves the target named by
# FUNCTION_TARGET ("chat" by default; Terraform sets "jobs" and "sweep" for the other services).
# The newest Python the project supports (3.11-3.13); dependencies from the universal lock.
FROM python:3.13-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FUNCTION_TARGET=chat \
    PORT=8080

WORKDIR /app

# Dependencies first, pinned by requirements.lock, so source edits reuse this layer. Only the
# runtime dependencies: the dev extra (tests, Terraform checks) never enters the image.
COPY pyproject.toml requirements.lock ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/deps.txt \
    && pip install -c requirements.lock -r /tmp/deps.txt \
    && rm /tmp/deps.txt

COPY confidant ./confidant
COPY agents ./agents
COPY functions ./functions
RUN pip install --no-deps -c requirements.lock . \
    && useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin confidant

# Non-root: the services write nothing to the image (state is in Firestore).
USER 10001
EXPOSE 8080

# Shell form so $FUNCTION_TARGET and $PORT (set by Cloud Run) are expanded; exec keeps
# functions-framework as PID 1 so it receives SIGTERM.
CMD exec functions-framework --target="$FUNCTION_TARGET" --source=functions/main.py --asgi --port="$PORT" --host=0.0.0.0
