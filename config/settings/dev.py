"""The embedded default used by `make run`: no database or broker server needed."""

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DEBUG", True)
