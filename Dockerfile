# The application's image, one for every role of compose.yaml (web, each queue's worker, beat,
# the migrate job): the role is the command. Front-end files come from npm at build time.
FROM node:20-bookworm-slim AS frontend
WORKDIR /app
COPY package.json package-lock.json ./
# Only what the pages serve (htmx, Pico CSS, Swagger UI); not the local chain's tools.
RUN npm ci --no-audit --no-fund --omit=optional --ignore-scripts \
    && rm -rf node_modules/@foundry-rs node_modules/solc

FROM python:3.12-slim-bookworm
# OpenSSH client for the hosts' worker (Ansible over SSH); nothing else from the distribution.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openssh-client \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 app
WORKDIR /app
COPY pyproject.toml ./
COPY . .
COPY --from=frontend /app/node_modules ./node_modules
RUN pip install --no-cache-dir . && chown -R app:app /app
USER app
ENV PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    VAR_DIR=/app/var
EXPOSE 8000
CMD ["gunicorn", "-c", "gunicorn.conf.py", "config.wsgi"]
