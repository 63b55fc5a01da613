# SPDX-License-Identifier: MIT
"""Read perf.data samples from Python: libperfring-tools' sample reader.

The programmatic form of `perf script -s`: every sample of a perf.data
(recorded by perf or perfring), decoded and resolved exactly as
`perfring script` prints it (same decoder), handed to a Python function.

    import perfring
    def on_sample(s):
        print(s.time, s.comm, s.tid, s.ip.sym, [f.sym for f in s.callchain])
        if s.event == "sched:sched_switch":
            print(s.field("prev_comm"), s.field("next_pid"))
    perfring.Reader("perf.data", comm="bash").run(on_sample)

No build step: ctypes loads libperfring-tools.so ($PERFRING_TOOLS_LIB, or
the build tree beside this file, or, installed by `make install` in
PREFIX/lib/python3/dist-packages, PREFIX/lib's libperfring-tools.so.0, or
the one the loader finds).
"""
import ctypes
import ctypes.util
import os

__all__ = ["Reader", "Sample", "Frame", "PerfringError"]

_u64, _u32, _i32, _u16 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint16
_str = ctypes.c_char_p


class _Frame(ctypes.Structure):
    _fields_ = [("ip", _u64), ("addr", _u64), ("sym", _str), ("sym_off", _u64),
                ("dso", _str), ("kernel", ctypes.c_bool)]


class _Sample(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("event", _str), ("event_index", _u32),
                ("type", _u32), ("config", _u64), ("id", _u64), ("time", _u64),
                ("period", _u64), ("addr", _u64), ("pid", _i32), ("tid", _i32),
                ("cpu", _u32), ("comm", _str), ("ip", _Frame),
                ("callchain", ctypes.POINTER(_Frame)), ("nr_callchain", _u32),
                ("raw", ctypes.c_void_p), ("raw_size", _u32), ("misc", _u16)]


class _ScriptOpts(ctypes.Structure):
    # struct perfring_script_opts, field for field (<perfring/tools.h>)
    _fields_ = [("sz", ctypes.c_size_t), ("input", _str), ("fields", _str),
                ("hide_callchain", ctypes.c_bool), ("ns", ctypes.c_bool),
                ("slow_tracepoints", ctypes.c_bool), ("trace_dat", _str),
                ("pid_list", _str), ("tid_list", _str), ("comm_list", _str),
                ("cpu_list", _str), ("time_range", _str), ("symbols", _str),
                ("reltime", ctypes.c_bool), ("deltatime", ctypes.c_bool),
                ("show_task_events", ctypes.c_bool),
                ("show_mmap_events", ctypes.c_bool), ("symfs", _str),
                ("header", ctypes.c_bool), ("header_only", ctypes.c_bool),
                ("show_info", ctypes.c_bool), ("no_inline", ctypes.c_bool)]


_SampleFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                             ctypes.POINTER(_Sample), ctypes.c_void_p)


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    names = [os.environ.get("PERFRING_TOOLS_LIB"),
             os.path.join(here, "..", "build", "libperfring-tools.so"),
             # installed: PREFIX/lib/python3/dist-packages -> PREFIX/lib
             os.path.join(here, "..", "..", "libperfring-tools.so.0"),
             "libperfring-tools.so.0", ctypes.util.find_library("perfring-tools")]
    last = None
    for n in names:
        if not n:
            continue
        try:
            # a build tree's library needs the libperfring.so beside it
            dep = os.path.join(os.path.dirname(n), "libperfring.so")
            if os.sep in n and os.path.exists(dep):
                ctypes.CDLL(dep, mode=ctypes.RTLD_GLOBAL)
            lib = ctypes.CDLL(n)
        except OSError as e:
            last = e
            continue
        lib.perfring_data_open.argtypes = [ctypes.POINTER(_ScriptOpts),
                                             ctypes.POINTER(ctypes.c_void_p)]
        lib.perfring_data_run.argtypes = [ctypes.c_void_p, _SampleFn, ctypes.c_void_p]
        lib.perfring_data_field.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Sample),
                                              _str, ctypes.POINTER(_u64),
                                              ctypes.c_char_p, ctypes.c_size_t]
        lib.perfring_data_close.argtypes = [ctypes.c_void_p]
        lib.perfring_data_close.restype = None
        return lib
    raise OSError("libperfring-tools.so not found (set PERFRING_TOOLS_LIB): %s" % last)


_lib = None


class PerfringError(OSError):
    pass


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


class Frame:
    """One resolved address: ip, addr (in the object), sym, sym_off, dso, kernel."""
    __slots__ = ("ip", "addr", "sym", "sym_off", "dso", "kernel")

    def __init__(self, f):
        self.ip, self.addr, self.sym_off, self.kernel = f.ip, f.addr, f.sym_off, f.kernel
        self.sym, self.dso = _text(f.sym), _text(f.dso)

    def __repr__(self):
        return "Frame(%#x %s+%#x (%s))" % (self.ip, self.sym or "[unknown]",
                                           self.sym_off, self.dso or "[unknown]")


class Sample:
    """A sample: event, time, cpu, pid, tid, comm, period, addr, id, ip (a
    Frame), callchain (Frames, callee first); field(name) reads a
    tracepoint field (only inside the callback)."""

    def __init__(self, reader, p):
        s = p.contents
        self._reader, self._p = reader, p
        self.event, self.comm = _text(s.event), _text(s.comm)
        self.event_index, self.type, self.config = s.event_index, s.type, s.config
        self.id, self.time, self.period, self.addr = s.id, s.time, s.period, s.addr
        self.pid, self.tid, self.cpu, self.misc = s.pid, s.tid, s.cpu, s.misc
        self.ip = Frame(s.ip)
        self.callchain = [Frame(s.callchain[i]) for i in range(s.nr_callchain)]

    def field(self, name):
        """A tracepoint field: int, or str for strings; KeyError if none."""
        if self._p is None:
            raise RuntimeError("field() only inside the reader's callback")
        num, buf = _u64(), ctypes.create_string_buffer(4096)
        r = _lib.perfring_data_field(self._reader, self._p, name.encode(),
                                       ctypes.byref(num), buf, len(buf))
        if r < 0:
            raise KeyError(name)
        return _text(buf.value) if r == 1 else num.value


class Reader:
    """Reader(path, pid=, tid=, comm=, cpu=, time=, symbols=, callchain=True):
    the filters take perf script's text ("1,2", "bash", "0-3", "start,end")."""

    def __init__(self, path="perf.data", pid=None, tid=None, comm=None, cpu=None,
                 time=None, symbols=None, callchain=True):
        global _lib
        self._h = None
        if _lib is None:
            _lib = _load()
        enc = lambda v: None if v is None else str(v).encode()
        self._o = _ScriptOpts(sz=ctypes.sizeof(_ScriptOpts), input=enc(path),
                              hide_callchain=not callchain, pid_list=enc(pid),
                              tid_list=enc(tid), comm_list=enc(comm),
                              cpu_list=enc(cpu), time_range=enc(time),
                              symbols=enc(symbols))
        h = ctypes.c_void_p()
        r = _lib.perfring_data_open(ctypes.byref(self._o), ctypes.byref(h))
        if r < 0:
            raise PerfringError(-r, "%s: %s" % (path, os.strerror(-r)))
        self._h = h

    def run(self, fn):
        """Calls fn(Sample) for every sample, in time order; once per Reader."""
        error = []

        def cb(_r, p, _ctx):
            s = Sample(self._h, p)
            try:
                fn(s)
            except BaseException as e:  # stop, raise it below
                error.append(e)
                return 1
            finally:
                s._p = None
            return 0

        r = _lib.perfring_data_run(self._h, _SampleFn(cb), None)
        if error:
            raise error[0]
        if r < 0:
            raise PerfringError(-r, os.strerror(-r))

    def close(self):
        if self._h:
            _lib.perfring_data_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
