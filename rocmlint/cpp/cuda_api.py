"""The CUDA runtime surface a port renames for HIP, and the parts of it HIP lacks.

HIPIFY (hipify-clang, hipify-perl) and PyTorch's hipify rename the CUDA runtime and driver
API, its types, constants and headers to their HIP counterparts (`cudaMalloc` -> `hipMalloc`,
`cudaStream_t` -> `hipStream_t`, `__nv_bfloat16` -> `__hip_bfloat16`, `<cuda_runtime.h>` ->
`<hip/hip_runtime.h>`: HIPIFY's "CUDA Runtime API supported by HIP" and "CUDA Driver API
supported by HIP" tables). A file compiled for AMD without such a step does not compile: the
names are undeclared there. `RUNTIME_NAME` is that vocabulary (the CUDA math libraries have
their own checks: ROCM213, ROCM214).

Some CUDA features have no HIP counterpart in the ROCm releases current when this was
written; hipify leaves their names as they are. `WITHOUT_HIP_COUNTERPART` lists those whose
absence is documented, with the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Runtime API (functions, types, enumerators: `cuda` and a capital word of the API's families;
# project names such as `cudaElapsedUs` or `cudaAvailable` are not), its math constants, the
# bf16/fp8 types of cuda_bf16.h and cuda_fp8.h, the driver API (`cu` and a capital; `CU` types;
# `CUDA_SUCCESS`/`CUDA_ERROR_*` results) and the library data types (`CUDA_R_16F`).
RUNTIME_NAME = re.compile(
    r"\b(?:cuda(?:" + "|".join((
        "Malloc", "Free", "Memcpy", "Memset", "Mem[A-Z]", "Stream", "Event[A-Z_]", "Device", "Get[A-Z]", "Set[A-Z]",
        "Launch", "Func", "Occupancy", "Host", "Graph", "Pointer", "Ipc", "Error", "Success", "PeekAtLastError",
        "Profiler", "Array", "CreateTextureObject", "CreateSurfaceObject", "DestroyTextureObject",
        "DestroySurfaceObject", "CreateChannelDesc", "ChannelFormat", "Import", "External", "Thread", "Ctx", "Limit",
        "Driver", "RuntimeGetVersion", "DevAttr", "DataType", "CpuDeviceId", "InvalidDeviceId", "Access", "Texture",
        "Surface", "Resource", "Extent", "Pos\\b", "PitchedPtr", "ReadMode", "FilterMode", "AddressMode",
        "BoundaryMode", "ComputeMode", "SharedMem", "Shared[A-Z]", "FuncCache", "Kernel", "Mipmapped", "UserObject",
        "SignalExternal", "WaitExternal", "Library", "Cluster", "Sync", "Enable", "Disable", "Cooperative",
        "Uuid", "Flush", "Initialize", "InitDevice", "Tma", "Async", "R_", "C_",
    )) + r")\w*|CUDART_[A-Z][A-Z0-9_]*|__nv_(?:bfloat162?|fp8x?\d?_\w+|fp8_interpretation_t)|nv_bfloat162?"
    r"|cu(?:Init|Device[A-Z]\w*|Ctx[A-Z]\w*|Module[A-Z]\w*|Launch(?:Kernel|Cooperative|HostFunc)\w*|Mem[A-Z]\w*|"
    r"Stream[A-Z]\w*|Event[A-Z]\w*|Func[A-Z]\w*|Graph[A-Z]\w*|GetErrorString|GetErrorName|DriverGetVersion|"
    r"Occupancy[A-Z]\w*|Pointer[A-Z]\w*|Array[A-Z0-9]\w*|TensorMap[A-Z]\w*|GetProcAddress\w*|Link[A-Z]\w*|"
    r"Library[A-Z]\w*|Kernel[A-Z]\w*)"
    r"|CU(?:device|deviceptr|stream|event|context|module|function|result|graph|graphExec|graphNode|tensorMap\w*|"
    r"memGenericAllocationHandle|array|texObject|surfObject|uuid|mem[A-Z]\w*|pointer_attribute|function_attribute|"
    r"device_attribute|jit_option|ipcMemHandle|kernel|library|launchConfig|launchAttribute\w*)(?:_st|_enum|_v\d)?"
    r"|CUDA_(?:SUCCESS|ERROR_[A-Z_]+|R_\d+[A-Z]*|C_\d+[A-Z]*))\b"
)
# Headers of the CUDA toolkit whose HIP counterparts hipify includes instead.
RUNTIME_HEADER = re.compile(
    r'^\s*[<"]\s*(cuda_runtime(?:_api)?\.h|cuda\.h|cuda_fp16\.hp?p?|cuda_bf16\.hp?p?|cuda_fp8\.hp?p?|'
    r"device_launch_parameters\.h|cuda_profiler_api\.h|cooperative_groups\.h|cooperative_groups/\w+\.h|"
    r'driver_types\.h|vector_types\.h|math_constants\.h|cuda_texture_types\.h|library_types\.h)\s*[>"]'
)


@dataclass(frozen=True)
class MissingInHip:
    what: str  # what the CUDA feature is, for the message
    instead: str  # what to do on AMD
    evidence: str


_PDL = MissingInHip(
    "programmatic dependent launch (PDL)",
    "leave it out on AMD (under `#ifndef USE_ROCM` / `!defined(__HIP_PLATFORM_AMD__)`): kernels then run in "
    "stream order, correct but without the overlap",
    "ROCm 7.2's HIP declares none of the three parts (hipLaunchAttributeID has no programmatic-serialization "
    "member); HIP's later tests add them for GPUs that support programmatic launch",
)
# CUDA names that hipify cannot turn into working HIP code on current ROCm releases.
WITHOUT_HIP_COUNTERPART: dict[str, MissingInHip] = {
    "cudaGridDependencySynchronize": _PDL,
    "cudaTriggerProgrammaticLaunchCompletion": _PDL,
    "cudaLaunchAttributeProgrammaticStreamSerialization": _PDL,
    "cudaLaunchAttributeProgrammaticEvent": _PDL,
}
