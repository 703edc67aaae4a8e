"""The instance folder is private to the account Assay runs as.

It holds the SQLite database (every tenant's data and password hashes), the generated
secret keys and the embedded Redis's dump: the folder is 0700 and every file Assay puts
there 0600, so no other local account (such as the `nobody` the code sandbox runs as)
can read them, even where a file was created before these modes were enforced.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def prepare(folder: Path) -> Path:
    """Create the folder 0700, or tighten an existing one and the files in it."""
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    _tighten(folder, FOLDER_MODE)
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                _tighten(Path(entry.path), FILE_MODE)
    return folder


def create_private(path: Path) -> None:
    """Make sure `path` exists as a 0600 file (an empty SQLite file is an empty database;
    SQLite gives its journal and WAL files the database's mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    _tighten(path, FILE_MODE)


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """Files created meanwhile, by this process or the servers it starts (the embedded
    Redis writes its dump later, with the umask it inherited), are private."""
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


def _tighten(path: Path, mode: int) -> None:
    """Drop group and other access; leaves files of other owners alone (a mounted
    folder), saying so."""
    try:
        current = stat.S_IMODE(path.stat().st_mode)
        if current & 0o077:
            path.chmod(current & mode)
    except PermissionError:
        log.warning("cannot make %s private (mode %o wanted): check its owner", path, mode)
