# The Docker form of the Action: the same package and the same entrypoint as the composite action.yml.
# Use it as `runs: {using: docker, image: Dockerfile}` in a fork, or run it by hand:
#   docker build -t ptd-triage . && docker run --rm -e GITHUB_EVENT_NAME -e GITHUB_EVENT_PATH ... ptd-triage
# For Docker actions the runner passes inputs as INPUT_<NAME> with hyphens kept (INPUT_GITHUB-TOKEN);
# entrypoint.py accepts that form as well as the underscore form the composite action uses.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /action
COPY pyproject.toml README.md action.yml entrypoint.py ./
COPY queues ./queues
COPY triage ./triage
# The bundled queues compiled once, in the image (triage.config.compiled): a run loads its queue in milliseconds.
ENV PTD_TRIAGE_CACHE=/action/.ptd-triage-cache \
    PTD_TRIAGE_CACHE_KEY=/action/.ptd-triage-cache.key
RUN python -m pip install --no-input /action
RUN python -P -m triage.config.precompile

ENTRYPOINT ["python", "/action/entrypoint.py"]
