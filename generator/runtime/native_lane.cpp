// mlpgen's native lane: a generated module's inference call (checks, output allocation, kernel
// launch) in one C++ function, the Python lane's kernel-lane call without the interpreter around
// triton's C launch; and its training steps as recorded from the Python lane (the training lane,
// below: the forward, an autograd node and its backward in C++). mlpgen.runtime builds it once
// per machine (torch's headers, triton's cuda.h); where the build or a check fails, calls take
// the Python lane.
//
// A lane launches one kernel (every one-launch strategy) or several steps in turn, each a
// cuBLASLt GEMM with its epilogue (the epilogue strategy: a GEMM a layer), the hidden
// activations in buffers the lane keeps. cuBLASLt's algorithm is chosen once, when the step is
// given.
// call(state, x, params, out) returns y, or None where the call is not one this lane takes (the
// Python lane then sees it): x an exact torch.Tensor (or Parameter), 2-D [M, K0] contiguous, of
// the module's dtype on a CUDA device that is current, with a lane registered for (device, M);
// params (a list or tuple) each of the dtype and element count registered, contiguous, on that
// device, 16-byte aligned; no gradient needed; no stream capture where `capture` was registered
// or the lane runs several steps or a GEMM (its buffers must not outlive it inside a CUDA
// graph);
// out None or a contiguous [M, N] tensor of the dtype on the device, not requiring grad, not
// overlapping x. A launch that the driver refuses raises RuntimeError.
#include <Python.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/autograd/saved_variable.h>

#include "cuda.h"

namespace {

typedef CUresult (*launch_t)(const CUlaunchConfig*, CUfunction, void**, void**);
typedef CUresult (*capturing_t)(CUstream, CUstreamCaptureStatus*);
typedef CUresult (*error_string_t)(CUresult, const char**);
typedef CUresult (*func_attribute_t)(CUfunction, CUfunction_attribute, int);

struct Driver {
  launch_t launch = nullptr;
  capturing_t capturing = nullptr;
  error_string_t error_string = nullptr;
  func_attribute_t func_attribute = nullptr;
};

Driver* driver() {  // libcuda's entry points, found once (as triton's launcher finds them)
  static Driver d;
  static bool tried = false;
  if (!tried) {
    tried = true;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib != nullptr) {
      d.launch = (launch_t)dlsym(lib, "cuLaunchKernelEx");
      d.capturing = (capturing_t)dlsym(lib, "cuStreamIsCapturing");
      d.error_string = (error_string_t)dlsym(lib, "cuGetErrorString");
      d.func_attribute = (func_attribute_t)dlsym(lib, "cuFuncSetAttribute");
    }
  }
  return d.launch != nullptr && d.capturing != nullptr ? &d : nullptr;
}

// cuBLASLt, found in the process (torch loads it) or by name, without its headers: the types
// and the enum values used here are cublasLt.h's (CUDA 11-13).
typedef void* lt_handle_t;
struct LtAlgo {
  uint64_t data[8];
};
struct LtHeuristic {
  LtAlgo algo;
  size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
};
enum : int {
  LT_COMPUTE_32F = 68,                 // cublasComputeType_t
  LT_R_32F = 0, LT_R_16F = 2, LT_R_16BF = 14,  // cudaDataType_t
  LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4, LT_DESC_EPILOGUE = 7, LT_DESC_BIAS_POINTER = 8,
  LT_PREF_MAX_WORKSPACE_BYTES = 1, LT_PREF_MIN_ALIGNMENT_A = 5,  // to _D = 8
  LT_OP_N = 0, LT_OP_T = 1,
};
// cublasLtEpilogue_t values a GEMM step may take: DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS
const unsigned EPILOGUES[] = {1, 2, 4, 6, 32, 36};
bool epilogue_has_bias(unsigned e) { return (e & 4u) != 0; }

struct Lt {
  int (*create)(lt_handle_t*);
  int (*desc_create)(void**, int, int);
  int (*desc_set)(void*, int, const void*, size_t);
  int (*desc_destroy)(void*);
  int (*layout_create)(void**, int, uint64_t, uint64_t, int64_t);
  int (*layout_destroy)(void*);
  int (*pref_create)(void**);
  int (*pref_set)(void*, int, const void*, size_t);
  int (*pref_destroy)(void*);
  int (*heuristic)(lt_handle_t, void*, void*, void*, void*, void*, void*, int, LtHeuristic*, int*);
  int (*matmul)(lt_handle_t, void*, const void*, const void*, void*, const void*, void*,
                const void*, const void*, void*, void*, void*, const LtAlgo*, void*, size_t,
                CUstream);
};

Lt* lt() {
  static Lt l;
  static bool tried = false, found = false;
  if (tried) return found ? &l : nullptr;
  tried = true;
  const char* names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11",
                         "libcublasLt.so"};
  void* lib = nullptr;
  for (int flags : {RTLD_NOW | RTLD_NOLOAD, RTLD_NOW}) {  // torch's own copy first
    for (const char* name : names) {
      if (lib == nullptr) lib = dlopen(name, flags);
    }
  }
  if (lib == nullptr) return nullptr;
  void* got[] = {
      dlsym(lib, "cublasLtCreate"), dlsym(lib, "cublasLtMatmulDescCreate"),
      dlsym(lib, "cublasLtMatmulDescSetAttribute"), dlsym(lib, "cublasLtMatmulDescDestroy"),
      dlsym(lib, "cublasLtMatrixLayoutCreate"), dlsym(lib, "cublasLtMatrixLayoutDestroy"),
      dlsym(lib, "cublasLtMatmulPreferenceCreate"),
      dlsym(lib, "cublasLtMatmulPreferenceSetAttribute"),
      dlsym(lib, "cublasLtMatmulPreferenceDestroy"), dlsym(lib, "cublasLtMatmulAlgoGetHeuristic"),
      dlsym(lib, "cublasLtMatmul")};
  for (void* f : got) {
    if (f == nullptr) return nullptr;
  }
  l.create = reinterpret_cast<decltype(l.create)>(got[0]);
  l.desc_create = reinterpret_cast<decltype(l.desc_create)>(got[1]);
  l.desc_set = reinterpret_cast<decltype(l.desc_set)>(got[2]);
  l.desc_destroy = reinterpret_cast<decltype(l.desc_destroy)>(got[3]);
  l.layout_create = reinterpret_cast<decltype(l.layout_create)>(got[4]);
  l.layout_destroy = reinterpret_cast<decltype(l.layout_destroy)>(got[5]);
  l.pref_create = reinterpret_cast<decltype(l.pref_create)>(got[6]);
  l.pref_set = reinterpret_cast<decltype(l.pref_set)>(got[7]);
  l.pref_destroy = reinterpret_cast<decltype(l.pref_destroy)>(got[8]);
  l.heuristic = reinterpret_cast<decltype(l.heuristic)>(got[9]);
  l.matmul = reinterpret_cast<decltype(l.matmul)>(got[10]);
  found = true;
  return &l;
}

// A GEMM step: y[m, n] = epilogue(x[m, k] @ w[n, k]^T (+ b)), as cuBLASLt computes column-major
// D[n, m] = op(A) B with A = w (transposed), B = x; the bias one value per row of D.
struct Gemm {
  lt_handle_t handle;
  void *desc, *a, *b, *d;  // the matmul and the layouts of A, B and C = D
  LtAlgo algo;
  int input, output;  // X, Y or FIXED (at input_address, output_address)
  uint64_t input_address, output_address;
  int weight, bias;   // parameter indices (bias -1: none)
  uint64_t bias_set;  // the bias address the descriptor holds
  uint64_t workspace;
  size_t workspace_bytes;
};

void drop(Gemm* g) {
  Lt* l = lt();
  if (l != nullptr) {
    if (g->desc != nullptr) l->desc_destroy(g->desc);
    for (void* layout : {g->a, g->b, g->d}) {
      if (layout != nullptr) l->layout_destroy(layout);
    }
  }
  delete g;
}

// A kernel argument: where its value comes from at each call, and the value of a fixed one.
// >= 0: that parameter's address. A training lane's kernels also read dL/dy (GY), write dx (DX)
// and the flat parameter gradient (FLAT), and the buffers it allocates: BUFFER - j is buffer j.
enum Source : int { FIXED = -1, X = -2, Y = -3, GY = -4, DX = -5, FLAT = -6, BUFFER = -16 };
const size_t MAX_ARGS = 128;  // a kernel's arguments (a training kernel of many layers: ~40)

struct Launch {
  CUfunction function;
  unsigned grid0, grid1, block, shared;
  unsigned cluster;  // CTAs a thread-block cluster (1: none); grid0 counts clusters
  bool cooperative, pdl;
  std::vector<int> sources;       // per kernel argument passed
  std::vector<uint64_t> values;   // per argument: its bits in the low bytes (little-endian)
  PyObject* keep;                 // what the fixed addresses point into (a workspace, buffers)
  Gemm* gemm = nullptr;           // a GEMM step in place of the kernel
};

struct Lane {
  int device;
  int64_t m;
  std::vector<Launch*> launches;  // its steps in order
};

// A buffer a training lane allocates (bytes), and when: in its forward, saved for the backward
// (SAVED) or the forward's own, dropped once its kernels are launched (SCRATCH: the stream
// orders its reuse after them); or in its backward (IN_BACKWARD).
enum BufferKind : int { SAVED = 0, SCRATCH = 1, IN_BACKWARD = 2 };
struct Buffer {
  int64_t bytes;
  BufferKind kind;
};

// A training step recorded for (device, M, whether x needs a gradient): the forward's kernels
// (none where it runs the module's inference lane for M) and the backward's.
struct TrainLane {
  int device;
  int64_t m, k0, n, flat;  // flat: the flat parameter gradient's elements
  bool need_x, by_inference, saves_y;  // saves_y: the backward reads y
  std::vector<Launch*> forward, backward;
  std::vector<Buffer> buffers;
  ~TrainLane();
};

struct State {
  c10::ScalarType dtype;
  int64_t k0, n;
  std::vector<int64_t> numels;  // of each parameter
  std::vector<int64_t> rows;    // a weight's size(0) (it is 2-D), 0 for a bias (1-D)
  bool capture;                 // decline calls under stream capture (graph winners exist)
  std::vector<Lane*> lanes;
  std::vector<std::shared_ptr<TrainLane>> train_lanes;  // an autograd node may outlive the state
};

const char* STATE = "mlpgen.native_lane.State";

void drop(Launch* k) {
  Py_XDECREF(k->keep);
  if (k->gemm != nullptr) drop(k->gemm);
  delete k;
}

TrainLane::~TrainLane() {  // its launches keep nothing: no Python object, no GIL needed
  for (Launch* k : forward) drop(k);
  for (Launch* k : backward) drop(k);
}

void drop(Lane* l) {
  for (Launch* k : l->launches) drop(k);
  delete l;
}

void drop_lanes(State* s) {
  for (Lane* l : s->lanes) drop(l);
  s->lanes.clear();
}

void free_state(PyObject* capsule) {
  auto* s = static_cast<State*>(PyCapsule_GetPointer(capsule, STATE));
  if (s == nullptr) return;
  drop_lanes(s);
  delete s;
}

State* state_of(PyObject* obj) {
  return static_cast<State*>(PyCapsule_GetPointer(obj, STATE));
}

bool exact_tensor(PyObject* obj) {  // a subclass may mean something else: the Python lane's
  return THPVariable_CheckExact(obj);
}

bool plain(const at::Tensor& t, const State* s, int device) {
  return t.scalar_type() == s->dtype && t.layout() == c10::kStrided && t.is_cuda() &&
         t.get_device() == device && !t.is_neg() && !t.is_conj() && t.is_contiguous();
}

// state(like, k0, n, numels, rows, capture) -> capsule; like: a tensor of the module's dtype;
// rows: a weight's first size (it is 2-D), 0 for a bias (1-D): with numels, their shapes
PyObject* new_state(PyObject*, PyObject* args) {
  int capture;
  long long k0, n;
  PyObject *like, *numels, *rows;
  if (!PyArg_ParseTuple(args, "OLLOOp", &like, &k0, &n, &numels, &rows, &capture)) return nullptr;
  if (!THPVariable_Check(like)) {
    PyErr_SetString(PyExc_TypeError, "like must be a tensor");
    return nullptr;
  }
  PyObject* seq = PySequence_Fast(numels, "numels must be a sequence");
  if (seq == nullptr) return nullptr;
  auto* s = new State();
  s->dtype = THPVariable_Unpack(like).scalar_type();
  s->k0 = k0;
  s->n = n;
  s->capture = capture != 0;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    s->numels.push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i)));
  }
  Py_DECREF(seq);
  seq = PySequence_Fast(rows, "rows must be a sequence");
  if (seq == nullptr) {
    delete s;
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    s->rows.push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i)));
  }
  Py_DECREF(seq);
  if (!PyErr_Occurred() && s->rows.size() != s->numels.size()) {
    PyErr_SetString(PyExc_ValueError, "rows and numels must have one entry a parameter");
  }
  if (PyErr_Occurred()) {
    delete s;
    return nullptr;
  }
  return PyCapsule_New(s, STATE, free_state);
}

// A launch from (function, grid0, grid1, num_warps, shared, cluster, cooperative, pdl, sources,
// values, keep): sources[i] as Source, values[i] the bits of a fixed argument (ignored for the
// others); `buffers`: how many BUFFER sources a training lane's launch may name (-1: an
// inference lane's, which name X, Y and parameters only). cluster > 1: launched as clusters of
// that many CTAs, grid0 clusters (as triton's launch does with num_ctas in its metadata). keep
// nullptr: nothing to keep. nullptr with a Python error where it is wrong.
Launch* parse_launch(const State* s, unsigned long long function, unsigned grid0, unsigned grid1,
                     int warps, unsigned shared, unsigned cluster, int cooperative, int pdl,
                     PyObject* sources, PyObject* values, PyObject* keep, int buffers = -1) {
  if (cluster < 1) {
    PyErr_SetString(PyExc_ValueError, "cluster must be at least 1");
    return nullptr;
  }
  PyObject* src = PySequence_Fast(sources, "sources must be a sequence");
  if (src == nullptr) return nullptr;
  PyObject* val = PySequence_Fast(values, "values must be a sequence");
  if (val == nullptr) {
    Py_DECREF(src);
    return nullptr;
  }
  auto* k = new Launch();
  k->function = reinterpret_cast<CUfunction>(static_cast<uintptr_t>(function));
  k->grid0 = grid0;
  k->grid1 = grid1;
  k->block = 32u * static_cast<unsigned>(warps);
  k->shared = shared;
  k->cluster = cluster;
  k->cooperative = cooperative != 0;
  k->pdl = pdl != 0;
  k->keep = nullptr;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(src);
  if (PySequence_Fast_GET_SIZE(val) != count) {
    PyErr_SetString(PyExc_ValueError, "sources and values differ in length");
  }
  for (Py_ssize_t i = 0; i < count && !PyErr_Occurred(); ++i) {
    long source = PyLong_AsLong(PySequence_Fast_GET_ITEM(src, i));
    bool named = source >= Y || (buffers >= 0 && (source >= FLAT || (source <= BUFFER &&
                                                                     source > BUFFER - buffers)));
    if (!named || source >= static_cast<long>(s->numels.size())) {
      PyErr_SetString(PyExc_ValueError, "a source names no argument");
    }
    k->sources.push_back(static_cast<int>(source));
    // two's complement: the low bytes of a negative int's 64 bits are its narrower bits too
    PyObject* v = PySequence_Fast_GET_ITEM(val, i);
    uint64_t bits = PyLong_AsUnsignedLongLongMask(v);
    k->values.push_back(bits);
  }
  Py_DECREF(src);
  Py_DECREF(val);
  if (PyErr_Occurred()) {
    delete k;
    return nullptr;
  }
  k->values.push_back(0);  // triton's global scratch: none (a lane's kernel needs none)
  k->values.push_back(0);  // and its profile scratch
  k->sources.push_back(FIXED);
  k->sources.push_back(FIXED);
  if (k->values.size() > MAX_ARGS) {
    delete k;
    PyErr_SetString(PyExc_ValueError, "too many kernel arguments");
    return nullptr;
  }
  if (cluster > 8) {  // past the portable 8: allowed per function (as triton's launch does)
    Driver* d = driver();
    if (d == nullptr || d->func_attribute == nullptr ||
        d->func_attribute(k->function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) !=
            CUDA_SUCCESS) {
      delete k;
      PyErr_SetString(PyExc_RuntimeError, "clusters over 8 CTAs are not allowed here");
      return nullptr;
    }
  }
  Py_XINCREF(keep);
  k->keep = keep;
  return k;
}

Lane* find(State* s, int device, int64_t m) {
  for (Lane* l : s->lanes) {
    if (l->device == device && l->m == m) return l;
  }
  return nullptr;
}

// Step k into the lane of (device, m): after its others (extend: the lane exists), or as a new
// lane in place of any old one.
PyObject* place(State* s, int device, int64_t m, Launch* k, bool extend) {
  Lane* lane = find(s, device, m);
  if (extend) {
    lane->launches.push_back(k);
    Py_RETURN_NONE;
  }
  auto* l = new Lane();
  l->device = device;
  l->m = m;
  l->launches.push_back(k);
  for (auto& old : s->lanes) {
    if (old == lane) {
      drop(old);
      old = l;
      Py_RETURN_NONE;
    }
  }
  s->lanes.push_back(l);
  Py_RETURN_NONE;
}

// add(state, device, m, function, grid0, grid1, num_warps, shared, cluster, cooperative, pdl,
//     sources, values, keep): a lane for (device, m) that launches this kernel (parse_launch).
//     Replaces an existing lane for (device, m).
PyObject* add(PyObject*, PyObject* args) {
  PyObject *capsule, *sources, *values, *keep;
  int device, warps, cooperative, pdl;
  long long m;
  unsigned long long function;
  unsigned grid0, grid1, shared, cluster;
  if (!PyArg_ParseTuple(args, "OiLKIIiIIppOOO", &capsule, &device, &m, &function, &grid0,
                        &grid1, &warps, &shared, &cluster, &cooperative, &pdl, &sources, &values,
                        &keep)) {
    return nullptr;
  }
  State* s = state_of(capsule);
  if (s == nullptr) return nullptr;
  Launch* k = parse_launch(s, function, grid0, grid1, warps, shared, cluster, cooperative, pdl,
                           sources, values, keep);
  if (k == nullptr) return nullptr;
  return place(s, device, m, k, false);
}

PyObject* refuse(PyObject* kind, const char* why) {
  PyErr_SetString(kind, why);
  return nullptr;
}

// The cuBLASLt handle of a device, made on first use with that device current.
lt_handle_t lt_handle(Lt* l, int device) {
  static lt_handle_t handles[64] = {};
  if (device < 0 || device >= 64) return nullptr;
  if (handles[device] == nullptr) {
    auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    c10::Device old = guard->exchangeDevice(c10::Device(c10::DeviceType::CUDA,
                                                         static_cast<int8_t>(device)));
    lt_handle_t h = nullptr;
    if (l->create(&h) == 0) handles[device] = h;
    guard->setDevice(old);
  }
  return handles[device];
}

// Descriptors and the algorithm of g for m x k x n in cuBLASLt type `type` with `epilogue`,
// for buffers 16-byte aligned (the call checks every address); 0 or cuBLASLt's status (-1: no
// algorithm).
int plan_gemm(Lt* l, Gemm* g, int type, int64_t m, int64_t k, int64_t n, unsigned epilogue) {
  int status = l->desc_create(&g->desc, LT_COMPUTE_32F, LT_R_32F);
  if (status != 0) return status;
  int transa = LT_OP_T, transb = LT_OP_N;
  // the bias address's alignment shapes the choice: one 16-byte aligned, as calls guarantee
  void* bias = reinterpret_cast<void*>(static_cast<uintptr_t>(g->workspace + 16));
  if ((status = l->desc_set(g->desc, LT_DESC_TRANSA, &transa, sizeof(transa))) != 0 ||
      (status = l->desc_set(g->desc, LT_DESC_TRANSB, &transb, sizeof(transb))) != 0 ||
      (status = l->desc_set(g->desc, LT_DESC_EPILOGUE, &epilogue, sizeof(epilogue))) != 0 ||
      (epilogue_has_bias(epilogue) &&
       (status = l->desc_set(g->desc, LT_DESC_BIAS_POINTER, &bias, sizeof(bias))) != 0) ||
      (status = l->layout_create(&g->a, type, k, n, k)) != 0 ||
      (status = l->layout_create(&g->b, type, k, m, k)) != 0 ||
      (status = l->layout_create(&g->d, type, n, m, n)) != 0) {
    return status;
  }
  void* pref = nullptr;
  if ((status = l->pref_create(&pref)) != 0) return status;
  uint64_t bytes = g->workspace_bytes;
  uint32_t align = 16;
  status = l->pref_set(pref, LT_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes));
  for (int attr = LT_PREF_MIN_ALIGNMENT_A; attr < LT_PREF_MIN_ALIGNMENT_A + 4 && status == 0;
       ++attr) {
    status = l->pref_set(pref, attr, &align, sizeof(align));
  }
  LtHeuristic found;
  int returned = 0;
  if (status == 0) {
    status = l->heuristic(g->handle, g->desc, g->a, g->b, g->d, g->d, pref, 1, &found, &returned);
  }
  l->pref_destroy(pref);
  if (status != 0) return status;
  if (returned < 1 || found.state != 0) return -1;
  g->algo = found.algo;
  return 0;
}

// gemm(state, extend, device, m, k, n, input, input_address, output, output_address, weight,
//      bias, epilogue, workspace, keep): a cuBLASLt GEMM step (Gemm) for the lane of (device, m),
//      a new lane (extend False) or after its others (True): y[m, n] = epilogue(x[m, k]
//      @ params[weight]^T + params[bias]) with x the call's input (input -2) or the buffer at
//      input_address (-1), y the call's output (output -3) or the buffer at output_address (-1);
//      bias -1: none (the epilogue then adds none); epilogue a cublasLtEpilogue_t value;
//      workspace a CUDA tensor cuBLASLt may use, kept with keep. RuntimeError where cuBLASLt is
//      not found or has no algorithm for it.
PyObject* gemm(PyObject*, PyObject* args) {
  PyObject *capsule, *workspace, *keep;
  int extend, device, input, output, weight, bias;
  long long m, k, n;
  unsigned long long input_address, output_address;
  unsigned epilogue;
  if (!PyArg_ParseTuple(args, "OpiLLLiKiKiiIOO", &capsule, &extend, &device, &m, &k, &n, &input,
                        &input_address, &output, &output_address, &weight, &bias, &epilogue,
                        &workspace, &keep)) {
    return nullptr;
  }
  State* s = state_of(capsule);
  if (s == nullptr) return nullptr;
  if (extend && find(s, device, m) == nullptr) {
    return refuse(PyExc_KeyError, "no lane to extend for this device and m");
  }
  int count = static_cast<int>(s->numels.size());
  if (weight < 0 || weight >= count || bias < -1 || bias >= count) {
    return refuse(PyExc_ValueError, "a GEMM's parameter index names no parameter");
  }
  if (m < 1 || s->numels[weight] != k * n || (bias >= 0 && s->numels[bias] != n)) {
    return refuse(PyExc_ValueError, "a GEMM's parameters are not [n, k] and [n]");
  }
  if ((input != X && input != FIXED) || (output != Y && output != FIXED)) {
    return refuse(PyExc_ValueError, "a GEMM reads x or a buffer and writes y or a buffer");
  }
  bool known = false;
  for (unsigned e : EPILOGUES) known = known || e == epilogue;
  if (!known || epilogue_has_bias(epilogue) != (bias >= 0)) {
    return refuse(PyExc_ValueError, "not an epilogue of cuBLASLt's, with a bias where it adds one");
  }
  if (!THPVariable_Check(workspace)) return refuse(PyExc_TypeError, "workspace must be a tensor");
  const at::Tensor& ws = THPVariable_Unpack(workspace);
  if (!ws.is_cuda() || ws.get_device() != device || !ws.is_contiguous()) {
    return refuse(PyExc_ValueError, "the workspace is not a CUDA tensor on the lane's device");
  }
  int type = s->dtype == c10::ScalarType::Half       ? LT_R_16F
             : s->dtype == c10::ScalarType::BFloat16 ? LT_R_16BF
             : s->dtype == c10::ScalarType::Float    ? LT_R_32F
                                                     : -1;
  if (type < 0) return refuse(PyExc_ValueError, "cuBLASLt takes no GEMM of this dtype here");
  Lt* l = lt();
  if (l == nullptr) return refuse(PyExc_RuntimeError, "cuBLASLt is not found");
  auto* g = new Gemm();
  g->handle = lt_handle(l, device);
  g->input = input;
  g->output = output;
  g->input_address = input_address;
  g->output_address = output_address;
  g->weight = weight;
  g->bias = bias;
  g->workspace = reinterpret_cast<uintptr_t>(ws.data_ptr());
  g->workspace_bytes = static_cast<size_t>(ws.nbytes());
  int status = g->handle == nullptr ? -1 : plan_gemm(l, g, type, m, k, n, epilogue);
  if (status != 0) {
    drop(g);
    PyErr_Format(PyExc_RuntimeError, "cuBLASLt has no algorithm for this GEMM (status %d)",
                 status);
    return nullptr;
  }
  g->bias_set = 0;  // the call sets the parameter's address
  auto* step = new Launch();
  step->cluster = 1;
  step->gemm = g;
  Py_INCREF(keep);
  step->keep = keep;
  return place(s, device, m, step, extend);
}

// One GEMM step on `stream`: its bias address set where it changed, then cuBLASLt's matmul.
int run_gemm(Lt* l, Gemm* g, CUstream stream, uint64_t xp, uint64_t yp,
             const uint64_t* addresses) {
  if (g->bias >= 0 && addresses[g->bias] != g->bias_set) {
    void* bias = reinterpret_cast<void*>(static_cast<uintptr_t>(addresses[g->bias]));
    int status = l->desc_set(g->desc, LT_DESC_BIAS_POINTER, &bias, sizeof(bias));
    if (status != 0) return status;
    g->bias_set = addresses[g->bias];
  }
  auto ptr = [](uint64_t a) { return reinterpret_cast<void*>(static_cast<uintptr_t>(a)); };
  void* in = ptr(g->input == X ? xp : g->input_address);
  void* out = ptr(g->output == Y ? yp : g->output_address);
  float alpha = 1.0f, beta = 0.0f;
  return l->matmul(g->handle, g->desc, &alpha, ptr(addresses[g->weight]), g->a, in, g->b, &beta,
                   out, g->d, out, g->d, &g->algo, ptr(g->workspace), g->workspace_bytes, stream);
}

// remove(state, device, m): forget the lane of (device, m), if any (a lane whose kernels could
// not all be given must not launch the others)
PyObject* remove(PyObject*, PyObject* args) {
  PyObject* capsule;
  int device;
  long long m;
  if (!PyArg_ParseTuple(args, "OiL", &capsule, &device, &m)) return nullptr;
  State* s = state_of(capsule);
  if (s == nullptr) return nullptr;
  for (auto it = s->lanes.begin(); it != s->lanes.end(); ++it) {
    if ((*it)->device == device && (*it)->m == m) {
      drop(*it);
      s->lanes.erase(it);
      break;
    }
  }
  Py_RETURN_NONE;
}

PyObject* launch_error(Driver* d, CUresult code) {
  const char* text = nullptr;
  if (d->error_string != nullptr) d->error_string(code, &text);
  PyErr_Format(PyExc_RuntimeError, "mlpgen native lane: kernel launch failed: CUDA error %d (%s)",
               static_cast<int>(code), text != nullptr ? text : "unknown");
  return nullptr;
}

// One kernel of a lane on `stream`, its arguments filled in from this call's addresses: a
// parameter's from `addresses`, every other source's from roles[-source] (X, Y, ...). The
// arguments are the call's own (a lane may launch on two threads at once: the autograd engine's
// and Python's).
CUresult launch(Driver* d, const Launch* k, CUstream stream, const uint64_t* roles,
                const uint64_t* addresses) {
  uint64_t values[MAX_ARGS];
  void* pointers[MAX_ARGS];
  for (size_t i = 0; i < k->sources.size(); ++i) {
    int source = k->sources[i];
    values[i] = source >= 0 ? addresses[source] : source == FIXED ? k->values[i] : roles[-source];
    pointers[i] = &values[i];
  }
  CUlaunchAttribute attributes[4];
  unsigned used = 0;
  if (k->cluster > 1) {  // as triton's launch: the cluster's shape, spread over the GPU
    attributes[used].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[used].value.clusterDim.x = k->cluster;
    attributes[used].value.clusterDim.y = 1;
    attributes[used].value.clusterDim.z = 1;
    ++used;
    attributes[used].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attributes[used].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    ++used;
  }
  if (k->pdl) {
    attributes[used].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[used].value.programmaticStreamSerializationAllowed = 1;
    ++used;
  }
  if (k->cooperative) {
    attributes[used].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attributes[used].value.cooperative = 1;
    ++used;
  }
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = k->grid0 * k->cluster;
  config.gridDimY = k->grid1;
  config.gridDimZ = 1;
  config.blockDimX = k->block;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = k->shared;
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = used;
  return d->launch(&config, k->function, pointers, nullptr);
}

const size_t MAX_PARAMS = 64;
enum ParamGrad { NO_GRAD, NEED_GRAD, ANY_GRAD };

// Whether po (an exact list or tuple) holds the module's parameters: exact tensors of the
// registered element counts and shapes, plain on `device`, 16-byte aligned, none requiring grad
// (NO_GRAD) or all of them (NEED_GRAD); their addresses into `addresses` and, where `tensors` is
// given, the tensors into it.
bool read_params(const State* s, PyObject* po, int device, ParamGrad grad, uint64_t* addresses,
                 std::vector<at::Tensor>* tensors) {
  Py_ssize_t count;
  PyObject** items;
  if (PyList_CheckExact(po)) {
    count = PyList_GET_SIZE(po);
    items = &PyList_GET_ITEM(po, 0);
  } else if (PyTuple_CheckExact(po)) {
    count = PyTuple_GET_SIZE(po);
    items = &PyTuple_GET_ITEM(po, 0);
  } else {
    return false;
  }
  size_t expected = s->numels.size();
  if (static_cast<size_t>(count) != expected || expected > MAX_PARAMS) return false;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (!exact_tensor(items[i])) return false;
    const at::Tensor& p = THPVariable_Unpack(items[i]);
    bool shaped = p.numel() == s->numels[i] &&
                  (s->rows[i] == 0 ? p.dim() == 1 : p.dim() == 2 && p.size(0) == s->rows[i]);
    bool graded = grad == ANY_GRAD || p.requires_grad() == (grad == NEED_GRAD);
    if (!plain(p, s, device) || !shaped || !graded) return false;
    addresses[i] = reinterpret_cast<uintptr_t>(p.data_ptr());
    if (addresses[i] & 15) return false;
    if (tensors != nullptr) tensors->push_back(p);
  }
  return true;
}

int current_device() {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getDevice().index();
}

CUstream current_stream(int device) {
  auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  auto stream = guard->getStream(c10::Device(c10::DeviceType::CUDA, static_cast<int8_t>(device)));
  return static_cast<CUstream>(stream.native_handle());
}

bool capturing(Driver* d, CUstream stream) {  // or its state unknown
  CUstreamCaptureStatus status;
  return d->capturing(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// The steps of an inference lane on `stream`; false with a Python error where one fails.
bool run_lane(Driver* d, const Lane* lane, CUstream stream, uint64_t xp, uint64_t yp,
              const uint64_t* addresses) {
  const uint64_t roles[] = {0, 0, xp, yp};
  for (Launch* k : lane->launches) {
    if (k->gemm != nullptr) {
      int status = run_gemm(lt(), k->gemm, stream, xp, yp, addresses);
      if (status != 0) {
        PyErr_Format(PyExc_RuntimeError, "mlpgen native lane: cuBLASLt GEMM failed: status %d",
                     status);
        return false;
      }
      continue;
    }
    CUresult code = launch(d, k, stream, roles, addresses);
    if (code != CUDA_SUCCESS) {
      launch_error(d, code);
      return false;
    }
  }
  return true;
}

PyObject* call_impl(PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "call(state, x, params, out)");
    return nullptr;
  }
  State* s = state_of(args[0]);
  if (s == nullptr) return nullptr;
  PyObject *xo = args[1], *po = args[2], *oo = args[3];
  if (!exact_tensor(xo)) Py_RETURN_NONE;
  const at::Tensor& x = THPVariable_Unpack(xo);
  if (x.dim() != 2 || !x.is_cuda() || x.size(1) != s->k0) Py_RETURN_NONE;
  int device = x.get_device();
  int64_t m = x.size(0);
  Lane* lane = find(s, device, m);
  if (lane == nullptr || !plain(x, s, device)) Py_RETURN_NONE;
  bool grad = c10::GradMode::is_enabled();
  if (grad && x.requires_grad()) Py_RETURN_NONE;
  uint64_t addresses[MAX_PARAMS];
  if (!read_params(s, po, device, grad ? NO_GRAD : ANY_GRAD, addresses, nullptr)) Py_RETURN_NONE;
  if (current_device() != device) Py_RETURN_NONE;  // triton launches on the current
  CUstream stream = current_stream(device);
  Driver* d = driver();
  if (d == nullptr) Py_RETURN_NONE;
  bool steps = lane->launches.size() > 1 || lane->launches.front()->gemm != nullptr;
  if ((s->capture || steps) && capturing(d, stream)) Py_RETURN_NONE;
  uint64_t xp = reinterpret_cast<uintptr_t>(x.data_ptr());
  uint64_t yp;
  at::Tensor y;
  if (oo != Py_None) {
    if (!exact_tensor(oo)) Py_RETURN_NONE;
    const at::Tensor& out = THPVariable_Unpack(oo);
    if (!plain(out, s, device) || out.dim() != 2 || out.size(0) != m || out.size(1) != s->n ||
        out.requires_grad()) {
      Py_RETURN_NONE;
    }
    yp = reinterpret_cast<uintptr_t>(out.data_ptr());
    uint64_t item = static_cast<uint64_t>(x.element_size());
    if (!(yp >= xp + m * s->k0 * item || xp >= yp + m * s->n * item)) Py_RETURN_NONE;
  } else {
    y = at::empty({m, s->n}, x.options());
    yp = reinterpret_cast<uintptr_t>(y.data_ptr());
  }
  if ((xp | yp) & 15) Py_RETURN_NONE;
  if (!run_lane(d, lane, stream, xp, yp, addresses)) return nullptr;
  if (oo != Py_None) {
    Py_INCREF(oo);
    return oo;
  }
  return THPVariable_Wrap(std::move(y));
}

// A lane's call (call_impl, train_impl) as a METH_FASTCALL function: an exception (a tensor the
// lane cannot read) leaves the call to the Python lane.
template <PyObject* (*impl)(PyObject* const*, Py_ssize_t)>
PyObject* declining(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    return impl(args, nargs);
  } catch (const std::exception&) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
}

// -- the training lane ------------------------------------------------------------------------
// A training call whose step mlpgen.runtime.train_lane recorded from the Python lane: train()
// checks it as call() does (and that every parameter requires grad), allocates y and the
// forward's buffers, launches the forward, and gives y a TrainBackward node, whose backward
// allocates dx, the flat parameter gradient and its buffers, launches the recorded kernels and
// returns each parameter's gradient as a view of the flat one: a step's host work without the
// interpreter. Saved tensors are autograd's SavedVariables (in-place changes are caught, a
// second backward through a freed graph is refused).

uint64_t address(const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); }

// The contiguous `sizes` of the flat tensor's storage from element `offset`: a parameter's
// gradient, made directly (the dispatcher's narrow and view would cost more than the rest of a
// small step's backward, once per parameter).
at::Tensor part(const at::Tensor& flat, int64_t offset, c10::IntArrayRef sizes) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::Storage(flat.storage()), flat.key_set(),
                                                   flat.dtype());
  impl->set_storage_offset(offset);
  impl->set_sizes_contiguous(sizes);
  return at::Tensor(std::move(impl));
}

// A new autograd node: torch holds nodes by intrusive_ptr (2.14) or by shared_ptr (earlier),
// deleted by deleteNode (found by argument-dependent lookup: it is torch::autograd's).
template <typename N>
auto new_node() {
  if constexpr (std::is_base_of_v<c10::intrusive_ptr_target, N>) {
    return c10::make_intrusive<N>();
  } else {
    return std::shared_ptr<N>(new N(), [](N* n) { deleteNode(n); });
  }
}

struct TrainBackward : public torch::autograd::Node {
  std::shared_ptr<TrainLane> lane;
  size_t params = 0;
  // x, the parameters, the forward's SAVED buffers in lane->buffers' order, then y where saves_y
  std::vector<torch::autograd::SavedVariable> saved;

  std::string name() const override { return "MlpgenTrainBackward"; }

  void release_variables() override {
    for (auto& v : saved) v.reset_data();
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    TORCH_CHECK(!c10::GradMode::is_enabled(),
                "mlpgen: double backward (create_graph=True) is not supported by the training "
                "kernels; for higher-order gradients use FusedMLP.to_module()'s nn.Sequential");
    const TrainLane& l = *lane;
    std::vector<at::Tensor> t;
    auto self = getptr();
    for (auto& v : saved) t.push_back(v.unpack(self));
    const at::Tensor& x = t[0];
    auto options = x.options();
    at::Tensor gy = grads[0];  // autograd gives it y's dtype, device and shape
    gy = gy.defined() ? gy.contiguous() : at::zeros({l.m, l.n}, options);
    if (address(gy) & 15) gy = gy.clone();
    uint64_t addresses[MAX_PARAMS];
    for (size_t i = 0; i < params; ++i) addresses[i] = address(t[1 + i]);
    std::vector<uint64_t> roles(-BUFFER + l.buffers.size(), 0);
    roles[-X] = address(x);
    roles[-Y] = l.saves_y ? address(t.back()) : 0;
    roles[-GY] = address(gy);
    at::Tensor dx;  // undefined where x needs no gradient
    if (l.need_x) {
      dx = at::empty({l.m, l.k0}, options);
      roles[-DX] = address(dx);
    }
    at::Tensor flat = at::empty({l.flat}, options);
    roles[-FLAT] = address(flat);
    std::vector<at::Tensor> scratch;
    size_t next = 1 + params;
    for (size_t j = 0; j < l.buffers.size(); ++j) {
      const Buffer& b = l.buffers[j];
      if (b.kind == SCRATCH) continue;  // the forward's: no backward launch names it
      if (b.kind == IN_BACKWARD) {
        scratch.push_back(at::empty({b.bytes}, options.dtype(at::kByte)));
        roles[-BUFFER + j] = address(scratch.back());
      } else {
        roles[-BUFFER + j] = address(t[next++]);
      }
    }
    Driver* d = driver();
    TORCH_CHECK(d != nullptr, "mlpgen native lane: libcuda is not found");
    CUstream stream = current_stream(l.device);
    for (const Launch* k : l.backward) {
      CUresult code = launch(d, k, stream, roles.data(), addresses);
      TORCH_CHECK(code == CUDA_SUCCESS, "mlpgen native lane: kernel launch failed: CUDA error ",
                  static_cast<int>(code));
    }
    torch::autograd::variable_list out{dx};
    int64_t offset = 0;
    for (size_t i = 0; i < params; ++i) {
      const at::Tensor& p = t[1 + i];
      out.push_back(part(flat, offset, p.sizes()));
      offset += p.numel();
    }
    return out;
  }
};

std::shared_ptr<TrainLane> find_train(const State* s, int device, int64_t m, bool need_x) {
  for (const auto& l : s->train_lanes) {
    if (l->device == device && l->m == m && l->need_x == need_x) return l;
  }
  return nullptr;
}

// train(state, x, params) -> y with its autograd node, or None where the call is not one a
// training lane takes (the Python lane then sees it).
PyObject* train_impl(PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "train(state, x, params)");
    return nullptr;
  }
  State* s = state_of(args[0]);
  if (s == nullptr) return nullptr;
  if (!exact_tensor(args[1]) || !c10::GradMode::is_enabled()) Py_RETURN_NONE;
  const at::Tensor& x = THPVariable_Unpack(args[1]);
  if (x.dim() != 2 || !x.is_cuda() || x.size(1) != s->k0) Py_RETURN_NONE;
  int device = x.get_device();
  int64_t m = x.size(0);
  std::shared_ptr<TrainLane> l = find_train(s, device, m, x.requires_grad());
  if (l == nullptr || !plain(x, s, device) || (address(x) & 15)) Py_RETURN_NONE;
  uint64_t addresses[MAX_PARAMS];
  std::vector<at::Tensor> inputs{x};
  if (!read_params(s, args[2], device, NEED_GRAD, addresses, &inputs)) Py_RETURN_NONE;
  if (current_device() != device) Py_RETURN_NONE;  // triton launches on the current
  CUstream stream = current_stream(device);
  Driver* d = driver();
  if (d == nullptr || capturing(d, stream)) Py_RETURN_NONE;  // a capture: the Python lane's
  const Lane* inference = l->by_inference ? find(s, device, m) : nullptr;
  if (l->by_inference && inference == nullptr) Py_RETURN_NONE;
  at::Tensor y = at::empty({m, s->n}, x.options());
  std::vector<uint64_t> roles(-BUFFER + l->buffers.size(), 0);
  roles[-X] = address(x);
  roles[-Y] = address(y);
  std::vector<at::Tensor> kept, scratch;  // the node saves kept; scratch lives to the return
  for (size_t j = 0; j < l->buffers.size(); ++j) {
    const Buffer& b = l->buffers[j];
    if (b.kind == IN_BACKWARD) continue;
    std::vector<at::Tensor>& into = b.kind == SAVED ? kept : scratch;
    into.push_back(at::empty({b.bytes}, x.options().dtype(at::kByte)));
    roles[-BUFFER + j] = address(into.back());
  }
  if (inference != nullptr) {
    if (!run_lane(d, inference, stream, roles[-X], roles[-Y], addresses)) return nullptr;
  }
  for (const Launch* k : l->forward) {
    CUresult code = launch(d, k, stream, roles.data(), addresses);
    if (code != CUDA_SUCCESS) return launch_error(d, code);
  }
  auto node = new_node<TrainBackward>();
  node->lane = l;
  node->params = inputs.size() - 1;
  node->set_next_edges(torch::autograd::collect_next_edges(inputs));
  torch::autograd::set_history(y, node);
  for (const at::Tensor& t : inputs) node->saved.emplace_back(t, false);
  for (const at::Tensor& t : kept) node->saved.emplace_back(t, false);
  if (l->saves_y) node->saved.emplace_back(y, true);
  return THPVariable_Wrap(std::move(y));
}

// Launches from a sequence of (function, grid0, grid1, num_warps, shared, cluster, cooperative,
// pdl, sources, values) into `out` (parse_launch, `buffers` BUFFER sources); false with a
// Python error where one is wrong.
bool parse_launches(const State* s, PyObject* items, int buffers, std::vector<Launch*>* out) {
  PyObject* seq = PySequence_Fast(items, "launches must be a sequence");
  if (seq == nullptr) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    PyObject *sources, *values;
    unsigned long long function;
    unsigned grid0, grid1, shared, cluster;
    int warps, cooperative, pdl;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "KIIiIIppOO", &function, &grid0,
                          &grid1, &warps, &shared, &cluster, &cooperative, &pdl, &sources,
                          &values)) {
      Py_DECREF(seq);
      return false;
    }
    Launch* k = parse_launch(s, function, grid0, grid1, warps, shared, cluster, cooperative, pdl,
                             sources, values, nullptr, buffers);
    if (k == nullptr) {
      Py_DECREF(seq);
      return false;
    }
    out->push_back(k);
  }
  Py_DECREF(seq);
  return true;
}

// train_add(state, device, m, need_x, by_inference, saves_y, forward, backward, buffers): the
// training lane of (device, m, need_x) (in place of any old one); forward and backward as
// parse_launches takes them, buffers a sequence of (bytes, kind: a BufferKind).
PyObject* train_add(PyObject*, PyObject* args) {
  PyObject *capsule, *forward, *backward, *buffers;
  int device, need_x, by_inference, saves_y;
  long long m;
  if (!PyArg_ParseTuple(args, "OiLpppOOO", &capsule, &device, &m, &need_x, &by_inference,
                        &saves_y, &forward, &backward, &buffers)) {
    return nullptr;
  }
  State* s = state_of(capsule);
  if (s == nullptr) return nullptr;
  auto l = std::make_shared<TrainLane>();
  l->device = device;
  l->m = m;
  l->k0 = s->k0;
  l->n = s->n;
  l->flat = 0;
  for (int64_t numel : s->numels) l->flat += numel;
  l->need_x = need_x != 0;
  l->by_inference = by_inference != 0;
  l->saves_y = saves_y != 0;
  PyObject* seq = PySequence_Fast(buffers, "buffers must be a sequence");
  if (seq == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    long long bytes;
    int kind;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "Li", &bytes, &kind)) {
      Py_DECREF(seq);
      return nullptr;
    }
    if (bytes < 1 || kind < SAVED || kind > IN_BACKWARD) {
      Py_DECREF(seq);
      return refuse(PyExc_ValueError, "a buffer holds at least one byte, of kind 0, 1 or 2");
    }
    l->buffers.push_back({bytes, static_cast<BufferKind>(kind)});
  }
  Py_DECREF(seq);
  int count = static_cast<int>(l->buffers.size());
  if (m < 1 || (l->by_inference && PyObject_Length(forward) != 0)) {
    return refuse(PyExc_ValueError, "a training lane runs its kernels or the inference lane's");
  }
  if (!parse_launches(s, forward, count, &l->forward) ||
      !parse_launches(s, backward, count, &l->backward)) {
    return nullptr;
  }
  for (auto& old : s->train_lanes) {
    if (old->device == device && old->m == m && old->need_x == l->need_x) {
      old = l;
      Py_RETURN_NONE;
    }
  }
  s->train_lanes.push_back(l);
  Py_RETURN_NONE;
}

// train_lanes(state) -> [(device, m, need_x, forward kernels, backward kernels), ...]
PyObject* train_lanes(PyObject*, PyObject* capsule) {
  State* s = state_of(capsule);
  if (s == nullptr) return nullptr;
  PyObject* list = PyList_New(0);
  for (const auto& l : s->train_lanes) {
    PyObject* item = Py_BuildValue("(iLOnn)", l->device, static_cast<long long>(l->m),
                                   l->need_x ? Py_True : Py_False,
                                   static_cast<Py_ssize_t>(l->forward.size()),
                                   static_cast<Py_ssize_t>(l->backward.size()));
    PyList_Append(list, item);
    Py_DECREF(item);
  }
  return list;
}

// lanes(state) -> [(device, m, threads a block, CTAs a cluster, steps), ...]: what is
// registered (of each lane's first step, 0 threads for a GEMM, and how many steps it runs; for
// tests and mlpgen bench's note)
PyObject* lanes(PyObject*, PyObject* capsule) {
  State* s = state_of(capsule);
  if (s == nullptr) return nullptr;
  PyObject* list = PyList_New(0);
  for (Lane* l : s->lanes) {
    const Launch* k = l->launches.front();
    PyObject* item = Py_BuildValue("(iLIIn)", l->device, static_cast<long long>(l->m), k->block,
                                   k->cluster, static_cast<Py_ssize_t>(l->launches.size()));
    PyList_Append(list, item);
    Py_DECREF(item);
  }
  return list;
}

PyMethodDef methods[] = {
    {"state", new_state, METH_VARARGS, "state(like, k0, n, numels, rows, capture) -> capsule"},
    {"add", add, METH_VARARGS, "add a lane for (device, m)"},
    {"gemm", gemm, METH_VARARGS, "a cuBLASLt GEMM step for the lane of (device, m)"},
    {"remove", remove, METH_VARARGS, "forget the lane of (device, m)"},
    {"call",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(declining<call_impl>)),
     METH_FASTCALL,
     "call(state, x, params, out) -> y, or None where the Python lane takes the call"},
    {"lanes", lanes, METH_O, "lanes(state) -> [(device, m, threads, cluster, kernels), ...]"},
    {"train",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(declining<train_impl>)),
     METH_FASTCALL, "train(state, x, params) -> y with its autograd node, or None"},
    {"train_add", train_add, METH_VARARGS, "the training lane of (device, m, need_x)"},
    {"train_lanes", train_lanes, METH_O, "train_lanes(state) -> [(device, m, need_x, ...), ...]"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "mlpgen_runtime_native", nullptr, -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit_mlpgen_runtime_native(void) { return PyModule_Create(&module); }
