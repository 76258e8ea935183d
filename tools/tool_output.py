"""What tools/convert_pth.py and tools/export_pth.py share: a user error is one line per problem on stderr and exit
status 2 (never a traceback), and the output file is written atomically — into a temporary file in the output
folder (created when missing), then renamed over the output — so a failed or interrupted run leaves no
half-written file.
"""
import os
import sys
import tempfile

USER_ERROR = 2


def fail(tool, *messages):
    for message in messages:
        print(f"{tool}: error: {message}", file=sys.stderr)
    sys.exit(USER_ERROR)


def write_atomically(tool, path, write, example_name):
    """Creates `path` with write(f) on a binary file object; `example_name` completes the hint when `path` is a folder."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        blocker = folder
        while blocker != os.path.dirname(blocker) and not os.path.lexists(blocker):
            blocker = os.path.dirname(blocker)
        in_the_way = f" ('{blocker}' is a file, not a folder)" if os.path.isfile(blocker) else ""
        fail(tool, f"cannot create the output folder '{folder}': {e.strerror}{in_the_way}")
    if os.path.isdir(path):
        fail(tool, f"the output '{path}' is a folder; give a file name, e.g. {os.path.join(path, example_name)}")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".tmp.")
    except OSError as e:
        fail(tool, f"cannot write into the output folder '{folder}': {e.strerror}")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        fail(tool, f"cannot write '{path}': {e.strerror}")
    except BaseException:
        os.unlink(tmp)
        raise
