"""Prototype: launch a Triton CompiledKernel through cuLaunchKernel (ctypes) with a parameter
block built once; per call only the pointers are written."""
import ctypes

_cu = ctypes.CDLL("libcuda.so.1")
_cu.cuLaunchKernel.restype = ctypes.c_int
_cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3


class Launcher:
    def __init__(self, compiled, args):
        sig = list(compiled.src.signature.values())
        assert len(sig) == len(args), (sig, len(args))
        self.sig = sig
        self.idx = [i for i, t in enumerate(sig) if t != "constexpr"]
        md = compiled.metadata
        for f in ("global_scratch_size", "profile_scratch_size"):
            assert getattr(md, f, 0) in (0, None), (f, getattr(md, f))
        assert getattr(md, "num_ctas", 1) == 1
        n = len(self.idx) + 2  # + global and profile scratch (NULL)
        self.vals = (ctypes.c_uint64 * n)()
        base = ctypes.addressof(self.vals)
        self.params = (ctypes.c_void_p * n)(*[base + 8 * i for i in range(n)])
        self.fn = compiled.function
        self.threads = 32 * md.num_warps
        self.shared = md.shared

    def __call__(self, grid, stream, args):
        vals = self.vals
        j = 0
        for i in self.idx:
            a = args[i]
            vals[j] = a if isinstance(a, int) else a.data_ptr()
            j += 1
        r = _cu.cuLaunchKernel(self.fn, grid[0], grid[1] if len(grid) > 1 else 1, 1,
                               self.threads, 1, 1, self.shared, stream, self.params, None)
        if r:
            raise RuntimeError(f"cuLaunchKernel: CUresult {r}")
