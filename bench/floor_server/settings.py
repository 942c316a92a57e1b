"""The service's own settings plus the floor views of `bench/floor.py` and
`bench/load.py` (`bench.floor_server.urls`): the production configuration, with two
extra routes the benchmarks measure the service against."""

from memory_project.settings import *  # noqa: F403

ROOT_URLCONF = "bench.floor_server.urls"
