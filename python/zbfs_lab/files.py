"""Files that appear under their name only when complete: the bytes go to NAME.partial, are
flushed and synced, and the file is renamed over NAME (then the folder is synced). On any failure
the partial file is removed and WriteError names the file and the reason; an older NAME stays
as it was. zbfs itself writes its records the same way (src/zbfs/output/output_file.hpp)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


class WriteError(Exception):
    """A file could not be written; the message names it and says why."""


def partial_path(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def sync_folder(folder: Path) -> None:
    """fsync of a folder, so that a rename in it survives a crash (best effort where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def completed(path: str | Path) -> Iterator[Path]:
    """Yields the partial path to write (by any means: a library's savefig, another program); on
    leaving without an exception the file is synced and renamed over `path`. A failure, or an
    exception from the block, removes the partial file."""
    path = Path(path)
    partial = partial_path(path)
    try:
        yield partial
        fd = os.open(partial, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(partial, path)
        sync_folder(path.parent)
    except OSError as e:
        # Said only where there was one: a folder that refuses the partial file has none.
        existed = partial.exists()
        partial.unlink(missing_ok=True)
        removed = " (the partial file was removed)" if existed else ""
        raise WriteError(f"cannot write '{path}': {e.strerror or e}{removed}") from e
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def publish(path: str | Path) -> None:
    """Syncs the complete file another program wrote to partial_path(path) and renames it over `path`."""
    with completed(path):
        pass


def write_text(path: str | Path, text: str) -> None:
    """Writes `text` to `path` completely or not at all."""
    write_with(path, lambda partial: _write_all(partial, text.encode()))


def write_with(path: str | Path, writer: Callable[[Path], None]) -> None:
    """`writer(partial)` writes the file; it appears under `path` only when complete."""
    with completed(path) as partial:
        writer(partial)


def _write_all(partial: Path, data: bytes) -> None:
    # os.write may write less than asked (a filling disk); the rest follows or fails with errno.
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written == 0:
                raise OSError(28, os.strerror(28))  # ENOSPC: nothing moved, nothing said
            view = view[written:]
    finally:
        os.close(fd)
