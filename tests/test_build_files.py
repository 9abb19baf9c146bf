"""Build, packaging and container files as the ROCM3xx checks see them (rocmlint.build.files):
which build reaches a statement, file-level gates, and positions in each kind of file."""

import os
import textwrap

from rocmlint.build import CUDA, ROCM
from rocmlint.build.cmake import read_cmake
from rocmlint.build.files import file_gate, stack_of_name
from rocmlint.build.makefile import read_makefile
from rocmlint.build.setup_py import read_setup_py
from rocmlint.catalog.loader import load_catalog
from rocmlint.engine import check_source
from rocmlint.files.languages import language_of
from rocmlint.source import SourceFile

CHECKS = [c for c in load_catalog() if c.id.startswith("ROCM3")]


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def _hits(path, text, language=None, keep_gated=True):
    source = SourceFile(str(path), textwrap.dedent(text), language or language_of(str(path)))
    findings, problems = check_source(source, CHECKS, keep_gated=keep_gated)
    assert problems == []
    return [(f.check_id, f.line, source.text[source.offset(f.line, f.col):source.offset(f.end_line, f.end_col)], f.gate) for f in findings]


# --- which build reaches a statement -------------------------------------------------------------


def test_cmake_commands_in_a_function_body_are_reached_in_the_file_that_defines_them(tmp_path):
    root = _write(tmp_path, {
        "CMakeLists.txt": "include(cmake/utils.cmake)\nif(USE_ROCM)\n  add_hip()\nelse()\n  add_cuda()\nendif()\n",
        "cmake/utils.cmake": "function(add_cuda)\n  find_package(CUDAToolkit REQUIRED)\nendfunction()\nfunction(add_hip)\n  enable_language(HIP)\nendfunction()\n",
    })
    facts = read_cmake(root, [os.path.join(root, "CMakeLists.txt")], lambda p: open(p).read())
    utils = os.path.join(root, "cmake", "utils.cmake")
    assert (utils, 2) in facts.reached[CUDA] and (utils, 2) not in facts.reached[ROCM]
    assert facts.gate((utils, 2)) == "CUDA build only: under `else of if(USE_ROCM)` (line 4)"
    assert facts.gate((utils, 5)) == "ROCm build only: under `if(USE_ROCM)` (line 2)"
    assert facts.gate((os.path.join(root, "CMakeLists.txt"), 1)) is None


def test_setup_py_strings_keep_the_conditions_of_the_call_that_reaches_them(tmp_path):
    path = str(tmp_path / "setup.py")
    text = "import torch\n\ndef flags():\n    return ['-gencode=arch=compute_90,code=sm_90']\n\nif not torch.version.hip:\n    f = flags()\n"
    facts = read_setup_py(path, str(tmp_path), text)
    assert facts.gate((path, 4, 12)) == "CUDA build only: under `if not torch.version.hip` (line 6)"


def test_makefile_lines_under_a_vendor_conditional(tmp_path):
    path = str(tmp_path / "Makefile")
    text = "ifeq ($(BUILD_AMD),)\nLIBS += -lcublas\nelse\nLIBS += -lhipblas\nendif\nall:\n\techo $(LIBS)\n"
    facts = read_makefile(path, str(tmp_path), text)
    assert facts.gate((path, 2)).startswith("CUDA build only")
    assert facts.gate((path, 4)).startswith("ROCm build only")
    assert facts.gate((path, 7)) is None


def test_a_cmake_file_is_gated_by_the_project_build_that_includes_it(tmp_path):
    root = _write(tmp_path, {
        "CMakeLists.txt": "if(NOT USE_ROCM)\n  include(cmake/cuda.cmake)\nendif()\n",
        "cmake/cuda.cmake": "find_package(CUDAToolkit REQUIRED)\n",
    })
    path = os.path.join(root, "cmake", "cuda.cmake")
    hits = _hits(path, open(path).read())
    assert hits == [("ROCM303", 1, "find_package(CUDAToolkit REQUIRED)", "CUDA build only: under `if(NOT USE_ROCM)` (line 1)")]


def test_the_files_of_one_cmake_build_share_one_walk_that_still_sees_each_files_own_text(tmp_path, monkeypatch):
    import rocmlint.build.cmake as cmake_module

    root = _write(tmp_path, {
        "CMakeLists.txt": "include(cmake/a.cmake)\nif(NOT USE_ROCM)\n  include(cmake/b.cmake)\nendif()\n",
        "cmake/a.cmake": "enable_language(CUDA)\n",
        "cmake/b.cmake": "find_package(CUDAToolkit REQUIRED)\n",
    })
    walks = []
    real_read_cmake = cmake_module.read_cmake
    monkeypatch.setattr(cmake_module, "read_cmake", lambda *args: walks.append(args[1]) or real_read_cmake(*args))
    a, b = os.path.join(root, "cmake", "a.cmake"), os.path.join(root, "cmake", "b.cmake")
    gate = "CUDA build only: under `if(NOT USE_ROCM)` (line 2)"
    assert _hits(a, open(a).read()) == [("ROCM303", 1, "enable_language(CUDA)", None)]
    assert _hits(b, open(b).read()) == [("ROCM303", 1, "find_package(CUDAToolkit REQUIRED)", gate)]
    assert len(walks) == 1  # both files as they are on disk: one walk of the build
    # An editor's unsaved text of b.cmake is walked with that text.
    edited = "find_package(CUDAToolkit REQUIRED)\nenable_language(CUDA)\n"
    assert [(h[1], h[3]) for h in _hits(b, edited)] == [(1, gate), (2, gate)]
    assert len(walks) == 2
    # The same file changed on disk: the kept walk read it otherwise, so the build is walked again.
    with open(b, "w") as f:
        f.write("\n" + edited)
    assert [(h[1], h[3]) for h in _hits(b, "\n" + edited)] == [(2, gate), (3, gate)]
    assert len(walks) == 3


# --- file-level gates ---------------------------------------------------------------------------


def test_names_that_say_a_gpu_stack():
    assert stack_of_name("requirements-cuda.txt") == "cuda"
    assert stack_of_name("requirements_cu121.txt") == "cuda"
    assert stack_of_name("Dockerfile.rocm_base") == "rocm"
    assert stack_of_name("cuda.Dockerfile") == "cuda"
    assert stack_of_name("requirements-dev.txt") is None
    assert stack_of_name("Dockerfile") is None


def test_a_default_file_beside_a_rocm_one_is_the_other_stacks_unless_the_rocm_one_includes_it(tmp_path):
    root = _write(tmp_path, {"docker/Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n", "docker/Dockerfile.rocm": "FROM rocm/pytorch\n",
                             "a/requirements.txt": "torch==2.4.0\n", "a/requirements-rocm.txt": "torch\n",
                             "b/requirements.txt": "torch==2.4.0\n", "b/requirements-rocm.txt": "-r requirements.txt\n"})
    assert "Dockerfile.rocm" in file_gate(os.path.join(root, "docker", "Dockerfile"))
    assert "requirements-rocm.txt" in file_gate(os.path.join(root, "a", "requirements.txt"))
    assert file_gate(os.path.join(root, "b", "requirements.txt")) is None
    assert file_gate(os.path.join(root, "docker", "Dockerfile.rocm")) == "ROCm-only file: its name `Dockerfile.rocm` says so"


def test_requirements_in_a_requirements_folder_and_env_files_are_recognised():
    assert language_of("requirements/cuda.txt") == "requirements"
    assert language_of("docs/cuda.txt") is None
    assert language_of(".env") == "dotenv" and language_of(".env.production") == "dotenv"
    assert file_gate("requirements/cuda.txt") == "CUDA-only file: its name `cuda.txt` says so"


# --- positions and gates in each kind of file ------------------------------------------------------


def test_shell_gates_cover_every_arm_of_a_case_and_the_tail_of_a_test_list(tmp_path):
    hits = _hits(tmp_path / "run.sh", """\
        case "$GPU" in
          rocm) echo rocm ;;
          *) docker run --gpus all img ;;
        esac
        [ "$USE_ROCM" = 1 ] || docker run --gpus all img
        docker run --gpus=all img
        """)
    assert [(h[1], h[2], h[3] is not None) for h in hits] == [(3, "--gpus", True), (5, "--gpus", True), (6, "--gpus=all", False)]
    assert "`rocm)`" in hits[0][3]


def test_shell_code_after_an_early_exit_on_a_stack_test_is_gated(tmp_path):
    hits = _hits(tmp_path / "run.sh", """\
        if [ -z "$IMAGE" ]; then
          exit 1
        fi
        docker run --gpus all img
        if command -v rocminfo >/dev/null 2>&1; then
          echo "ROCm: skipped"
          exit 0
        fi
        docker run --gpus=all img
        """)
    assert [(h[1], h[3] is not None) for h in hits] == [(4, False), (9, True)]
    assert hits[1][3].startswith("after `if command -v rocminfo >/dev/null 2>&1` (line 5) exits early")


def test_dockerfile_heredoc_and_continuations_keep_positions(tmp_path):
    hits = _hits(tmp_path / "Dockerfile", """\
        FROM python:3.11
        RUN pip install numpy && \\
            # a comment line inside the continued RUN
            pip install torch==2.4.0
        RUN <<EOF
        pip install nvidia-ml-py
        EOF
        ENV A=1 \\
            PYTORCH_ALLOC_CONF="garbage_collection_threshold:0.8"
        """)
    assert [(h[0], h[1], h[2]) for h in hits] == [
        ("ROCM307", 4, "torch==2.4.0"),
        ("ROCM306", 6, "nvidia-ml-py"),
        ("ROCM312", 9, "garbage_collection_threshold"),
    ]


def test_yaml_block_scalars_are_shell_at_their_own_positions(tmp_path):
    hits = _hits(tmp_path / ".github" / "workflows" / "ci.yml", """\
        jobs:
          test-rocm:
            steps:
              - run: pip install torch --index-url https://download.pytorch.org/whl/cu121
          test:
            env:
              PYTORCH_CUDA_ALLOC_CONF: "max_split_size_mb:64"
            steps:
              - run: |
                  echo start
                  pip install torch --index-url https://download.pytorch.org/whl/cu124
        """)
    assert [(h[0], h[1], h[2], h[3] is None) for h in hits] == [
        ("ROCM308", 4, "https://download.pytorch.org/whl/cu121", False),
        ("ROCM312", 7, "max_split_size_mb", True),
        ("ROCM308", 11, "https://download.pytorch.org/whl/cu124", True),
    ]


def test_yaml_positions_hold_with_non_ascii_text_and_a_byte_order_mark(tmp_path):
    # The fast YAML loader counts characters as the pure-Python one does, except a leading
    # byte-order mark (left in the text where a file starts with two).
    workflow = """\
        jobs:
          test:  # prüft 😀
            steps:
              - run: |
                  echo "überall"
                  pip install torch --index-url https://download.pytorch.org/whl/cu124
              - run: "pip install torch --index-url https://download.pytorch.org/whl/cu121"
        """
    expected = [("ROCM308", 6, "https://download.pytorch.org/whl/cu124"), ("ROCM308", 7, "https://download.pytorch.org/whl/cu121")]
    path = tmp_path / ".github" / "workflows" / "ci.yml"
    assert [h[:3] for h in _hits(path, workflow)] == expected
    assert [h[:3] for h in _hits(path, "\ufeff" + textwrap.dedent(workflow))] == expected


def test_pyproject_dependencies_are_reported_on_their_own_lines(tmp_path):
    hits = _hits(tmp_path / "pyproject.toml", """\
        [project]
        name = "x"
        dependencies = [
          "numpy",
          "torch==2.4.0",
        ]
        [project.optional-dependencies]
        dev = ["torch==2.4.0"]
        cuda = ["nvidia-ml-py"]
        """)
    assert [(h[0], h[1], h[3] is None) for h in hits] == [("ROCM307", 5, True), ("ROCM307", 8, True), ("ROCM306", 9, False)]


def test_extras_named_for_an_nvidia_only_feature_are_opt_in(tmp_path):
    hits = _hits(tmp_path / "pyproject.toml", """\
        [project]
        name = "p"

        [project.optional-dependencies]
        sm107 = ["nvidia-cuda-runtime-cu12"]
        ptx = ["nvidia-cuda-nvcc>=13.2"]
        gpu = ["nvidia-ml-py"]
        """)
    gates = {line: gate for _, line, _, gate in hits}
    assert gates[5] == "only with the optional extra `sm107`, which is for an NVIDIA-only feature"
    assert gates[6] == "only with the optional extra `ptx`, which is for an NVIDIA-only feature"
    assert gates[7] is None  # `gpu` may be what an AMD user installs


def test_bad_build_files_are_read_as_far_as_they_go(tmp_path):
    assert _hits(tmp_path / "pyproject.toml", "[project\nname=") == []
    assert _hits(tmp_path / "compose.yaml", "services: [\n") == []
    assert _hits(tmp_path / "requirements.txt", "not a requirement ((\n--weird\n") == []
    assert _hits(tmp_path / "setup.py", "def (:\n", "python") == []


def test_pins_installed_from_a_rocm_index_are_rocm_builds(tmp_path):
    hits = _hits(tmp_path / "install.sh", "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/rocm6.2\npip install torch==2.5.1\n")
    assert [(h[1], h[3] is None) for h in hits] == [(1, False), (2, True)]
    hits = _hits(tmp_path / "requirements.txt", "--extra-index-url https://download.pytorch.org/whl/rocm6.2\ntorch==2.5.1\n")
    assert [h[3] for h in hits] == ["installed from the ROCm index https://download.pytorch.org/whl/rocm6.2"]


def test_files_for_other_platforms_and_vendored_files_are_gated(tmp_path):
    root = _write(tmp_path, {"pyproject.toml": "[project]\nname='x'\n", "third_party/lib/Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n",
                             "docker/cuda_simple/Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"})
    assert stack_of_name("xpu.txt") == "other" and stack_of_name("Dockerfile.s390x") == "other"
    assert file_gate(os.path.join(root, "requirements", "xpu.txt")).startswith("other-platform")
    assert file_gate(os.path.join(root, "third_party", "lib", "Dockerfile")).startswith("vendored code: under `third_party/`")
    assert file_gate(os.path.join(root, "docker", "cuda_simple", "Dockerfile")) == "CUDA-only file: it is in the `cuda_simple/` directory"


def test_a_local_install_after_cd_names_no_known_project(tmp_path):
    root = _write(tmp_path, {"setup.py": "from setuptools import setup\nsetup(install_requires=['torch==2.4.0'])\n"})
    path = os.path.join(root, "scripts", "build.sh")
    assert [h[0] for h in _hits(path, "pip install -e .\n")] == ["ROCM311"]
    assert _hits(path, "git clone https://example.org/other.git\ncd other\npip install .\n") == []


def test_a_check_that_reads_both_sides_still_leaves_vendored_build_files_alone(tmp_path):
    """ROCM302 reads the ROCm side of stack tests (where target lists live), but a CMake file
    of a project vendored under 3rdparty/ is that project's, not this one's."""
    from rocmlint.cli import main

    (tmp_path / "CMakeLists.txt").write_text('project(p LANGUAGES CXX HIP)\nset(GPU_TARGETS "gfx90a;gfx942")\n')
    vendored = tmp_path / "3rdparty" / "ck"
    vendored.mkdir(parents=True)
    (vendored / "CMakeLists.txt").write_text('set(GPU_TARGETS "gfx908;gfx90a;gfx942")\n')
    out = tmp_path / "report.json"
    assert main(["scan", str(tmp_path), "--select", "ROCM302", "--format", "json", "--output", str(out),
                 "--show-gated", "--exit-zero", "-q", "--preview", "--no-cache"]) == 0
    import json

    document = json.loads(out.read_text())
    assert [os.path.relpath(f["path"], tmp_path) for f in document["findings"]] == ["CMakeLists.txt"]
    assert [g["gate"] for g in document["gated"]] == [
        "vendored code: under `3rdparty/`, another project's files that this project's build does not use"]


def test_ci_jobs_on_nvidia_machines_are_gated_in_a_project_that_builds_for_amd(tmp_path):
    """vLLM's Buildkite steps ask for `device: h200` or `device: mi355_dpx`; a GitHub job for
    `runs-on: [self-hosted, h100]`. In a project that builds for AMD the NVIDIA ones never run
    there; in a project being ported they are what the port must change, and stay reported."""
    from rocmlint.cli import main
    import json

    pipeline = """\
steps:
- label: nvidia e2e
  device: h200
  commands:
  - docker run --gpus all vllm-test
- label: amd e2e
  device: mi355_dpx
  commands:
  - docker run --gpus all vllm-test
jobs:
  test:
    runs-on: [self-hosted, h100]
    steps:
    - run: docker run --gpus all img
"""
    for kind, build in (("amd", "COMPILER = 'hipcc'\\n"), ("nvidia", "COMPILER = 'nvcc'\\n")):
        root = tmp_path / kind
        (root / "ci").mkdir(parents=True)
        (root / "setup.py").write_text(build)
        (root / "ci" / "pipeline.yaml").write_text(pipeline)
        out = tmp_path / f"{kind}.json"
        main(["scan", str(root), "--select", "ROCM310", "--format", "json", "--output", str(out), "--show-gated",
              "--exit-zero", "-q", "--preview", "--no-cache"])
        document = json.loads(out.read_text())
        reported = sorted(f["line"] for f in document["findings"])
        if kind == "amd":
            assert reported == [9]
            gates = sorted((g["line"], g["gate"]) for g in document["gated"])
            assert gates[0] == (5, "in a job on NVIDIA machines (`device: h200`, line 3): it never runs on AMD")
            assert gates[1][0] == 14 and "`runs-on: self-hosted, h100`" in gates[1][1]
        else:
            assert reported == [5, 9, 14]


# --- conda environments, uv.lock, Python build helpers ---------------------------------------------


def test_a_conda_environment_beside_its_rocm_variant_is_the_cuda_one(tmp_path):
    cuda_env = "name: app\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch=2.4\n  - pytorch-cuda=12.1\n"
    root = _write(tmp_path, {"environment.yml": cuda_env, "environment-rocm.yml": "name: app\ndependencies:\n  - pip\n",
                             "other/conda.yaml": cuda_env, "other/conda-rocm.yaml": "name: app\ndependencies:\n  - pip\n",
                             "alone/environment.yml": cuda_env})
    for path in ("environment.yml", "other/conda.yaml"):
        hits = _hits(os.path.join(root, path), cuda_env)
        assert sorted(h[0] for h in hits) == ["ROCM306", "ROCM313", "ROCM314"]
        assert all(h[3] and "keeps its ROCm variant beside it" in h[3] for h in hits)
    alone = _hits(os.path.join(root, "alone", "environment.yml"), cuda_env)
    assert sorted((h[0], h[1], h[2], h[3]) for h in alone) == [
        ("ROCM306", 7, "pytorch-cuda=12.1", None), ("ROCM313", 4, "nvidia", None), ("ROCM314", 6, "pytorch=2.4", None)]


def test_conda_specs_keep_their_channel_and_conda_commands_are_read(tmp_path):
    env = "name: a\nchannels: [conda-forge]\ndependencies:\n  - nvidia/label/cuda-12.1.0::cuda\n  - conda-forge::pytorch>=2.4\n"
    hits = _hits(tmp_path / "environment.yml", env)
    assert [(h[0], h[2]) for h in hits] == [("ROCM306", "nvidia/label/cuda-12.1.0::cuda"), ("ROCM314", "conda-forge::pytorch>=2.4")]
    script = "#!/bin/sh\nconda create -y -n app -c pytorch -c nvidia python=3.11 pytorch torchvision 'pytorch-cuda=12.1'\nconda env create -f environment.yml\n"
    hits = _hits(tmp_path / "setup_env.sh", script)
    assert sorted((h[0], h[2]) for h in hits) == [("ROCM306", "'pytorch-cuda=12.1'"), ("ROCM313", "nvidia"), ("ROCM314", "pytorch")]


def test_uv_lock_packages_are_found_at_their_versions_and_bad_locks_say_nothing(tmp_path):
    from rocmlint.noqa.add import line_with_noqa

    assert language_of("uv.lock") == "uvlock" and language_of("poetry.lock") is None
    lock = ('version = 1\n\n[[package]]\nname = "numpy"\nversion = "2.2.0"\nsource = { registry = "https://pypi.org/simple" }\n\n'
            '[[package]]\nname = "torch"\nversion = "2.7.1+cu128"\nsource = { registry = "https://download.pytorch.org/whl/cu128" }\n')
    assert [(h[0], h[1], h[2]) for h in _hits(tmp_path / "uv.lock", lock)] == [("ROCM315", 10, "2.7.1+cu128")]
    assert _hits(tmp_path / "uv.lock", "version = 1\n[[package]\nname = ") == []
    assert _hits(tmp_path / "uv.lock", '[[package]]\nname = "torch"\nversion = "2.5.1+cu121"\n') != []
    assert line_with_noqa("uvlock", lock.split("\n"), 10, ["ROCM315"])[0] is None


def test_uv_lock_cuda_torch_for_a_cuda_extra_or_beside_a_rocm_build_is_gated(tmp_path):
    lock = ('version = 1\n\n[[package]]\nname = "torch"\nversion = "2.8.0"\nsource = { registry = "https://download.pytorch.org/whl/cu126" }\n'
            'resolution-markers = [\n    "extra == \'extra-7-my-proj-cuda\' and extra != \'extra-7-my-proj-cpu\'",\n]\n')
    hits = _hits(tmp_path / "uv.lock", lock)
    assert [(h[0], h[3]) for h in hits] == [("ROCM315", "locked only for the optional extra `cuda`, which is for CUDA")]
    rocm = lock + '\n[[package]]\nname = "torch"\nversion = "2.8.0+rocm6.4"\nsource = { registry = "https://download.pytorch.org/whl/rocm6.4" }\n'
    hits = _hits(tmp_path / "uv.lock", rocm.replace("extra-7-my-proj-cuda", "extra-7-my-proj-gpu"))
    assert [h[3] for h in hits] == ["the lock also holds a ROCm build of torch (`2.8.0+rocm6.4`): an extra or marker picks the build per machine"]


def test_python_build_helpers_are_modules_that_import_build_tools_or_run_a_compiler(tmp_path):
    from rocmlint.build.python_build import is_build_helper

    def helper(path, text):
        return is_build_helper(SourceFile(str(tmp_path / path), text, "python"))

    assert helper("ops/jit.py", "from torch.utils.cpp_extension import load\n")
    assert helper("ops/jit.py", "import torch.utils.cpp_extension as ext\n")
    assert helper("op_builder/builder.py", "def build():\n    import setuptools\n")
    assert helper("tools/compile.py", "import subprocess\nsubprocess.run(['nvcc', '-c', 'k.cu'])\n")
    assert helper("aiter/jit/core.py", "from cpp_extension import _jit_compile\n")
    assert helper("ops/gemm.py", "spec = gen_jit_spec('gemm', ['gemm.cu'], extra_cuda_cflags=['-O3'])\n")
    assert not helper("ops/table.py", "NVCC_FLAGS = {'hopper': '-arch=sm_90'}\n")
    assert not helper("tests/test_jit.py", "from torch.utils.cpp_extension import load\n")
    assert not helper("ops/jit.py", "def f(:\n  import setuptools\n")


def test_python_build_helper_flags_in_messages_docstrings_and_cuda_branches(tmp_path):
    text = '''\
    """Builds ops; pass -arch=sm_80 through NVCC_FLAGS."""
    import torch
    from torch.utils.cpp_extension import load

    def flags():
        if torch.version.cuda:
            return ["-gencode=arch=compute_90,code=sm_90"]
        print("default: -arch=sm_80")
        raise RuntimeError("use -arch=sm_80")

    FLAGS = ["-arch=sm_80"]
    '''
    hits = _hits(tmp_path / "ops" / "jit.py", text)
    assert [(h[0], h[1], h[2]) for h in hits if h[3] is None] == [("ROCM301", 11, "-arch=sm_80")]
    assert [(h[1], h[3]) for h in hits if h[3] is not None] == [(7, "under `if torch.version.cuda` (line 6)")]


def test_amd_target_lists_and_a_pinned_rocm_release(tmp_path):
    from rocmlint.config import GpuTarget

    docker = 'FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_2.3.0\nENV PYTORCH_ROCM_ARCH="gfx908;gfx90a"\n'
    hits = _hits(tmp_path / "Dockerfile.rocm", docker)
    assert [(h[0], h[3]) for h in hits] == [("ROCM302", None)]
    source = SourceFile(str(tmp_path / "Dockerfile.rocm"), docker, "dockerfile")
    findings, _ = check_source(source, CHECKS)
    assert "has no gfx942 (MI300):" in findings[0].message  # gfx950 cannot be built with ROCm 6.2
    pinned = 'ENV PYTORCH_ROCM_ARCH="gfx90a;gfx942"\n'
    gated = _hits(tmp_path / "Dockerfile", pinned.replace("ENV", "ARG ROCM_VERSION=6.4.1\nENV"))
    assert [h[3] for h in gated] == ["the build is pinned to ROCm 6.4.1 (line 1), which cannot build for gfx950"]
    configured = SourceFile(str(tmp_path / "Dockerfile"), pinned, "dockerfile", target=GpuTarget((6, 3), ()))
    findings, _ = check_source(configured, CHECKS, keep_gated=True)
    assert [f.gate for f in findings] == ["the build is pinned to ROCm 6.3 (the configured rocm-version), which cannot build for gfx950"]
    assert _hits(tmp_path / "Dockerfile", pinned.replace("ENV", "ARG ROCM_VERSION=7.0\nENV"))[0][3] is None


def test_amd_target_lists_appended_to_in_the_same_file_are_not_stale(tmp_path):
    make = "HIPFLAGS = --offload-arch=gfx90a --offload-arch=gfx942\nHIPFLAGS += --offload-arch=gfx950\nall:\n\thipcc $(HIPFLAGS) k.hip\n"
    assert [h[3] for h in _hits(tmp_path / "Makefile", make)] == ["the file also gives `HIPFLAGS` a list with gfx950 (line 2)"]
    script = '#!/bin/sh\nexport PYTORCH_ROCM_ARCH="gfx90a;gfx942"\nif [ "$ROCM_MAJOR" -ge 7 ]; then\n  PYTORCH_ROCM_ARCH="$PYTORCH_ROCM_ARCH;gfx950"\nfi\n'
    assert [h[3] for h in _hits(tmp_path / "build.sh", script)] == ["the file also gives `PYTORCH_ROCM_ARCH` a list with gfx950 (line 4)"]
    alone = _hits(tmp_path / "Makefile", make.split("\n", 1)[0] + "\n")
    assert [(h[0], h[3]) for h in alone] == [("ROCM302", None)]
    setup = 'archs = ["gfx90a", "gfx942"]\narchs += ["gfx950"]\ngfx_list = ["gfx908"]\n'
    assert [(h[1], h[3]) for h in _hits(tmp_path / "setup.py", setup)] == [
        (1, "the file also gives `archs` a list with gfx950 (line 2)"), (3, None)]
