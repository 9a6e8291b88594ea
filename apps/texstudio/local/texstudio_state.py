"""TeXstudio's window state, read from its accessibility (AT-SPI) tree, as one JSON object.

The desktop's reader (io/atspi_reader.py) imports this module once and calls read(pid, args);
it also runs as a command with the system python (/usr/bin/python3, which has python3-pyatspi)
and AT_SPI_BUS_ADDRESS set to the desktop's accessibility bus: texstudio_state.py PID

Gives {"app": false} while the TeXstudio with process id PID is not on the bus, else its main
window's box and title (TeXstudio names it after the current document: "<path> - TeXstudio")
and the editor's document tabs. The text of a document is not in the tree (TeXstudio's editor
does not expose it); the checks read the files, as ScienceBoard's do.
"""

import json
import os
import sys

import pyatspi

# atspi_tree.py, the readers' shared walk of the tree, is in io/ at the top of the repository.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'io'))
from atspi_tree import application, children, extents, first, has_state, role  # noqa: E402


def showing(node):
    return has_state(node, pyatspi.STATE_SHOWING)


def editor_tabs(window):
    """The document tabs: the tab bar in the dock frame that holds the editor's 'Central' tool bar."""
    editor = first(
        window,
        lambda n: role(n) == "frame" and any(role(c) == "tool bar" and c.name == "Central" for c in children(n)),
        depth=4,
    )
    bar = first(editor, lambda n: role(n) == "page tab list" and showing(n), depth=4)
    if bar is None:
        return None
    return {
        "current": bar.name,
        "tabs": [{"name": tab.name, **extents(tab)} for tab in children(bar) if role(tab) == "page tab"],
    }


def state(pid):
    app = application("TeXstudio", pid)
    if app is None:
        return {"app": False}
    window = first(app, lambda n: role(n) == "frame", depth=0)
    if window is None:
        return {"app": False}
    return {
        "app": True,
        "window": extents(window),
        "title": window.name,
        "documents": editor_tabs(window),
    }


def read(pid, args):
    """What the reader (io/atspi_reader.py) and the command line print."""
    if args != []:
        raise ValueError(f"args: expected none, got {args!r}")
    return state(pid)


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: texstudio_state.py PID")
    print(json.dumps(read(int(sys.argv[1]), [])))


if __name__ == "__main__":
    main()
