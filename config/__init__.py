# The Celery app lives in config/celery_app.py and is loaded only by the processes that run or
# publish tasks (workers, beat, the outbox relay, the tests): `celery -A config.celery_app`. Web
# processes never import it (outbox/messages.py).
