"""fastllm: a tiny transformer trainer (rocmlint sample project)."""
