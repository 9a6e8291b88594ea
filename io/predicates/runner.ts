/**
 * The Python program of the predicate sandbox, run as `python3 -I -S -c RUNNER` (isolated mode,
 * no site packages). It reads one JSON request on stdin and imports what it needs itself. It
 * never runs a task source itself: each check runs in a child it forks, which limits itself (CPU
 * seconds, address space, no file writes, no new file descriptors) before it evaluates a task
 * source, and writes its field and verdict to a pipe. The parent answers one JSON line per source
 * or check on stdout.
 *
 * Task sources are evaluated with `eval` as ScienceBoard does, but against a fixed allow-list of
 * builtins, after their compiled code (every nested code object) was checked to name nothing
 * beginning with "_" (no `__class__`, `__subclasses__`, `__globals__` walks) nor the frame,
 * code, generator and traceback attributes (`gi_frame`, `f_back`, `tb_frame`, `co_code`, ...).
 * The attributes a format string reads (`'{0.__globals__}'.format(f)`) are not in the compiled
 * code's names: `format` and `format_map` are taken only on a string literal of the source, whose
 * fields (nested specs too) are checked by the same rule; any other use of them is refused.
 * The one such name allowed is `__import__`, which here is a guard: it gives the `datetime`
 * classes (ChimeraX D-03's file check asks for today's date), `math`'s functions (Celestia
 * B-12's key takes square roots) and `time`'s readers of the clock, as plain namespaces, and
 * refuses every other module. Never the `time` module itself: its clock_settime sets the host's
 * clock where the worker may (root with CAP_SYS_TIME).
 *
 * Each check is bounded on its own: a source that runs longer than its time is stopped by its
 * child's timer (SIGALRM), and one the timer cannot stop (a long C call) is killed by the parent
 * at the same time and a grace; either way the check fails as timed out and the next check runs
 * in a fresh child. Whatever a check raises, its message too, stays in its child: formatting an
 * error that cannot be formatted (a KeyError of a 5000-digit int) fails that check alone.
 *
 * Requests: {"mode": "compile", "sources": [..]} -> {"i", "error"?} per source;
 * {"mode": "evaluate", "checks": [..], "dump": .., "timeoutMs", "memoryBytes"} ->
 * {"start": i} before and {"i", "ok", "field"?, "error"?, "detail"?} after each check (`field`: the
 * check field whose source was running when it failed).
 */
export const RUNNER = String.raw`
import sys, os, select, json, re, resource, signal, types, datetime, time, _strptime, ast, _string

request = json.loads(sys.stdin.buffer.read().decode('utf-8'))
# Warm what the datetime classes load lazily (time zone, strptime), before files are closed to us.
datetime.datetime.today().strftime('%Y-%m-%d')
datetime.datetime.strptime('2000-01-01', '%Y-%m-%d')

def limit(cpu_seconds, memory_bytes):
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

def emit(obj):
    sys.stdout.buffer.write((json.dumps(obj) + '\n').encode('utf-8'))
    sys.stdout.buffer.flush()

def write_line(fd, obj):
    data = (json.dumps(obj) + '\n').encode('utf-8')
    while data:
        data = data[os.write(fd, data):]

def short(value, limit=300):
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'

DATETIME = types.SimpleNamespace(datetime=datetime.datetime, date=datetime.date, time=datetime.time,
                                 timedelta=datetime.timedelta, timezone=datetime.timezone)

import math
MATH = types.SimpleNamespace(**{n: getattr(math, n) for n in dir(math) if not n.startswith('_')})

# What reads the clock or formats a time; nothing that sets a clock, sleeps or changes the process.
TIME = types.SimpleNamespace(**{n: getattr(time, n) for n in [
    'time', 'time_ns', 'monotonic', 'monotonic_ns', 'perf_counter', 'perf_counter_ns', 'gmtime', 'localtime',
    'mktime', 'strftime', 'asctime', 'ctime', 'struct_time', 'timezone', 'altzone', 'daylight', 'tzname']})

def guarded_import(name, *args, **kwargs):
    if name == 'datetime':
        return DATETIME
    if name == 'math':
        return MATH
    if name == 'time':
        # datetime's C code imports time through this same hook (strftime), but CPython then takes
        # the module from sys.modules, not from what the hook returns: a predicate gets TIME only.
        return TIME
    raise ImportError('import of %r is not allowed in a predicate' % (name,))

ALLOWED = ['abs', 'all', 'any', 'bool', 'chr', 'dict', 'divmod', 'enumerate', 'filter', 'float',
           'frozenset', 'hash', 'int', 'isinstance', 'iter', 'len', 'list', 'map', 'max', 'min',
           'next', 'ord', 'pow', 'range', 'repr', 'reversed', 'round', 'set', 'slice', 'sorted',
           'str', 'sum', 'tuple', 'zip', 'callable',
           'Exception', 'ArithmeticError', 'AssertionError', 'IndexError', 'KeyError', 'LookupError',
           'TypeError', 'ValueError', 'ZeroDivisionError', 'StopIteration']
import builtins
SAFE_BUILTINS = {name: getattr(builtins, name) for name in ALLOWED}
SAFE_BUILTINS['__import__'] = guarded_import
FORBIDDEN_PREFIXES = ('_', 'gi_', 'cr_', 'ag_', 'f_', 'tb_', 'co_')

def refused_names(code):
    bad = [n for n in code.co_names if n != '__import__' and n.startswith(FORBIDDEN_PREFIXES)]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            bad += refused_names(const)
    return bad

# The methods that read attributes named in a string's text ('{0.__globals__}'.format(f)), which
# co_names never holds. string.Formatter does it too, but no predicate can import string.
FORMATTERS = ('format', 'format_map')

def format_attributes(text):
    # The attributes a format string reads, its nested specs' too, parsed by CPython's own str.format parser.
    names = []
    for _, field, spec, _ in _string.formatter_parser(text):
        if field is None:
            continue
        names += [key for is_attribute, key in _string.formatter_field_name_split(field)[1] if is_attribute]
        if spec:
            names += format_attributes(spec)
    return names

def refused_formats(tree):
    # format and format_map only on a string written in the source, whose attributes are checked as
    # co_names are: a format string built at run time, or the method fetched to call on another
    # string (str.format, a bound method kept in a variable), cannot be checked before it runs.
    bad = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in FORMATTERS):
            continue
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            raise ValueError('%s is allowed in a predicate only on a string literal (its fields are checked before it runs)' % node.attr)
        try:
            names = format_attributes(node.value.value)
        except ValueError as err:
            raise ValueError('the format string %s cannot be read: %s' % (short(node.value.value), err))
        bad += [n for n in names if n.startswith(FORBIDDEN_PREFIXES)]
    return bad

def compiled(source):
    code = compile(source, '<predicate>', 'eval')
    bad = refused_names(code) + refused_formats(ast.parse(source, '<predicate>', 'eval'))
    if bad:
        raise ValueError('names %s are not allowed in a predicate' % ', '.join(sorted(set(bad))))
    return code

def run(source):
    return eval(compiled(source), {'__builtins__': SAFE_BUILTINS}, {})

def failure(err):
    try:
        text = '%s: %s' % (type(err).__name__, err)
    except BaseException as again:
        # str(KeyError(10**5000)) raises in turn: the check fails, named by its error's type alone.
        text = '%s (its message could not be shown: %s)' % (type(err).__name__, type(again).__name__)
    return text if len(text) <= 500 else text[:500] + '...'

class Timeout(BaseException):
    pass

def on_alarm(signum, frame):
    raise Timeout()

class At:
    # The check field whose source is running, for the error; also told to the parent (fd), which
    # names it when it has to kill the child.
    field = None
    fd = None

def at(field):
    At.field = field
    if At.fd is not None:
        write_line(At.fd, {'at': field})

def check_info(check, dump):
    # ScienceBoard (Celestia, GRASS GIS): key is eval'd; a callable is applied to the dump, anything else is a key of it.
    at('key')
    key = run(check['key'])
    found = key(dump) if callable(key) else dump[check['key']]
    at('pred')
    pred = run(check['pred']) if check.get('pred') is not None else (lambda left, right: left == right)
    ok = bool(pred(found, check['value']))
    return ok, 'found %s, expected %s%s' % (short(found), short(check['value']), ' (pred)' if check.get('pred') is not None else '')

def check_states(check, states):
    # ScienceBoard's ChimeraX _eval_states, step by step.
    key = check['key']
    find = check.get('find')
    pattern = check.get('pattern')
    has_value = 'value' in check
    value = check.get('value')
    check_null = has_value and value is None
    at('key')
    if key.startswith('lambda'):
        key = run(key)
    if find is not None:
        at('find')
        find = run(find)
        meta_keys = [k for k, v in states.items() if find(k, v)]
        if check_null:
            # ScienceBoard reads an undefined name here (raw_keys): such a check always fails there.
            raise NameError("ScienceBoard's states check cannot ask for absence with find")
        if not meta_keys:
            return False, 'no entry matches find'
        at('key')
        raw_key = key(meta_keys[0])
    elif callable(key):
        raw_keys = [k for k in states.keys() if key(k)]
        if check_null:
            return len(raw_keys) == 0, 'entries matching key: %s' % short(raw_keys)
        if not raw_keys:
            return False, 'no entry matches key'
        raw_key = raw_keys[0]
    else:
        if check_null:
            # As ScienceBoard: it tests its unset raw_key (None), so a plain key with a null value always holds.
            return None not in states, 'a plain key with a null value holds in ScienceBoard whatever the states'
        raw_key = key
    if raw_key not in states:
        return False, 'no entry %s' % short(raw_key)
    raw_value = states[raw_key]
    if pattern is not None:
        text = raw_value if isinstance(raw_value, str) else json.dumps(raw_value)
        return re.search(pattern, text) is not None, '%s is %s; pattern %s' % (short(raw_key), short(text), short(pattern))
    if value is not None:
        return value == raw_value, '%s is %s, expected %s' % (short(raw_key), short(raw_value), short(value))
    return False, 'the check has neither a value nor a pattern'

def check_file(check, _):
    # ScienceBoard's ChimeraX _eval_file: a lambda value (no argument) gives the text to find.
    value = check['value']
    at('value')
    if value.startswith('lambda'):
        value = run(value)()
    content = check.get('content')
    return content is not None and value in content, 'looked for %s' % short(value)

KINDS = {'info': check_info, 'states': check_states, 'file': check_file}

def verdict(check, dump, seconds):
    # One check in its child: its outcome, whatever its sources raise.
    at(None)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            ok, detail = KINDS[check.get('kind', 'info')](check, dump)
            ok = bool(ok)
        finally:
            # The timer is off before any handler below runs, so none of them can be interrupted.
            signal.setitimer(signal.ITIMER_REAL, 0)
        return {'ok': ok, 'detail': detail}
    except Timeout:
        return {'ok': False, 'field': At.field, 'error': 'timed out after %s s' % seconds}
    except BaseException as err:
        return {'ok': False, 'field': At.field, 'error': failure(err)}

def child(w, check, dump, seconds, memory_bytes):
    At.fd = w
    try:
        limit(int(math.ceil(seconds)) + 1, memory_bytes)
        signal.signal(signal.SIGALRM, on_alarm)
        write_line(w, verdict(check, dump, seconds))
    finally:
        os._exit(0)

# Beyond its own timer, a child gets this long before it is killed (a C call the timer cannot stop).
KILL_GRACE_SECONDS = 1.0
# What a child may write to its pipe: a few field names and one verdict of bounded texts.
CHILD_BYTES = 64 * 1024

def read_child(r, deadline):
    # Everything the child wrote, and why reading stopped early ('' when the child closed its pipe).
    data = b''
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([r], [], [], left)[0]:
            return data, 'deadline'
        chunk = os.read(r, 65536)
        if not chunk:
            return data, ''
        data += chunk
        if len(data) > CHILD_BYTES:
            return data, 'it wrote more than %d bytes' % CHILD_BYTES

def ended(status):
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return signal.Signals(sig).name + (' (its CPU time ran out)' if sig in (signal.SIGXCPU, signal.SIGKILL) else '')
    return 'exit code %d' % os.WEXITSTATUS(status)

def evaluate(check, dump, seconds, memory_bytes):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(w, check, dump, seconds, memory_bytes)
    os.close(w)
    data, stopped = read_child(r, time.monotonic() + seconds + KILL_GRACE_SECONDS)
    if stopped:
        os.kill(pid, signal.SIGKILL)
    os.close(r)
    status = os.waitpid(pid, 0)[1]
    field, outcome = None, None
    for text in data.decode('utf-8', 'replace').split('\n'):
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if 'at' in line:
            field = line['at']
        elif 'ok' in line:
            outcome = line
    if outcome is not None:
        return outcome
    if stopped == 'deadline':
        return {'ok': False, 'field': field, 'error': 'timed out after %s s (in a call its timer cannot interrupt: its process was killed)' % seconds}
    return {'ok': False, 'field': field, 'error': 'its process ended without a verdict: %s' % (stopped or ended(status))}

if request['mode'] == 'compile':
    limit(10, 512 * 1024 * 1024)
    for i, source in enumerate(request['sources']):
        try:
            compiled(source)
            emit({'i': i})
        except BaseException as err:
            emit({'i': i, 'error': failure(err)})
else:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    seconds = request['timeoutMs'] / 1000.0
    for i, check in enumerate(request['checks']):
        emit({'start': i})
        outcome = evaluate(check, check['dump'] if 'dump' in check else request['dump'], seconds, request['memoryBytes'])
        outcome['i'] = i
        emit(outcome)
`;
