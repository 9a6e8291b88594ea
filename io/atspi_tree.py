"""Walking an app's accessibility (AT-SPI) tree: what the apps' state readers share.

Imported by <app>/<app>_state.py, which put this folder on sys.path, in the desktop's reader
(atspi_reader.py) or run as a command with the system python (/usr/bin/python3, which has
python3-pyatspi) and AT_SPI_BUS_ADDRESS set to the desktop's bus.
"""

import pyatspi
from gi.repository import GLib


def children(node):
    return [child for child in node if child is not None] if node is not None else []


def role(node):
    return node.getRoleName()


def has_state(node, state):
    return node.getState().contains(state)


def extents(node):
    e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    return {"x": e.x, "y": e.y, "width": e.width, "height": e.height}


def first(node, predicate, depth=8):
    """The first descendant (depth-first, pre-order) that satisfies predicate."""
    for child in children(node):
        if predicate(child):
            return child
        if depth > 0:
            found = first(child, predicate, depth - 1)
            if found is not None:
                return found
    return None


def by_role(name):
    return lambda node: role(node) == name


def application(name, pid):
    """The application `name` with process id `pid` on the bus, or None (the registry may still list one just killed)."""
    desktop = pyatspi.Registry.getDesktop(0)
    for app in children(desktop):
        try:
            if app.name == name and app.get_process_id() == pid:
                return app
        except GLib.GError:
            continue  # an application that left the bus while we looked
    return None
