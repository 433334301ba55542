"""Session 6, on the CPU (no GPU needed): what the tuner's search costs besides measuring,
per Optuna storage. The headline's nine buckets, 40 trials each, over the H200's search space,
with a measure that answers at once (a hash of the config), so only the search and the storage
are timed. Run from the repository root:
    python docs/h200/s6/storage_overhead.py sqlite | journal | mem"""
import sys, time, tempfile, hashlib
import optuna
from mlpgen.measure import Measurement
from mlpgen.tune import Job, Progress, TuneOptions, search
from mlpgen.spec import MLPSpec
spec = MLPSpec(widths=(256, 512, 256), act="gelu", dtype="fp16")
def measure(bucket, config):
    h = int(hashlib.md5(repr((bucket, config)).encode()).hexdigest()[:6], 16) / 2**24
    return Measurement("ok", us=5 + 10 * h, host_us=20.0, err=1e-4)
kind = sys.argv[1]
from optuna.storages.journal import JournalStorage, JournalFileBackend
d = tempfile.mkdtemp()
storage = {"mem": lambda: optuna.storages.InMemoryStorage(), "sqlite": lambda: f"sqlite:///{d}/t.db", "journal": lambda: JournalStorage(JournalFileBackend(f"{d}/t.log"))}[kind]()
t0 = time.perf_counter()
res = search(Job(spec, "NVIDIA H200|sm90|132", TuneOptions(buckets=(1,16,64,256,1024,4096,16384,65536,262144), trials=40, seed=0), max_shared=232448), [measure], storage, Progress(0, enabled=False))
print(kind, "seconds", round(time.perf_counter() - t0, 1), sum(r.measured for r in res.values()), sum(len(r.trials) for r in res.values()))
