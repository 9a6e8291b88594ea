"""The project's own in-VM server: the OSWorld/ScienceBoard protocol on port 5000, on Debian 12.

    DISPLAY=:0 /usr/bin/python3 osworld_server.py --port 5000

What io/osworld-client.ts and activities/desktop/osworld/osworld-desktop.ts speak, as ScienceBoard's
VMs serve it: vm_config/server.py of github.com/OS-Copilot/ScienceBoard at 9896c9b (a Flask app
extracted from OSWorld's desktop_env/server/main.py, run with `app.run(debug=True)`). Each view
below that copies one of its views says so; the contract suite (test/desktop/osworld-client.test.ts)
runs against this file and against the test double of that server (doubles/osworld-server.ts).

It runs on Debian bookworm's python3 (3.11) and Debian packages only: python3-flask (Flask and
Werkzeug 2.2, whose routing, error pages and debugger answer as the real server's do),
python3-xlib, python3-pil and python3-pyatspi. pyautogui, which the actions import, is not one of
them: the image carries it from PyPI (infra/vm-image/python-requirements.txt), and this server never
imports it. Where it differs from ScienceBoard's server, on purpose:
 - /screenshot grabs the screen in this process (X GetImage, XFixes for the pointer) into memory:
   no file shared by overlapping requests (theirs can answer a truncated PNG), no X connection left
   open per screenshot (theirs runs out of X clients after about 250 and crashes), no process;
 - /cursor_position answers [x, y] (theirs returns a bare tuple, which Flask refuses: OSWorld #117);
 - an uncaught exception answers Werkzeug's debugger page without its console (evalex=False), its
   title escaped as Werkzeug 3 escapes it; a JSON route's other Content-Type answers 415 as
   Werkzeug 3 does (bookworm's 2.2 says 400): see PageOnlyDebugger and JsonRequest;
 - the commands it runs get /dev/null as stdin, whatever the server's own stdin is;
 - /accessibility builds the tree with the standard library's ElementTree (python3-lxml is not
   needed; it declares the namespaces the tree uses, lxml all eight), one application after the
   other, asking the apps rather than libatspi's cache, and without LibreOffice Calc's table shortcut;
 - only the routes this project calls, and OSWorld's POST /file: not /start_recording and
   /end_recording (ffmpeg), /terminal, /window_size, /desktop_path, /wallpaper, /list_directory,
   nor the /setup/ helpers for wallpapers, downloads, opening files and windows.
"""

import argparse
import array
import io
import json
import os
import platform
import re
import shlex
import subprocess
import threading
import traceback
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from flask import Flask, Request, jsonify, request, send_file
from markupsafe import escape
from PIL import Image, ImageGrab
from werkzeug.debug import DebuggedApplication
from werkzeug.debug.tbtools import DebugTraceback
from werkzeug.exceptions import UnsupportedMediaType
from werkzeug.serving import run_simple
from werkzeug.wrappers import Response
from Xlib import display as xdisplay

# subprocess.run's timeout in ScienceBoard's execute_command.
EXECUTE_TIMEOUT_S = 120
# The accessibility tree's limits, as ScienceBoard's MAX_DEPTH (which POST /opt sets) and MAX_WIDTH.
tree_depth = 50
MAX_WIDTH = 1024


class JsonRequest(Request):
    """Flask's request, answering a JSON route's other Content-Type with 415, as Werkzeug >= 2.3 does.

    ScienceBoard's server runs on Flask 3 (Werkzeug 3), which answers 415 Unsupported Media Type;
    bookworm's Werkzeug 2.2 answers 400 with the same sentence. Malformed JSON stays Werkzeug's 400.
    """

    def on_json_loading_failed(self, e):
        if e is None:
            raise UnsupportedMediaType(
                "Did not attempt to load JSON data because the request Content-Type was not 'application/json'."
            )
        return super().on_json_loading_failed(e)


app = Flask(__name__)
app.request_class = JsonRequest
# As ScienceBoard's app.run(debug=True): exceptions reach the debugger (below), Werkzeug's 400 keeps
# its description ("Failed to decode JSON object: ..."), and JSON is indented with sorted keys.
app.debug = True


class PageOnlyDebugger(DebuggedApplication):
    """Werkzeug's debugger page for an uncaught exception, without its console.

    The client reads the exception line from the page's title (io/vm-http.ts), as it does from the
    real server's, so the page stays Werkzeug's own; Werkzeug 2.2's debug_application, but:
     - no console (evalex=False): nobody can run code in this process through the page (the real
       server's console only asks for the PIN its log prints), so the frames Werkzeug keeps for it
       are not kept (each would hold its locals for the server's life);
     - the title escaped, as Werkzeug 3 does (ScienceBoard's server runs on it): 2.2 writes the
       exception line into <title> as it is, so a path or a command in it can write markup.
    """

    def debug_application(self, environ, start_response):
        app_iter = None
        try:
            app_iter = self.app(environ, start_response)
            yield from app_iter
            if hasattr(app_iter, "close"):
                app_iter.close()
        except Exception as e:
            if hasattr(app_iter, "close"):
                app_iter.close()
            tb = DebugTraceback(e, skip=1, hide=not self.show_hidden_frames)
            page = tb.render_debugger_html(evalex=False, secret=self.secret, evalex_trusted=False)
            title = traceback.TracebackException.from_exception(e).format_exception_only()
            first = next(title, "")
            page = page.replace(f"<title>{first}", f"<title>{escape(first)}", 1)
            yield from Response(page, status=500, mimetype="text/html")(environ, start_response)
            environ["wsgi.errors"].write("".join(tb.render_traceback_text()))


@app.route("/platform", methods=["GET"])
def get_platform():
    return platform.system()


# --- Commands (ScienceBoard's execute_command and launch_app) ---


def command_of(data):
    """The command as ScienceBoard builds it: a string without `shell` split like shlex, `~/` expanded.

    A list with `shell` runs its first element under sh, the others becoming $0, $1 (Popen's rule).
    """
    shell = data.get("shell", False)
    command = data.get("command", "" if shell else [])
    if isinstance(command, str) and not shell:
        command = shlex.split(command)
    if not isinstance(command, str):
        command = [os.path.expanduser(arg) if arg.startswith("~/") else arg for arg in command]
    return command, shell


@app.route("/setup/execute", methods=["POST"])
@app.route("/execute", methods=["POST"])
def execute_command():
    command, shell = command_of(request.json)
    try:
        # encoding= is text=True with the codec named: output that is not UTF-8 is an error whatever
        # the VM's locale, and \r\n and \r read as \n.
        result = subprocess.run(command, shell=shell, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, encoding="utf-8", timeout=EXECUTE_TIMEOUT_S)
    except Exception as e:  # a missing program, the timeout, undecodable output: ScienceBoard's JSON 500
        return jsonify({"status": "error", "message": str(e)}), 500
    return jsonify({"status": "success", "output": result.stdout, "error": result.stderr,
                    "returncode": result.returncode})


@app.route("/setup/launch", methods=["POST"])
def launch_app():
    command, shell = command_of(request.json)
    try:
        # Not waited for, as ScienceBoard's; subprocess reaps it at a later Popen once it has ended.
        subprocess.Popen(command, shell=shell, stdin=subprocess.DEVNULL)
    except Exception as e:
        return jsonify({"status": "error", "message": str(e)}), 500
    return "{:} launched successfully".format(command if shell else " ".join(command))


# --- The screen and the pointer ---


def x_connection():
    """A connection to the VM's X server (DISPLAY) for one request, closed by the caller.

    One per request instead of one shared by the server's threads (python-xlib's Display is not
    thread-safe); each is closed, unlike the Xcursor connection ScienceBoard's screenshot leaks.
    """
    return xdisplay.Display()


def pointer_image(connection):
    """The pointer's picture (RGBA) and where its top-left corner is on the screen, by XFixes."""
    connection.xfixes_query_version()
    cursor = connection.xfixes_get_cursor_image(connection.screen().root)
    # 32-bit premultiplied ARGB per pixel: in memory, B G R A (x86 and arm64 are little-endian).
    pixels = array.array("I", cursor.cursor_image).tobytes()
    image = Image.frombytes("RGBa", (cursor.width, cursor.height), pixels, "raw", "BGRa").convert("RGBA")
    return image, (cursor.x - cursor.xhot, cursor.y - cursor.yhot)


@app.route("/screenshot", methods=["GET"])
def capture_screen_with_cursor():
    """The screen with the pointer drawn on it, as a PNG made in memory.

    Naming the display makes PIL read it in this process (X GetImage over XCB); with none, PIL runs
    gnome-screenshot when the VM has it. ScienceBoard's view pastes pyxcursor's picture at the
    pointer; this one places it by its hotspot, as X draws it.
    """
    screen = ImageGrab.grab(xdisplay=os.environ.get("DISPLAY", ":0"))
    connection = x_connection()
    try:
        if connection.has_extension("XFIXES"):
            pointer, corner = pointer_image(connection)
            screen.paste(pointer, corner, pointer)
    finally:
        connection.close()
    png = io.BytesIO()
    screen.save(png, format="PNG")
    png.seek(0)
    return send_file(png, mimetype="image/png")


@app.route("/screen_size", methods=["POST"])
def get_screen_size():
    connection = x_connection()
    try:
        screen = connection.screen()
        return jsonify({"width": screen.width_in_pixels, "height": screen.height_in_pixels})
    finally:
        connection.close()


@app.route("/cursor_position", methods=["GET"])
def get_cursor_position():
    """[x, y], which the client takes as it is (ScienceBoard's bare tuple is Flask's 500: OSWorld #117)."""
    connection = x_connection()
    try:
        pointer = connection.screen().root.query_pointer()
        return jsonify([pointer.root_x, pointer.root_y])
    finally:
        connection.close()


# --- The accessibility tree (ScienceBoard's _create_atspi_node and get_accessibility_tree) ---

NAMESPACES = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}
for _prefix, _uri in NAMESPACES.items():
    ET.register_namespace(_prefix, _uri)

# Characters XML 1.0 cannot hold: lxml refuses them (the real server's 500), ElementTree would write
# them into XML no parser reads, so they are left out.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# pyatspi, once imported (by the first /accessibility: the other routes work without an AT-SPI bus),
# and the lock that keeps its calls on one thread at a time (libatspi is not thread-safe).
atspi = {}
atspi_lock = threading.Lock()


def pyatspi_module():
    if "pyatspi" not in atspi:
        # Every property asked of the app, not libatspi's cache: this process runs no GLib main loop
        # to keep that cache up to date (as io/atspi_reader.py says for its long-lived reader).
        os.environ.setdefault("ATSPI_NO_CACHE", "1")
        import pyatspi
        from gi.repository import GLib

        atspi["pyatspi"], atspi["glib"] = pyatspi, GLib
    return atspi["pyatspi"]


def pump_atspi_events():
    """Dispatches the D-Bus messages that came since the last read: apps that left the bus are dropped."""
    context = atspi["glib"].MainContext.default()
    while context.pending():
        context.iteration(False)


def xml_text(value):
    return NOT_XML.sub("", str(value))


def states_of(node, pyatspi, attributes):
    for state in node.getState().get_states():
        name = pyatspi.StateType._enum_lookup[state].split("_", maxsplit=1)[1].lower()
        if name:
            attributes["{%s}%s" % (NAMESPACES["st"], name)] = "true"


def component_of(node, pyatspi, attributes):
    """Position and size, for a node both visible and showing (as ScienceBoard's)."""
    state = "{%s}%s" % (NAMESPACES["st"], "%s")
    if attributes.get(state % "visible") != "true" or attributes.get(state % "showing") != "true":
        return
    try:
        extents = node.queryComponent().getExtents(pyatspi.XY_SCREEN)
    except NotImplementedError:
        return
    attributes["{%s}screencoord" % NAMESPACES["cp"]] = str(tuple(extents[0:2]))
    attributes["{%s}size" % NAMESPACES["cp"]] = str(tuple(extents[2:]))


def text_of(node):
    try:
        text = node.queryText()
    except NotImplementedError:
        return ""
    # U+FFFC and U+FFFD stand in for embedded objects (ScienceBoard drops them too).
    return text.getText(0, text.characterCount).replace("\ufffc", "").replace("\ufffd", "")


def interfaces_of(node, attributes):
    """The image, selection, value and action facets, under ScienceBoard's attribute names."""
    for name, query in (("image", node.queryImage), ("selection", node.querySelection)):
        try:
            query()
            attributes[name] = "true"
        except NotImplementedError:
            pass
    try:
        value = node.queryValue()
        for name, read in (("value", lambda: value.currentValue), ("min", lambda: value.minimumValue),
                           ("max", lambda: value.maximumValue), ("step", lambda: value.minimumIncrement)):
            try:
                attributes["{%s}%s" % (NAMESPACES["val"], name)] = str(read())
            except Exception:  # an app may refuse one of them; the others still count
                pass
    except NotImplementedError:
        pass
    try:
        action = node.queryAction()
        for i in range(action.nActions):
            name = "{%s}%s" % (NAMESPACES["act"], action.getName(i).replace(" ", "-"))
            attributes[name + "_desc"] = action.getDescription(i)
            attributes[name + "_kb"] = action.getKeyBinding(i)
    except NotImplementedError:
        pass


def attributes_of(node, pyatspi):
    attributes = {"name": node.name}
    states_of(node, pyatspi, attributes)
    for name, value in (node.get_attributes() or {}).items():
        if name:
            attributes["{%s}%s" % (NAMESPACES["attr"], name)] = value
    component_of(node, pyatspi, attributes)
    interfaces_of(node, attributes)
    return {key: xml_text(value) for key, value in attributes.items()}


def tree_node(node, pyatspi, depth):
    """One node of the tree and, down to tree_depth, its first MAX_WIDTH children."""
    role = (node.getRoleName().strip() or "unknown").replace(" ", "-")
    element = ET.Element(role, attributes_of(node, pyatspi))
    text = xml_text(text_of(node))
    if text:
        element.text = text
    if depth >= tree_depth:
        return element
    try:
        for i, child in enumerate(node):
            if i == MAX_WIDTH:
                break
            element.append(tree_node(child, pyatspi, depth + 1))
    except Exception as e:  # an app that goes away mid-read: its part of the tree ends here, as in ScienceBoard's
        app.logger.warning("accessibility: children of a %s not read: %s", role, e)
    return element


@app.route("/accessibility", methods=["GET"])
def get_accessibility_tree():
    with atspi_lock:
        pyatspi = pyatspi_module()
        pump_atspi_events()
        root = ET.Element("desktop-frame")
        for application in pyatspi.Registry.getDesktop(0):
            root.append(tree_node(application, pyatspi, 1))
    return jsonify({"AT": ET.tostring(root, encoding="unicode")})


@app.route("/opt", methods=["POST"])
def optimize():
    """The accessibility tree's depth (ScienceBoard's, used by Celestia's tasks)."""
    global tree_depth
    tree_depth = request.json.get("depth", 50)
    return "OK"


# --- Files (ScienceBoard's read, write, append, upload_file; OSWorld's get_file) ---


@app.route("/read", methods=["GET"])
def read():
    with open(request.args.get("path", "/dev/null"), mode="r", encoding="utf-8") as readable:
        return readable.read()


@app.route("/write", methods=["POST"])
def write():
    return write_text("w")


@app.route("/append", methods=["POST"])
def append():
    return write_text("a")


def write_text(mode):
    """ScienceBoard's /write and /append: the JSON body's content into its path, as UTF-8 text."""
    data = request.json
    with open(data.get("path", "/dev/null"), mode=mode, encoding="utf-8") as writable:
        writable.write(data.get("content", ""))
    return "OK"


@app.route("/setup/upload", methods=["POST"])
def upload_file():
    if "file_path" not in request.form or "file_data" not in request.files:
        return jsonify({"error": "file_path and file_data are required"}), 400
    request.files["file_data"].save(os.path.expandvars(os.path.expanduser(request.form["file_path"])))
    return "File Uploaded"


@app.route("/file", methods=["POST"])
def get_file():
    if "file_path" not in request.form:
        return jsonify({"error": "file_path is required"}), 400
    try:
        return send_file(os.path.expandvars(os.path.expanduser(request.form["file_path"])), as_attachment=True)
    except FileNotFoundError:
        return jsonify({"error": "File not found"}), 404


# --- The applications' checks (ScienceBoard's chimerax_run, lean_check, tex_check) ---

# Straight to ChimeraX's REST server on this VM, whatever proxy the environment names.
LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@app.route("/chimerax/run", methods=["POST"])
def chimerax_run():
    data = request.json
    query = urllib.parse.urlencode({"command": data.get("command", "")})
    with LOCAL.open(f"http://localhost:{data.get('port', 8000)}/run?{query}") as answer:
        return jsonify(json.load(answer))


@app.route("/lean/check", methods=["POST"])
def lean_check():
    header = request.json.get("header", "__PANIC__")
    with open("/home/user/sci/Sci/Basic.lean", mode="r", encoding="utf-8") as basic:
        if header not in basic.read().split("\n"):
            return {"pass": False}
    lake = subprocess.run(["stdbuf", "-oL", "/home/user/.elan/bin/lake", "build"], cwd="/home/user/sci",
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return {"pass": "declaration uses 'sorry'" not in lake.stdout and lake.returncode == 0}


@app.route("/tex/check", methods=["POST"])
def tex_check():
    """pdflatex (with bibtex: bibtex, then pdflatex twice) in the document's folder, each exiting 0.

    stdin is /dev/null: pdflatex stops at an error to ask the terminal, and gets EOF instead.
    """
    data = request.json
    folder, name = data.get("path", "/home/user"), data.get("file", "main")
    latex = ["pdflatex", f"{name}.tex"]
    runs = [latex, ["bibtex", name], latex, latex] if data.get("bibtex", False) else [latex]
    for argv in runs:
        if subprocess.run(argv, cwd=folder, stdin=subprocess.DEVNULL).returncode != 0:
            return {"pass": False}
    return {"pass": True}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="0.0.0.0", help="the address to listen on (ScienceBoard's: 0.0.0.0)")
    parser.add_argument("--port", type=int, default=5000)
    options = parser.parse_args()
    # Werkzeug's development server, as app.run: threaded, HTTP/1.1 with `Connection: close` after
    # each response. No reloader (it would start this file twice) and the debugger without console.
    run_simple(options.host, options.port, PageOnlyDebugger(app, evalex=False), threaded=True)


if __name__ == "__main__":
    main()
