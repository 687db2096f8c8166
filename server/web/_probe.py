"""Probe (not committed): times the parts of a review request in the server process."""
import gc, os, time, threading, json
LOG = os.environ.get("CONTEUR_SCREEN_LOG")
_gc = {"n": [0, 0, 0], "t": [0.0, 0.0, 0.0], "start": 0.0}
def _cb(phase, info):
    if phase == "start":
        _gc["start"] = time.perf_counter()
    else:
        g = info["generation"]
        _gc["n"][g] += 1
        _gc["t"][g] += time.perf_counter() - _gc["start"]
if LOG:
    gc.callbacks.append(_cb)
class Probe:
    def __init__(self):
        self.parts = {}
        self.w0, self.t0, self.p0 = time.perf_counter(), time.thread_time(), time.process_time()
        self.gn, self.gt = list(_gc["n"]), list(_gc["t"])
    def part(self, name, f, *a):
        w, t = time.perf_counter(), time.thread_time()
        out = f(*a)
        self.parts[name] = (round(time.perf_counter() - w, 3), round(time.thread_time() - t, 3))
        return out
    def done(self, what, **extra):
        if not LOG: return
        rec = {"what": what, "wall": round(time.perf_counter() - self.w0, 3),
               "thread": round(time.thread_time() - self.t0, 3),
               "process": round(time.process_time() - self.p0, 3),
               "gc_n": [a - b for a, b in zip(_gc["n"], self.gn)],
               "gc_t": [round(a - b, 3) for a, b in zip(_gc["t"], self.gt)],
               "parts": self.parts, "threads": [t.name for t in threading.enumerate()],
               "gc_count": gc.get_count(), "objects": len(gc.get_objects()) if extra.pop("objs", False) else None, **extra}
        with open(LOG, "a") as f:
            f.write(json.dumps(rec) + "\n")
ACC = {}
def acc(name, f, *a, **k):
    w, t = time.perf_counter(), time.thread_time()
    out = f(*a, **k)
    x = ACC.setdefault(name, [0.0, 0.0])
    x[0] += time.perf_counter() - w; x[1] += time.thread_time() - t
    return out
_done = Probe.done
def done(self, what, **extra):
    extra["acc"] = {k: [round(v[0], 3), round(v[1], 3)] for k, v in ACC.items()}
    ACC.clear()
    _done(self, what, **extra)
Probe.done = done
