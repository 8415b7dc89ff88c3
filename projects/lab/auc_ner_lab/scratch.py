"""The study's scratch folder: its workers keep their temporary files in one folder of the
study's (their ``TMPDIR``), removed when the study ends, however it ends. SIGKILL of the study
with its cell (its process group, the kernel's OOM killer) leaves the folder and what the cell
had in it: the next study on the machine removes it, as the folder's name says which process
made it, no longer alive (`remove_abandoned_scratch`)."""
import os
import shutil
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

SCRATCH_PREFIX = "auc-ner-study-"


def remove_abandoned_scratch(folder: Path) -> None:
    """Remove the scratch folders in `folder` whose name names a process of this host that is no
    longer alive (studies killed outright)."""
    host = socket.gethostname()[:64]
    for scratch in folder.glob(f"{SCRATCH_PREFIX}*+*+*"):
        pid, owner_host, _ = scratch.name[len(SCRATCH_PREFIX):].split("+", 2)
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


@contextmanager
def scratch_folder(inline: bool, use_ray: bool) -> Iterator[Optional[Path]]:
    """A scratch folder for the study's temporary files: the workers' TMPDIR, and this process's
    temporary folder when cells run here (`inline`); removed at the end, whatever a cell left
    in it. None on Ray, whose workers live on other nodes and whose session files follow TMPDIR."""
    if use_ray:
        yield None
        return
    remove_abandoned_scratch(Path(tempfile.gettempdir()))
    # its name says whose it is (process, host), so that the next study can tell it was abandoned;
    # not a file in it, which would keep the last worker out from removing it (`execute_cell`)
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}+{socket.gethostname()[:64]}+"))
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(scratch)
    if inline:
        tempfile.tempdir = str(scratch)
    try:
        yield scratch
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        shutil.rmtree(scratch, ignore_errors=True)
