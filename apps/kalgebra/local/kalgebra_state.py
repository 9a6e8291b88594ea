"""KAlgebra's state, read from its accessibility (AT-SPI) tree, as one JSON object.

The desktop's reader (io/atspi_reader.py) imports this module once and calls read(pid, args);
it also runs as a command with the system python (/usr/bin/python3, which has python3-pyatspi)
and AT_SPI_BUS_ADDRESS set to the desktop's accessibility bus: kalgebra_state.py PID [--view]
(--view: only the window, the main tabs, the calculator's field and the 3D plot's box, a few times faster than the whole state)

Gives {"app": false} while the KAlgebra with process id PID is not on the bus, else the fields
read below. The pid matters: the registry may still list a KAlgebra that was just killed.

Only the parts of the tree the evaluators and the desktop need are visited: walking the whole
tree (the Operations dock alone has ~400 items) takes seconds, these lookups a fraction of it.
"""

import json
import os
import sys

import pyatspi

# atspi_tree.py, the readers' shared walk of the tree, is in io/ at the top of the repository.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'io'))
from atspi_tree import application, by_role, children, extents, first, has_state, role  # noqa: E402

MAIN_TABS = ("Calculator", "2D Graph", "3D Graph", "Dictionary")
PLOT_STYLES = ("Dots", "Lines", "Solid")
RESOLUTIONS = ("Poor", "Normal", "Fine", "Very Fine")


def text_of(node):
    try:
        return node.queryText().getText(0, -1)
    except NotImplementedError:
        return None


def widget(node):
    """Text, visibility and on-screen box of an input; None when there is no such input."""
    if node is None:
        return None
    box = extents(node)
    return {"text": text_of(node), "showing": has_state(node, pyatspi.STATE_SHOWING), **box}


def main_parts(app):
    """The main window, its tab bar and its pages, one per tab (Calculator, 2D, 3D, Dictionary)."""
    window = first(app, lambda n: role(n) == "frame" and n.name == "", depth=0)
    tab_list = first(window, lambda n: role(n) == "page tab list" and n.name in MAIN_TABS + ("",), depth=3)
    pages = [n for n in children(first(window, by_role("layered pane"), depth=3)) if role(n) == "filler"]
    return window, tab_list, pages


def tabs_of(tab_list):
    """The tabs of a tab bar with their boxes; Qt names the bar after its current tab."""
    return {
        "current": tab_list.name,
        "tabs": [{"name": tab.name, **extents(tab)} for tab in children(tab_list) if role(tab) == "page tab"],
    }


def console_log(calculator_page):
    """The calculator's log: one entry per executed line (input and printed result) or message."""
    document = first(calculator_page, by_role("document web"))
    entries = []
    for block in children(document):
        links = [n for n in children(block) if role(n) == "link"]
        if role(block) == "paragraph" and len(links) >= 2:
            entries.append({"input": links[0].name, "result": links[-1].name})
        else:
            words = [n.name for n in children(block) if n.name]
            entries.append({"message": " ".join(words)})
    return entries


def cell_rows(table, width):
    """Rows of a table/tree as lists of cells (name, checked), `width` cells a row."""
    cells = [n for n in children(table) if role(n) == "table cell"]
    rows = []
    for i in range(0, len(cells) - width + 1, width):
        rows.append([(c.name, has_state(c, pyatspi.STATE_CHECKED)) for c in cells[i : i + width]])
    return rows


def variables(window):
    dock = first(window, lambda n: role(n) == "frame" and n.name == "Variables", depth=0)
    tree = first(dock, by_role("tree"), depth=2)
    return [{"name": name, "value": value} for (name, _), (value, _) in cell_rows(tree, 2)]


def functions_dock(window):
    """The 2D Graph's dock: a tab bar (List, Add, Variables, Viewport) under a stack of pages."""
    dock = first(window, lambda n: role(n) == "frame" and n.name == "Functions", depth=0)
    body = first(dock, by_role("filler"), depth=0)
    pages = first(body, by_role("layered pane"), depth=0)
    tools = first(body, by_role("page tab list"), depth=0)
    tree = first(pages, by_role("tree"), depth=0)
    functions = [
        {"name": name, "expression": expression, "shown": shown}
        for (name, shown), (expression, _) in cell_rows(tree, 2)
    ]
    # The Add page (the function editor): a name field, then the expression field.
    editor_texts = []
    for page in children(pages):
        if role(page) == "filler":
            editor_texts = [n for n in children(page) if role(n) == "text"]
            if editor_texts:
                break
    return {
        "functions": functions,
        "functionsDockTabs": tabs_of(tools) if tools is not None else None,
        "functionEditor": widget(editor_texts[1]) if len(editor_texts) > 1 else None,
    }


def checked_item(window, menu_name, choices):
    """The checked one of a menu's exclusive choices (the menu need not be open)."""
    menu_bar = first(window, by_role("menu bar"), depth=1)
    menu = first(menu_bar, lambda n: role(n) == "menu item" and n.name == menu_name, depth=0)
    items = [n for n in children(first(menu, by_role("popup menu"), depth=0)) if n.name in choices]
    checked = [n.name for n in items if has_state(n, pyatspi.STATE_CHECKED)]
    return checked[0] if checked else None


def view_3d(page, field):
    """The 3D plot's box: the page above its expression field. The OpenGL view itself is not in the tree."""
    if page is None or field is None or not has_state(page, pyatspi.STATE_SHOWING):
        return None
    box = extents(page)
    top = extents(field)["y"]
    return {**box, "height": max(0, top - box["y"])}


def status_bar(window):
    bar = first(window, by_role("status bar"), depth=1)
    return " ".join(n.name for n in children(bar) if role(n) == "label" and n.name)


def page(pages, index):
    return pages[index] if len(pages) > index else None


def state(pid):
    app = application("kalgebra", pid)
    if app is None:
        return {"app": False}
    window, tab_list, pages = main_parts(app)
    calculator_page = page(pages, 0)
    graph3d_page = page(pages, 2)
    return {
        "app": True,
        "window": extents(window),
        "mainTabs": tabs_of(tab_list) if tab_list is not None else None,
        "calculatorInput": widget(first(calculator_page, by_role("text"), depth=0)),
        "console": console_log(calculator_page),
        "input3d": widget(first(graph3d_page, by_role("text"), depth=0)),
        "view3d": view_3d(graph3d_page, first(graph3d_page, by_role("text"), depth=0)),
        "plotStyle3d": checked_item(window, "3D Graph", PLOT_STYLES),
        "resolution2d": checked_item(window, "2D Graph", RESOLUTIONS),
        "variables": variables(window),
        **functions_dock(window),
        "statusBar": status_bar(window),
    }


def view(pid):
    """The window, which tab shows, the calculator's field and where the 3D plot is: what the driver waits for (a
    launch, a tab) and needs before an input, without the walks of the log, the docks and the menus."""
    app = application("kalgebra", pid)
    if app is None:
        return {"app": False}
    window, tab_list, pages = main_parts(app)
    graph3d_page = page(pages, 2)
    return {
        "app": True,
        "window": extents(window),
        "mainTabs": tabs_of(tab_list) if tab_list is not None else None,
        "calculatorInput": widget(first(page(pages, 0), by_role("text"), depth=0)),
        "view3d": view_3d(graph3d_page, first(graph3d_page, by_role("text"), depth=0)),
    }


def read(pid, args):
    """What the reader (io/atspi_reader.py) and the command line print: the state, or with --view the view."""
    if args == ["--view"]:
        return view(pid)
    if args == []:
        return state(pid)
    raise ValueError(f"args: expected [] or ['--view'], got {args!r}")


def main():
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit() or sys.argv[2:] not in ([], ["--view"]):
        sys.exit("usage: kalgebra_state.py PID [--view]")
    print(json.dumps(read(int(sys.argv[1]), sys.argv[2:])))


if __name__ == "__main__":
    main()
